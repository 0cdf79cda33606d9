//! Providers and model pins stored in the workspace.
//!
//! A provider is an endpoint (kind, base URL, structured-output form, a credential *reference*,
//! region, retention). A model pin names one model on one provider by an immutable fingerprint:
//! Ollama's content digest, or for OpenAI-compatible servers (llama.cpp, LM Studio, vLLM) a
//! sha256 of the served model's metadata from `/v1/models` — and, when the GGUF file is local,
//! its sha256. Floating names (`latest`, `name:latest`, an Ollama name without a tag) are
//! refused. Before a call, [`check_drift`] compares what the server serves now with the pin;
//! a mismatch is `model.drift` (fault: admin) and calls stay refused until someone repins.
//! Managing providers and pins needs `ai.manage`. Endpoints must be on this machine (loopback).

use crate::ai::provider::{provider, Endpoint, ModelInfo, ProviderKind, StructuredForm};
use crate::ai::secrets::{self, SecretRef};
use crate::clock::timestamp;
use crate::digest::file_sha256;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::AI_MANAGE;
use crate::records::access::{Session, Sessions};
use rusqlite::params;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::{Duration, Instant};
use ts_rs::TS;

/// The base URL a provider of kind `built_in` stores: the built-in runtime says where it
/// serves on each call (`provider::serve_built_in`).
pub const BUILT_IN_ADDRESS: &str = "built-in";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ProviderConfig {
    pub key: String,
    pub kind: ProviderKind,
    pub base_url: String,
    #[serde(default)]
    #[ts(optional)]
    pub credential_ref: Option<String>,
    #[serde(default)]
    #[ts(optional, as = "Option<StructuredForm>")]
    pub structured_form: StructuredForm,
    #[serde(default = "local")]
    #[ts(optional, as = "Option<String>")]
    pub region: String,
    #[serde(default = "no_retention")]
    #[ts(optional, as = "Option<String>")]
    pub retention: String,
}

pub(crate) fn local() -> String {
    "this machine".into()
}

pub(crate) fn no_retention() -> String {
    "none".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ModelPin {
    pub key: String,
    pub provider: String,
    pub model_id: String,
    /// The immutable identity: `sha256:<gguf>` / Ollama digest / `meta-sha256:<…>`.
    pub digest: String,
    /// What the server reports now must match this before every call.
    pub served_fingerprint: String,
    pub metadata: Value,
    pub temperature: f64,
    pub max_output_tokens: u32,
    pub input_price_per_mtok: f64,
    pub output_price_per_mtok: f64,
    pub currency: String,
    pub pinned_at: String,
    pub pinned_by: String,
    pub drift: Option<String>,
}

impl ModelPin {
    /// A request to this pinned model: its id, temperature and output cap, with the
    /// capability's prompt, output contract and timeouts.
    pub fn chat_request(
        &self,
        prompt: crate::ai::provider::Prompt,
        schema: Option<(String, Value)>,
        connect_timeout: Duration,
        total_timeout: Duration,
        stream: bool,
    ) -> crate::ai::provider::ChatRequest {
        crate::ai::provider::ChatRequest {
            model: self.model_id.clone(),
            prompt,
            schema,
            max_output_tokens: self.max_output_tokens,
            temperature: self.temperature as f32,
            connect_timeout,
            total_timeout,
            stream,
        }
    }
}

/// The Settings → Providers screen: what is configured and whether the user may change it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ProviderSettings {
    pub providers: Vec<ProviderConfig>,
    pub pins: Vec<ModelPin>,
    pub can_manage: bool,
}

/// Settings chosen when pinning.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct PinSettings {
    pub temperature: f64,
    pub max_output_tokens: u32,
    pub input_price_per_mtok: f64,
    pub output_price_per_mtok: f64,
    pub currency: String,
}

impl Default for PinSettings {
    fn default() -> Self {
        PinSettings {
            temperature: 0.0,
            max_output_tokens: 1024,
            input_price_per_mtok: 0.0,
            output_price_per_mtok: 0.0,
            currency: "USD".into(),
        }
    }
}

