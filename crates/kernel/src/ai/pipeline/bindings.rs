//! Capability bindings: what each capability runs with (prompt, model pin, permission, autonomy,
//! settings with budgets and limits), and the specs capabilities register to seed them.

use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::{AI_APPROVE, AI_MANAGE, AI_USE};
use crate::records::access::Session;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// A capability a model was not bound to, and why (the eval gate's message).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NotBound {
    pub capability: String,
    pub reason: String,
}

/// Budgets in the workspace currency; `None` = no ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Budget {
    #[serde(default)]
    #[ts(optional)]
    pub per_invocation: Option<f64>,
    #[serde(default)]
    #[ts(optional)]
    pub per_user_per_day: Option<f64>,
    #[serde(default)]
    #[ts(optional)]
    pub workspace_per_month: Option<f64>,
    /// Share of a ceiling at which the answer carries a warning.
    pub warn_at: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RateLimits {
    /// Calls of one user to one capability at the same time.
    pub concurrency: u32,
    /// Calls of one user to one capability per minute.
    pub per_minute: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CapabilitySettings {
    #[ts(type = "number")]
    pub timeout_ms: u64,
    pub connect_timeout_ms: u32,
    /// Output cap for this capability (the pin's cap applies too: the lower wins).
    pub max_output_tokens: u32,
    /// Token budget of the schema projection; over it, the projection is scoped.
    #[ts(type = "number")]
    pub projection_tokens: u64,
    pub budget: Budget,
    pub rate: RateLimits,
    /// Objects the capability may touch; `None` = every object the user can read.
    #[serde(default)]
    #[ts(optional)]
    pub objects: Option<Vec<String>>,
    /// The eval suite that gates a new prompt version or model; `None` = the capability's most
    /// recently published suite.
    #[serde(default)]
    #[ts(optional)]
    pub eval_suite: Option<String>,
    /// For a capability that takes several steps per request (the assistant): the most it may
    /// take; `None` = its own default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_steps: Option<u32>,
}

pub use crate::proposals::Autonomy;

/// A capability binding: prompt + model + permission + autonomy + budgets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityBinding {
    pub key: String,
    pub prompt: String,
    /// The model pin; `None` = the workspace's only pin, if there is exactly one.
    #[ts(optional)]
    pub model_pin: Option<String>,
    pub required_permission: String,
    pub autonomy: Autonomy,
    pub settings: CapabilitySettings,
}

/// One shipped prompt version: its instructions, its worked examples, and the output contract
/// it speaks (a capability may change its contract from one version to the next; the version a
/// workspace's pointer names decides which one a call uses).
pub struct ShippedVersion {
    pub instructions: &'static str,
    pub examples: fn() -> Value,
    pub contract: &'static str,
    /// The version's instructions and examples in other languages, by language code
    /// (`{"de": {"instructions": "…", "examples": […]}}`): frozen with the version, and chosen
    /// by the reader's locale.
    pub variants: fn() -> Value,
}

/// A shipped version written in English only.
pub fn one_language() -> Value {
    Value::Object(Default::default())
}

/// What a capability ships with: its prompt's versions (1, 2, …) and its default binding.
/// Each capability declares one; the capability layer registers them on a workspace
/// ([`register_capabilities`]), and this module seeds what is missing from the store.
pub struct CapabilitySpec {
    pub capability: &'static str,
    /// What the capability does, as a user reads it in a sentence ("no model is set up for
    /// answering questions").
    pub purpose: &'static str,
    pub prompt: &'static str,
    pub versions: &'static [ShippedVersion],
    pub inputs: &'static str,
    pub settings: fn() -> CapabilitySettings,
    pub autonomy: Autonomy,
}

/// The capabilities registered on a workspace, and whether their prompts and bindings are in
/// its store yet.
#[derive(Default)]
pub(super) struct CapabilityRegistry {
    specs: Vec<&'static CapabilitySpec>,
    seeded: std::sync::atomic::AtomicBool,
}

/// What a registered capability does ("answering questions"); its key for one not registered.
pub(super) fn purpose_of(ws: &crate::records::workspace::Workspace, capability: &str) -> String {
    let registry = ws.extension::<CapabilityRegistry>();
    let spec = registry.specs.iter().find(|s| s.capability == capability);
    spec.map_or_else(|| capability.to_string(), |s| s.purpose.to_string())
}

