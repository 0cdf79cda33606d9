//! The provider layer against a real local model (llama.cpp's server with Qwen2.5-Coder 0.5B,
//! from `scripts/local-model`). Ignored by default; `scripts/model-test.sh` starts the server,
//! runs this with `--run-ignored`, and stops it.

use countersign_kernel::ai::provider::{provider, Cancel, ChatRequest, Endpoint, Part, Prompt, ProviderKind};
use serde_json::{json, Value};
use std::time::Duration;

fn url() -> String {
    std::env::var("COUNTERSIGN_MODEL_URL").expect("COUNTERSIGN_MODEL_URL (e.g. http://127.0.0.1:8089/v1)")
}

#[tokio::test]
#[ignore = "needs a local model server: scripts/model-test.sh"]
async fn a_schema_constrained_call_to_a_real_model_parses_and_validates() {
    let p = provider(Endpoint::new(ProviderKind::OpenaiCompatible, url())).unwrap();
    let models = p.list_models(Duration::from_secs(5)).await.unwrap();
    let m = models.iter().find(|m| m.id == "local-model").expect("the server serves `local-model`");
    assert_eq!(m.meta["ftype"], "Q4_K - Medium");
    assert!(m.meta["n_params"].as_u64().unwrap() > 400_000_000);
    // Pin it by content: the GGUF the server loaded has the published checksum, and the pin
    // holds against the server right now.
    let endpoint = Endpoint::new(ProviderKind::OpenaiCompatible, url());
    let gguf = std::env::var("COUNTERSIGN_MODEL_GGUF").expect("COUNTERSIGN_MODEL_GGUF");
    let fp = countersign_kernel::ai::pins::fingerprint(
        &endpoint,
        "local-model",
        Some(std::path::Path::new(&gguf)),
    )
    .await
    .unwrap();
    assert_eq!(fp.digest, format!("sha256:{}", std::env::var("COUNTERSIGN_MODEL_SHA256").unwrap()));
    assert!(fp.served.starts_with("meta-sha256:"));

    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["industry", "count"],
        "properties": {
            "industry": {"enum": ["software", "retail", "finance"]},
            "count": {"type": "integer", "minimum": 0, "maximum": 100}
        }
    });
    let req = ChatRequest {
        model: "local-model".into(),
        prompt: Prompt {
            instructions: "You classify accounts. Answer only with the JSON the schema allows.".into(),
            examples: vec![],
            parts: vec![
                Part::Request(
                    "Which industry is this account in, and how many employees does the note mention?".into(),
                ),
                Part::Untrusted {
                    label: "note note_0001".into(),
                    content: "Acme sells accounting software; 12 people work there.".into(),
                },
            ],
        },
        schema: Some(("classification".into(), schema.clone())),
        max_output_tokens: 64,
        temperature: 0.0,
        connect_timeout: Duration::from_secs(2),
        total_timeout: Duration::from_secs(120),
        stream: true,
    };
    let mut deltas = 0;
    let r = p.chat(&req, &Cancel::default(), &mut |_: &str| deltas += 1).await.unwrap();
    let value: Value = serde_json::from_str(&r.content).expect("the constrained output is JSON");
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&value), "output does not satisfy the schema: {value}");
    assert!(deltas > 1, "the answer was streamed");

    let t = r.timings.expect("llama.cpp reports its timings");
    let server_ms = t.prompt_ms + t.predicted_ms;
    let first = r.first_token_ms.unwrap();
    let client_tps = (r.usage.completion_tokens.max(1) as f64 - 1.0) / ((r.total_ms - first) / 1000.0);
    let server_tps = t.predicted_n as f64 / (t.predicted_ms / 1000.0);
    println!(
        "real-model: output {value}; first token {first:.0} ms (server prompt {:.0} ms); total {:.0} ms vs server {server_ms:.0} ms \
         (overhead {:+.1}%); {client_tps:.1} tok/s through the client vs {server_tps:.1} tok/s server",
        t.prompt_ms,
        r.total_ms,
        (r.total_ms - server_ms) / server_ms * 100.0
    );
}

/// Ask end to end on the real model: the demo workspace, a question, the model writes the plan
/// under the per-request schema, the kernel runs it. The answer must be exactly the records a
/// hand-written spec returns.
#[tokio::test]
#[ignore = "needs a local model server: scripts/model-test.sh"]
async fn ask_answers_a_question_end_to_end_on_the_real_model() {
    use countersign_kernel::ai::ask::{self, Ask};
    use countersign_kernel::ai::pipeline::{drive::drive, ModelChoice};
    use countersign_kernel::open::{self, Start};
    use countersign_kernel::{QuerySpec, WorkspaceOptions};
    let dir = tempfile::tempdir().unwrap();
    let (ws, _) =
        open::create(&dir.path().join("ask.countersign"), Start::Demo, WorkspaceOptions::default()).unwrap();
    let ava = ws.session("ava").unwrap();
    let model = ModelChoice::ad_hoc(&url()).await.unwrap();
    let mut question = Ask { question: "Which accounts are in the healthcare industry?".into() };
    let answer = drive(&ava, &mut question, Some(model), &Cancel::default(), &mut |_| {}).await.unwrap();
    let expected = ava
        .query(&QuerySpec::parse(r#"{"object": "account", "filters": {"field": "industry", "op": "eq", "value": "healthcare"}, "limit": 1000}"#).unwrap())
        .unwrap();
    let mut got = ask::ids(answer.result.as_ref().expect("a result"));
    let mut want = ask::ids(&expected);
    got.sort();
    want.sort();
    assert_eq!(got, want, "spec: {}", serde_json::to_string(&answer.spec).unwrap());
    let trace = ava.trace(&answer.trace_id).unwrap();
    assert_eq!(trace.outcome, "answered");
    assert!(trace.prompt_tokens > 0 && trace.completion_tokens > 0);
    eprintln!("ask on the real model: {:?}", answer.timings);
}