/// What a server says of one model, reduced to fingerprints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fingerprint {
    pub served: String,
    pub digest: String,
    pub metadata: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ConnectionReport {
    pub base_url: String,
    pub kind: ProviderKind,
    /// `llama.cpp`, `ollama`, or `openai-compatible` when the server does not say.
    pub server: String,
    pub models: Vec<ModelInfo>,
    pub round_trip_ms: f64,
}

impl Session<'_> {
    pub fn provider_settings(&self) -> Result<ProviderSettings> {
        Ok(ProviderSettings {
            providers: self.providers()?,
            pins: self.model_pins()?,
            can_manage: self.user().has_system_permission(AI_MANAGE),
        })
    }
}

/// Only endpoints on this machine: nothing leaves it.
pub fn check_local(base_url: &str) -> Result<()> {
    let rest = base_url.strip_prefix("http://").or_else(|| base_url.strip_prefix("https://"));
    let host = rest.map(|r| r.split(['/', '?']).next().unwrap_or_default()).unwrap_or_default();
    let host =
        host.rsplit_once(':')
            .map_or(host, |(h, port)| if port.bytes().all(|b| b.is_ascii_digit()) { h } else { host });
    if matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        Ok(())
    } else {
        Err(Error::on_field(
            Code::InvalidValue,
            "base_url",
            format!("`{base_url}` is not an endpoint on this machine; use http://127.0.0.1:PORT or http://localhost:PORT"),
        ))
    }
}

