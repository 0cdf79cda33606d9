//! One invocation: the model it runs on, its trace row opened at `begin` and completed at the
//! end whatever the outcome (refusals before it could begin included), and its figures.

use super::in_flight::{holder, Claim};
use super::trace::{open_row, OpenRow, RowState};
use super::*;
use crate::ai::pins::ModelPin;
use crate::ai::provider::{Endpoint, Usage};
use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::AI_MANAGE;
use crate::records::access::Session;
use rusqlite::params;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use ts_rs::TS;

/// The model an invocation calls: a stored pin, or an endpoint given for one run
/// (`--endpoint`), fingerprinted just before the call.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub pin: ModelPin,
    pub endpoint: Endpoint,
    /// Stored pin (drift-checked before each call) or one-run endpoint.
    pub stored: bool,
}

impl ModelChoice {
    /// An OpenAI-compatible server on this machine, used as-is for one run: its first served
    /// model, fingerprinted now, temperature 0, price 0.
    pub async fn ad_hoc(base_url: &str) -> Result<ModelChoice> {
        crate::ai::pins::check_local(base_url)?;
        let endpoint = Endpoint::new(crate::ai::provider::ProviderKind::OpenaiCompatible, base_url);
        let models = crate::ai::provider::provider(endpoint.clone())?
            .list_models(std::time::Duration::from_secs(10))
            .await?;
        let model = models
            .first()
            .ok_or_else(|| Error::new(Code::IntegrationRejected, format!("{base_url} serves no model")))?;
        let fp = crate::ai::pins::fingerprint(&endpoint, &model.id, None).await?;
        Ok(ModelChoice::unstored(base_url, &model.id, fp.digest, fp.served, fp.metadata))
    }

    /// A model used for one run and never stored: the given identity, default sampling,
    /// price 0.
    pub fn unstored(
        base_url: &str,
        model_id: &str,
        digest: String,
        served: String,
        metadata: Value,
    ) -> ModelChoice {
        let defaults = crate::ai::pins::PinSettings::default();
        ModelChoice {
            pin: ModelPin {
                key: format!("endpoint:{base_url}"),
                provider: base_url.to_string(),
                model_id: model_id.to_string(),
                digest,
                served_fingerprint: served,
                metadata,
                temperature: defaults.temperature,
                max_output_tokens: defaults.max_output_tokens,
                input_price_per_mtok: 0.0,
                output_price_per_mtok: 0.0,
                currency: String::new(),
                pinned_at: String::new(),
                pinned_by: String::new(),
                drift: None,
            },
            endpoint: Endpoint::new(crate::ai::provider::ProviderKind::OpenaiCompatible, base_url),
            stored: false,
        }
    }

    /// Refuse a stored pin whose served model changed (`model.drift`).
    pub async fn check(&self) -> Result<()> {
        if self.stored {
            crate::ai::pins::check_drift(&self.endpoint, &self.pin).await
        } else {
            Ok(())
        }
    }

    pub(super) fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.pin.input_price_per_mtok
            + completion_tokens as f64 * self.pin.output_price_per_mtok)
            / 1e6
    }
}

/// What the user wrote, as recorded in the trace: values per field so that a reader who
/// cannot read a field sees them hidden.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct FieldValue {
    pub object: String,
    pub field: String,
    pub value: String,
}

/// One invocation in progress: owned, so the model can be awaited without a session.
#[derive(Debug)]
pub struct Invocation {
    pub trace_id: String,
    pub correlation_id: String,
    pub capability: CapabilityBinding,
    pub prompt: PromptVersion,
    pub model: ModelChoice,
    pub actor: String,
    pub generation: i64,
    pub estimated_cost: f64,
    pub started: Instant,
    pub attempts: u32,
    pub usage: Usage,
    pub model_ms: f64,
    pub prompt_text: String,
    pub output_text: String,
    pub grounding_hash: String,
    /// A budget warning for the user, when a ceiling is near.
    pub warning: Option<String>,
    /// Record values the prompt holds (facts, a document's fields), so the trace hides them from
    /// a reader who cannot read their fields, whatever the outcome.
    pub values: Vec<FieldValue>,
    claim: Claim,
}

