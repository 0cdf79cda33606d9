//! The indexes made from use, from the CLI: listed with their shape and cost, pinned and
//! unpinned, dropped; refused for a user who may not deploy.

use crate::common::cli;
use countersign_kernel::open::{self, Start};
use countersign_kernel::records::use_index::TuneOptions;
use countersign_kernel::{QuerySpec, WorkspaceOptions};
use serde_json::json;

#[test]
fn indexes_made_from_use_are_listed_pinned_and_dropped_by_a_deployer_only() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("w.countersign");
    {
        // Three first pages sorted by total, then one tuning: one index made from that use.
        let (workspace, _) = open::create(&ws, Start::Demo, WorkspaceOptions::default()).unwrap();
        let ava = workspace.session("ava").unwrap();
        let by_total = QuerySpec::from_json(
            &json!({"object": "invoice", "sort": [{"field": "total", "direction": "desc"}], "limit": 20}),
        )
        .unwrap();
        for _ in 0..3 {
            ava.query(&by_total).unwrap();
        }
        let made = workspace.tune_indexes(&TuneOptions { min_rows: 0, ..TuneOptions::default() }).unwrap();
        assert_eq!(made.created.len(), 1, "{made:?}");
    }
    let (code, list, err) = cli(&ws, &["--as", "ava", "index", "list"]);
    assert_eq!(code, 0, "{err}");
    let index = &list.as_array().unwrap()[0];
    assert_eq!((index["object"].as_str(), index["shape"].as_str()), (Some("invoice"), Some("|total desc")));
    assert_eq!(index["uses"], 3);
    let name = index["name"].as_str().unwrap();

    let (code, _, err) = cli(&ws, &["--as", "ben", "index", "list"]);
    assert_eq!((code, err["code"].as_str()), (1, Some("permission")), "{err}");
    assert_eq!(cli(&ws, &["--as", "ben", "index", "drop", name]).0, 1);

    let pinned = cli(&ws, &["--as", "ava", "index", "pin", name]).1;
    assert_eq!(pinned["pinned"], true);
    assert_eq!(cli(&ws, &["--as", "ava", "index", "unpin", name]).1["pinned"], false);
    assert_eq!(cli(&ws, &["--as", "ava", "index", "drop", name]).0, 0);
    assert_eq!(cli(&ws, &["--as", "ava", "index", "list"]).1, json!([]));
    let (code, _, err) = cli(&ws, &["--as", "ava", "index", "drop", name]);
    assert_eq!((code, err["code"].as_str()), (1, Some("not_found")), "{err}");
}
