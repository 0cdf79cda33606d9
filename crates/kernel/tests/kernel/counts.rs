//! Record counts: an unfiltered list's count is kept by the record tables' triggers and stays
//! exact through every write path (saves, an owner change, an import, a delete, a proposal's
//! accept and undo, a deploy that adds an object); a filtered count stops at the cap unless
//! asked for exactly.

use crate::common::*;
use crate::proposals::{draft, field};
use countersign_kernel::records::counts::{RecordCount, COUNT_CAP};
use countersign_kernel::{QuerySpec, Session, Workspace};
use serde_json::json;

fn spec(object: &str) -> QuerySpec {
    QuerySpec::from_json(&json!({ "object": object })).unwrap()
}

/// The count read the slow way: every row through the user's own query.
fn counted(s: &Session<'_>, object: &str) -> u64 {
    counted_where(s, &spec(object))
}

fn check(ws: &Workspace, what: &str) {
    for user in ["ava", "ben", "cara"] {
        let s = ws.session(user).unwrap();
        for object in ["account", "invoice", "opportunity", "contact"] {
            let kept = s.count_records(&spec(object), false).unwrap();
            assert_eq!(kept, RecordCount { n: counted(&s, object), exact: true }, "{what}: {user} {object}");
        }
    }
}

#[test]
fn counts_stay_exact_through_saves_imports_deletes_and_undo() {
    let f = demo();
    check(&f.ws, "the demo");
    let ava = f.ws.session("ava").unwrap();
    let ben = f.ws.session("ben").unwrap();
    let made = ben.create("opportunity", map(json!({"name": "Counted", "account": "acc_0001", "stage": "prospecting", "close_date": "2026-12-01"}))).unwrap();
    check(&f.ws, "after ben creates an opportunity");
    // Giving it to ava moves it from ben's count to hers.
    ava.update("opportunity", &made.id, map(json!({"owner": "ava"})), None).unwrap();
    check(&f.ws, "after an owner change");
    ava.delete("opportunity", &made.id, None).unwrap();
    check(&f.ws, "after a delete");
    let csv = "name,industry\nCounted One,software\nCounted Two,retail\n";
    let report =
        countersign_kernel::records::import::import_csv(&ben, "account", csv.as_bytes(), &Default::default())
            .unwrap();
    assert_eq!(report.imported, 2);
    check(&f.ws, "after an import");
    // A failed import (all or nothing) leaves the counts as they were.
    let bad = "name,annual_revenue\nFine,10\nBroken,lots\n";
    let report =
        countersign_kernel::records::import::import_csv(&ben, "account", bad.as_bytes(), &Default::default())
            .unwrap();
    assert!(!report.committed);
    check(&f.ws, "after a refused import");
    let p = ava
        .propose(draft(
            None,
            vec![
                field("number", json!("INV-2026-77777")),
                field("account", json!("acc_0009")),
                field("status", json!("draft")),
                field("issue_date", json!("2026-11-01")),
                field("total", json!(100)),
            ],
        ))
        .unwrap();
    ava.accept_proposal(&p.id, None).unwrap();
    check(&f.ws, "after a create proposal is accepted");
    ava.undo_proposal(&p.id).unwrap();
    check(&f.ws, "after it is undone");
    // A table without its triggers (a file from before counts were kept) is counted on open.
    let path = f.ws.path().to_path_buf();
    drop((ava, ben));
    f.ws.raw_connection()
        .execute_batch(
            "DROP TRIGGER \"cnt_invoice_insert\"; UPDATE record_count SET n = 1 WHERE object = 'invoice';",
        )
        .unwrap();
    let Fixture { ws, clock, dir: _dir } = f;
    drop(ws);
    let ws = countersign_kernel::open::open(&path, options(&clock)).unwrap();
    check(&ws, "after a reopen");
    ws.session("ava").unwrap().create("invoice", map(json!({"number": "INV-C-1", "account": "acc_0001", "status": "draft", "issue_date": "2026-11-02"}))).unwrap();
    check(&ws, "after a create in the reopened file");
}

#[test]
fn a_filtered_count_stops_at_the_cap_unless_asked() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let rows: String = (0..COUNT_CAP + 5).map(|i| format!("Capped {i},software\n")).collect();
    let csv = format!("name,industry\n{rows}");
    let report =
        countersign_kernel::records::import::import_csv(&ava, "account", csv.as_bytes(), &Default::default())
            .unwrap();
    assert!(report.committed);
    let filtered = QuerySpec::from_json(
        &json!({"object": "account", "filters": {"field": "industry", "op": "eq", "value": "software"}}),
    )
    .unwrap();
    let capped = ava.count_records(&filtered, false).unwrap();
    assert_eq!(capped, RecordCount { n: COUNT_CAP, exact: false });
    let exact = ava.count_records(&filtered, true).unwrap();
    assert!(exact.exact && exact.n > COUNT_CAP, "{exact:?}");
    assert_eq!(exact.n, counted_where(&ava, &filtered));
    // Unfiltered: exact from the kept counts, however many.
    let all = ava.count_records(&spec("account"), false).unwrap();
    assert!(all.exact && all.n > COUNT_CAP);
}

fn counted_where(s: &Session<'_>, spec: &QuerySpec) -> u64 {
    let mut spec = spec.clone();
    spec.limit = Some(10_000);
    spec.fields = vec!["id".into()];
    let mut n = 0;
    loop {
        let page = s.query(&spec).unwrap();
        n += page.records.len() as u64;
        match page.next {
            Some(c) => spec.after = Some(c),
            None => return n,
        }
    }
}
