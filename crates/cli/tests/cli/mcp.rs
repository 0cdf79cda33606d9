//! Countersign as a local MCP server, driven by the official Rust SDK's own client (`rmcp`)
//! over the real `countersign-cli mcp` process's standard input and output: off by default;
//! once on, Ben is listed the tools, queries with his permissions (only his opportunities, no
//! field he may not read, no field hidden from AI), proposes an update that writes nothing
//! until accepted, and is refused a tool switched off — each call traced as an `mcp` call.

use crate::common::cli;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use std::path::Path;

pub type Client = RunningService<RoleClient, ()>;

pub async fn connect(ws: &Path, user: &str) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_countersign-cli"));
    command.arg("--workspace").arg(ws).args(["--as", user, "mcp"]).env_remove("COUNTERSIGN_WORKSPACE");
    ().serve(TokioChildProcess::new(command).expect("the server starts")).await.expect("the MCP handshake")
}

pub async fn tool_names(client: &Client) -> Vec<String> {
    client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect()
}

/// A tool's result: `Ok(structured content)`, or `Err(the kernel's typed error)`.
pub async fn call(client: &Client, name: &str, arguments: Value) -> Result<Value, Value> {
    let Value::Object(arguments) = arguments else { panic!("arguments are an object") };
    let result: CallToolResult = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(arguments))
        .await
        .expect("a tool result (an error is a result marked as one)");
    let text: String = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
    if result.is_error == Some(true) {
        Err(serde_json::from_str(&text).unwrap_or(Value::String(text)))
    } else {
        Ok(result.structured_content.unwrap_or_else(|| serde_json::from_str(&text).unwrap()))
    }
}

