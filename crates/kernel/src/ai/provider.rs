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

/// This process's built-in runtime as the provider layer reaches it: the runtime registers
/// itself here when the app starts it ([`serve_built_in`]), so this layer knows where it
/// serves without knowing how it runs.
pub trait BuiltInServer: Send + Sync {
    /// Where it serves now (started on first use; it may have moved to another port).
    fn serving_endpoint(&self) -> BoxFuture<'_, Result<Endpoint>>;
}

static BUILT_IN_SERVER: std::sync::Mutex<Option<std::sync::Arc<dyn BuiltInServer>>> =
    std::sync::Mutex::new(None);

/// The refusal of a call to the built-in model when this process runs none.
pub const BUILT_IN_NOT_RUNNING: &str =
    "the built-in model is not running here: install a model for it (Settings, or `model install`)";

/// Register this process's built-in runtime (`None`: it has none).
pub(crate) fn serve_built_in(server: Option<std::sync::Arc<dyn BuiltInServer>>) {
    *BUILT_IN_SERVER.lock().unwrap_or_else(|e| e.into_inner()) = server;
}

/// The built-in runtime, started on first use: each call asks it where it serves now (it may
/// have been restarted on another port) and then speaks OpenAI-compatible to it.
struct BuiltIn {
    endpoint: Endpoint,
}

impl BuiltIn {
    async fn serving(&self) -> Result<OpenAiCompatible> {
        let server = BUILT_IN_SERVER
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| Error::new(Code::RuntimeUnavailable, BUILT_IN_NOT_RUNNING))?;
        let live = server.serving_endpoint().await?;
        let endpoint = Endpoint {
            structured: self.endpoint.structured,
            max_response_bytes: self.endpoint.max_response_bytes,
            ..live
        };
        Ok(OpenAiCompatible { endpoint, clients: Clients::default() })
    }
}

impl ModelProvider for BuiltIn {
    fn chat<'a>(
        &'a self,
        req: &'a ChatRequest,
        cancel: &'a Cancel,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse>> {
        Box::pin(async move {
            let serving = cancellable(cancel, self.serving()).await?;
            serving.chat(req, cancel, on_delta).await
        })
    }

    fn list_models<'a>(&'a self, timeout: Duration) -> BoxFuture<'a, Result<Vec<ModelInfo>>> {
        Box::pin(async move { self.serving().await?.list_models(timeout).await })
    }
}

/// HTTP clients by connect timeout (reqwest sets it per client). Local endpoints only: no
/// proxies, so a system proxy setting never sends a prompt elsewhere. No pooled connections
/// either: a connection kept alive after an answer may be closed by the server just as the
/// next call (a repair right after a streamed answer) is written on it, and that call then fails
/// with nothing to tell it from a server dying mid-answer. A new connection to this machine
/// costs well under a millisecond; a model call costs seconds.
#[derive(Default)]
struct Clients(std::sync::Mutex<std::collections::HashMap<Duration, reqwest::Client>>);

impl Clients {
    fn get(&self, connect_timeout: Duration) -> Result<reqwest::Client> {
        let mut map = self.0.lock().map_err(|_| Error::internal("HTTP client cache poisoned"))?;
        if let Some(c) = map.get(&connect_timeout) {
            return Ok(c.clone());
        }
        let c = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(0)
            .connect_timeout(connect_timeout)
            .build()
            .map_err(|e| Error::new(Code::Internal, format!("HTTP client: {e}")))?;
        map.insert(connect_timeout, c.clone());
        Ok(c)
    }
}

