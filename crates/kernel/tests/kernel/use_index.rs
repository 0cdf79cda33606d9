//! Indexes that follow use: a sort or filter used often enough gets an index, the query plan
//! reads it, the answers do not change; a shape an index already serves gets none; an idle
//! index is dropped unless pinned; deploys keep them, and one on a removed field goes with it.

use crate::common::*;
use countersign_kernel::records::demo::demo_definition;
use countersign_kernel::records::use_index::{TuneOptions, UseIndexChange};
use countersign_kernel::{Code, DeployOptions, QuerySpec, Session};
use serde_json::{json, Value};

fn spec(v: Value) -> QuerySpec {
    QuerySpec::from_json(&v).unwrap()
}

fn ids(s: &Session<'_>, q: &QuerySpec) -> Vec<Value> {
    s.query(q).unwrap().records.iter().map(|r| r["id"].clone()).collect()
}

fn tune() -> TuneOptions {
    TuneOptions { min_rows: 0, ..TuneOptions::default() }
}

#[test]
fn a_used_sort_gets_an_index_the_plan_reads_and_an_idle_one_is_dropped_unless_pinned() {
    let mut f = demo();
    let ava = f.ws.session("ava").unwrap();
    let by_total = spec(
        json!({"object": "invoice", "fields": ["number", "total"], "sort": [{"field": "total", "direction": "desc"}], "limit": 20}),
    );
    let overdue_by_due = spec(
        json!({"object": "invoice", "filters": {"field": "status", "op": "eq", "value": "overdue"}, "sort": [{"field": "due_date", "direction": "desc"}], "limit": 20}),
    );
    let by_number = spec(json!({"object": "invoice", "sort": [{"field": "number"}], "limit": 20}));
    let before = (ids(&ava, &by_total), ids(&ava, &overdue_by_due));
    assert!(ava.plan(&by_total).unwrap().contains("TEMP B-TREE"), "{}", ava.plan(&by_total).unwrap());
    // Used twice: not yet worth an index.
    ids(&ava, &by_total);
    ids(&ava, &by_number);
    ids(&ava, &by_number);
    ids(&ava, &by_number);
    ids(&ava, &overdue_by_due);
    let report = f.ws.tune_indexes(&tune()).unwrap();
    assert!(report.created.is_empty(), "{report:?}");
    // Number has its own (unique) index: served, no new one.
    assert_eq!(report.served, vec!["|number asc".to_string()]);
    ids(&ava, &by_total);
    ids(&ava, &overdue_by_due);
    let report = f.ws.tune_indexes(&tune()).unwrap();
    let shapes: Vec<&str> = report.created.iter().map(|i| i.shape.as_str()).collect();
    assert_eq!(shapes.len(), 2, "{report:?}");
    assert!(shapes.contains(&"|total desc") && shapes.contains(&"status=|due_date desc"), "{shapes:?}");
    for (q, made) in [(&by_total, "|total desc"), (&overdue_by_due, "status=|due_date desc")] {
        let index = report.created.iter().find(|i| i.shape == made).unwrap();
        let plan = ava.plan(q).unwrap();
        assert!(plan.contains(&index.name) && !plan.contains("TEMP B-TREE"), "{plan}");
    }
    assert_eq!((ids(&ava, &by_total), ids(&ava, &overdue_by_due)), before);
    // Tuning again makes nothing new.
    assert!(f.ws.tune_indexes(&tune()).unwrap().created.is_empty());

    // A sales rep may not manage them; an admin pins one.
    let total_index = report.created.iter().find(|i| i.shape == "|total desc").unwrap().name.clone();
    let due_index = report.created.iter().find(|i| i.shape != "|total desc").unwrap().name.clone();
    assert_eq!(
        f.ws.change_use_index("ben", &total_index, UseIndexChange::Pin(true)).unwrap_err().code,
        Code::Permission
    );
    assert!(f.ws.change_use_index("ava", &total_index, UseIndexChange::Pin(true)).unwrap().unwrap().pinned);

    // A deploy that adds a field keeps both.
    let mut def = demo_definition();
    let invoice = def.objects.iter_mut().find(|o| o.key == "invoice").unwrap();
    let mut extra = invoice.fields.iter().find(|x| x.key == "po_number").unwrap().clone();
    extra.key = "reference".into();
    extra.label = "Reference".into();
    invoice.fields.push(extra);
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    assert_eq!(f.ws.use_indexes("ava").unwrap().len(), 2);

    // Idle for longer than idle_days: the unpinned one is dropped, the plan no longer reads it.
    f.clock.advance(chrono::Duration::days(31));
    let report = f.ws.tune_indexes(&tune()).unwrap();
    assert_eq!(report.dropped, vec![due_index.clone()]);
    let ava = f.ws.session("ava").unwrap();
    assert!(!ava.plan(&overdue_by_due).unwrap().contains(&due_index));
    assert_eq!(
        f.ws.use_indexes("ava").unwrap().iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
        vec![total_index.clone()]
    );

    // An index on a field a deploy removes goes with the column (SQLite could not drop the
    // column otherwise); the others stay.
    let by_reference = spec(json!({"object": "invoice", "sort": [{"field": "reference"}], "limit": 5}));
    for _ in 0..3 {
        ids(&ava, &by_reference);
    }
    let made = f.ws.tune_indexes(&tune()).unwrap().created;
    assert_eq!(made.len(), 1, "{made:?}");
    drop(ava);
    f.ws.deploy(&demo_definition(), &DeployOptions::by("ava")).unwrap();
    assert_eq!(
        f.ws.use_indexes("ava").unwrap().iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
        vec![total_index]
    );
}

#[test]
fn a_page_reads_the_index_made_for_its_shape_even_beside_one_on_its_range() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let overdue_by_due = spec(
        json!({"object": "invoice", "filters": {"field": "status", "op": "eq", "value": "overdue"}, "sort": [{"field": "due_date", "direction": "desc"}], "limit": 20}),
    );
    // Ask's kind of answer: an equality, a range on another field, sorted by a third.
    let recent_overdue_by_total = spec(json!({"object": "invoice",
        "filters": {"all": [{"field": "status", "op": "eq", "value": "overdue"}, {"field": "due_date", "op": "gte", "value": "2025-01-01"}]},
        "sort": [{"field": "total", "direction": "desc"}], "limit": 10}));
    let before = ids(&ava, &recent_overdue_by_total);
    for _ in 0..3 {
        ids(&ava, &overdue_by_due);
        ids(&ava, &recent_overdue_by_total);
    }
    let made = f.ws.tune_indexes(&tune()).unwrap().created;
    let shapes: Vec<&str> = made.iter().map(|i| i.shape.as_str()).collect();
    assert!(
        shapes.contains(&"status=|due_date desc") && shapes.contains(&"status=|total desc"),
        "{shapes:?}"
    );
    let total = made.iter().find(|i| i.shape == "status=|total desc").unwrap();
    let plan = ava.plan(&recent_overdue_by_total).unwrap();
    assert!(plan.contains(&total.name) && !plan.contains("TEMP B-TREE"), "{plan}");
    assert_eq!(ids(&ava, &recent_overdue_by_total), before);
    // A search is not forced through it (the text index finds its rows first).
    let searched =
        spec(json!({"object": "invoice", "filters": {"field": "status", "op": "eq", "value": "overdue"},
        "search": "INV-2025", "sort": [{"field": "total", "direction": "desc"}], "limit": 10}));
    assert!(ava.plan(&searched).unwrap().contains("search_invoice"));
}
