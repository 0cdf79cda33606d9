//! Model providers: where the kernel meets a local model endpoint.
//!
//! Two implementations over reqwest: OpenAI-compatible `/v1/chat/completions` (llama.cpp's
//! server, LM Studio, vLLM, Ollama's `/v1`) and Ollama's native `/api/chat` (NDJSON). Both honour
//! the request's connect and total timeouts and its output-token cap, send the per-request JSON
//! Schema as structured output in the form the server understands, stream (SSE / NDJSON) with
//! cancellation that drops the connection, cap the bytes read, and classify every failure as a
//! typed `integration.*` error whose `retriable` is set only for explicitly transient cases
//! (429, 502, 503, 504). [`chat_with_retry`] retries those with backoff, never after output
//! has been streamed to the caller.
//!
//! Roles: only the prompt's instructions go in the system role. Untrusted content (record values,
//! document text) goes in the user message, each piece delimited and labelled, with the closing
//! delimiter escaped inside it, so data cannot pose as instructions.
//!
//! Secrets: an API key is held in [`Secret`], which never prints; it is sent as a bearer header and
//! never appears in an error, a log line or a stored value.

use crate::error::{Code, Error, Result};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use ts_rs::TS;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

mod built_in;
mod http;
mod ollama;
mod openai;
mod retry;

pub(crate) use built_in::serve_built_in;
use built_in::*;
pub use built_in::{BuiltInServer, BUILT_IN_NOT_RUNNING};
use http::*;
pub use ollama::Ollama;
pub use openai::OpenAiCompatible;
pub use retry::{chat_with_retry, RetryPolicy};

/// An API key. Debug and Display never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// How the per-request JSON Schema is sent; servers differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, TS)]
#[serde(rename_all = "snake_case")]
pub enum StructuredForm {
    /// `response_format: {"type": "json_schema", "json_schema": {"name", "strict", "schema"}}`
    /// (OpenAI, llama.cpp server, LM Studio, vLLM).
    #[default]
    JsonSchema,
    /// `response_format: {"type": "json_object", "schema": …}` (llama-cpp-python).
    JsonObjectSchema,
    /// Ollama native: `format: <schema>`.
    OllamaFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    OpenaiCompatible,
    Ollama,
    /// The runtime Countersign runs itself (`ai::runtime`): llama.cpp's server on a port and key
    /// chosen at each start, so its address is found when a call is made.
    BuiltIn,
}

#[derive(Debug, Clone)]
pub struct Endpoint {
    pub kind: ProviderKind,
    /// `http://127.0.0.1:8080/v1` (OpenAI-compatible) or `http://127.0.0.1:11434` (Ollama).
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub structured: StructuredForm,
    /// Cap on the bytes read from one response.
    pub max_response_bytes: usize,
}

impl Endpoint {
    pub fn new(kind: ProviderKind, base_url: impl Into<String>) -> Self {
        Endpoint {
            kind,
            base_url: base_url.into().trim_end_matches('/').to_string(),
            api_key: None,
            structured: match kind {
                ProviderKind::Ollama => StructuredForm::OllamaFormat,
                ProviderKind::OpenaiCompatible | ProviderKind::BuiltIn => StructuredForm::JsonSchema,
            },
            max_response_bytes: 4 << 20,
        }
    }
}

/// One piece of the user message.
#[derive(Debug, Clone)]
pub enum Part {
    /// Text from the person asking (their question).
    Request(String),
    /// Data: a record, a document. Delimited and labelled as untrusted.
    Untrusted { label: String, content: String },
}

/// What is sent: instructions (system role), worked examples (user/assistant turns written by
/// the prompt's author, never data) and the user message parts.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub instructions: String,
    /// `(user parts, assistant answer)` pairs shown before the real request.
    pub examples: Vec<(Vec<Part>, String)>,
    pub parts: Vec<Part>,
}