fn integration(code: Code, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

fn transient(e: Error) -> Error {
    Error { retriable: true, ..e }
}

/// Map a transport error (no HTTP status) to a typed error. Never includes headers.
fn transport_error(e: &reqwest::Error, url: &str) -> Error {
    if e.is_timeout() {
        integration(Code::IntegrationTimeout, format!("the model endpoint {url} did not answer in time"))
    } else if e.is_connect() {
        integration(
            Code::IntegrationUnreachable,
            format!("cannot reach the model endpoint {url} (is the server running?)"),
        )
    } else {
        integration(Code::IntegrationTruncated, format!("the connection to {url} failed mid-response"))
    }
}

/// Map an HTTP error status and body to a typed error.
fn status_error(status: u16, body: &str, url: &str) -> Error {
    let detail: String = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            let e = v.get("error")?;
            Some(e.get("message").and_then(Value::as_str).or(e.as_str()).unwrap_or_default().to_string())
        })
        .unwrap_or_else(|| body.chars().take(200).collect());
    let context = body.contains("exceed_context_size")
        || body.contains("context_length_exceeded")
        || body.contains("context length")
        || detail.to_ascii_lowercase().contains("context");
    match status {
        400 | 413 if context => integration(
            Code::ContextLength,
            format!("the prompt is longer than the model's context window ({detail})"),
        ),
        429 | 502 | 503 | 504 => transient(integration(
            Code::IntegrationServer,
            format!("{url} is busy or restarting ({status}): {detail}"),
        )),
        400..=499 => {
            integration(Code::IntegrationRejected, format!("{url} refused the request ({status}): {detail}"))
        }
        _ => integration(Code::IntegrationServer, format!("{url} failed ({status}): {detail}")),
    }
}

fn malformed(what: impl fmt::Display) -> Error {
    integration(
        Code::IntegrationMalformed,
        format!("the model endpoint answered something unexpected: {what}"),
    )
}

/// Reads a response body as a stream of lines, with the byte cap and the cancel token.
struct Lines {
    stream: Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buf: Vec<u8>,
    read: usize,
    cap: usize,
    url: String,
    first_byte: Option<Instant>,
}

impl Lines {
    fn new(resp: reqwest::Response, cap: usize, url: &str) -> Self {
        Lines {
            stream: Box::pin(resp.bytes_stream()),
            buf: Vec::new(),
            read: 0,
            cap,
            url: url.to_string(),
            first_byte: None,
        }
    }

    /// The next line (without the newline), or None at the end of the body.
    async fn next(&mut self) -> Result<Option<String>> {
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
                let mut line: Vec<u8> = self.buf.drain(..=i).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return String::from_utf8(line).map(Some).map_err(|_| malformed("text that is not UTF-8"));
            }
            match self.stream.next().await {
                None => {
                    if self.buf.is_empty() {
                        return Ok(None);
                    }
                    let rest = std::mem::take(&mut self.buf);
                    return String::from_utf8(rest)
                        .map(Some)
                        .map_err(|_| malformed("text that is not UTF-8"));
                }
                Some(Err(e)) => return Err(transport_error(&e, &self.url)),
                Some(Ok(chunk)) => {
                    self.first_byte.get_or_insert_with(Instant::now);
                    self.read += chunk.len();
                    if self.read > self.cap {
                        return Err(integration(
                            Code::IntegrationOversized,
                            format!(
                                "the answer from {} exceeded {} bytes; stopped reading",
                                self.url, self.cap
                            ),
                        ));
                    }
                    self.buf.extend_from_slice(&chunk);
                }
            }
        }
    }

    async fn rest(&mut self) -> Result<String> {
        let mut out = String::new();
        while let Some(l) = self.next().await? {
            out.push_str(&l);
            out.push('\n');
        }
        Ok(out)
    }
}

async fn send(
    clients: &Clients,
    endpoint: &Endpoint,
    url: &str,
    body: Option<&Value>,
    connect_timeout: Duration,
    total_timeout: Duration,
) -> Result<reqwest::Response> {
    let client = clients.get(connect_timeout)?;
    let mut rb = match body {
        Some(b) => client
            .post(url)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(b).map_err(|e| Error::internal(e.to_string()))?),
        None => client.get(url),
    }
    .timeout(total_timeout);
    if let Some(key) = &endpoint.api_key {
        rb = rb.bearer_auth(key.expose());
    }
    let resp = rb.send().await.map_err(|e| transport_error(&e, url))?;
    let status = resp.status().as_u16();
    if status >= 400 {
        let mut lines = Lines::new(resp, 64 << 10, url);
        let body = lines.rest().await.unwrap_or_default();
        return Err(status_error(status, &body, url));
    }
    Ok(resp)
}

