//! Calls of tools from outside under the contract, against a real HTTP target on 127.0.0.1:
//! an approved change reaches its target once even when its answer is lost and it is sent
//! again (the target deduplicates on the operation key); without deduplication the outcome is
//! unknown until a person says; denied and expired calls tell the model and never run; a call
//! is refused before it is recorded when blocked, not allowed to the capability, or invalid; an
//! oversized output is cut before it is stored or returned; the keyring's key reaches the
//! target and nothing else (the canary, under a real keyring).

use crate::common::*;
use countersign_kernel::ai::tools::calls::{CallState, Decision, ToolRequest, ToolStep};
use countersign_kernel::ai::tools::definition::ToolDef;
use countersign_kernel::{Code, Session};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// One request as the target saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    method: String,
    path: String,
    pub(crate) headers: HashMap<String, String>,
    body: Value,
}

/// What the target does with a request: answer, or close the connection without answering.
pub(crate) enum Reply {
    Json(u16, Value),
    Lose,
}

pub(crate) struct Target {
    pub(crate) url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Target {
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A target on 127.0.0.1 answering each request with `reply` (given it and what came before).
pub(crate) fn target(reply: impl Fn(&Seen, &[Seen]) -> Reply + Send + 'static) -> Target {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (method, path) =
                (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
            let mut headers = HashMap::new();
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h == "\r\n" || h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                }
            }
            let length: usize = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let s =
                Seen { method, path, headers, body: serde_json::from_slice(&body).unwrap_or(Value::Null) };
            let before = log.lock().unwrap().clone();
            log.lock().unwrap().push(s.clone());
            let mut out = stream;
            match reply(&s, &before) {
                Reply::Json(status, v) => {
                    let b = v.to_string();
                    let _ = write!(out, "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}", b.len());
                }
                Reply::Lose => drop(out),
            }
        }
    });
    Target { url, seen }
}

pub(crate) fn refund_tool(url: &str, policy: &str, deduplicates: bool) -> ToolDef {
    serde_json::from_value(json!({
        "name": "refund_invoice",
        "description": "Refund part of an invoice in the billing system.",
        "effect": "changes_outside",
        "implementation": {"kind": "http", "method": "POST", "url": format!("{url}/refunds/{{invoice}}"),
                           "body": {"amount": "{amount}", "reason": "{reason}"}, "deduplicates": deduplicates},
        "inputSchema": {"type": "object", "properties": {
            "invoice": {"type": "string"}, "amount": {"type": "number"},
            "reason": {"type": "string", "enum": ["damaged", "late", "duplicate"]}},
            "required": ["invoice", "amount"], "additionalProperties": false},
        "capabilities": ["assistant", "cli"],
        "policy": policy,
        "allowChangesOutside": policy == "allow",
        "inputOverrides": {"reason": {"allowedValues": ["damaged", "late"]}}
    }))
    .unwrap()
}

fn request(run: &str, input: Value) -> ToolRequest {
    ToolRequest {
        tool: "refund_invoice".into(),
        input,
        capability: "assistant".into(),
        run: run.into(),
        step: 1,
    }
}

