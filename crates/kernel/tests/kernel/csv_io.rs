//! CSV import through the save path with per-row errors and no partial rows;
//! export of a query as CSV.

use crate::common;

use common::*;
use countersign_kernel::records::csvio::export_csv;
use countersign_kernel::records::import::{import_csv, ImportMode, ImportOptions};
use countersign_kernel::{Code, QuerySpec};
use serde_json::json;

const ACCOUNTS: &str = "name,industry,annual_revenue,website\n\
Good One,software,1000.50,https://good.example\n\
Bad Revenue,retail,-5,\n\
Bad Scale,retail,1.234,\n\
Good Two,Finance,,\n\
Retired,telecom,,\n";

#[test]
fn all_or_nothing_reports_every_bad_row_and_writes_none() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let history = history_rows(&f.ws);
    let r = import_csv(&ava, "account", ACCOUNTS.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!((r.rows, r.imported, r.failed, r.committed), (5, 2, 3, false));
    let errs: Vec<(u64, Code, Option<&str>)> =
        r.errors.iter().map(|e| (e.line, e.code, e.field.as_deref())).collect();
    assert_eq!(
        errs,
        vec![
            (3, Code::ValidationRule, Some("annual_revenue")),
            (4, Code::InvalidValue, Some("annual_revenue")),
            (6, Code::InvalidValue, Some("industry")),
        ]
    );
    assert_eq!(history_rows(&f.ws), history);
    let found = ava
        .query(
            &QuerySpec::from_json(
                &json!({"object": "account", "filters": {"field": "name", "op": "eq", "value": "Good One"}}),
            )
            .unwrap(),
        )
        .unwrap();
    assert!(found.records.is_empty());
}

#[test]
fn skip_invalid_keeps_the_good_rows_whole() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let opts = ImportOptions { mode: ImportMode::SkipInvalid, ..Default::default() };
    let r = import_csv(&ava, "account", ACCOUNTS.as_bytes(), &opts).unwrap();
    assert_eq!((r.imported, r.failed, r.committed), (2, 3, true));
    let res = ava
        .query(&QuerySpec::from_json(&json!({"object": "account", "fields": ["name", "industry", "annual_revenue"],
            "filters": {"field": "name", "op": "in", "value": ["Good One", "Good Two", "Bad Revenue", "Bad Scale", "Retired"]},
            "sort": [{"field": "name"}]})).unwrap())
        .unwrap();
    let names: Vec<&str> = res.records.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["Good One", "Good Two"]);
    assert_eq!(res.records[0]["annual_revenue"], json!(1000.5));
    assert_eq!(res.records[1]["industry"], json!("finance"));
    // One correlation id groups the import's history.
    let h = ava.history_of("account", res.records[0]["id"].as_str().unwrap()).unwrap();
    assert!(h.iter().all(|e| e.correlation_id == r.correlation_id));
}

#[test]
fn dry_run_previews_without_writing() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let history = history_rows(&f.ws);
    let opts = ImportOptions { dry_run: true, mode: ImportMode::SkipInvalid, ..Default::default() };
    let r = import_csv(&ava, "account", ACCOUNTS.as_bytes(), &opts).unwrap();
    assert_eq!((r.imported, r.failed, r.committed), (2, 3, false));
    assert_eq!(
        r.mapping.iter().map(|m| m.field.clone().unwrap()).collect::<Vec<_>>(),
        vec!["name", "industry", "annual_revenue", "website"]
    );
    assert_eq!(history_rows(&f.ws), history);
}

#[test]
fn unknown_or_hidden_columns_are_refused_up_front() {
    let f = demo();
    let ben = f.ws.session("ben").unwrap();
    let e = import_csv(&ben, "account", "name,credit_limit\nX,5\n".as_bytes(), &ImportOptions::default())
        .unwrap_err();
    assert_eq!(e.code, Code::InvalidCsv);
    assert!(e.message.contains("credit_limit"));
    let e = import_csv(&ben, "account", "".as_bytes(), &ImportOptions::default()).unwrap_err();
    assert_eq!(e.code, Code::InvalidCsv);
}

#[test]
fn ragged_rows_and_lookup_names() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let acme = demo_rows("account").into_iter().next().unwrap();
    let text = format!(
        "Last Name,account,email\nByName,{},a@b.example\nById,{},c@d.example\nRagged\nNobody,No Such Company,\n",
        acme["name"].to_uppercase(),
        acme["id"]
    );
    let opts = ImportOptions { mode: ImportMode::SkipInvalid, ..Default::default() };
    let r = import_csv(&ava, "contact", text.as_bytes(), &opts).unwrap();
    assert_eq!((r.imported, r.failed), (2, 2), "{:?}", r.errors);
    assert_eq!(r.errors[0].code, Code::InvalidCsv);
    assert_eq!(r.errors[1].field.as_deref(), Some("account"));
    let res = ava
        .query(
            &QuerySpec::from_json(&json!({"object": "contact", "fields": ["account"],
        "filters": {"field": "last_name", "op": "in", "value": ["ByName", "ById"]}}))
            .unwrap(),
        )
        .unwrap();
    assert!(res.records.iter().all(|r| r["account"] == json!(acme["id"])));
}

#[test]
fn ambiguous_lookup_names_are_errors_not_guesses() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    ava.create("account", map(json!({"name": "Twin Corp"}))).unwrap();
    ava.create("account", map(json!({"name": "Twin Corp"}))).unwrap();
    let r =
        import_csv(&ava, "contact", "last_name,account\nX,Twin Corp\n".as_bytes(), &ImportOptions::default())
            .unwrap();
    assert_eq!(r.failed, 1);
    assert!(r.errors[0].message.contains("several"), "{}", r.errors[0].message);
}

#[test]
fn export_round_trips_through_import() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let spec = QuerySpec::from_json(&json!({"object": "invoice", "fields": ["number", "account", "status", "issue_date", "due_date", "paid_date", "total", "currency_code", "po_number"],
        "filters": {"field": "account", "op": "eq", "value": "acc_0001"}})).unwrap();
    let mut out = Vec::new();
    let n = export_csv(&ava, &spec, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(n as usize, demo_rows("invoice").iter().filter(|r| r["account"] == "acc_0001").count());
    assert_eq!(text.lines().count(), n as usize + 1);
    assert!(text.starts_with("id,number,account,status"));
    // Totals keep their scale in the file.
    let first = demo_rows("invoice").into_iter().find(|r| r["account"] == "acc_0001").unwrap();
    assert!(text.contains(&format!(",{},", first["total"])), "{text}");
    // Re-importing the same ids is refused row by row (duplicate ids and numbers), nothing written.
    let r = import_csv(&ava, "invoice", text.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!(r.failed, n);
    assert!(r.errors.iter().all(|e| e.code == Code::Duplicate));
}