/// What one capability run took: its trace, wall time since the run began (grounding included),
/// model time and tokens. Flattened into the capability's answer.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunFigures {
    pub trace_id: String,
    pub total_ms: f64,
    pub model_ms: f64,
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    #[ts(type = "number")]
    pub completion_tokens: u64,
    /// The budget warning of the pre-flight, when spend has reached a budget's warn threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub warning: Option<String>,
}

impl Invocation {
    /// The figures of the run that began at `started`.
    pub fn figures(&self, started: Instant) -> RunFigures {
        RunFigures {
            trace_id: self.trace_id.clone(),
            total_ms: started.elapsed().as_secs_f64() * 1000.0,
            model_ms: self.model_ms,
            prompt_tokens: self.usage.prompt_tokens,
            completion_tokens: self.usage.completion_tokens,
            warning: self.warning.clone(),
        }
    }

    /// The request for this invocation's model under the capability's settings (timeouts,
    /// output cap), streamed, with the per-request output schema.
    pub fn chat_request(
        &self,
        prompt: crate::ai::provider::Prompt,
        schema_name: String,
        schema: Value,
    ) -> crate::ai::provider::ChatRequest {
        let s = &self.capability.settings;
        let mut request = self.model.pin.chat_request(
            prompt,
            Some((schema_name, schema)),
            std::time::Duration::from_millis(s.connect_timeout_ms as u64),
            std::time::Duration::from_millis(s.timeout_ms),
            true,
        );
        request.max_output_tokens = request.max_output_tokens.min(s.max_output_tokens);
        request
    }

    /// Account for one model call.
    pub fn record_call(&mut self, messages: &[Value], resp: &crate::ai::provider::ChatResponse) {
        self.attempts += 1;
        self.usage.prompt_tokens += resp.usage.prompt_tokens;
        self.usage.completion_tokens += resp.usage.completion_tokens;
        self.model_ms += resp.total_ms;
        if !self.prompt_text.is_empty() {
            self.prompt_text.push_str("\n\n=== repair attempt ===\n");
            self.output_text.push_str("\n\n=== repair attempt ===\n");
        }
        for m in messages {
            let role = m["role"].as_str().unwrap_or("?");
            let content = m["content"].as_str().unwrap_or_default();
            self.prompt_text.push_str(&format!("[{role}]\n{content}\n"));
        }
        self.output_text.push_str(&resp.content);
    }

    /// An answer the kernel wrote itself, with no model call: kept in the trace's output, marked
    /// as the kernel's (no prompt was sent, no token spent).
    pub fn record_decided(&mut self, content: &str) {
        if !self.output_text.is_empty() {
            self.output_text.push_str("\n\n=== repair attempt ===\n");
        }
        self.output_text.push_str("[decided by the kernel: the request left the model nothing to choose]\n");
        self.output_text.push_str(content);
    }

    pub fn cost(&self) -> f64 {
        self.model.cost(self.usage.prompt_tokens, self.usage.completion_tokens)
    }

    /// Everything but the model's time.
    pub fn kernel_ms(&self) -> f64 {
        (self.started.elapsed().as_secs_f64() * 1000.0 - self.model_ms).max(0.0)
    }
}

/// A call that runs no model (a tool served to another app), between its two trace steps.
#[derive(Debug)]
pub struct ServedCall {
    pub trace_id: String,
    pub correlation_id: String,
    capability: String,
    started: Instant,
}

/// How an invocation ended, for its trace row.
pub enum Outcome<'a> {
    Answered { result: &'a Value, values: &'a [FieldValue] },
    Failed(&'a Error),
}

/// How a failed invocation is traced: refused (the request or its limits) or failed (the
/// model, the endpoint, the platform), and the error's fault.
pub(super) fn failure_kind(e: &Error) -> (TraceOutcome, Option<String>) {
    let kind = match e.code {
        Code::Permission
        | Code::AiBudget
        | Code::RateLimit
        | Code::GroundingInsufficient
        | Code::Scope
        | Code::Contract => TraceOutcome::Refused,
        _ => TraceOutcome::Failed,
    };
    (kind, serde_json::to_value(e.fault).ok().and_then(|v| v.as_str().map(String::from)))
}