pub(crate) fn refund_input() -> Value {
    json!({"invoice": "INV-2025-00007", "amount": 120.5, "reason": "damaged", "_rationale": "The customer reported a broken delivery."})
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Send a prepared call and record it; what the model gets.
fn run(s: &Session<'_>, step: ToolStep) -> ToolStep {
    let ToolStep::Run(prepared) = step else { panic!("expected a call to run, got {step:?}") };
    let executed = rt().block_on(prepared.execute());
    s.finish_tool_call(&prepared.call_id, executed).unwrap()
}

fn result(step: &ToolStep) -> Result<Value, (String, String)> {
    match step {
        ToolStep::Done { result, .. } => result.clone().map_err(|f| (f.code.clone(), f.message.clone())),
        other => panic!("expected an ended call, got {other:?}"),
    }
}

#[test]
fn an_approved_change_reaches_its_target_once_even_when_its_answer_is_lost() {
    // The target applies a refund once per operation key, and loses its first answer.
    let applied = Arc::new(Mutex::new(0));
    let counter = applied.clone();
    let t = target(move |s, before| {
        let key = s.headers.get("idempotency-key").cloned().unwrap_or_default();
        if before.iter().any(|b| b.headers.get("idempotency-key") == Some(&key)) {
            return Reply::Json(200, json!({"refund": "rf_1", "status": "done", "deduplicated": true}));
        }
        *counter.lock().unwrap() += 1;
        Reply::Lose
    });
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    ava.save_tool(&refund_tool(&t.url, "ask", true)).unwrap();
    let ben = f.ws.session("ben").unwrap();
    let ToolStep::Waiting(call) = ben.request_tool_call(&request("run_7", refund_input())).unwrap() else {
        panic!("a call of an `ask` tool waits")
    };
    assert_eq!(call.operation_key, "run_7:1:refund_invoice");
    assert!(t.seen().is_empty(), "nothing is sent before the approval");
    // The approval shows every argument in full, who asked and why.
    let cara = f.ws.session("cara").unwrap();
    let waiting = cara.approvals().unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(
        waiting[0].arguments,
        json!({"invoice": "INV-2025-00007", "amount": 120.5, "reason": "damaged"})
    );
    assert_eq!(
        (waiting[0].asked_by.as_str(), waiting[0].rationale.as_str()),
        ("ben", "The customer reported a broken delivery.")
    );
    assert_eq!(ben.approvals().unwrap_err().code, Code::Permission, "a sales rep does not approve");
    let step = cara.decide_tool_call(&call.id, Decision::Approve, Some("ok")).unwrap();
    let out = run(&cara, step);
    assert_eq!(result(&out).unwrap()["refund"], "rf_1");
    let seen = t.seen();
    assert_eq!(seen.len(), 2, "sent again after the lost answer");
    assert!(seen.iter().all(|s| s.headers["idempotency-key"] == "run_7:1:refund_invoice"));
    assert_eq!(*applied.lock().unwrap(), 1, "the target applied it once");
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("POST", "/refunds/INV-2025-00007"));
    assert_eq!(seen[0].body, json!({"amount": 120.5, "reason": "damaged"}));
    // Asked again with the same key (a retried step): the recorded outcome, nothing sent.
    let again = ben.request_tool_call(&request("run_7", refund_input())).unwrap();
    assert_eq!(result(&again).unwrap()["refund"], "rf_1");
    assert_eq!(t.seen().len(), 2);
    let call = ben.tool_call(&call.id).unwrap();
    assert_eq!(
        (call.state, call.attempts, call.decided_by.as_deref()),
        (CallState::Succeeded, 2, Some("cara"))
    );
}

#[test]
fn a_change_whose_answer_is_lost_without_deduplication_is_unknown_until_a_person_says() {
    let t = target(|_, _| Reply::Lose);
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    ava.save_tool(&refund_tool(&t.url, "allow", false)).unwrap();
    let step = ava.request_tool_call(&request("run_8", refund_input())).unwrap();
    let out = run(&ava, step);
    assert_eq!(result(&out).unwrap_err().0, "outcome_unknown");
    assert_eq!(t.seen().len(), 1, "a change is not sent twice when its target cannot tell");
    let ToolStep::Done { call: Some(call), .. } = out else { panic!() };
    assert_eq!(call.state, CallState::OutcomeUnknown);
    assert_eq!(
        f.ws.session("ben").unwrap().resolve_tool_call(&call.id, false, "x").unwrap_err().code,
        Code::Permission
    );
    let to_resolve = ava.calls_to_resolve().unwrap();
    assert_eq!(to_resolve.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), [call.id.as_str()]);
    assert_eq!(f.ws.session("ben").unwrap().calls_to_resolve().unwrap_err().code, Code::Permission);
    let resolved = ava.resolve_tool_call(&call.id, false, "The billing system has no such refund.").unwrap();
    assert_eq!(resolved.state, CallState::Failed);
    assert!(ava.calls_to_resolve().unwrap().is_empty());
    let again = ava.request_tool_call(&request("run_8", refund_input())).unwrap();
    assert_eq!(
        result(&again).unwrap_err(),
        ("execution_error".into(), "The billing system has no such refund.".into())
    );
}