/// Register the capabilities a workspace offers and seed their prompts and bindings into the
/// store, once. A file busy in another process is seeded on the first read instead.
pub fn register_capabilities(ws: &crate::records::workspace::Workspace, specs: &[&'static CapabilitySpec]) {
    ws.set_extension(CapabilityRegistry { specs: specs.to_vec(), seeded: Default::default() });
    if let Err(e) = seed_capabilities(ws) {
        tracing::info!(code = e.code.as_str(), "capabilities left to seed on first use");
    }
}

/// Insert the built-in prompt versions and capability bindings that are missing (once per
/// open workspace). A new workspace starts on each prompt's latest built-in version; in an
/// existing one, a version shipped later is added but the active pointer stays where it is
/// (moving it is the only way to change behaviour: `prompt activate`).
fn seed_capabilities(ws: &crate::records::workspace::Workspace) -> Result<()> {
    use std::sync::atomic::Ordering;
    let registry = ws.extension::<CapabilityRegistry>();
    if registry.seeded.load(Ordering::Acquire) {
        return Ok(());
    }
    let conn = ws.conn();
    let missing = registry.specs.iter().any(|b| {
        let has: Option<i64> = conn
            .query_row("SELECT max(version) FROM ai_prompt_version WHERE prompt = ?1", [b.prompt], |r| {
                r.get(0)
            })
            .ok()
            .flatten();
        has.is_none_or(|v| v < b.versions.len() as i64)
            || conn
                .query_row("SELECT 1 FROM ai_capability WHERE key = ?1", [b.capability], |_| Ok(()))
                .optional()
                .ok()
                .flatten()
                .is_none()
    });
    if missing {
        let tx = crate::store::immediate(conn)?;
        let now = timestamp(ws.clock.now());
        for b in &registry.specs {
            for (i, v) in b.versions.iter().enumerate() {
                tx.execute(
                    "INSERT OR IGNORE INTO ai_prompt_version (prompt, version, instructions, examples, inputs, output_contract, published_at, published_by, variants)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'countersign', ?8)",
                    params![
                        b.prompt,
                        i as i64 + 1,
                        v.instructions,
                        (v.examples)().to_string(),
                        b.inputs,
                        v.contract,
                        now,
                        (v.variants)().to_string()
                    ],
                )?;
            }
            tx.execute(
                "INSERT OR IGNORE INTO ai_prompt (key, active_version) VALUES (?1, ?2)",
                params![b.prompt, b.versions.len() as i64],
            )?;
            let settings =
                serde_json::to_string(&(b.settings)()).map_err(|e| Error::internal(e.to_string()))?;
            tx.execute(
                "INSERT OR IGNORE INTO ai_capability (key, prompt, model_pin, required_permission, autonomy, settings)
                 VALUES (?1, ?2, NULL, ?3, ?4, ?5)",
                params![b.capability, b.prompt, AI_USE, autonomy_str(b.autonomy), settings],
            )?;
        }
        tx.commit()?;
    }
    registry.seeded.store(true, Ordering::Release);
    Ok(())
}

impl Default for CapabilitySettings {
    /// A capability's settings unless it declares others: two minutes, 200 output tokens, a
    /// 2,000-token projection, no budget ceiling, two calls at a time and 30 a minute per user.
    fn default() -> Self {
        CapabilitySettings {
            timeout_ms: 120_000,
            connect_timeout_ms: 3_000,
            max_output_tokens: 200,
            projection_tokens: 2_000,
            budget: Budget {
                per_invocation: None,
                per_user_per_day: None,
                workspace_per_month: None,
                warn_at: 0.8,
            },
            rate: RateLimits { concurrency: 2, per_minute: 30 },
            objects: None,
            eval_suite: None,
            max_steps: None,
        }
    }
}

pub(super) fn autonomy_str(a: Autonomy) -> &'static str {
    match a {
        Autonomy::ReadOnly => "read_only",
        Autonomy::Propose => "propose",
        Autonomy::AutoApply => "auto_apply",
    }
}

