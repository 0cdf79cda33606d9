//! The built-in model as a provider: the server the runtime starts on demand, reached through
//! the [`BuiltInServer`] the runtime registers (this layer knows nothing of the runtime).

use super::*;

/// This process's built-in runtime as the provider layer reaches it: the runtime registers
/// itself here when the app starts it ([`serve_built_in`]), so this layer knows where it
/// serves without knowing how it runs.
pub trait BuiltInServer: Send + Sync {
    /// Where it serves now (started on first use; it may have moved to another port).
    fn serving_endpoint(&self) -> BoxFuture<'_, Result<Endpoint>>;
}

pub(super) static BUILT_IN_SERVER: std::sync::Mutex<Option<std::sync::Arc<dyn BuiltInServer>>> =
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
pub(super) struct BuiltIn {
    pub(super) endpoint: Endpoint,
}

impl BuiltIn {
    pub(super) async fn serving(&self) -> Result<OpenAiCompatible> {
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
