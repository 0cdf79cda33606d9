//! The value index of short text fields: it always holds what the record tables hold (kept by
//! every save, import, delete and deploy, built for a file from before it), and it is read on a
//! session, so a value comes back only with records that session can read.

use crate::common;

use countersign_kernel::metadata::catalog::{column, table};
use countersign_kernel::metadata::definition::FieldType;
use countersign_kernel::records::import::{import_csv, ImportMode, ImportOptions};
use countersign_kernel::records::value_index::{probe, words, MAX_WORDS};
use countersign_kernel::{SaveContext, SaveRequest, Workspace};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// Every short text field's (value → uses) and (value → probes), from the index and from the
/// record tables; they must be equal.
pub fn assert_index_is_the_tables(ws: &Workspace) {
    let conn = ws.raw_connection();
    let catalog = ws.catalog().unwrap().clone();
    let mut fields = 0;
    for meta in catalog.objects() {
        for f in meta.fields().iter().filter(|f| f.field_type == FieldType::Text) {
            fields += 1;
            let (o, k) = (meta.key(), f.key.as_str());
            let from_table: BTreeMap<String, i64> = conn
                .prepare(&format!(
                    "SELECT {c}, count(*) FROM {t} WHERE {c} IS NOT NULL AND trim({c}) <> '' GROUP BY {c}",
                    c = column(k),
                    t = meta.table
                ))
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .filter(|(v, _): &(String, i64)| words(v).len() <= MAX_WORDS)
                .collect();
            let from_index: BTreeMap<String, i64> = conn
                .prepare("SELECT value, uses FROM value_index WHERE object = ?1 AND field = ?2")
                .unwrap()
                .query_map([o, k], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(from_index, from_table, "{o}.{k}");
            let probes: BTreeSet<(String, String)> = conn
                .prepare("SELECT value, probe FROM value_probe WHERE object = ?1 AND field = ?2")
                .unwrap()
                .query_map([o, k], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let expected: BTreeSet<(String, String)> = from_table
                .keys()
                .flat_map(|v| words(v).into_iter().filter_map(|w| probe(&w)).map(move |p| (v.clone(), p)))
                .collect();
            assert_eq!(probes, expected, "{o}.{k}");
        }
    }
    // The demo's definition has short text fields on every object.
    assert!(fields >= 6, "{fields}");
}

#[test]
fn the_index_holds_what_the_tables_hold_after_saves_imports_deletes_and_deploys() {
    let mut f = common::demo();
    assert_index_is_the_tables(&f.ws);
    let ava = f.ws.session("ava").unwrap();
    let made = ava
        .save(
            SaveRequest::Create {
                object: "account".into(),
                values: common::map(json!({"name": "Zorblax Freight", "billing_city": "Zanzibar City"})),
                id: None,
                owner: None,
            },
            &SaveContext::default(),
        )
        .unwrap();
    assert_index_is_the_tables(&f.ws);
    // A value two records share keeps its entry until the last one moves away.
    ava.save(
        SaveRequest::Update {
            object: "account".into(),
            id: made.id.clone(),
            changes: common::map(json!({"billing_city": "Berlin", "tax_id": "DE 123 456"})),
            expected_version: None,
        },
        &SaveContext::default(),
    )
    .unwrap();
    assert_index_is_the_tables(&f.ws);
    // An import: the rows that fail leave nothing behind, the rest are indexed.
    let csv = "name,billing_city,credit_limit\nQuill Works,Reykjavik,5\nBroken Row,Oslo,not a number\n";
    let r = import_csv(
        &ava,
        "account",
        csv.as_bytes(),
        &ImportOptions { mode: ImportMode::SkipInvalid, ..Default::default() },
    )
    .unwrap();
    assert_eq!((r.imported, r.failed), (1, 1));
    assert_index_is_the_tables(&f.ws);
    ava.delete("account", &made.id, None).unwrap();
    assert_index_is_the_tables(&f.ws);
    drop(ava);
    // A deploy: a new short text field with a default, a short text field turned long text.
    let mut def: serde_json::Value =
        serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    for o in def["objects"].as_array_mut().unwrap() {
        if o["key"] == "account" {
            o["fields"].as_array_mut().unwrap().push(json!({
                "key": "region", "label": "Region", "type": "text", "maxLength": 40, "default": "Northern Europe"
            }));
        }
        if o["key"] == "opportunity" {
            for field in o["fields"].as_array_mut().unwrap() {
                if field["key"] == "next_step" {
                    field["type"] = json!("long_text");
                }
            }
        }
    }
    let def = countersign_kernel::WorkspaceDefinition::from_json(&def).unwrap();
    f.ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    assert_index_is_the_tables(&f.ws);
    let n: i64 =
        f.ws.raw_connection()
            .query_row(
                "SELECT count(*) FROM value_index WHERE object = 'opportunity' AND field = 'next_step'",
                [],
                |r| r.get(0),
            )
            .unwrap();
    assert_eq!(n, 0, "a field that is no longer short text leaves the index");
}

#[test]
fn a_file_from_before_the_index_is_indexed_when_it_opens() {
    let f = common::demo();
    let path = f.ws.path().to_path_buf();
    f.ws.raw_connection()
        .execute_batch(
            "DELETE FROM value_index; DELETE FROM value_probe; DELETE FROM kernel_state WHERE key = 'value_index_built';",
        )
        .unwrap();
    drop(f.ws);
    let ws = countersign_kernel::open::open(&path, common::options(&f.clock)).unwrap();
    let n: i64 = ws.raw_connection().query_row("SELECT count(*) FROM value_index", [], |r| r.get(0)).unwrap();
    assert!(n > 100, "{n}");
    assert_index_is_the_tables(&ws);
}

#[test]
fn a_value_comes_back_only_with_records_the_session_can_read() {
    let f = common::demo();
    // opp_0001 is ava's private opportunity; ben cannot read it.
    let (ava, ben) = (f.ws.session("ava").unwrap(), f.ws.session("ben").unwrap());
    let name: String =
        f.ws.raw_connection()
            .query_row(
                &format!("SELECT {} FROM {} WHERE id = 'opp_0001'", column("name"), table("opportunity")),
                [],
                |r| r.get(0),
            )
            .unwrap();
    let probes: BTreeSet<String> = words(&name).iter().filter_map(|w| probe(w)).collect();
    let held = |s: &countersign_kernel::Session<'_>| {
        s.values_by_probe("opportunity", "name", &probes, &mut |v| v == name, 5).unwrap()
    };
    let as_ava = held(&ava);
    assert_eq!(as_ava.len(), 1);
    assert!(as_ava[0].ids.contains(&"opp_0001".to_string()), "{as_ava:?}");
    assert!(held(&ben).iter().all(|h| !h.ids.contains(&"opp_0001".to_string())));
    // A value the caller does not keep is never checked or returned.
    assert!(ava.values_by_probe("opportunity", "name", &probes, &mut |_| false, 5).unwrap().is_empty());
}

#[test]
fn a_word_only_the_data_knows_reaches_its_field_as_soon_as_it_is_saved() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let p = ava.whole_grounding().projection.clone();
    let objects: Vec<String> = p.objects.iter().map(|o| o.key.clone()).collect();
    let read = |s: &countersign_kernel::Session<'_>| {
        s.read_question("accounts in Zanzibar", &p, &objects)
            .unwrap()
            .candidates
            .iter()
            .any(|c| c.condition.fields().contains(&"billing_city") && c.meaning.contains("Zanzibar"))
    };
    assert!(!read(&ava));
    let made = ava
        .save(
            SaveRequest::Create {
                object: "account".into(),
                values: common::map(json!({"name": "Spice Route Traders", "billing_city": "Zanzibar"})),
                id: None,
                owner: None,
            },
            &SaveContext::default(),
        )
        .unwrap();
    assert!(read(&ava));
    ava.save(
        SaveRequest::Update {
            object: "account".into(),
            id: made.id,
            changes: common::map(json!({"billing_city": "Dar es Salaam"})),
            expected_version: None,
        },
        &SaveContext::default(),
    )
    .unwrap();
    assert!(!read(&ava));
}
