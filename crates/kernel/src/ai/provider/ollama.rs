//! Ollama's native `/api/chat`, streamed as NDJSON.

use super::*;

pub struct Ollama {
    pub(super) endpoint: Endpoint,
    pub(super) clients: Clients,
}

impl Ollama {
    pub(super) async fn run(&self, req: &ChatRequest, on_delta: DeltaSink<'_>) -> Result<ChatResponse> {
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
