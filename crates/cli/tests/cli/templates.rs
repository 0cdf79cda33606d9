//! Workspaces built from templates other than the demo CRM, through the CLI: `init --template`
//! for each, the MCP server on a non-CRM workspace with no code naming its objects, and
//! `deploy --preview`, which prints every problem with its rows and deploys nothing.

use crate::common::cli;
use serde_json::{json, Value};
use std::path::Path;

const TEMPLATES: [(&str, &[&str]); 4] = [
    ("blank", &[]),
    ("crm", &["account", "contact", "opportunity", "invoice", "invoice_line", "note"]),
    ("freelance", &["client", "project", "time_entry"]),
    ("inventory", &["supplier", "product", "stock_movement"]),
];

fn keys(described: &Value) -> Vec<String> {
    let mut k: Vec<String> = described["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k
}

#[test]
fn every_template_initializes_with_its_records_or_without() {
    let dir = tempfile::tempdir().unwrap();
    for (name, objects) in TEMPLATES {
        let with = dir.path().join(format!("{name}.countersign"));
        let (code, out, err) = cli(&with, &["init", "--template", name]);
        assert_eq!(code, 0, "{name}: {err}");
        let imported = out["imported"].as_object().unwrap();
        assert_eq!(imported.len(), if name == "blank" { 0 } else { objects.len() }, "{name}: {out}");
        assert!(imported.values().all(|n| n.as_u64().unwrap() > 0), "{name}: {out}");
        // The template's first user can deploy and sees every object.
        let admin = if name == "crm" { "ava" } else { "me" };
        let described = cli(&with, &["--as", admin, "describe"]).1;
        let mut want: Vec<String> = objects.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(keys(&described), want, "{name}");

        let without = dir.path().join(format!("{name}-empty.countersign"));
        let (code, out, _) = cli(&without, &["init", "--template", name, "--no-records"]);
        assert_eq!((code, out["imported"].as_object().map(|m| m.len())), (0, Some(0)), "{name}: {out}");
    }
    let (code, _, err) = cli(&dir.path().join("x.countersign"), &["init", "--template", "zoo"]);
    assert_eq!((code, err["code"].as_str()), (1, Some("not_found")));
    assert!(err["message"].as_str().unwrap().contains("freelance"), "{err}");
    assert!(!dir.path().join("x.countersign").exists(), "a refused init leaves no file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_server_serves_a_non_crm_workspace_with_its_own_levels() {
    use crate::mcp::{call, connect, tool_names};
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("stock.countersign");
    assert_eq!(cli(&ws, &["init", "--template", "inventory"]).0, 0);
    assert_eq!(cli(&ws, &["--as", "me", "mcp", "on"]).0, 0);
    let client = connect(&ws, "warehouse").await;
    assert!(tool_names(&client).await.iter().any(|t| t == "query_records"));
    let described = call(&client, "describe_objects", json!({"object": "supplier"})).await.unwrap();
    let fields: Vec<&str> = described["objects"][0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    // The warehouse set hides suppliers' order e-mail.
    assert!(fields.contains(&"name") && !fields.contains(&"email"), "{fields:?}");
    let rows = call(
        &client,
        "query_records",
        json!({"object": "product", "fields": ["sku", "on_hand"], "sort": [{"field": "sku"}], "limit": 5}),
    )
    .await
    .unwrap();
    assert_eq!(rows["records"][0]["sku"], "SKU-1000", "{rows}");
    let product = rows["records"][0]["id"].as_str().unwrap().to_string();
    let proposed = call(
        &client,
        "propose_update",
        json!({"object": "product", "id": product, "values": {"on_hand": 12}, "rationale": "counted today"}),
    )
    .await
    .unwrap();
    assert_eq!(proposed["state"], "open", "{proposed}");
    client.cancel().await.unwrap();
}

#[test]
fn deploy_preview_prints_each_problem_with_its_rows_and_deploys_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("stock.countersign");
    assert_eq!(cli(&ws, &["init", "--template", "inventory"]).0, 0);
    let mut def: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../templates/inventory/workspace.json"),
        )
        .unwrap(),
    )
    .unwrap();
    def.as_object_mut().unwrap().remove("data");
    let product = def["objects"].as_array_mut().unwrap().iter_mut().find(|o| o["key"] == "product").unwrap();
    for f in product["fields"].as_array_mut().unwrap() {
        match f["key"].as_str().unwrap() {
            // Several products share a category; not every product is discontinued.
            "category" => f["required"] = json!(true),
            "name" => f["maxLength"] = json!(5),
            _ => {}
        }
    }
    product["fields"]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": "barcode", "label": "Barcode", "type": "text", "required": true}));
    let file = dir.path().join("next.json");
    std::fs::write(&file, def.to_string()).unwrap();
    let (code, preview, err) = cli(&ws, &["--as", "me", "deploy", "--preview", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let kinds: Vec<&str> =
        preview["problems"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["loss", "required_blanks"], "{preview}");
    let blanks = &preview["problems"][1];
    assert_eq!(
        (blanks["path"].as_str(), blanks["count"].as_u64()),
        (Some("/objects/product/fields/barcode"), Some(20))
    );
    assert_eq!(blanks["rows"].as_array().unwrap().len(), 20);
    assert!(preview["changes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["action"] == "add" && c["target"] == "field product.barcode"));
    assert_eq!(preview["applies"], false);
    // Nothing was deployed: a plain deploy is refused with the same problems, and the
    // generation has not moved.
    let (code, _, err) = cli(&ws, &["--as", "me", "deploy", file.to_str().unwrap()]);
    assert_eq!((code, err["code"].as_str()), (1, Some("definition.invalid")), "{err}");
    let (_, backups, _) = cli(&ws, &["backup", "--list"]);
    assert!(backups["backups"].as_array().is_some());
    // Only a user who may deploy may preview.
    let (code, _, err) = cli(&ws, &["--as", "warehouse", "deploy", "--preview", file.to_str().unwrap()]);
    assert_eq!((code, err["code"].as_str()), (1, Some("permission")), "{err}");
}
