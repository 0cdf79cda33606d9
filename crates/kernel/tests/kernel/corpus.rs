//! The corpus: long texts in FTS5, kept by the save path, searched on a session, every hit
//! re-checked against the reader's access after retrieval.

use crate::common;

use countersign_kernel::{SaveContext, SaveRequest};
use serde_json::json;

#[test]
fn saves_keep_the_index_and_hits_a_reader_may_not_read_are_dropped() {
    // The demo, then notes made private: only a note's owner (or viewAll) reads it.
    let mut f = common::demo();
    let mut def: serde_json::Value =
        serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    for o in def["objects"].as_array_mut().unwrap() {
        if o["key"] == "note" {
            o["sharing"] = json!("private");
        }
    }
    let def = countersign_kernel::WorkspaceDefinition::from_json(&def).unwrap();
    f.ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let (ava, ben) = (f.ws.session("ava").unwrap(), f.ws.session("ben").unwrap());
    let saved = ava
        .save(
            SaveRequest::Create {
                object: "note".into(),
                values: common::map(json!({"account": "acc_0009", "title": "Call", "body": "The zeppelin contract is on hold."})),
                id: None,
                owner: None,
            },
            &SaveContext::default(),
        )
        .unwrap();
    let hits = ava.search_corpus("zeppelin", 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].id.as_str(), hits[0].field.as_str()), (saved.id.as_str(), "body"));
    assert!(hits[0].snippet.contains("[zeppelin]"), "{}", hits[0].snippet);
    // The index matched it for ben too; his session drops it.
    assert!(ben.search_corpus("zeppelin", 5).unwrap().is_empty());
    // An edit replaces the text; a delete removes it.
    ava.save(
        SaveRequest::Update {
            object: "note".into(),
            id: saved.id.clone(),
            changes: common::map(json!({"body": "The airship deal is signed."})),
            expected_version: None,
        },
        &SaveContext::default(),
    )
    .unwrap();
    assert!(ava.search_corpus("zeppelin", 5).unwrap().is_empty());
    assert_eq!(ava.search_corpus("airship", 5).unwrap().len(), 1);
    ava.delete("note", &saved.id, None).unwrap();
    assert!(ava.search_corpus("airship", 5).unwrap().is_empty());
    // Operators in the input are words, not FTS syntax.
    assert!(ava.search_corpus("\"NEAR(* OR", 5).is_ok());
}

#[test]
fn an_index_built_from_existing_records_finds_the_demo_notes() {
    let f = common::demo();
    let path = f.ws.path().to_path_buf();
    // As a file from before the index: an empty index and no flag.
    f.ws.raw_connection().execute_batch("DELETE FROM corpus; DELETE FROM kernel_state;").unwrap();
    assert!(f.ws.session("ben").unwrap().search_corpus("budget freeze", 3).unwrap().is_empty());
    drop(f.ws);
    let ws = countersign_kernel::Workspace::open(&path, Default::default()).unwrap();
    let hits = ws.session("ben").unwrap().search_corpus("budget freeze", 3).unwrap();
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|h| h.object == "note" || h.object == "account"));
}
