//! HTTP under both providers: the clients per timeout, typed `integration.*` errors (transient
//! only for 429, 502, 503, 504), lines of a stream under a byte cap, and cancellation that drops
//! the connection.

use super::*;

/// HTTP clients by connect timeout (reqwest sets it per client). Local endpoints only: no
/// proxies, so a system proxy setting never sends a prompt elsewhere. No pooled connections
/// either: a connection kept alive after an answer may be closed by the server just as the
/// next call (a repair right after a streamed answer) is written on it, and that call then fails
/// with nothing to tell it from a server dying mid-answer. A new connection to this machine
/// costs well under a millisecond; a model call costs seconds.
#[derive(Default)]
pub(super) struct Clients(pub(super) std::sync::Mutex<std::collections::HashMap<Duration, reqwest::Client>>);

impl Clients {
    pub(super) fn get(&self, connect_timeout: Duration) -> Result<reqwest::Client> {
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

pub(super) fn integration(code: Code, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

pub(super) fn transient(e: Error) -> Error {
    Error { retriable: true, ..e }
}

/// Map a transport error (no HTTP status) to a typed error. Never includes headers.
pub(super) fn transport_error(e: &reqwest::Error, url: &str) -> Error {
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
pub(super) fn status_error(status: u16, body: &str, url: &str) -> Error {
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

pub(super) fn malformed(what: impl fmt::Display) -> Error {
    integration(
        Code::IntegrationMalformed,
        format!("the model endpoint answered something unexpected: {what}"),
    )
}

/// Reads a response body as a stream of lines, with the byte cap and the cancel token.
pub(super) struct Lines {
    pub(super) stream: Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    pub(super) buf: Vec<u8>,
    pub(super) read: usize,
    pub(super) cap: usize,
    pub(super) url: String,
    pub(super) first_byte: Option<Instant>,
}

impl Lines {
    pub(super) fn new(resp: reqwest::Response, cap: usize, url: &str) -> Self {
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
    pub(super) async fn next(&mut self) -> Result<Option<String>> {
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

    pub(super) async fn rest(&mut self) -> Result<String> {
        let mut out = String::new();
        while let Some(l) = self.next().await? {
            out.push_str(&l);
            out.push('\n');
        }
        Ok(out)
    }
}

pub(super) async fn send(
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
pub(super) async fn get_json(
    clients: &Clients,
    endpoint: &Endpoint,
    url: &str,
    timeout: Duration,
) -> Result<Value> {
    let resp = send(clients, endpoint, url, None, timeout, timeout).await?;
    let text = Lines::new(resp, endpoint.max_response_bytes, url).rest().await?;
    serde_json::from_str(&text).map_err(|e| malformed(format!("not JSON ({e})")))
}

pub(super) async fn cancellable<T>(cancel: &Cancel, fut: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Error::new(Code::Cancelled, "cancelled; the connection was closed")),
        r = fut => r,
    }
}
