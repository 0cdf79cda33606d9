//! The eval gate from the command line, against a model server on 127.0.0.1 that refuses
//! every question: a prompt version without a run is refused, its suite run fails and is
//! stored, activation is refused with the failing cases listed, and an override by a user
//! with ai.manage goes through with its reason recorded.

use crate::common::cli;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

/// An OpenAI-compatible server that serves one model and answers every chat with `answer`
/// (streamed in one chunk).
fn refusing_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let mut length = 0;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let mut out = stream;
            if path.ends_with("/models") {
                let b = json!({"data": [{"id": "fake-model", "meta": {"n_params": 1}}]}).to_string();
                let _ = write!(out, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}", b.len());
                continue;
            }
            let answer = json!({"refusal": {"reason": "I will not say"}}).to_string();
            let chunk =
                json!({"choices": [{"index": 0, "delta": {"content": answer}, "finish_reason": null}]});
            let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 500, "completion_tokens": 12}});
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n"
            );
        }
    });
    url
}

#[test]
fn a_prompt_version_that_breaks_the_ask_suite_is_refused_listing_the_cases_and_an_override_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("gate.countersign");
    assert_eq!(cli(&ws, &["init", "--demo"]).0, 0);
    let url = refusing_server();
    let ok = |args: &[&str]| {
        let (code, out, err) = cli(&ws, args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    ok(&["--as", "ava", "provider", "add", "local", "--kind", "openai", "--url", &url]);
    ok(&["--as", "ava", "model", "pin", "--provider", "local", "--model", "fake-model", "small"]);
    let suites = ok(&["--as", "ava", "eval", "suites"]);
    assert!(suites["suites"].as_array().unwrap().iter().any(|s| s["key"] == json!("ask-demo")));

    // No run against version 1 with this model: refused, saying what to run.
    let (code, _, err) = cli(&ws, &["--as", "ava", "prompt", "activate", "ask", "1"]);
    assert_eq!((code, err["code"].clone()), (1, json!("eval.gate")));
    assert!(err["message"].as_str().unwrap().contains("eval run ask-demo"), "{err}");

    // The run: a model that refuses everything passes only the case that expects a refusal.
    let run = ok(&["--as", "ava", "eval", "run", "ask-demo", "--prompt-version", "1"]);
    assert_eq!(run["outcome"], json!("failed"));
    assert_eq!(run["total"], json!(26));
    assert!(run["passed"].as_u64().unwrap() < 5, "{}", run["passed"]);

    // Refused again, now with the failing cases listed.
    let (code, _, err) = cli(&ws, &["--as", "ava", "prompt", "activate", "ask", "1"]);
    assert_eq!((code, err["code"].clone()), (1, json!("eval.gate")));
    let failing: Vec<&str> =
        err["details"].as_array().unwrap().iter().filter_map(|d| d["path"].as_str()).collect();
    assert!(failing.contains(&"ask-dev-01"), "{failing:?}");
    assert_eq!(failing.len() as u64, 26 - run["passed"].as_u64().unwrap());

    // cara may not override (no ai.manage); ava may, with a reason, which is recorded.
    let (code, _, err) = cli(&ws, &["--as", "cara", "prompt", "activate", "ask", "1", "--override", "mine"]);
    assert_eq!((code, err["code"].clone()), (1, json!("permission")));
    ok(&[
        "--as",
        "ava",
        "prompt",
        "activate",
        "ask",
        "1",
        "--override",
        "comparing the first version by hand",
    ]);
    let gates = ok(&["--as", "ava", "eval", "gates"]);
    let d: &Value = &gates["decisions"][0];
    assert_eq!(
        (d["overridden"].clone(), d["reason"].clone()),
        (json!(true), json!("comparing the first version by hand"))
    );
    assert_eq!(d["runId"], run["id"]);
}

#[test]
fn a_suite_shown_edited_and_published_becomes_its_next_version() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("suites.countersign");
    assert_eq!(cli(&ws, &["init", "--demo"]).0, 0);
    let ok = |args: &[&str]| {
        let (code, out, err) = cli(&ws, args);
        assert_eq!(code, 0, "{args:?}: {err}");
        out
    };
    // The shipped Ask suite, edited: a lower floor, its first case dropped.
    let mut shown = ok(&["--as", "ava", "eval", "show", "ask-demo"]);
    assert_eq!((shown["version"].clone(), shown["capability"].clone()), (json!(1), json!("ask")));
    let total = shown["cases"].as_array().unwrap().len();
    shown["floor"] = json!(0.5);
    shown["cases"].as_array_mut().unwrap().remove(0);
    let file = dir.path().join("ask-demo.json");
    std::fs::write(&file, shown.to_string()).unwrap();
    let published = ok(&["--as", "ava", "eval", "publish", "ask-demo", "--file", file.to_str().unwrap()]);
    assert_eq!((published["version"].clone(), published["cases"].clone()), (json!(2), json!(total - 1)));
    let v2 = ok(&["--as", "ava", "eval", "show", "ask-demo"]);
    assert_eq!((v2["floor"].clone(), v2["cases"].as_array().unwrap().len()), (json!(0.5), total - 1));
    assert_eq!(
        ok(&["--as", "ava", "eval", "show", "ask-demo", "--version", "1"])["cases"].as_array().unwrap().len(),
        total
    );

    // A case a run could not read is refused with its id; nothing is published.
    shown["cases"][0]["input"] = json!({"object": "account"});
    std::fs::write(&file, shown.to_string()).unwrap();
    let (code, _, err) =
        cli(&ws, &["--as", "ava", "eval", "publish", "ask-demo", "--file", file.to_str().unwrap()]);
    assert_eq!((code, err["code"].clone()), (1, json!("record.invalid_value")));
    assert!(err["message"].as_str().unwrap().contains("question"), "{err}");
    // Ben (no ai.author) may not publish.
    let (code, _, err) =
        cli(&ws, &["--as", "ben", "eval", "publish", "ask-demo", "--file", file.to_str().unwrap()]);
    assert_eq!((code, err["code"].clone()), (1, json!("permission")));
    assert_eq!(ok(&["--as", "ava", "eval", "show", "ask-demo"])["version"], json!(2));
}
