//! A fake OpenAI-compatible endpoint on 127.0.0.1 that replays scripted model answers, for the
//! pipeline's deterministic tests (the real model is `real_model.rs` and the evals).
#![allow(dead_code)]

use countersign_kernel::ai::pipeline::ModelChoice;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// What the fake endpoint answers to the n-th chat request.
#[derive(Clone)]
pub enum Answer {
    Text(String),
    Status(u16),
}

pub struct Fake {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// The `authorization` header of each request, as sent.
    pub authorizations: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    pub fn chat_requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

pub fn fake(answers: Vec<Answer>) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = requests.clone();
    let authorizations = Arc::new(Mutex::new(Vec::new()));
    let seen = authorizations.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let mut length = 0;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h == "\r\n" || h.is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if h.to_ascii_lowercase().starts_with("authorization:") {
                    seen.lock().unwrap().push(h["authorization:".len()..].trim().to_string());
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let mut out = stream;
            if path.ends_with("/models") {
                let b = json!({"data": [{"id": "fake-model", "meta": {"n_params": 1}}]}).to_string();
                let _ = write!(out, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}", b.len());
                continue;
            }
            let n = {
                let mut l = log.lock().unwrap();
                l.push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                l.len() - 1
            };
            match answers.get(n).or(answers.last()).cloned().unwrap() {
                Answer::Status(s) => {
                    let b = r#"{"error":{"message":"busy"}}"#;
                    let _ = write!(out, "HTTP/1.1 {s} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}", b.len());
                }
                Answer::Text(t) => {
                    let chunk =
                        json!({"choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]});
                    let end = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 40}});
                    let _ = write!(
                        out,
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n"
                    );
                }
            }
        }
    });
    Fake { url, requests, authorizations }
}

pub fn model(url: &str, price: f64) -> ModelChoice {
    let mut m = ModelChoice::unstored(url, "fake-model", "sha256:fake".into(), "fake".into(), Value::Null);
    m.pin.max_output_tokens = 256;
    m.pin.input_price_per_mtok = price;
    m.pin.output_price_per_mtok = price;
    m.pin.currency = "USD".into();
    m
}

/// Point provider `key` at a fake server (added, or replaced), as ava would.
pub fn provider(ava: &countersign_kernel::Session<'_>, key: &str, f: &Fake) {
    use countersign_kernel::ai::pins::ProviderConfig;
    use countersign_kernel::ai::provider::{ProviderKind, StructuredForm};
    ava.add_provider(&ProviderConfig {
        key: key.into(),
        kind: ProviderKind::OpenaiCompatible,
        base_url: f.url.clone(),
        credential_ref: None,
        structured_form: StructuredForm::default(),
        region: "this machine".into(),
        retention: "none".into(),
    })
    .unwrap();
}

/// Pin the fake server's model as `key` on provider `provider_key`.
pub fn pin(ava: &countersign_kernel::Session<'_>, key: &str, provider_key: &str) {
    use countersign_kernel::ai::pins::{self, PinSettings};
    let ep = ava.endpoint(provider_key).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let fp = rt.block_on(pins::fingerprint(&ep, "fake-model", None)).unwrap();
    ava.pin_model(key, provider_key, "fake-model", &fp, &PinSettings::default()).unwrap();
}