impl Prompt {
    /// The chat messages: `[system: instructions, (user, assistant)*, user: parts]`.
    pub fn messages(&self) -> Vec<Value> {
        let mut out = vec![json!({"role": "system", "content": self.instructions})];
        for (parts, answer) in &self.examples {
            out.push(json!({"role": "user", "content": user_text(parts)}));
            out.push(json!({"role": "assistant", "content": answer}));
        }
        out.push(json!({"role": "user", "content": user_text(&self.parts)}));
        out
    }
}

/// Parts joined into one user message, untrusted ones delimited and labelled.
fn user_text(parts: &[Part]) -> String {
    {
        let mut user = String::new();
        for p in parts {
            if !user.is_empty() {
                user.push_str("\n\n");
            }
            match p {
                Part::Request(t) => user.push_str(t),
                Part::Untrusted { label, content } => {
                    let label: String =
                        label.chars().filter(|c| c.is_alphanumeric() || " _-.:/".contains(*c)).collect();
                    let content = content.replace("</untrusted", "<\\/untrusted");
                    user.push_str(&format!("<untrusted source=\"{label}\">\n{content}\n</untrusted>"));
                }
            }
        }
        user
    }
}

#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub model: String,
    pub prompt: Prompt,
    /// The output contract, sent as structured output: `(name, JSON Schema)`.
    pub schema: Option<(String, Value)>,
    pub max_output_tokens: u32,
    pub temperature: f32,
    pub connect_timeout: Duration,
    pub total_timeout: Duration,
    pub stream: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// The server's own timing report, when it gives one (llama.cpp `timings`, Ollama durations).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerTimings {
    pub prompt_ms: f64,
    pub predicted_ms: f64,
    pub predicted_n: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatResponse {
    pub content: String,
    pub usage: Usage,
    pub finish_reason: Option<String>,
    pub timings: Option<ServerTimings>,
    /// Time from sending the request to the first output byte / the end, as the client saw it.
    pub first_token_ms: Option<f64>,
    pub total_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ModelInfo {
    pub id: String,
    /// Ollama's content digest; empty where the server has none.
    pub digest: String,
    #[ts(type = "number | null")]
    pub size_bytes: Option<u64>,
    /// Whatever else the server says of the model (llama.cpp `meta`, Ollama `details`).
    pub meta: Value,
}

/// Cancels a call in flight: dropping the request future closes the connection.
#[derive(Debug, Clone)]
pub struct Cancel(watch::Sender<bool>);

impl Default for Cancel {
    fn default() -> Self {
        Cancel(watch::channel(false).0)
    }
}

impl Cancel {
    pub fn cancel(&self) {
        self.0.send_replace(true);
    }
    pub fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }
    pub(crate) async fn cancelled(&self) {
        let mut rx = self.0.subscribe();
        if *rx.borrow() {
            return;
        }
        while rx.changed().await.is_ok() {
            if *rx.borrow() {
                return;
            }
        }
        std::future::pending::<()>().await
    }
}

pub type DeltaSink<'a> = &'a mut (dyn FnMut(&str) + Send);

/// A model endpoint.
pub trait ModelProvider: Send + Sync {
    /// One chat call; streamed text is passed to `on_delta` as it arrives.
    fn chat<'a>(
        &'a self,
        req: &'a ChatRequest,
        cancel: &'a Cancel,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse>>;
    /// The models the server serves.
    fn list_models<'a>(&'a self, timeout: Duration) -> BoxFuture<'a, Result<Vec<ModelInfo>>>;
}

pub fn provider(endpoint: Endpoint) -> Result<Box<dyn ModelProvider>> {
    let clients = Clients::default();
    Ok(match endpoint.kind {
        ProviderKind::OpenaiCompatible => Box::new(OpenAiCompatible { endpoint, clients }),
        ProviderKind::Ollama => Box::new(Ollama { endpoint, clients }),
        ProviderKind::BuiltIn => Box::new(BuiltIn { endpoint }),
    })
}