/// GET `url` and parse the body as JSON (model lists).
async fn get_json(clients: &Clients, endpoint: &Endpoint, url: &str, timeout: Duration) -> Result<Value> {
    let resp = send(clients, endpoint, url, None, timeout, timeout).await?;
    let text = Lines::new(resp, endpoint.max_response_bytes, url).rest().await?;
    serde_json::from_str(&text).map_err(|e| malformed(format!("not JSON ({e})")))
}

async fn cancellable<T>(cancel: &Cancel, fut: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Error::new(Code::Cancelled, "cancelled; the connection was closed")),
        r = fut => r,
    }
}

pub struct OpenAiCompatible {
    endpoint: Endpoint,
    clients: Clients,
}

impl OpenAiCompatible {
    fn body(&self, req: &ChatRequest) -> Value {
        let mut body = json!({
            "model": req.model,
            "messages": req.prompt.messages(),
            "max_tokens": req.max_output_tokens,
            "temperature": req.temperature,
            "stream": req.stream,
        });
        if req.stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        if let Some((name, schema)) = &req.schema {
            body["response_format"] = match self.endpoint.structured {
                StructuredForm::JsonObjectSchema => json!({"type": "json_object", "schema": schema}),
                _ => {
                    json!({"type": "json_schema", "json_schema": {"name": name, "strict": true, "schema": schema}})
                }
            };
        }
        body
    }

    async fn run(&self, req: &ChatRequest, on_delta: DeltaSink<'_>) -> Result<ChatResponse> {
        let url = format!("{}/chat/completions", self.endpoint.base_url);
        let start = Instant::now();
        let resp = send(
            &self.clients,
            &self.endpoint,
            &url,
            Some(&self.body(req)),
            req.connect_timeout,
            req.total_timeout,
        )
        .await?;
        let mut lines = Lines::new(resp, self.endpoint.max_response_bytes, &url);
        if !req.stream {
            let text = lines.rest().await?;
            let v: Value = serde_json::from_str(&text).map_err(|e| malformed(format!("not JSON ({e})")))?;
            let choice = v.get("choices").and_then(|c| c.get(0)).ok_or_else(|| malformed("no choices"))?;
            let content = choice
                .pointer("/message/content")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed("no message content"))?
                .to_string();
            let first_token_ms = lines.first_byte.map(|t| (t - start).as_secs_f64() * 1000.0);
            return Ok(ChatResponse {
                content,
                usage: usage_of(&v),
                finish_reason: choice.get("finish_reason").and_then(Value::as_str).map(String::from),
                timings: timings_of(&v),
                first_token_ms,
                total_ms: start.elapsed().as_secs_f64() * 1000.0,
            });
        }
        let (mut content, mut usage, mut finish, mut timings, mut first) =
            (String::new(), Usage::default(), None, None, None);
        let mut done = false;
        while let Some(line) = lines.next().await? {
            let Some(data) = line.strip_prefix("data:") else { continue };
            let data = data.trim();
            if data == "[DONE]" {
                done = true;
                break;
            }
            let v: Value = serde_json::from_str(data)
                .map_err(|e| malformed(format!("a stream event that is not JSON ({e})")))?;
            if let Some(err) = v.get("error") {
                return Err(integration(
                    Code::IntegrationServer,
                    format!("the model failed mid-stream: {err}"),
                ));
            }
            if let Some(delta) = v.pointer("/choices/0/delta/content").and_then(Value::as_str) {
                if !delta.is_empty() {
                    first.get_or_insert_with(|| start.elapsed().as_secs_f64() * 1000.0);
                    content.push_str(delta);
                    on_delta(delta);
                }
            }
            if let Some(f) = v.pointer("/choices/0/finish_reason").and_then(Value::as_str) {
                finish = Some(f.to_string());
            }
            if v.get("usage").is_some_and(|u| !u.is_null()) {
                usage = usage_of(&v);
            }
            if let Some(t) = timings_of(&v) {
                timings = Some(t);
            }
        }
        if !done {
            return Err(integration(
                Code::IntegrationTruncated,
                format!("the stream from {url} ended before it was done"),
            ));
        }
        Ok(ChatResponse {
            content,
            usage,
            finish_reason: finish,
            timings,
            first_token_ms: first,
            total_ms: start.elapsed().as_secs_f64() * 1000.0,
        })
    }
}

