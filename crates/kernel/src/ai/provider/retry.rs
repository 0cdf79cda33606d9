//! [`chat_with_retry`]: transient failures retried with backoff, never after output has been
//! streamed to the caller.

use super::*;

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