impl Session<'_> {
    /// The capabilities' prompts and bindings, seeded if opening could not (a cheap check once
    /// they are).
    pub(super) fn seed_capabilities(&self) -> Result<()> {
        seed_capabilities(self.ws)
    }

    /// Bind `model_pin` (or, with `None`, the workspace's only pin) to a capability, through
    /// the eval gate (see [`bind_capability_with`](Self::bind_capability_with)).
    pub fn bind_model(
        &self,
        capability: &str,
        model_pin: Option<&str>,
        override_reason: Option<&str>,
    ) -> Result<CapabilityBinding> {
        let binding =
            CapabilityBinding { model_pin: model_pin.map(String::from), ..self.capability(capability)? };
        self.bind_capability_with(&binding, override_reason)?;
        self.capability(capability)
    }

    /// Bind `pin` to every capability without a model of its own, each through the eval gate
    /// (no override is written on anyone's behalf). A capability the gate holds back is
    /// returned with the gate's reason, unbound; one bound to another model is left as it is.
    pub fn bind_where_unbound(&self, pin: &str) -> Result<(Vec<String>, Vec<NotBound>)> {
        let (mut bound, mut not_bound) = (Vec::new(), Vec::new());
        for capability in self.capabilities()?.into_iter().filter(|c| c.model_pin.is_none()) {
            match self.bind_model(&capability.key, Some(pin), None) {
                Ok(_) => bound.push(capability.key),
                Err(e) if e.code == Code::EvalGate => {
                    not_bound.push(NotBound { capability: capability.key, reason: e.message })
                }
                Err(e) => return Err(e),
            }
        }
        Ok((bound, not_bound))
    }

    /// Every capability's binding, in the order they were registered.
    pub fn capabilities(&self) -> Result<Vec<CapabilityBinding>> {
        self.seed_capabilities()?;
        let keys: Vec<String> = {
            let mut stmt = self.ws.conn().prepare("SELECT key FROM ai_capability ORDER BY rowid")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        keys.iter().map(|k| self.capability(k)).collect()
    }

    pub fn capability(&self, key: &str) -> Result<CapabilityBinding> {
        self.seed_capabilities()?;
        self.ws
            .conn()
            .query_row(
                "SELECT key, prompt, model_pin, required_permission, autonomy, settings FROM ai_capability WHERE key = ?1",
                [key],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                    ))
                },
            )
            .optional()?
            .map(|(key, prompt, model_pin, required_permission, autonomy, settings)| {
                Ok::<_, Error>(CapabilityBinding {
                    key,
                    prompt,
                    model_pin,
                    required_permission,
                    autonomy: serde_json::from_value(Value::String(autonomy))
                        .map_err(|e| Error::internal(e.to_string()))?,
                    settings: serde_json::from_str(&settings).map_err(|e| Error::internal(e.to_string()))?,
                })
            })
            .transpose()?
            .ok_or_else(|| Error::new(Code::NotFound, format!("no capability `{key}`")))
    }

    /// The auto-apply allowlist of (capability, object) with the capability's autonomy (the
    /// list has an effect only under `auto_apply`).
    pub fn auto_apply_list(&self, capability: &str, object: &str) -> Result<crate::proposals::AutoApplyList> {
        self.readable_object(object)?;
        Ok(crate::proposals::AutoApplyList {
            capability: capability.into(),
            object: object.into(),
            autonomy: self.capability(capability)?.autonomy,
            fields: self.auto_apply_fields(capability, object)?,
            can_set: self.user().has_system_permission(AI_APPROVE),
        })
    }

    /// Set the auto-apply allowlist of an existing capability for an object (`ai.approve`; the
    /// fields must be ones the setter can edit).
    pub fn set_auto_apply(&self, capability: &str, object: &str, fields: &[String]) -> Result<Vec<String>> {
        self.require(AI_APPROVE)?;
        self.capability(capability)?;
        self.set_auto_apply_fields(capability, object, fields)
    }

    /// Change a capability's binding (model, budgets, limits, scope). Needs `ai.manage`.
    pub fn bind_capability(&self, binding: &CapabilityBinding) -> Result<()> {
        self.bind_capability_with(binding, None)
    }

    /// [`bind_capability`](Self::bind_capability) through the eval gate: a different model (or
    /// prompt) needs a passing suite run against the pair, or `override_reason` (`ai.manage`).
    pub fn bind_capability_with(
        &self,
        binding: &CapabilityBinding,
        override_reason: Option<&str>,
    ) -> Result<()> {
        self.require(AI_MANAGE)?;
        let before = self.capability(&binding.key)?;
        if let Some(pin) = &binding.model_pin {
            self.model_pin(pin)?;
        }
        let versions = self.prompt_versions(&binding.prompt)?;
        // A suite named for the gate must exist for this capability: a misspelt one would
        // leave the capability ungated.
        if let Some(suite) = &binding.settings.eval_suite {
            let known: bool = self.ws.conn().query_row(
                "SELECT EXISTS (SELECT 1 FROM eval_suite WHERE key = ?1 AND capability = ?2)",
                params![suite, binding.key],
                |r| r.get(0),
            )?;
            if !known {
                return Err(Error::on_field(
                    Code::InvalidValue,
                    "evalSuite",
                    format!("no eval suite `{suite}` for {}", binding.key),
                ));
            }
        }
        let was = self.effective_pin(&before)?.map(|p| p.key);
        let will = self.effective_pin(binding)?;
        let tx = self.begin_write()?;
        if let Some(pin) =
            will.as_ref().filter(|p| Some(&p.key) != was.as_ref() || before.prompt != binding.prompt)
        {
            let active = versions.iter().find(|v| v.active).map_or(0, |v| v.version);
            let candidate = super::gate::Candidate {
                capability: &binding.key,
                prompt_version: active,
                pin,
                change: format!("bind model `{}` to {}", pin.key, binding.key),
            };
            self.pass_gate(&tx, &candidate, override_reason)?;
        }
        tx.execute(
            "UPDATE ai_capability SET prompt = ?2, model_pin = ?3, required_permission = ?4, autonomy = ?5, settings = ?6 WHERE key = ?1",
            params![
                binding.key,
                binding.prompt,
                binding.model_pin,
                binding.required_permission,
                autonomy_str(binding.autonomy),
                serde_json::to_string(&binding.settings).map_err(|e| Error::internal(e.to_string()))?
            ],
        )?;
        tx.commit()?;
        Ok(())
    }
}
