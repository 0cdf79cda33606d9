//! A model put to use in one step ("Use the built-in model", "Use this server"): the provider
//! added, the model pinned by what its server serves (`ai::pins`), and bound to every
//! capability without a model of its own through the eval gate (`bindings`).

use super::NotBound;
use crate::ai::pins::{
    check_local, local, no_retention, pin_served_model, test_connection, ModelPin, PinSettings,
    ProviderConfig, Weights,
};
use crate::ai::provider::{Endpoint, ProviderKind};
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::AI_MANAGE;
use crate::records::access::Sessions;
use serde::Serialize;
use ts_rs::TS;

/// A model put to use in one step ("Use the built-in model", "Use this server"): its provider,
/// its pin, and the capabilities now bound to it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelInUse {
    pub pin: ModelPin,
    /// The capabilities bound to it (those that had no model of their own).
    pub bound: Vec<String>,
    /// Those the eval gate held back, with its reason.
    pub not_bound: Vec<NotBound>,
}

/// Put `model` of `provider` to use (`ai.manage`): the provider is added (or updated), the
/// model pinned under the provider's key by what its server serves, and bound to every
/// capability without a model of its own — through the eval gate, which passes untouched when
/// this is the workspace's only pin (the model those capabilities already fell back to).
pub async fn use_model(
    sessions: &impl Sessions,
    provider: &ProviderConfig,
    model: &str,
    weights: Weights<'_>,
) -> Result<ModelInUse> {
    sessions.with(|s| s.add_provider(provider))?;
    let pin =
        pin_served_model(sessions, &provider.key, &provider.key, model, weights, &PinSettings::default())
            .await?;
    let (bound, not_bound) = sessions.with(|s| s.bind_where_unbound(&pin.key))?;
    tracing::info!(bound = bound.len(), held_back = not_bound.len(), "a model was put to use");
    Ok(ModelInUse { pin, bound, not_bound })
}

/// "Use this server" (`ai.manage`), for a model server [`discover`](crate::ai::pins::discover) found: the server is asked
/// again, added as a provider named after it (`llama-cpp`, `ollama`, `local`; numbered when
/// that key is taken by another address) and `model` — one it serves — put to use
/// ([`use_model`]).
pub async fn use_found_server(
    sessions: &impl Sessions,
    kind: ProviderKind,
    base_url: &str,
    model: &str,
) -> Result<ModelInUse> {
    sessions.with(|s| s.require(AI_MANAGE))?;
    check_local(base_url)?;
    let report = test_connection(&Endpoint::new(kind, base_url)).await?;
    if !report.models.iter().any(|m| m.id == model) {
        return Err(Error::on_field(
            Code::InvalidValue,
            "model",
            format!("the server at {base_url} does not serve `{model}`"),
        ));
    }
    let name = match report.server.as_str() {
        "llama.cpp" => "llama-cpp",
        "ollama" => "ollama",
        _ => "local",
    };
    let base = report.base_url.trim_end_matches('/');
    let providers = sessions.with(|s| s.providers())?;
    let key = (1..)
        .map(|n| if n == 1 { name.to_string() } else { format!("{name}-{n}") })
        .find(|k| providers.iter().all(|p| &p.key != k || p.base_url == base))
        .unwrap_or_else(|| name.to_string());
    let config = ProviderConfig {
        key,
        kind,
        base_url: base.into(),
        credential_ref: None,
        structured_form: Default::default(),
        region: local(),
        retention: no_retention(),
    };
    use_model(sessions, &config, model, Weights::Served).await
}
