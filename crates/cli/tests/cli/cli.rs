//! The CLI end to end: a real binary on a real workspace file; JSON out, typed JSON errors.

use crate::common;

use common::cli;
use serde_json::{json, Value};

fn demo() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("demo.countersign");
    let (code, out, err) = cli(&ws, &["init", "--demo"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out["imported"]["invoice"], json!(300));
    (dir, ws)
}

#[test]
fn query_get_save_history() {
    let (_d, ws) = demo();
    let (code, out, _) = cli(
        &ws,
        &["--as", "ben", "query", "--spec", r#"{"object":"account","fields":["name","industry"],"limit":2}"#],
    );
    assert_eq!(code, 0);
    assert_eq!(out["records"].as_array().unwrap().len(), 2);
    assert_eq!(out["records"][0]["id"], json!("acc_0001"));

    let (code, out, _) = cli(&ws, &["--as", "cara", "get", "account", "acc_0002"]);
    assert_eq!(code, 0);
    let v = out["version"].as_i64().unwrap().to_string();
    let (code, out, err) = cli(
        &ws,
        &[
            "--as",
            "cara",
            "save",
            "account",
            "--id",
            "acc_0002",
            "--version",
            &v,
            "--set",
            "credit_limit=450000.00",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out["changed"], json!(["credit_limit"]));
    let (_, out, _) = cli(&ws, &["--as", "cara", "history", "account", "acc_0002"]);
    let last = out["entries"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["field"].clone(), last["new_value"].clone(), last["actor"].clone()),
        (json!("credit_limit"), json!(450000), json!("cara"))
    );
    // The same stale version again is a conflict.
    let (code, _, err) = cli(
        &ws,
        &["--as", "cara", "save", "account", "--id", "acc_0002", "--version", &v, "--set", "credit_limit=1"],
    );
    assert_eq!(
        (code, err["code"].clone(), err["fault"].clone(), err["retriable"].clone()),
        (1, json!("conflict"), json!("user"), json!(false))
    );
}

#[test]
fn errors_are_typed_json_on_stderr() {
    let (_d, ws) = demo();
    let (code, out, err) =
        cli(&ws, &["--as", "ben", "query", "--spec", r#"{"object":"opportunity","fields":["margin_pct"]}"#]);
    assert_eq!(code, 1);
    assert_eq!(out, json!(""));
    assert_eq!(
        (err["code"].clone(), err["field"].clone()),
        (json!("schema.unknown_field"), json!("margin_pct"))
    );
    let (code, _, err) = cli(
        &ws,
        &[
            "--as",
            "cara",
            "save",
            "invoice",
            "--id",
            "inv_0002",
            "--set",
            "status=paid",
            "--set",
            "paid_date=",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(
        (err["code"].clone(), err["field"].clone(), err["message"].clone()),
        (json!("record.validation_rule"), json!("paid_date"), json!("A paid invoice needs a paid date."))
    );
    let (code, _, err) = cli(&ws, &["--as", "dan", "save", "note", "--set", "title=x"]);
    assert_eq!((code, err["code"].clone()), (1, json!("permission")));
    let (code, _, err) = cli(&ws, &["query", "--spec", "{}"]);
    assert_eq!((code, err["code"].clone()), (1, json!("access.unknown_user")));
    let (code, _, _) = cli(&ws, &["frobnicate"]);
    assert_eq!(code, 2);
    let (code, _, err) = cli(&ws.with_extension("missing"), &["--as", "ava", "get", "account", "acc_0001"]);
    assert_eq!(
        (code, err["code"].clone(), err["fault"].clone()),
        (1, json!("store.not_initialized"), json!("admin"))
    );
}

#[test]
fn import_export_and_deploy() {
    let (d, ws) = demo();
    let csv = d.path().join("notes.csv");
    std::fs::write(&csv, "account,title,body\nacc_0001,Call,Went well\nacc_0001,,Missing title\n").unwrap();
    let (code, _, err) = cli(&ws, &["--as", "ben", "import", "note", csv.to_str().unwrap()]);
    assert_eq!((code, err["code"].clone()), (1, json!("import.invalid_csv")));
    assert_eq!(err["details"][0]["path"], json!("line 3 `title`"));
    let (code, out, _) =
        cli(&ws, &["--as", "ben", "import", "note", csv.to_str().unwrap(), "--skip-invalid"]);
    assert_eq!((code, out["imported"].clone(), out["failed"].clone()), (0, json!(1), json!(1)));

    let out_file = d.path().join("out.csv");
    let (code, out, _) = cli(
        &ws,
        &[
            "--as",
            "ben",
            "export",
            "--spec",
            r#"{"object":"note","fields":["title"],"filters":{"field":"title","op":"eq","value":"Call"}}"#,
            "--out",
            out_file.to_str().unwrap(),
        ],
    );
    assert_eq!((code, out["records"].clone()), (0, json!(1)));
    assert!(std::fs::read_to_string(&out_file).unwrap().starts_with("id,title\n"));

    // Deploy: a definition with an error names its path and exits 1; a good one bumps the generation.
    let mut def: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/demo/workspace.json"))
            .unwrap(),
    )
    .unwrap();
    def["objects"][0]["fields"][0]["type"] = json!("bogus");
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, def.to_string()).unwrap();
    let (code, _, err) = cli(&ws, &["--as", "ava", "deploy", bad.to_str().unwrap()]);
    assert_eq!((code, err["code"].clone()), (1, json!("definition.invalid")));
    assert_eq!(err["details"][0]["path"], json!("/objects/0/fields/0/type"));
    def["objects"][0]["fields"][0]["type"] = json!("text");
    def["objects"][0]["label"] = json!("Customer");
    let good = d.path().join("good.json");
    std::fs::write(&good, def.to_string()).unwrap();
    let (code, out, _) = cli(&ws, &["--as", "ava", "deploy", good.to_str().unwrap()]);
    assert_eq!((code, out["generation"].clone()), (0, json!(2)));
}

#[test]
fn a_failed_init_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let def = dir.path().join("def.json");
    let mut doc: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/demo/workspace.json"))
            .unwrap(),
    )
    .unwrap();
    doc["data"] = json!({"account": "missing.csv"});
    std::fs::write(&def, doc.to_string()).unwrap();
    let ws = dir.path().join("w.countersign");
    let (code, _, err) = cli(&ws, &["init", "--definition", def.to_str().unwrap()]);
    assert_eq!((code, err["code"].clone()), (1, json!("store.io")));
    assert!(!ws.exists());
}

#[test]
fn providers_need_ai_manage_and_a_local_endpoint() {
    let (_d, ws) = demo();
    let (code, _, err) = cli(
        &ws,
        &["--as", "ben", "provider", "add", "p", "--kind", "openai", "--url", "http://127.0.0.1:8080/v1"],
    );
    assert_eq!((code, err["code"].clone()), (1, json!("permission")));
    let (code, _, err) = cli(
        &ws,
        &["--as", "ava", "provider", "add", "p", "--kind", "openai", "--url", "https://api.example.com/v1"],
    );
    assert_eq!(
        (code, err["code"].clone(), err["field"].clone()),
        (1, json!("record.invalid_value"), json!("base_url"))
    );
    let (code, out, _) = cli(
        &ws,
        &["--as", "ava", "provider", "add", "p", "--kind", "ollama", "--url", "http://localhost:11434"],
    );
    assert_eq!((code, out["structured_form"].clone()), (0, json!("ollama_format")));
    let (_, out, _) = cli(&ws, &["--as", "ava", "provider", "list"]);
    assert_eq!(out["providers"][0]["key"], json!("p"));
    // Nothing answers on port 9: the test reports the endpoint unreachable, typed.
    cli(
        &ws,
        &["--as", "ava", "provider", "add", "dead", "--kind", "openai", "--url", "http://127.0.0.1:9/v1"],
    );
    let (code, _, err) = cli(&ws, &["--as", "ava", "provider", "test", "dead"]);
    assert_eq!(
        (code, err["code"].clone(), err["fault"].clone()),
        (1, json!("integration.unreachable"), json!("admin"))
    );
    let (code, _, err) =
        cli(&ws, &["--as", "ava", "model", "pin", "m", "--provider", "p", "--model", "qwen2.5:latest"]);
    assert_eq!((code, err["code"].clone()), (1, json!("record.invalid_value")));
    let (code, out, _) = cli(&ws, &["--as", "ava", "provider", "remove", "p"]);
    assert_eq!((code, out["removed"].clone()), (0, json!("p")));
}

#[test]
fn backup_then_restore_brings_the_workspace_back_and_backs_up_what_it_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("b.countersign");
    assert_eq!(cli(&ws, &["init", "--demo"]).0, 0);
    let (code, taken, err) = cli(&ws, &["backup"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(taken["reason"], json!("manual"));
    let backup = taken["path"].as_str().unwrap().to_string();
    assert!(std::path::Path::new(&backup).starts_with(dir.path().join("b.countersign.backups")));
    let (code, _, err) =
        cli(&ws, &["--as", "cara", "save", "account", "--id", "acc_0002", "--set", "credit_limit=1.00"]);
    assert_eq!(code, 0, "{err}");
    let limit = |ws: &std::path::Path| {
        cli(ws, &["--as", "cara", "get", "account", "acc_0002"]).1["fields"]["credit_limit"].clone()
    };
    let changed = limit(&ws);

    // Ben may not replace the workspace; a restore needs --as; ava may.
    let (code, _, err) = cli(&ws, &["--as", "ben", "restore", &backup]);
    assert_eq!((code, err["code"].clone()), (1, json!("permission")));
    assert_eq!(cli(&ws, &["restore", &backup]).0, 1);
    assert_eq!(limit(&ws), changed);
    let (code, out, err) = cli(&ws, &["--as", "ava", "restore", &backup]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(limit(&ws), changed, "the save after the backup is gone");
    assert_eq!(out["replacedBackup"]["reason"], json!("before_restore"));
    let (_, list, _) = cli(&ws, &["backup", "--list"]);
    let reasons: Vec<&str> =
        list["backups"].as_array().unwrap().iter().map(|b| b["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons.len(), 2);
    assert!(reasons.contains(&"manual") && reasons.contains(&"before_restore"));
}