impl Session<'_> {
    /// The model a capability calls: its pin, or the only pin of the workspace. Resolved when a
    /// call starts, so a failure (none pinned, several, drifted) is traced as that call's.
    pub fn model_for(&self, binding: &CapabilityBinding) -> Result<ModelChoice> {
        self.bound_model(binding).map_err(|e| self.refuse_before_begin(binding, "", e))
    }

    /// No model is set up: say what the user can do about it (turn on the built-in model, or
    /// add one in Settings) or who can.
    fn no_model(&self, capability: &str) -> Error {
        let purpose = super::bindings::purpose_of(self.ws, capability);
        let message = if self.user().has_system_permission(AI_MANAGE) {
            format!("no model is set up for {purpose}: use the built-in model, or add a provider and pin a model in Settings")
        } else {
            let who = self.catalog().users_with(AI_MANAGE);
            let who = if who.is_empty() { "a user with ai.manage".to_string() } else { who.join(" or ") };
            format!("no model is set up for {purpose}: {who} can turn on the built-in model or add one in Settings")
        };
        Error::new(Code::ModelNotSetUp, message)
    }

    pub(super) fn bound_model(&self, binding: &CapabilityBinding) -> Result<ModelChoice> {
        let pin = match &binding.model_pin {
            Some(key) => self.model_pin(key)?,
            None => {
                let mut pins = self.model_pins()?;
                match pins.len() {
                    1 => pins.remove(0),
                    0 => return Err(self.no_model(&binding.key)),
                    _ => {
                        return Err(Error::new(
                            Code::IntegrationUnreachable,
                            format!("several models are pinned; bind one to `{}` in Settings", binding.key),
                        ))
                    }
                }
            }
        };
        if let Some(d) = &pin.drift {
            return Err(Error::new(Code::ModelDrift, format!("model pin `{}` drifted: {d}", pin.key)));
        }
        let endpoint = self.endpoint(&pin.provider)?;
        Ok(ModelChoice { pin, endpoint, stored: true })
    }

    /// Start an invocation of `capability` with the prompt version the run read (once): the
    /// trace row (`running`), then authorize and the budget and rate pre-flight. A refusal here
    /// is traced and returned; nothing was sent.
    pub fn begin_invocation(
        &self,
        capability: &CapabilityBinding,
        prompt: PromptVersion,
        model: ModelChoice,
        input: &str,
        estimated_prompt_tokens: u64,
    ) -> Result<Invocation> {
        let max_out = capability.settings.max_output_tokens.min(model.pin.max_output_tokens);
        let estimated_cost = model.cost(estimated_prompt_tokens, max_out as u64);
        let trace_id = self.ws.ids.record_id("trace");
        let mut inv = Invocation {
            claim: Claim {
                path: self.ws.path().to_path_buf(),
                trace_id: trace_id.clone(),
                clock: self.ws.clock.clone(),
                done: AtomicBool::new(false),
            },
            trace_id,
            correlation_id: self.correlation_id(),
            capability: capability.clone(),
            prompt,
            model,
            actor: self.user().key.clone(),
            generation: self.catalog().generation,
            estimated_cost,
            started: Instant::now(),
            attempts: 0,
            usage: Usage::default(),
            model_ms: 0.0,
            prompt_text: String::new(),
            output_text: String::new(),
            grounding_hash: String::new(),
            warning: None,
            values: vec![],
        };
        let currency = self.catalog().definition.currency.clone();
        {
            let tx = self.begin_write()?;
            open_row(
                &tx,
                &OpenRow {
                    id: &inv.trace_id,
                    correlation_id: &inv.correlation_id,
                    capability: &capability.key,
                    actor: &inv.actor,
                    prompt: &inv.prompt.prompt,
                    prompt_version: inv.prompt.version,
                    model_pin: inv.model.stored.then_some(inv.model.pin.key.as_str()),
                    model_id: &inv.model.pin.model_id,
                    model_version: &inv.model.pin.digest,
                    generation: inv.generation,
                    input,
                    estimated_cost,
                    currency: &currency,
                    started_at: &timestamp(self.ws.clock.now()),
                    state: RowState::Running { holder: holder() },
                },
            )?;
            tx.commit()?;
        }
        tracing::info!(
            capability = %capability.key,
            trace = %inv.trace_id,
            correlation = %inv.correlation_id,
            user = %inv.actor,
            prompt_version = inv.prompt.version,
            model = %inv.model.pin.model_id,
            estimated_prompt_tokens,
            "invocation began"
        );
        if let Err(e) = self.preflight(&mut inv) {
            self.finish_invocation(&inv, Outcome::Failed(&e))?;
            return Err(e);
        }
        Ok(inv)
    }

    /// A model call came back to the kernel: a failure ends the invocation
    /// ([`fail_invocation`](Self::fail_invocation)); a response is accounted on it and its
    /// in-flight claim renewed. The driver does this before every capability's `advance`.
    pub fn receive(
        &self,
        inv: &mut Invocation,
        request: &crate::ai::provider::ChatRequest,
        response: Result<crate::ai::provider::ChatResponse>,
    ) -> Result<crate::ai::provider::ChatResponse> {
        let resp = response.map_err(|e| self.fail_invocation(inv, e))?;
        inv.record_call(&request.prompt.messages(), &resp);
        self.renew_invocation(inv)?;
        Ok(resp)
    }

    /// The invocation failed (its model call, or a step after it): a pin that drifted is marked
    /// (it refuses calls until repinned), the trace row is completed, and the error is returned
    /// for the caller. An invocation already finished (its answer recorded) is left as it is.
    pub fn fail_invocation(&self, inv: &Invocation, e: Error) -> Error {
        if inv.claim.done.load(Ordering::SeqCst) {
            return e;
        }
        if e.code == Code::ModelDrift && inv.model.stored {
            if let Err(m) = self.mark_drift(&inv.model.pin.key, &e.message) {
                return m;
            }
        }
        match self.finish_invocation(inv, Outcome::Failed(&e)) {
            Ok(()) => e,
            Err(t) => t,
        }
    }

    pub fn finish_invocation(&self, inv: &Invocation, outcome: Outcome<'_>) -> Result<()> {
        let (kind, result, values, code, fault, message) = match outcome {
            Outcome::Answered { result, values } => {
                let all = inv.values.iter().chain(values).cloned().collect::<Vec<_>>();
                (TraceOutcome::Answered, Some(result.to_string()), all, None, None, None)
            }
            Outcome::Failed(e) => {
                let (kind, fault) = failure_kind(e);
                (kind, None, inv.values.clone(), Some(e.code.as_str()), fault, Some(e.message.clone()))
            }
        };
        let latency_ms = inv.started.elapsed().as_secs_f64() * 1000.0;
        // The trace must be written even when the session's generation is stale.
        let tx = crate::store::immediate(self.ws.conn())?;
        tx.execute(
            "UPDATE ai_trace SET grounding_hash = ?2, prompt_text = ?3, output_text = ?4, result = ?5, field_values = ?6,
                attempts = ?7, prompt_tokens = ?8, completion_tokens = ?9, cost = ?10, model_ms = ?11, latency_ms = ?12,
                outcome = ?13, code = ?14, fault = ?15, message = ?16, finished_at = ?17
             WHERE id = ?1",
            params![
                inv.trace_id,
                inv.grounding_hash,
                inv.prompt_text,
                inv.output_text,
                result,
                serde_json::to_string(&values).map_err(|e| Error::internal(e.to_string()))?,
                inv.attempts,
                inv.usage.prompt_tokens as i64,
                inv.usage.completion_tokens as i64,
                inv.cost(),
                inv.model_ms,
                latency_ms,
                kind.as_str(),
                code,
                fault,
                message,
                timestamp(self.ws.clock.now())
            ],
        )?;
        tx.commit()?;
        inv.claim.done.store(true, Ordering::SeqCst);
        tracing::info!(
            capability = %inv.capability.key,
            trace = %inv.trace_id,
            outcome = kind.as_str(),
            code = code.unwrap_or(""),
            attempts = inv.attempts,
            prompt_tokens = inv.usage.prompt_tokens,
            completion_tokens = inv.usage.completion_tokens,
            cost = inv.cost(),
            model_ms = inv.model_ms.round(),
            kernel_ms = inv.kernel_ms().round(),
            "invocation finished"
        );
        Ok(())
    }

    /// Begin a call that runs no model — a tool served to another app — as one of
    /// `capability`'s: its permission, per-minute rate and concurrency are checked (a refusal is
    /// traced as such), and its trace row opens, joined to the session's correlation, holding
    /// one of the capability's concurrency slots until [`Self::finish_served_call`].
    pub fn begin_served_call(&self, capability: &CapabilityBinding, input: &str) -> Result<ServedCall> {
        let trace_id = self.ws.ids.record_id("trace");
        let checked = self
            .require(&capability.required_permission)
            .and_then(|()| self.check_rate(capability, &trace_id));
        if let Err(e) = checked {
            return Err(self.refuse_before_begin(capability, input, e));
        }
        let prompt = self.active_prompt(&capability.prompt)?;
        let call = ServedCall {
            trace_id,
            correlation_id: self.correlation_id(),
            capability: capability.key.clone(),
            started: Instant::now(),
        };
        let tx = self.begin_write()?;
        open_row(
            &tx,
            &OpenRow {
                id: &call.trace_id,
                correlation_id: &call.correlation_id,
                capability: &call.capability,
                actor: &self.user().key,
                prompt: &prompt.prompt,
                prompt_version: prompt.version,
                model_pin: None,
                model_id: "",
                model_version: "",
                generation: self.catalog().generation,
                input,
                estimated_cost: 0.0,
                currency: &self.catalog().definition.currency,
                started_at: &timestamp(self.ws.clock.now()),
                state: RowState::Running { holder: holder() },
            },
        )?;
        // The call's slot of the capability's concurrency, as an invocation takes one; refused,
        // the row is not written and the refusal is traced.
        if let Err(e) = self.lease_if_room(&tx, capability, &self.user().key, &call.trace_id) {
            drop(tx);
            return Err(self.refuse_before_begin(capability, input, e));
        }
        tx.commit()?;
        Ok(call)
    }

    /// Complete a served call's trace row with what it returned (a description of it, not the
    /// records' values) or its error.
    pub fn finish_served_call(
        &self,
        call: &ServedCall,
        outcome: std::result::Result<&Value, &Error>,
    ) -> Result<()> {
        let (kind, result, code, fault, message) = match outcome {
            Ok(result) => (TraceOutcome::Answered, Some(result.to_string()), None, None, None),
            Err(e) => {
                let (kind, fault) = failure_kind(e);
                (kind, None, Some(e.code.as_str()), fault, Some(e.message.clone()))
            }
        };
        let latency_ms = call.started.elapsed().as_secs_f64() * 1000.0;
        let tx = crate::store::immediate(self.ws.conn())?;
        tx.execute(
            "UPDATE ai_trace SET result = ?2, latency_ms = ?3, outcome = ?4, code = ?5, fault = ?6, message = ?7, finished_at = ?8
             WHERE id = ?1",
            params![
                call.trace_id,
                result,
                latency_ms,
                kind.as_str(),
                code,
                fault,
                message,
                timestamp(self.ws.clock.now())
            ],
        )?;
        tx.commit()?;
        tracing::info!(capability = %call.capability, trace = %call.trace_id, outcome = kind.as_str(), code = code.unwrap_or(""), latency_ms = latency_ms.round(), "served call finished");
        Ok(())
    }

    /// Trace a call refused before it could begin — no permission, a read-only capability, no
    /// model pinned, a record the user cannot read — as one finished row with no model, so
    /// every attempt shows in the activity, refusals included. Returns `e` for the caller to
    /// return; a trace that cannot be written does not hide it.
    pub fn refuse_before_begin(&self, capability: &CapabilityBinding, input: &str, e: Error) -> Error {
        let (kind, fault) = failure_kind(&e);
        tracing::info!(
            capability = %capability.key,
            user = %self.user().key,
            outcome = kind.as_str(),
            code = e.code.as_str(),
            "invocation refused before it began"
        );
        let _ = open_row(
            self.ws.conn(),
            &OpenRow {
                id: &self.ws.ids.record_id("trace"),
                correlation_id: &self.correlation_id(),
                capability: &capability.key,
                actor: &self.user().key,
                prompt: &capability.prompt,
                prompt_version: 0,
                model_pin: None,
                model_id: "",
                model_version: "",
                generation: self.catalog().generation,
                input,
                estimated_cost: 0.0,
                currency: &self.catalog().definition.currency,
                started_at: &timestamp(self.ws.clock.now()),
                state: RowState::Refused {
                    outcome: kind,
                    code: e.code.as_str(),
                    fault: fault.as_deref(),
                    message: &e.message,
                },
            },
        );
        e
    }
}