fn usage_of(v: &Value) -> Usage {
    Usage {
        prompt_tokens: v.pointer("/usage/prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        completion_tokens: v.pointer("/usage/completion_tokens").and_then(Value::as_u64).unwrap_or(0),
    }
}

fn timings_of(v: &Value) -> Option<ServerTimings> {
    let t = v.get("timings")?;
    Some(ServerTimings {
        prompt_ms: t.get("prompt_ms")?.as_f64()?,
        predicted_ms: t.get("predicted_ms")?.as_f64()?,
        predicted_n: t.get("predicted_n")?.as_u64()?,
    })
}

impl ModelProvider for OpenAiCompatible {
    fn chat<'a>(
        &'a self,
        req: &'a ChatRequest,
        cancel: &'a Cancel,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse>> {
        Box::pin(cancellable(cancel, self.run(req, on_delta)))
    }

    fn list_models<'a>(&'a self, timeout: Duration) -> BoxFuture<'a, Result<Vec<ModelInfo>>> {
        Box::pin(async move {
            let url = format!("{}/models", self.endpoint.base_url);
            let v = get_json(&self.clients, &self.endpoint, &url, timeout).await?;
            let data = v
                .get("data")
                .and_then(Value::as_array)
                .ok_or_else(|| malformed("no `data` list of models"))?;
            Ok(data
                .iter()
                .filter_map(|m| {
                    Some(ModelInfo {
                        id: m.get("id")?.as_str()?.to_string(),
                        digest: String::new(),
                        size_bytes: m.pointer("/meta/size").and_then(Value::as_u64),
                        meta: m.get("meta").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect())
        })
    }
}

pub struct Ollama {
    endpoint: Endpoint,
    clients: Clients,
}

impl Ollama {
    async fn run(&self, req: &ChatRequest, on_delta: DeltaSink<'_>) -> Result<ChatResponse> {
        let url = format!("{}/api/chat", self.endpoint.base_url);
        let mut body = json!({
            "model": req.model,
            "messages": req.prompt.messages(),
            "stream": req.stream,
            "options": {"temperature": req.temperature, "num_predict": req.max_output_tokens},
        });
        if let Some((_, schema)) = &req.schema {
            body["format"] = schema.clone();
        }
        let start = Instant::now();
        let resp =
            send(&self.clients, &self.endpoint, &url, Some(&body), req.connect_timeout, req.total_timeout)
                .await?;
        let mut lines = Lines::new(resp, self.endpoint.max_response_bytes, &url);
        let (mut content, mut first) = (String::new(), None);
        while let Some(line) = lines.next().await? {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(&line)
                .map_err(|e| malformed(format!("a line that is not JSON ({e})")))?;
            if let Some(err) = v.get("error").and_then(Value::as_str) {
                return Err(integration(Code::IntegrationServer, format!("the model failed: {err}")));
            }
            if let Some(delta) = v.pointer("/message/content").and_then(Value::as_str) {
                if !delta.is_empty() {
                    first.get_or_insert_with(|| start.elapsed().as_secs_f64() * 1000.0);
                    content.push_str(delta);
                    if req.stream {
                        on_delta(delta);
                    }
                }
            }
            if v.get("done").and_then(Value::as_bool) == Some(true) {
                let ns = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0) / 1e6;
                let eval_count = v.get("eval_count").and_then(Value::as_u64).unwrap_or(0);
                return Ok(ChatResponse {
                    content,
                    usage: Usage {
                        prompt_tokens: v.get("prompt_eval_count").and_then(Value::as_u64).unwrap_or(0),
                        completion_tokens: eval_count,
                    },
                    finish_reason: v.get("done_reason").and_then(Value::as_str).map(String::from),
                    timings: Some(ServerTimings {
                        prompt_ms: ns("prompt_eval_duration"),
                        predicted_ms: ns("eval_duration"),
                        predicted_n: eval_count,
                    }),
                    first_token_ms: first,
                    total_ms: start.elapsed().as_secs_f64() * 1000.0,
                });
            }
        }
        Err(integration(
            Code::IntegrationTruncated,
            format!("the answer from {url} ended before it was done"),
        ))
    }
}

impl ModelProvider for Ollama {
    fn chat<'a>(
        &'a self,
        req: &'a ChatRequest,
        cancel: &'a Cancel,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse>> {
        Box::pin(cancellable(cancel, self.run(req, on_delta)))
    }

    fn list_models<'a>(&'a self, timeout: Duration) -> BoxFuture<'a, Result<Vec<ModelInfo>>> {
        Box::pin(async move {
            let url = format!("{}/api/tags", self.endpoint.base_url);
            let v = get_json(&self.clients, &self.endpoint, &url, timeout).await?;
            let models =
                v.get("models").and_then(Value::as_array).ok_or_else(|| malformed("no `models` list"))?;
            Ok(models
                .iter()
                .filter_map(|m| {
                    Some(ModelInfo {
                        id: m.get("name").or(m.get("model"))?.as_str()?.to_string(),
                        digest: m.get("digest").and_then(Value::as_str).unwrap_or_default().to_string(),
                        size_bytes: m.get("size").and_then(Value::as_u64),
                        meta: m.get("details").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect())
        })
    }
}

/// Retries for explicitly transient failures.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    pub attempts: u32,
    pub first_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { attempts: 3, first_backoff: Duration::from_millis(250) }
    }
}

