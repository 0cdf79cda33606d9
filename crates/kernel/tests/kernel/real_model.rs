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

/// Ask end to end on the real model: the demo workspace; a question whose reading leaves
/// nothing to choose is answered by the kernel alone, exactly the records a hand-written spec
/// returns; a question with a word read two ways goes to the model, which chooses one reading
/// under the per-request schema, and the kernel runs it.
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
    // One object, one reading of each word: the kernel's own choice, no model call.
    let trace = ava.trace(&answer.trace_id).unwrap();
    assert_eq!(trace.outcome, "answered");
    assert!(trace.output_text.starts_with("[decided by the kernel"), "{}", trace.output_text);
    assert_eq!((trace.prompt_tokens, trace.completion_tokens), (0, 0));
    // "engineers" is a department and a job title: the real model chooses one reading.
    let mut question = Ask { question: "Contacts who are engineers".into() };
    let model = ModelChoice::ad_hoc(&url()).await.unwrap();
    let answer = drive(&ava, &mut question, Some(model), &Cancel::default(), &mut |_| {}).await.unwrap();
    let of = |filter: &str| {
        let spec = format!(r#"{{"object": "contact", "filters": {filter}, "limit": 1000}}"#);
        let mut ids = ask::ids(&ava.query(&QuerySpec::parse(&spec).unwrap()).unwrap());
        ids.sort();
        ids
    };
    let department = of(r#"{"field": "department", "op": "eq", "value": "engineering"}"#);
    let title = of(r#"{"field": "title", "op": "eq", "value": "Engineer"}"#);
    let mut got = ask::ids(answer.result.as_ref().expect("a result"));
    got.sort();
    assert!(got == department || got == title, "spec: {}", serde_json::to_string(&answer.spec).unwrap());
    let trace = ava.trace(&answer.trace_id).unwrap();
    assert_eq!(trace.outcome, "answered");
    assert!(trace.prompt_tokens > 0 && trace.completion_tokens > 0);
    eprintln!("ask on the real model: {:?}", answer.timings);
}

/// A workspace made from a template that is not the demo CRM (suppliers and stock), with no
/// code that names its objects: Ask, Summarize and Extract on the real model.
#[tokio::test]
#[ignore = "needs a local model server: scripts/model-test.sh"]
async fn ask_summarize_and_extract_work_on_a_workspace_from_another_template() {
    use countersign_kernel::ai::ask::{self, Ask};
    use countersign_kernel::ai::extract::Extract;
    use countersign_kernel::ai::pipeline::{drive::drive, ModelChoice};
    use countersign_kernel::ai::summarize::Summarize;
    use countersign_kernel::open::{self, Start};
    use countersign_kernel::records::templates;
    use countersign_kernel::QuerySpec;
    let dir = tempfile::tempdir().unwrap();
    let template = templates::template("inventory").unwrap();
    let start = Start::Template { template, records: true };
    let (ws, _) = open::create(&dir.path().join("stock.countersign"), start, Default::default()).unwrap();
    let me = ws.session("me").unwrap();
    let model = || async { ModelChoice::ad_hoc(&url()).await.unwrap() };

    let mut question = Ask { question: "Which suppliers are preferred?".into() };
    let answer =
        drive(&me, &mut question, Some(model().await), &Cancel::default(), &mut |_| {}).await.unwrap();
    let spec = r#"{"object": "supplier", "filters": {"field": "status", "op": "eq", "value": "preferred"}, "limit": 1000}"#;
    let mut want = ask::ids(&me.query(&QuerySpec::parse(spec).unwrap()).unwrap());
    let mut got = ask::ids(answer.result.as_ref().expect("a result"));
    got.sort();
    want.sort();
    assert_eq!(got, want, "spec: {}", serde_json::to_string(&answer.spec).unwrap());

    let mut summarize = Summarize::new("supplier", "sup_001");
    let summary =
        drive(&me, &mut summarize, Some(model().await), &Cancel::default(), &mut |_| {}).await.unwrap();
    assert!(summary.sentences.iter().any(|s| !s.citations.is_empty()), "{summary:?}");

    let text = "From: orders@balticsteel.example\nSubject: New supplier\n\nPlease add Baltic Steel AB as a supplier.\n\
                Orders go to orders@balticsteel.example, phone +46 8 555 0100, web https://balticsteel.example.\n";
    let document =
        countersign_kernel::ingest::ingest("supplier.txt", text.as_bytes().to_vec(), &Default::default())
            .unwrap();
    let mut extract = Extract { document, object: "supplier".into(), record: None };
    let extracted =
        drive(&me, &mut extract, Some(model().await), &Cancel::default(), &mut |_| {}).await.unwrap();
    let value = |k: &str| extracted.proposal.fields.iter().find(|f| f.field == k).map(|f| f.value.clone());
    assert_eq!(value("email"), Some(json!("orders@balticsteel.example")), "{:?}", extracted.proposal.fields);
    eprintln!(
        "another template on the real model: ask {:?}, summary {} sentence(s), extract {} field(s)",
        answer.timings,
        summary.sentences.len(),
        extracted.proposal.fields.len()
    );
}

/// The built-in runtime on the real `llama-server` and the 0.5B model (`COUNTERSIGN_LLAMA_SERVER`
/// and `COUNTERSIGN_MODEL_GGUF`, set by `scripts/model-test.sh`).
mod built_in_runtime {
    use countersign_kernel::ai::provider::{provider, Endpoint, ProviderKind};
    use countersign_kernel::ai::runtime::process::{Runtime, RuntimeSettings, SERVED_NAME};
    use countersign_kernel::error::Code;
    use std::io::BufRead;
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    fn settings() -> RuntimeSettings {
        let server = std::env::var("COUNTERSIGN_LLAMA_SERVER").expect("COUNTERSIGN_LLAMA_SERVER");
        let gguf = std::env::var("COUNTERSIGN_MODEL_GGUF").expect("COUNTERSIGN_MODEL_GGUF");
        let mut s = RuntimeSettings::new(PathBuf::from(server), PathBuf::from(gguf));
        s.threads = 2;
        s.context = 4096;
        s
    }

    fn kill(pid: u32) {
        // SAFETY: kill(2) with a pid this test read from the runtime's status.
        assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    }

    fn gone(pid: u32, within: Duration) -> bool {
        let until = Instant::now() + within;
        while Instant::now() < until {
            // A zombie (state Z) is gone too: it runs no more and holds no memory.
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat) if stat.rsplit(')').next().is_some_and(|s| s.trim_start().starts_with('Z')) => {
                    return true
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        false
    }

    /// "Use the built-in model", then a question answered with no provider or pin set up by
    /// hand: the runtime starts on first use and the pipeline calls it like any provider.
    #[tokio::test]
    #[ignore = "needs llama-server and the model: scripts/model-test.sh"]
    async fn ask_is_answered_by_the_built_in_model_once_it_is_turned_on() {
        use countersign_kernel::ai::ask::{self, Ask};
        use countersign_kernel::ai::pipeline::drive::drive;
        use countersign_kernel::ai::provider::Cancel;
        use countersign_kernel::ai::runtime::{self, BUILT_IN_KEY};
        use countersign_kernel::open::{self, Start};
        use countersign_kernel::{QuerySpec, WorkspaceOptions};
        use std::sync::Arc;

        let dir = tempfile::tempdir().unwrap();
        let (ws, _) =
            open::create(&dir.path().join("first-run.countersign"), Start::Demo, WorkspaceOptions::default())
                .unwrap();
        let ava = ws.session("ava").unwrap();
        runtime::set_built_in(None);
        let e = runtime::use_built_in_model(&ava, None).await.unwrap_err();
        assert_eq!(e.code, Code::RuntimeUnavailable, "{e:?}");

        runtime::set_built_in(Some(Arc::new(Runtime::new(settings()))));
        let ben = ws.session("ben").unwrap();
        assert_eq!(runtime::use_built_in_model(&ben, None).await.unwrap_err().code, Code::Permission);
        assert!(!runtime::built_in().unwrap().status().running, "a refusal starts nothing");

        let in_use = runtime::use_built_in_model(&ava, None).await.unwrap();
        let sha = std::env::var("COUNTERSIGN_MODEL_SHA256").expect("COUNTERSIGN_MODEL_SHA256");
        assert_eq!(in_use.pin.digest, format!("sha256:{sha}"));
        assert_eq!(in_use.pin.key, BUILT_IN_KEY);
        // Bound, not only the one pin the capabilities fall back to.
        for capability in ["ask", "summarize", "extract"] {
            assert!(in_use.bound.iter().any(|b| b == capability), "{capability} bound: {in_use:?}");
            assert_eq!(ava.capability(capability).unwrap().model_pin.as_deref(), Some(BUILT_IN_KEY));
        }
        assert!(in_use.not_bound.is_empty(), "{in_use:?}");

        let mut question = Ask { question: "Which accounts are in the healthcare industry?".into() };
        let answer = drive(&ava, &mut question, None, &Cancel::default(), &mut |_| {}).await.unwrap();
        let expected = ava
            .query(&QuerySpec::parse(r#"{"object": "account", "filters": {"field": "industry", "op": "eq", "value": "healthcare"}, "limit": 1000}"#).unwrap())
            .unwrap();
        let (mut got, mut want) = (ask::ids(answer.result.as_ref().expect("a result")), ask::ids(&expected));
        got.sort();
        want.sort();
        assert_eq!(got, want);
        let trace = ava.trace(&answer.trace_id).unwrap();
        assert_eq!((trace.outcome.as_str(), trace.model_pin.as_deref()), ("answered", Some(BUILT_IN_KEY)));

        let server = runtime::built_in().unwrap().status().pid.unwrap();
        runtime::set_built_in(None); // the app lets go of it: the server stops
        assert!(gone(server, Duration::from_secs(5)), "llama-server {server} outlived the runtime");
    }

    /// The runtime saw its server die (its status reaps it).
    fn seen_dead(runtime: &Runtime) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if !runtime.status().running {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    #[tokio::test]
    #[ignore = "needs llama-server and the model: scripts/model-test.sh"]
    async fn the_runtime_serves_on_its_own_key_is_restarted_once_then_refused() {
        let runtime = Runtime::new(settings());
        assert!(!runtime.status().running, "nothing runs before the first use");
        let endpoint = runtime.endpoint().await.unwrap();
        let models = provider(endpoint.clone()).unwrap().list_models(Duration::from_secs(5)).await.unwrap();
        assert!(models.iter().any(|m| m.id == SERVED_NAME), "{models:?}");
        assert!(endpoint.base_url.starts_with("http://127.0.0.1:"));
        // The per-run key is required: the same server without it refuses a call.
        let keyless = Endpoint::new(ProviderKind::OpenaiCompatible, endpoint.base_url.clone());
        let refused = reqwest::Client::new()
            .post(format!("{}/chat/completions", keyless.base_url))
            .header("content-type", "application/json")
            .body(serde_json::json!({"model": SERVED_NAME, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status().as_u16(), 401);

        // Killed once: the next use starts it again, on a new port and key.
        let first = runtime.status();
        kill(first.pid.unwrap());
        assert!(seen_dead(&runtime));
        let again = runtime.endpoint().await.unwrap();
        let second = runtime.status();
        assert!(second.running && second.pid != first.pid && second.restarts == 1, "{second:?}");
        assert_ne!(again.base_url, endpoint.base_url);

        // Killed twice: a typed error, and it stays down until someone restarts it.
        kill(second.pid.unwrap());
        assert!(seen_dead(&runtime));
        let e = runtime.endpoint().await.unwrap_err();
        assert_eq!(e.code, Code::RuntimeCrashed, "{e:?}");
        assert_eq!(runtime.endpoint().await.unwrap_err().code, Code::RuntimeCrashed);
        assert!(!runtime.status().running);

        // Stopping renews it; dropping the runtime stops the server.
        runtime.stop();
        runtime.endpoint().await.unwrap();
        let pid = runtime.status().pid.unwrap();
        drop(runtime);
        assert!(gone(pid, Duration::from_secs(5)), "the server outlived its runtime");
    }

    #[test]
    #[ignore = "needs llama-server and the model: scripts/model-test.sh"]
    fn no_runtime_survives_the_app_killed() {
        const NAME: &str = "real_model::built_in_runtime::no_runtime_survives_the_app_killed";
        if std::env::var_os("COUNTERSIGN_RUNTIME_HOLDER").is_some() {
            // This test run again as "the app": it starts the runtime, says the server's pid,
            // and waits to be killed.
            let tokio = tokio::runtime::Runtime::new().unwrap();
            let runtime = Runtime::new(settings());
            tokio.block_on(runtime.endpoint()).unwrap();
            println!("server-pid {}", runtime.status().pid.unwrap());
            std::thread::sleep(Duration::from_secs(600));
            return;
        }
        let mut app = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--ignored", "--nocapture"])
            .env("COUNTERSIGN_RUNTIME_HOLDER", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(app.stdout.take().unwrap());
        let pid: u32 = stdout
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("server-pid ").map(|p| p.trim().parse().unwrap()))
            .expect("the holder started the runtime");
        assert!(!gone(pid, Duration::from_millis(200)), "the server runs while the app does");
        app.kill().unwrap(); // SIGKILL: the app has no chance to stop it
        app.wait().unwrap();
        assert!(gone(pid, Duration::from_secs(5)), "llama-server {pid} outlived the app");
    }
}
