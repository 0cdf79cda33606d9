//! Tools from the CLI: an HTTP tool written from flags (a widening or open definition
//! refused), listed beside the kernel's own with kind and effect; a call as a sales rep waits
//! for approval, an approver lists it with every argument and approves it, and the target gets
//! exactly one request carrying the call's operation key; a denied call tells why.

use crate::common::cli;
use countersign_kernel::open::{self, Start};
use countersign_kernel::WorkspaceOptions;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// Each request's idempotency key and body, as the target saw them.
type Requests = Arc<Mutex<Vec<(String, String)>>>;

/// A target on 127.0.0.1 that answers 200 and keeps each request's idempotency key and body.
fn target() -> (String, Requests) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut key, mut length) = (String::new(), 0usize);
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h == "\r\n" || h.is_empty() {
                    break;
                }
                let lower = h.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("idempotency-key:") {
                    key = v.trim().to_string();
                }
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            log.lock().unwrap().push((key, String::from_utf8_lossy(&body).into_owned()));
            let b = r#"{"ticket":"T-1"}"#;
            let mut out = stream;
            let _ = write!(out, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}", b.len());
        }
    });
    (url, seen)
}

#[test]
fn an_http_tool_from_the_cli_waits_for_approval_and_reaches_its_target_once() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("w.countersign");
    open::create(&ws, Start::Demo, WorkspaceOptions::default()).unwrap();
    let (url, seen) = target();
    let inputs = r#"{"type":"object","properties":{"title":{"type":"string","maxLength":80},"account":{"type":"string"}},"required":["title"],"additionalProperties":false}"#;
    let add = |who: &str, inputs: &str| {
        cli(
            &ws,
            &[
                "--as",
                who,
                "tool",
                "add-http",
                "open_ticket",
                "--description",
                "Open a support ticket.",
                "--effect",
                "changes_outside",
                "--url",
                &format!("{url}/tickets"),
                "--inputs",
                inputs,
                "--body",
                r#"{"subject":"{title}","customer":"{account}"}"#,
                "--policy",
                "ask",
                "--capability",
                "cli",
                "--deduplicates",
            ],
        )
    };
    let (code, _, err) = add("ben", inputs);
    assert_eq!((code, err["code"].as_str()), (1, Some("permission")), "{err}");
    let open_schema = inputs.replace(r#","additionalProperties":false"#, "");
    let (code, _, err) = add("ava", &open_schema);
    assert_eq!((code, err["code"].as_str()), (1, Some("tool.invalid")), "{err}");
    let (code, saved, err) = add("ava", inputs);
    assert_eq!(code, 0, "{err}");
    assert_eq!((saved["kind"].as_str(), saved["version"].as_i64()), (Some("http"), Some(1)));

    let list = cli(&ws, &["--as", "ben", "tool", "list"]).1;
    let kinds: Vec<(String, String)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                format!("{}/{}", t["kind"].as_str().unwrap(), t["effect"].as_str().unwrap()),
            )
        })
        .collect();
    assert!(kinds.contains(&("read_record".into(), "kernel/reads_workspace".into())), "{kinds:?}");
    assert!(kinds.contains(&("open_ticket".into(), "http/changes_outside".into())), "{kinds:?}");

    let input = r#"{"title":"Printer on fire","account":"Acme","_rationale":"The customer called twice."}"#;
    let (code, asked, err) =
        cli(&ws, &["--as", "ben", "tool", "call", "open_ticket", "--input", input, "--run", "r1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(asked["state"], "waiting");
    let id = asked["call"]["id"].as_str().unwrap().to_string();
    assert!(seen.lock().unwrap().is_empty());
    let (code, _, err) = cli(&ws, &["--as", "ben", "approve", &id]);
    assert_eq!((code, err["code"].as_str()), (1, Some("permission")), "{err}");
    let waiting = cli(&ws, &["--as", "cara", "approvals"]).1;
    assert_eq!(waiting[0]["arguments"]["title"], "Printer on fire");
    assert_eq!(waiting[0]["rationale"], "The customer called twice.");
    let (code, done, err) = cli(&ws, &["--as", "cara", "approve", &id, "--comment", "go"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!((done["state"].as_str(), done["output"]["ticket"].as_str()), (Some("succeeded"), Some("T-1")));
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].0, "r1:1:open_ticket");
    let body: Value = serde_json::from_str(&requests[0].1).unwrap();
    assert_eq!(body, serde_json::json!({"subject": "Printer on fire", "customer": "Acme"}));

    let asked = cli(&ws, &["--as", "ben", "tool", "call", "open_ticket", "--input", input, "--run", "r2"]).1;
    let id = asked["call"]["id"].as_str().unwrap().to_string();
    let denied = cli(&ws, &["--as", "cara", "deny", &id, "--comment", "Use the phone."]).1;
    assert_eq!(denied["fault"]["code"], "TOOL_APPROVAL_DENIED");
    assert!(denied["fault"]["message"].as_str().unwrap().contains("Use the phone."));
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// Workspace A connects workspace B's own MCP server (`countersign-cli mcp`, a real MCP server
/// over standard input and output) as a source of tools: listed with kind and the effects its
/// hints propose, blocked until allowed, then called as Ben through the one call path; a sales
/// rep cannot connect a server.
#[test]
fn an_mcp_server_from_the_cli_is_listed_pinned_blocked_until_allowed_and_called() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.countersign"), dir.path().join("b.countersign"));
    open::create(&a, Start::Demo, WorkspaceOptions::default()).unwrap();
    open::create(&b, Start::Demo, WorkspaceOptions::default()).unwrap();
    assert_eq!(cli(&b, &["--as", "ava", "mcp", "on"]).0, 0);
    let exe = env!("CARGO_BIN_EXE_countersign-cli");
    let b_path = b.to_str().unwrap();
    let add = |who: &str| {
        cli(
            &a,
            &[
                "--as",
                who,
                "tool",
                "add-mcp",
                "crm",
                "--effect",
                "search_notes=changes_outside",
                "--",
                exe,
                "--workspace",
                b_path,
                "--as",
                "ava",
                "mcp",
            ],
        )
    };
    let (code, _, err) = add("ben");
    assert_eq!((code, err["code"].as_str()), (1, Some("permission")), "{err}");
    let (code, out, err) = add("ava");
    assert_eq!(code, 0, "{err}");
    let reviewed = out["review"]["tools"].as_array().unwrap();
    let effect = |t: &str| {
        reviewed
            .iter()
            .find(|x| x["serverTool"] == t)
            .map(|x| x["proposedEffect"].as_str().unwrap().to_string())
    };
    assert_eq!(effect("describe_objects").as_deref(), Some("reads_outside"));
    assert_eq!(effect("propose_update").as_deref(), Some("changes_outside"));

    let (_, list, _) = cli(&a, &["--as", "ben", "tool", "list"]);
    let row = |n: &str| list.as_array().unwrap().iter().find(|t| t["name"] == n).cloned().unwrap();
    assert_eq!(
        (row("crm_describe_objects")["kind"].as_str(), row("crm_describe_objects")["policy"].as_str()),
        (Some("mcp"), Some("block"))
    );
    assert_eq!(
        row("crm_search_notes")["effect"],
        "changes_outside",
        "the admin's --effect wins over the hint"
    );

    let call =
        || cli(&a, &["--as", "ben", "tool", "call", "crm_describe_objects", "--input", "{}", "--run", "r1"]);
    let (_, refused, _) = call();
    assert_eq!(refused["fault"]["code"], "TOOL_AUTHORIZATION_DENIED");
    assert_eq!(cli(&a, &["--as", "ava", "tool", "policy", "crm_describe_objects", "allow"]).0, 0);
    let (code, out, err) = call();
    assert_eq!(code, 0, "{err}");
    assert_eq!(out["state"], "succeeded", "{out}");
    assert!(
        out["output"].to_string().contains("invoice"),
        "B's objects, as B's MCP server describes them: {out}"
    );

    // Reviewed again: the same list, nothing changed.
    let (_, review, _) = cli(&a, &["--as", "ava", "tool", "review-mcp", "crm"]);
    assert_eq!(review["digest"], review["pinnedDigest"]);
    assert!(review["tools"].as_array().unwrap().iter().all(|t| t["change"] == "same"));
}