#[test]
fn denied_and_expired_calls_tell_the_model_and_never_run() {
    let t = target(|_, _| Reply::Json(200, json!({"ok": true})));
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    ava.save_tool(&refund_tool(&t.url, "ask", true)).unwrap();
    let ToolStep::Waiting(denied) = ava.request_tool_call(&request("run_9", refund_input())).unwrap() else {
        panic!()
    };
    let out = ava
        .decide_tool_call(&denied.id, Decision::Deny, Some("Refunds over 100 go through finance."))
        .unwrap();
    let (code, message) = result(&out).unwrap_err();
    assert_eq!(code, "TOOL_APPROVAL_DENIED");
    assert!(message.contains("Refunds over 100 go through finance."), "{message}");
    assert_eq!(ava.decide_tool_call(&denied.id, Decision::Approve, None).unwrap_err().code, Code::Conflict);
    // Nobody decides within 24 hours: expired.
    let ToolStep::Waiting(late) = ava.request_tool_call(&request("run_10", refund_input())).unwrap() else {
        panic!()
    };
    f.clock.advance(chrono::Duration::hours(25));
    assert!(ava.approvals().unwrap().is_empty());
    let again = ava.request_tool_call(&request("run_10", refund_input())).unwrap();
    assert_eq!(result(&again).unwrap_err().0, "TOOL_APPROVAL_EXPIRED");
    assert_eq!(ava.decide_tool_call(&late.id, Decision::Approve, None).unwrap_err().code, Code::Conflict);
    assert!(t.seen().is_empty(), "neither call was sent");
}

#[test]
fn a_call_is_refused_before_it_is_recorded_when_blocked_not_allowed_here_or_invalid() {
    let t = target(|_, _| Reply::Json(200, json!({"ok": true})));
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let mut blocked = refund_tool(&t.url, "ask", true);
    blocked.policy = Default::default();
    ava.save_tool(&blocked).unwrap();
    assert_eq!(
        result(&ava.request_tool_call(&request("r1", refund_input())).unwrap()).unwrap_err().0,
        "TOOL_AUTHORIZATION_DENIED"
    );
    ava.save_tool(&refund_tool(&t.url, "ask", true)).unwrap();
    let mut elsewhere = request("r2", refund_input());
    elsewhere.capability = "summarize".into();
    assert_eq!(
        result(&ava.request_tool_call(&elsewhere).unwrap()).unwrap_err().0,
        "TOOL_AUTHORIZATION_DENIED"
    );
    // The admin narrowed `reason` to damaged or late; an unknown input is refused too.
    for bad in [
        json!({"invoice": "INV-1", "amount": 5, "reason": "duplicate"}),
        json!({"invoice": "INV-1", "amount": 5, "currency": "EUR"}),
        json!({"amount": 5}),
    ] {
        let (code, message) =
            result(&ava.request_tool_call(&request("r3", bad.clone())).unwrap()).unwrap_err();
        assert_eq!(code, "invalid_input", "{bad}: {message}");
    }
    let mut unknown = request("r4", refund_input());
    unknown.tool = "send_rocket".into();
    assert_eq!(result(&ava.request_tool_call(&unknown).unwrap()).unwrap_err().0, "invalid_input");
    assert!(ava.approvals().unwrap().is_empty(), "no refused call was recorded");
    assert!(t.seen().is_empty());
}

#[test]
fn an_oversized_output_is_cut_before_it_is_stored_or_returned() {
    let big = "x".repeat(300_000);
    let t = target(move |_, _| {
        Reply::Json(200, json!({"a": big, "b": "y".repeat(200_000), "c": ["z".repeat(10)]}))
    });
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let mut lookup = refund_tool(&t.url, "allow", true);
    lookup.effect = countersign_kernel::ai::tools::definition::Effect::ReadsOutside;
    lookup.allow_changes_outside = false;
    ava.save_tool(&lookup).unwrap();
    let out = run(&ava, ava.request_tool_call(&request("r5", refund_input())).unwrap());
    let v = result(&out).unwrap();
    assert_eq!(v["truncated"], true);
    let strings = [&v["output"]["a"], &v["output"]["b"]].map(|s| s.as_str().unwrap().chars().count());
    assert!(strings.iter().all(|n| *n <= 131_072), "{strings:?}");
    assert!(strings.iter().sum::<usize>() <= 262_144);
    let stored: String =
        f.ws.raw_connection()
            .query_row("SELECT result FROM tool_call WHERE operation_key = 'r5:1:refund_invoice'", [], |r| {
                r.get(0)
            })
            .unwrap();
    assert!(stored.len() < 262_144 + 1_000, "the stored output is the bounded one ({} bytes)", stored.len());
}

