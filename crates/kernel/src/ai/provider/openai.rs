//! OpenAI-compatible `/v1/chat/completions` (llama.cpp's server, LM Studio, vLLM, Ollama's
//! `/v1`), streamed as server-sent events.

use super::*;

pub struct OpenAiCompatible {
    pub(super) endpoint: Endpoint,
    pub(super) clients: Clients,
}

impl OpenAiCompatible {
    pub(super) fn body(&self, req: &ChatRequest) -> Value {
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

    pub(super) async fn run(&self, req: &ChatRequest, on_delta: DeltaSink<'_>) -> Result<ChatResponse> {
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

pub(super) fn usage_of(v: &Value) -> Usage {
    Usage {
        prompt_tokens: v.pointer("/usage/prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        completion_tokens: v.pointer("/usage/completion_tokens").and_then(Value::as_u64).unwrap_or(0),
    }
}

pub(super) fn timings_of(v: &Value) -> Option<ServerTimings> {
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