/// Call `provider`, retrying retriable failures with doubling backoff, but never once output
/// has been streamed (the caller has already shown it) and never after a cancel.
pub async fn chat_with_retry(
    provider: &dyn ModelProvider,
    req: &ChatRequest,
    policy: &RetryPolicy,
    cancel: &Cancel,
    on_delta: DeltaSink<'_>,
) -> Result<ChatResponse> {
    let mut backoff = policy.first_backoff;
    let mut attempt = 1;
    loop {
        let mut streamed = false;
        let mut sink = |d: &str| {
            streamed = true;
            on_delta(d)
        };
        let started = Instant::now();
        let answer = provider.chat(req, cancel, &mut sink).await;
        let ms = crate::logging::ms_since(started);
        match &answer {
            Ok(r) => tracing::info!(
                model = %req.model,
                attempt,
                streamed = req.stream,
                prompt_tokens = r.usage.prompt_tokens,
                completion_tokens = r.usage.completion_tokens,
                ms,
                "model answered"
            ),
            Err(e) => tracing::info!(
                model = %req.model,
                attempt,
                code = e.code.as_str(),
                retriable = e.retriable,
                ms,
                "model call failed"
            ),
        }
        match answer {
            Err(e) if e.retriable && !streamed && attempt < policy.attempts && !cancel.is_cancelled() => {
                cancellable(cancel, async {
                    tokio::time::sleep(backoff).await;
                    Ok(())
                })
                .await?;
                backoff *= 2;
                attempt += 1;
            }
            other => return other,
        }
    }
}