/// The canary: a key planted in the real OS keyring reaches the tool's target as a bearer
/// header and nothing else — not the workspace file, its WAL, the call's record or what the
/// model gets. Needs a Secret Service: `scripts/keyring-test.sh` runs it under a throwaway
/// gnome-keyring.
#[test]
#[ignore = "needs the OS keyring: scripts/keyring-test.sh"]
fn a_tools_key_reaches_its_target_and_nothing_else() {
    use countersign_kernel::ai::secrets::{self, SecretRef};
    let canary = format!("tk-canary-{}", std::process::id());
    let r = SecretRef::parse("secret://countersign/tool-canary-test").unwrap();
    secrets::set(&r, &countersign_kernel::ai::provider::Secret::new(canary.clone())).unwrap();
    let t =
        target(|s, _| Reply::Json(if s.path.contains("fail") { 401 } else { 200 }, json!({"echo": "fine"})));
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let mut keyed = refund_tool(&t.url, "allow", true);
    if let countersign_kernel::ai::tools::definition::ToolKind::Http { credential, .. } =
        &mut keyed.implementation
    {
        *credential = Some(r.uri());
    }
    ava.save_tool(&keyed).unwrap();
    let ok = run(&ava, ava.request_tool_call(&request("k1", refund_input())).unwrap());
    let mut failing = refund_input();
    failing["invoice"] = json!("fail");
    let refused = run(&ava, ava.request_tool_call(&request("k2", failing)).unwrap());
    assert!(t.seen().iter().all(|s| s.headers["authorization"] == format!("Bearer {canary}")));
    for step in [&ok, &refused] {
        assert!(!format!("{step:?}").contains(&canary));
    }
    assert_not_in_files(&f.ws, &canary);
    secrets::delete(&r).unwrap();
}

/// A tool from outside answers with this workspace's records as an admin sees them (another
/// app with more rights): what the asking sales rep could not read through his own session —
/// another owner's opportunity, the margin his permission set hides — is taken out before the
/// output is stored or a model reads it; the admin asking the same gets it whole.
#[test]
fn record_data_in_a_tools_output_is_what_the_asking_user_may_read() {
    let f = demo();
    let rows = demo_rows("opportunity");
    let mine = rows.iter().find(|r| r["owner"] == "ben").unwrap()["id"].clone();
    let theirs = rows.iter().find(|r| r["owner"] != "ben").unwrap()["id"].clone();
    let answer = json!({
        "object": "opportunity", "fields": ["name", "amount", "margin_pct"], "hasMore": false,
        "records": [{"id": mine, "name": "MINE", "amount": 1200, "margin_pct": 0.4242},
                    {"id": theirs, "name": "THEIRS", "amount": 900, "margin_pct": 0.1717}],
        "related": {"object": "opportunity", "id": theirs, "name": "THEIRS"},
        "accounts": {"object": "account", "fields": [{"field": "tax_id", "value": "TAX-SECRET"}, {"field": "name", "value": "Acme"}]}
    });
    let t = target(move |_, _| Reply::Json(200, answer.clone()));
    let ava = f.ws.session("ava").unwrap();
    let def: ToolDef = serde_json::from_value(json!({
        "name": "crm_lookup", "description": "Look deals up in the CRM.", "effect": "reads_outside",
        "implementation": {"kind": "http", "method": "GET", "url": format!("{}/deals", t.url)},
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
        "capabilities": ["assistant"], "policy": "allow"
    }))
    .unwrap();
    ava.save_tool(&def).unwrap();
    let ask = |s: &Session<'_>, key: &str| {
        let req = ToolRequest {
            tool: "crm_lookup".into(),
            input: json!({}),
            capability: "assistant".into(),
            run: key.into(),
            step: 1,
        };
        let step = s.request_tool_call(&req).unwrap();
        let ToolStep::Done { call: Some(call), result: Ok(out) } = run(s, step) else {
            panic!("the lookup ends")
        };
        (call, out)
    };
    let ben = f.ws.session("ben").unwrap();
    let (call, out) = ask(&ben, "r_ben");
    assert_eq!(out["records"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["records"][0]["id"], json!(mine));
    assert_eq!(out["fields"], json!(["name", "amount"]));
    assert!(out.get("related").is_none(), "another owner's record is absent");
    assert_eq!(out["accounts"]["fields"], json!([{"field": "name", "value": "Acme"}]));
    let text = out.to_string();
    for hidden in ["THEIRS", "0.4242", "0.1717", "TAX-SECRET", "margin_pct"] {
        assert!(!text.contains(hidden), "{hidden} reached what the model reads: {text}");
    }
    assert_eq!(call.result.unwrap(), out, "stored as the model gets it");
    let (_, whole) = ask(&ava, "r_ava");
    assert_eq!(whole["records"].as_array().unwrap().len(), 2, "the admin reads both: {whole}");
    assert!(whole.to_string().contains("0.1717"));
}