fn demo_ids(object: &str, owner: &str) -> Vec<String> {
    let csv = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/demo/data/{object}.csv")),
    )
    .unwrap();
    csv.lines()
        .skip(1)
        .filter(|l| l.split(',').nth(1) == Some(owner))
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_queries_and_proposes_as_ben_and_is_refused_what_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("mcp.countersign");
    assert_eq!(cli(&ws, &["init", "--demo"]).0, 0);

    // Off by default: no tool listed, and a call is refused (and traced as refused).
    let client = connect(&ws, "ben").await;
    assert!(tool_names(&client).await.is_empty());
    let off = call(&client, "describe_objects", json!({})).await.unwrap_err();
    assert_eq!(off["code"], "permission", "{off}");
    client.cancel().await.unwrap();
    // Only ai.manage turns it on.
    let (code, _, err) = cli(&ws, &["--as", "ben", "mcp", "on"]);
    assert_eq!((code, err["code"].as_str()), (1, Some("permission")));
    assert_eq!(cli(&ws, &["--as", "ava", "mcp", "on"]).0, 0);

    let client = connect(&ws, "ben").await;
    let tools = tool_names(&client).await;
    for t in [
        "describe_objects",
        "query_records",
        "read_record",
        "search_notes",
        "summarize_record",
        "propose_update",
        "propose_record",
    ] {
        assert!(tools.iter().any(|n| n == t), "{t} listed: {tools:?}");
    }

    // Ben's projection: no margin on opportunities (his permission set hides it), and no tax id
    // on accounts (hidden from any AI).
    let described = call(&client, "describe_objects", json!({"object": "opportunity"})).await.unwrap();
    let fields: Vec<&str> = described["objects"][0]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"stage") && !fields.contains(&"margin_pct"), "{fields:?}");

    // Only his opportunities (they are private to their owners).
    let rows = call(
        &client,
        "query_records",
        json!({"object": "opportunity", "fields": ["name", "stage"], "limit": 200}),
    )
    .await
    .unwrap();
    let mut got: Vec<String> =
        rows["records"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    let mut mine = demo_ids("opportunity", "ben");
    got.sort();
    mine.sort();
    assert_eq!(got, mine);
    assert!(rows["records"][0].get("margin_pct").is_none());
    for hidden in [
        json!({"object": "opportunity", "fields": ["margin_pct"]}),
        json!({"object": "opportunity", "filters": {"field": "margin_pct", "op": "gt", "value": 10}}),
        json!({"object": "account", "fields": ["tax_id"]}),
    ] {
        let e = call(&client, "query_records", hidden.clone()).await.unwrap_err();
        assert_eq!(e["code"], "record.invalid_value", "{hidden} → {e}");
    }
    let theirs = demo_ids("opportunity", "eve")[0].clone();
    let e = call(&client, "read_record", json!({"object": "opportunity", "id": theirs})).await.unwrap_err();
    assert_eq!(e["code"], "record.invalid_value", "another's private record is absent: {e}");

    // A proposal: in the inbox, nothing written. A value the picklist does not hold, or a field
    // he may not edit, is refused with the reason.
    let target = &mine[0];
    let before = cli(&ws, &["--as", "ben", "get", "opportunity", target]).1;
    let proposed = call(
        &client,
        "propose_update",
        json!({"object": "opportunity", "id": target, "values": {"stage": "negotiation"}, "rationale": "the buyer asked for terms"}),
    )
    .await
    .unwrap();
    assert_eq!(proposed["state"], "open", "{proposed}");
    let after = cli(&ws, &["--as", "ben", "get", "opportunity", target]).1;
    assert_eq!(before, after, "nothing is written before a reviewer accepts");
    for (values, field) in [(json!({"stage": "won-ish"}), "stage"), (json!({"margin_pct": 50}), "margin_pct")]
    {
        let e =
            call(&client, "propose_update", json!({"object": "opportunity", "id": target, "values": values}))
                .await
                .unwrap_err();
        assert_eq!(
            (e["code"].as_str(), e["field"].as_str()),
            (Some("record.invalid_value"), Some(field)),
            "{e}"
        );
    }
    let inbox = cli(&ws, &["--as", "ava", "proposals", "list"]).1;
    let listed = inbox["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == proposed["proposal"])
        .expect("in the inbox");
    assert_eq!((listed["capability"].as_str(), listed["createdBy"].as_str()), (Some("mcp"), Some("ben")));

    // A tool switched off is no longer listed, and refused (the same session sees it).
    assert_eq!(cli(&ws, &["--as", "ava", "mcp", "tool", "propose_update", "off"]).0, 0);
    assert!(!tool_names(&client).await.iter().any(|t| t == "propose_update"));
    let e = call(
        &client,
        "propose_update",
        json!({"object": "opportunity", "id": target, "values": {"stage": "proposal"}}),
    )
    .await
    .unwrap_err();
    assert_eq!(e["code"], "permission", "{e}");
    // The capability's autonomy `read_only` switches every write tool off.
    let mut binding = cli(&ws, &["--as", "ava", "capability", "show", "mcp"]).1;
    binding["autonomy"] = json!("read_only");
    assert_eq!(cli(&ws, &["--as", "ava", "capability", "set", "--json", &binding.to_string()]).0, 0);
    let tools = tool_names(&client).await;
    assert!(
        tools.contains(&"query_records".to_string()) && !tools.contains(&"propose_record".to_string()),
        "{tools:?}"
    );
    client.cancel().await.unwrap();

    // Every call is an `mcp` call in the trace: answered, or refused with its code.
    let trace = cli(&ws, &["--as", "ava", "trace", "list", "--limit", "50"]).1;
    let calls: Vec<&Value> =
        trace["entries"].as_array().unwrap().iter().filter(|t| t["capability"] == "mcp").collect();
    assert_eq!(
        calls.iter().filter(|t| t["outcome"] == "answered").count(),
        3,
        "describe, query, propose: {calls:?}"
    );
    assert!(calls.iter().any(|t| t["outcome"] == "refused" && t["code"] == "permission"));
}