fn canonical_sha(v: &Value) -> String {
    // serde_json maps are sorted (no preserve_order), so this is canonical.
    let text = serde_json::to_string(v).unwrap_or_default();
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

fn floating(kind: ProviderKind, model_id: &str) -> bool {
    let id = model_id.trim();
    id.is_empty()
        || id.eq_ignore_ascii_case("latest")
        || id.to_ascii_lowercase().ends_with(":latest")
        || (kind == ProviderKind::Ollama && !id.contains(':'))
}

/// The fingerprint of `model_id` as `endpoint` serves it now.
pub async fn fingerprint(endpoint: &Endpoint, model_id: &str, gguf: Option<&Path>) -> Result<Fingerprint> {
    let content = gguf.map(|path| file_sha256(path).map(|sha| format!("sha256:{sha}"))).transpose()?;
    fingerprint_with(endpoint, model_id, content).await
}

/// [`fingerprint`], the weights' digest (`sha256:<hex>`) already known.
async fn fingerprint_with(
    endpoint: &Endpoint,
    model_id: &str,
    content: Option<String>,
) -> Result<Fingerprint> {
    if floating(endpoint.kind, model_id) {
        return Err(Error::on_field(
            Code::InvalidValue,
            "model",
            format!(
                "`{model_id}` is a floating name; pin an exact model (e.g. `qwen2.5:0.5b`, not `latest`)"
            ),
        ));
    }
    let models = provider(endpoint.clone())?.list_models(Duration::from_secs(10)).await?;
    let m = models.iter().find(|m| m.id == model_id).ok_or_else(|| {
        let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
        Error::on_field(
            Code::InvalidValue,
            "model",
            format!("the server does not serve `{model_id}` (it serves: {})", ids.join(", ")),
        )
    })?;
    let served = match endpoint.kind {
        ProviderKind::Ollama if !m.digest.is_empty() => m.digest.clone(),
        ProviderKind::Ollama => {
            return Err(Error::new(Code::IntegrationMalformed, "Ollama reported no digest for the model"))
        }
        ProviderKind::OpenaiCompatible | ProviderKind::BuiltIn => {
            if m.meta.is_null() {
                return Err(Error::new(
                    Code::IntegrationMalformed,
                    "the server reports no metadata for the model, so it cannot be pinned by content",
                ));
            }
            format!("meta-sha256:{}", canonical_sha(&m.meta))
        }
    };
    let digest = content.unwrap_or_else(|| served.clone());
    Ok(Fingerprint { served, digest, metadata: m.meta.clone() })
}

/// Refuse with `model.drift` when the server no longer serves what `pin` names.
pub async fn check_drift(endpoint: &Endpoint, pin: &ModelPin) -> Result<()> {
    if let Some(d) = &pin.drift {
        return Err(drift(pin, d));
    }
    let now = fingerprint(endpoint, &pin.model_id, None).await;
    match now {
        Ok(f) if f.served == pin.served_fingerprint => Ok(()),
        Ok(f) => Err(drift(pin, &format!("now serves {} (pinned {})", f.served, pin.served_fingerprint))),
        Err(e) if e.code == Code::InvalidValue => Err(drift(pin, &e.message)),
        Err(e) => Err(e),
    }
}

/// What a pin's digest is taken from.
#[derive(Debug, Clone, Copy)]
pub enum Weights<'a> {
    /// What the server says of the model (its metadata, or Ollama's digest).
    Served,
    /// The weights file, when the server runs it on this machine: its sha256.
    File(&'a Path),
    /// The weights' sha256, already checked by the caller (the built-in model's file).
    Sha256(&'a str),
}

/// Pin `model` of `provider`, as `key`, by what its server serves now (the app's Pin button,
/// `model pin`, "Use the built-in model"); the digest from `weights`.
pub async fn pin_served_model(
    sessions: &impl Sessions,
    key: &str,
    provider: &str,
    model: &str,
    weights: Weights<'_>,
    settings: &PinSettings,
) -> Result<ModelPin> {
    let endpoint = sessions.with(|s| s.endpoint(provider))?;
    let content = match weights {
        Weights::Served => None,
        Weights::File(path) => Some(format!("sha256:{}", file_sha256(path)?)),
        Weights::Sha256(sha) => Some(format!("sha256:{sha}")),
    };
    let fp = fingerprint_with(&endpoint, model, content).await?;
    sessions.with(|s| s.pin_model(key, provider, model, &fp, settings))
}

/// Check the pin `key` against its server (the app's Check button, `model check`). Drift is
/// recorded on the pin, which then refuses calls until repinned, and returned as
/// `model.drift`; an unreachable server is an `integration` error and records nothing.
pub async fn check_pin(sessions: &impl Sessions, key: &str) -> Result<ModelPin> {
    let (pin, endpoint) = sessions.with(|s| {
        let pin = s.model_pin(key)?;
        let endpoint = s.endpoint(&pin.provider)?;
        Ok((pin, endpoint))
    })?;
    match check_drift(&endpoint, &pin).await {
        Ok(()) => Ok(pin),
        Err(e) if e.code == Code::ModelDrift => {
            sessions.with(|s| s.mark_drift(key, &e.message))?;
            Err(e)
        }
        Err(e) => Err(e),
    }
}

fn drift(pin: &ModelPin, detail: &str) -> Error {
    Error::new(
        Code::ModelDrift,
        format!(
            "model `{}` ({}) no longer matches its pin: {detail}. An admin must repin it.",
            pin.key, pin.model_id
        ),
    )
}

/// Which server this is, what it serves, and how long a round trip takes.
pub async fn test_connection(endpoint: &Endpoint) -> Result<ConnectionReport> {
    if endpoint.kind != ProviderKind::BuiltIn {
        check_local(&endpoint.base_url)?;
    }
    let start = Instant::now();
    let models = provider(endpoint.clone())?.list_models(Duration::from_secs(5)).await?;
    let round_trip_ms = start.elapsed().as_secs_f64() * 1000.0;
    let server = match endpoint.kind {
        ProviderKind::Ollama => "ollama",
        ProviderKind::OpenaiCompatible if models.iter().any(|m| m.meta.get("n_params").is_some()) => {
            "llama.cpp"
        }
        ProviderKind::OpenaiCompatible => "openai-compatible",
        ProviderKind::BuiltIn => "built-in (llama.cpp)",
    };
    Ok(ConnectionReport {
        base_url: endpoint.base_url.clone(),
        kind: endpoint.kind,
        server: server.into(),
        models,
        round_trip_ms,
    })
}

/// Probe the usual local ports (Ollama 11434, llama.cpp 8080, LM Studio 1234, vLLM 8000) on
/// 127.0.0.1 only, and report the servers that answer.
pub async fn discover() -> Vec<ConnectionReport> {
    let candidates = [
        (ProviderKind::Ollama, "http://127.0.0.1:11434"),
        (ProviderKind::OpenaiCompatible, "http://127.0.0.1:8080/v1"),
        (ProviderKind::OpenaiCompatible, "http://127.0.0.1:1234/v1"),
        (ProviderKind::OpenaiCompatible, "http://127.0.0.1:8000/v1"),
    ];
    let mut found = Vec::new();
    for (kind, url) in candidates {
        if let Ok(r) = test_connection(&Endpoint::new(kind, url)).await {
            found.push(r);
        }
    }
    found
}

impl Session<'_> {
    pub fn add_provider(&self, cfg: &ProviderConfig) -> Result<()> {
        self.require(AI_MANAGE)?;
        match cfg.kind {
            // It has no address of its own: the runtime says where it serves at each call.
            ProviderKind::BuiltIn if cfg.base_url != BUILT_IN_ADDRESS => {
                return Err(Error::on_field(
                    Code::InvalidValue,
                    "base_url",
                    format!("the built-in provider's address is `{}`", BUILT_IN_ADDRESS),
                ))
            }
            ProviderKind::BuiltIn => {}
            _ => check_local(&cfg.base_url)?,
        }
        if cfg.key.is_empty() || !cfg.key.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b)) {
            return Err(Error::on_field(
                Code::InvalidValue,
                "key",
                "a provider key is letters, digits, - and _",
            ));
        }
        if let Some(r) = &cfg.credential_ref {
            SecretRef::parse(r)?;
        }
        let tx = self.begin_write()?;
        let kind = serde_json::to_value(cfg.kind).map_err(|e| Error::internal(e.to_string()))?;
        let form = serde_json::to_value(cfg.structured_form).map_err(|e| Error::internal(e.to_string()))?;
        tx.execute(
            "INSERT INTO ai_provider (key, kind, base_url, credential_ref, structured_form, region, retention, created_at, created_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (key) DO UPDATE SET kind = ?2, base_url = ?3, credential_ref = ?4, structured_form = ?5, region = ?6, retention = ?7",
            params![
                cfg.key,
                kind.as_str(),
                cfg.base_url.trim_end_matches('/'),
                cfg.credential_ref,
                form.as_str(),
                cfg.region,
                cfg.retention,
                timestamp(self.ws.clock.now()),
                self.user().key
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    pub fn providers(&self) -> Result<Vec<ProviderConfig>> {
        let mut stmt = self.ws.conn().prepare(
            "SELECT key, kind, base_url, credential_ref, structured_form, region, retention FROM ai_provider ORDER BY key",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get::<_, String>(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (key, kind, base_url, credential_ref, form, region, retention) = row?;
            out.push(ProviderConfig {
                key,
                kind: serde_json::from_value(Value::String(kind))
                    .map_err(|e| Error::internal(e.to_string()))?,
                base_url,
                credential_ref,
                structured_form: serde_json::from_value(Value::String(form))
                    .map_err(|e| Error::internal(e.to_string()))?,
                region,
                retention,
            });
        }
        Ok(out)
    }

    pub fn provider_config(&self, key: &str) -> Result<ProviderConfig> {
        self.providers()?
            .into_iter()
            .find(|p| p.key == key)
            .ok_or_else(|| Error::new(Code::NotFound, format!("no provider `{key}`")))
    }

    /// The endpoint of a provider, with its key read from the OS keyring.
    pub fn endpoint(&self, key: &str) -> Result<Endpoint> {
        let cfg = self.provider_config(key)?;
        let mut e = Endpoint::new(cfg.kind, cfg.base_url);
        e.structured = cfg.structured_form;
        if let Some(r) = &cfg.credential_ref {
            e.api_key = secrets::get(&SecretRef::parse(r)?)?;
        }
        Ok(e)
    }

    pub fn remove_provider(&self, key: &str) -> Result<()> {
        self.require(AI_MANAGE)?;
        let tx = self.begin_write()?;
        let pins: i64 =
            tx.query_row("SELECT count(*) FROM ai_model_pin WHERE provider = ?1", [key], |r| r.get(0))?;
        if pins > 0 {
            return Err(Error::new(
                Code::InUse,
                format!("provider `{key}` has {pins} pinned model(s); remove them first"),
            ));
        }
        if tx.execute("DELETE FROM ai_provider WHERE key = ?1", [key])? == 0 {
            return Err(Error::new(Code::NotFound, format!("no provider `{key}`")));
        }
        tx.commit()?;
        Ok(())
    }

    /// Store (or replace) a pin from a fingerprint taken just now.
    pub fn pin_model(
        &self,
        key: &str,
        provider_key: &str,
        model_id: &str,
        fp: &Fingerprint,
        s: &PinSettings,
    ) -> Result<ModelPin> {
        self.require(AI_MANAGE)?;
        self.provider_config(provider_key)?;
        let tx = self.begin_write()?;
        let now = timestamp(self.ws.clock.now());
        tx.execute(
            "INSERT INTO ai_model_pin (key, provider, model_id, digest, served_fingerprint, metadata, temperature, max_output_tokens,
                input_price_per_mtok, output_price_per_mtok, currency, pinned_at, pinned_by, drift)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, NULL)
             ON CONFLICT (key) DO UPDATE SET provider = ?2, model_id = ?3, digest = ?4, served_fingerprint = ?5, metadata = ?6,
                temperature = ?7, max_output_tokens = ?8, input_price_per_mtok = ?9, output_price_per_mtok = ?10,
                currency = ?11, pinned_at = ?12, pinned_by = ?13, drift = NULL",
            params![
                key,
                provider_key,
                model_id,
                fp.digest,
                fp.served,
                fp.metadata.to_string(),
                s.temperature,
                s.max_output_tokens,
                s.input_price_per_mtok,
                s.output_price_per_mtok,
                s.currency,
                now,
                self.user().key
            ],
        )?;
        tx.commit()?;
        self.model_pin(key)
    }

    pub fn model_pins(&self) -> Result<Vec<ModelPin>> {
        let mut stmt = self.ws.conn().prepare(
            "SELECT key, provider, model_id, digest, served_fingerprint, metadata, temperature, max_output_tokens,
                input_price_per_mtok, output_price_per_mtok, currency, pinned_at, pinned_by, drift FROM ai_model_pin ORDER BY key",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ModelPin {
                key: r.get(0)?,
                provider: r.get(1)?,
                model_id: r.get(2)?,
                digest: r.get(3)?,
                served_fingerprint: r.get(4)?,
                metadata: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or(Value::Null),
                temperature: r.get(6)?,
                max_output_tokens: r.get(7)?,
                input_price_per_mtok: r.get(8)?,
                output_price_per_mtok: r.get(9)?,
                currency: r.get(10)?,
                pinned_at: r.get(11)?,
                pinned_by: r.get(12)?,
                drift: r.get(13)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    pub fn model_pin(&self, key: &str) -> Result<ModelPin> {
        self.model_pins()?
            .into_iter()
            .find(|p| p.key == key)
            .ok_or_else(|| Error::new(Code::NotFound, format!("no model pin `{key}`")))
    }

    /// Record that a pin drifted: calls stay refused until it is repinned.
    pub fn mark_drift(&self, key: &str, detail: &str) -> Result<()> {
        let tx = self.begin_write()?;
        tx.execute(
            "UPDATE ai_model_pin SET drift = ?2 WHERE key = ?1 AND drift IS NULL",
            params![key, detail],
        )?;
        tx.commit()?;
        Ok(())
    }
}
