//! The AI pipeline every capability goes through (SPEC §2):
//! authorize → budget pre-flight → ground → invoke → constrain (one repair) → answer/propose →
//! trace. This module holds the capability-independent parts: prompt components and capability
//! bindings (stored metadata), budgets and rate limits, the invocation record and the execution
//! trace. Capabilities (`ask`) drive it.
//!
//! An invocation is split so that no lock on the workspace is held while the model thinks:
//! a capability's `begin` runs the synchronous steps on a session and returns an owned
//! [`Invocation`] plus the request; the caller awaits the model with no session; the
//! capability's `advance` constrains the answer on a session again (and may ask for the one
//! repair). The trace row is written when the invocation begins (`running`, counting against
//! budgets at its estimate) and completed when it ends, whatever the outcome.
//!
//! The running row is also the call's in-flight slot, in every process that opens the
//! workspace: its lease (`lease_span`, renewed whenever the call comes back to the kernel)
//! counts against the capability's concurrency until the row is completed, the invocation is
//! dropped (the row is closed as `abandoned`) or the lease runs out (a killed process; the next
//! open closes the row as `abandoned`).

use crate::ai::pins::ModelPin;
use crate::ai::provider::{Endpoint, Usage};
use crate::clock::{timestamp, Clock};
use crate::error::{Code, Error, Fault, Result};
pub mod drive;

use crate::records::access::Session;
use chrono::{DateTime, Datelike, Duration as Span, TimeZone, Utc};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;
use ts_rs::TS;

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
}

pub use crate::proposals::Autonomy;

/// F-CAPABILITY: prompt + model + permission + autonomy + budgets.
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

/// F-PROMPT: one frozen version of a prompt component.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptVersion {
    pub prompt: String,
    pub version: i64,
    /// System-role text: instructions only, never data.
    pub instructions: String,
    /// Worked examples, sent as user/assistant turns: `[{"user": [[label|null, text]…], "answer": …}]`.
    pub examples: Value,
    /// Typed inputs: `{name: type}`.
    pub inputs: Value,
    /// The output contract, by schema reference (`schemas/…`).
    pub output_contract: String,
    pub published_at: String,
    pub published_by: String,
    pub active: bool,
}

/// One shipped prompt version: instructions and worked examples.
pub type ShippedVersion = (&'static str, fn() -> Value);

/// What a capability ships with: its prompt's versions (1, 2, …) and its default binding.
/// Each capability declares one; the capability layer registers them on a workspace
/// ([`register_capabilities`]), and this module seeds what is missing from the store.
pub struct CapabilitySpec {
    pub capability: &'static str,
    pub prompt: &'static str,
    pub versions: &'static [ShippedVersion],
    pub inputs: &'static str,
    pub contract: &'static str,
    pub settings: fn() -> CapabilitySettings,
    pub autonomy: Autonomy,
}

/// The capabilities registered on a workspace.
#[derive(Default)]
struct CapabilityRegistry(Vec<&'static CapabilitySpec>);

/// Register the capabilities a workspace offers: their prompts and bindings are seeded into
/// the store the first time a binding or prompt is read.
pub fn register_capabilities(ws: &crate::records::workspace::Workspace, specs: &[&'static CapabilitySpec]) {
    ws.set_extension(CapabilityRegistry(specs.to_vec()));
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
        }
    }
}

/// The stored examples of a prompt version as chat turns.
pub fn example_turns(examples: &Value) -> Vec<(Vec<crate::ai::provider::Part>, String)> {
    use crate::ai::provider::Part;
    examples
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let parts = e["user"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    let text = p[1].as_str().unwrap_or_default().to_string();
                    match p[0].as_str() {
                        Some(label) => Part::Untrusted { label: label.to_string(), content: text },
                        None => Part::Request(text),
                    }
                })
                .collect();
            (parts, e["answer"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

/// How long a claim on an in-flight slot lasts unless renewed: the longest one model call
/// may take under the capability's settings (every try of `chat_with_retry` at its full
/// timeouts, with its backoffs) plus [`LEASE_MARGIN`] for the kernel's own steps. The claim
/// is renewed each time the call comes back to the kernel (`renew_invocation`), so a call of
/// several model requests (a repair, tool calls) keeps its slot; a process killed outright
/// frees it when the lease runs out.
pub fn lease_span(settings: &CapabilitySettings) -> Span {
    let policy = crate::ai::provider::RetryPolicy::default();
    let per_try = settings.timeout_ms.saturating_add(settings.connect_timeout_ms as u64);
    let tries = policy.attempts.max(1) as u64;
    let backoffs = (policy.first_backoff.as_millis() as u64).saturating_mul(1 << tries.min(16));
    let ms = per_try.saturating_mul(tries).saturating_add(backoffs).min(MAX_LEASE_MS);
    Span::milliseconds(ms as i64) + LEASE_MARGIN
}

/// No claim outlasts a day, whatever the timeouts a binding sets (a huge one would overflow the
/// clock's arithmetic, or run the lease past year 9999 where it no longer compares as text).
const MAX_LEASE_MS: u64 = 24 * 60 * 60 * 1000;

/// Time for the kernel's steps around a model call, on top of the call's own timeouts.
pub const LEASE_MARGIN: Span = Span::seconds(60);

/// The process holding a claim, as recorded in its trace row.
fn holder() -> String {
    format!("pid {}", std::process::id())
}

/// Whether the process named by a trace row's `holder` is gone. A workspace in WAL mode is
/// only ever opened by processes of one machine, so a pid that no longer exists here means
/// the call's process died (killed, crashed) and its claim holds no slot, lease or not. A
/// reused pid only makes a dead claim look alive until its lease runs out.
fn holder_gone(holder: Option<&str>) -> bool {
    let Some(pid) = holder.and_then(|h| h.strip_prefix("pid ")).and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    if pid == std::process::id() {
        return false;
    }
    process_gone(pid)
}

#[cfg(unix)]
fn process_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 checks that the process exists and sends nothing.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    !alive && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_gone(_pid: u32) -> bool {
    false
}

/// An invocation's hold on its trace row. While the row is `running` with an unexpired lease
/// it takes one of the capability's concurrency slots for the user, in every process that
/// opens the workspace. Completing the row releases it; an invocation dropped without being
/// completed (its caller gave up) closes the row as `abandoned` itself, through a connection of
/// its own since no session is at hand; a process killed outright leaves the lease to run out,
/// and the next open of the workspace closes the row.
struct Claim {
    path: PathBuf,
    trace_id: String,
    clock: Arc<dyn Clock>,
    done: AtomicBool,
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim").field("trace_id", &self.trace_id).field("done", &self.done).finish()
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.done.load(Ordering::SeqCst) {
            return;
        }
        // Best effort: when the file cannot be written now, the lease runs out and the next
        // open closes the row.
        let _ = (|| -> Result<()> {
            let conn = rusqlite::Connection::open_with_flags(
                &self.path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | rusqlite::OpenFlags::SQLITE_OPEN_URI,
            )?;
            conn.busy_timeout(std::time::Duration::from_secs(2))?;
            let why = format!("the call was given up before it finished ({})", holder());
            abandon(&conn, &self.trace_id, None, &timestamp(self.clock.now()), &why)?;
            Ok(())
        })();
    }
}

/// Close a running trace row as `abandoned`, charged at its estimate (what it really cost is
/// unknown; the estimate is its ceiling). A row that is no longer running — or, given
/// `lease`, whose lease is no longer that one (its call renewed it meanwhile) — is left alone.
fn abandon(
    conn: &rusqlite::Connection,
    id: &str,
    lease: Option<Option<&str>>,
    now: &str,
    why: &str,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE ai_trace SET outcome = ?2, finished_at = ?3, cost = estimated_cost, fault = 'platform',
            message = ?4
         WHERE id = ?1 AND outcome = ?5 AND (?6 OR lease_until IS ?7)",
        params![
            id,
            TraceOutcome::Abandoned.as_str(),
            now,
            format!("{why}; charged at its estimate"),
            TraceOutcome::Running.as_str(),
            lease.is_none(),
            lease.flatten()
        ],
    )?;
    Ok(n > 0)
}

/// On opening a workspace: close as `abandoned` every running trace row whose claim ran out —
/// its process stopped without completing it (killed, crashed, the machine went down). A row
/// without a lease (written by an older Countersign, or killed between its two first steps)
/// runs out a lease span after it started. A row whose lease still holds belongs to a call
/// that may be running in another process and is left alone. Returns how many were closed.
pub(crate) fn close_abandoned(conn: &rusqlite::Connection, now: DateTime<Utc>) -> Result<usize> {
    struct Running {
        id: String,
        started_at: String,
        lease_until: Option<String>,
        holder: Option<String>,
        settings: Option<String>,
    }
    let now_text = timestamp(now);
    // Read first: most opens find nothing to close and take no write lock.
    let rows: Vec<Running> = {
        let mut stmt = conn.prepare(
            "SELECT t.id, t.started_at, t.lease_until, t.holder, c.settings
             FROM ai_trace t LEFT JOIN ai_capability c ON c.key = t.capability WHERE t.outcome = ?1",
        )?;
        let rows = stmt.query_map([TraceOutcome::Running.as_str()], |r| {
            Ok(Running {
                id: r.get(0)?,
                started_at: r.get(1)?,
                lease_until: r.get(2)?,
                holder: r.get(3)?,
                settings: r.get(4)?,
            })
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut stale = vec![];
    for row in rows {
        let until = match &row.lease_until {
            Some(t) => t.clone(),
            None => {
                let span = row
                    .settings
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<CapabilitySettings>(s).ok())
                    .map_or(Span::hours(1), |s| lease_span(&s));
                match DateTime::parse_from_rfc3339(&row.started_at) {
                    Ok(t) => timestamp(t.with_timezone(&Utc) + span),
                    Err(_) => now_text.clone(),
                }
            }
        };
        let gone = holder_gone(row.holder.as_deref());
        if gone || until <= now_text {
            stale.push((row, until, gone));
        }
    }
    if stale.is_empty() {
        return Ok(0);
    }
    // Each row is closed only if its lease is still the one read: a call that renewed its
    // claim meanwhile is alive.
    let tx = crate::store::immediate(conn)?;
    let mut closed = 0;
    for (row, until, gone) in &stale {
        let by = row.holder.as_ref().map_or(String::new(), |h| format!(" ({h})"));
        let why = if *gone {
            format!("the process running this call{by} stopped before it finished")
        } else {
            format!(
                "the process running this call{by} stopped before it finished; its claim ran out at {until}"
            )
        };
        if abandon(&tx, &row.id, Some(row.lease_until.as_deref()), &now_text, &why)? {
            closed += 1;
        }
    }
    tx.commit()?;
    Ok(closed)
}

fn rate_error(message: String) -> Error {
    Error { retriable: true, ..Error::new(Code::RateLimit, message) }
}

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

    fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
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

    pub fn cost(&self) -> f64 {
        self.model.cost(self.usage.prompt_tokens, self.usage.completion_tokens)
    }

    /// Everything but the model's time.
    pub fn kernel_ms(&self) -> f64 {
        (self.started.elapsed().as_secs_f64() * 1000.0 - self.model_ms).max(0.0)
    }
}

/// How an invocation ended, for its trace row.
pub enum Outcome<'a> {
    Answered { result: &'a Value, values: &'a [FieldValue] },
    Failed(&'a Error),
}

/// How an invocation's trace row stands: `running` until it is completed as `answered`,
/// `refused` (a limit, a permission, a contract or grounding refusal) or `failed`; `abandoned`
/// when its caller gave up or its process stopped before completing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TraceOutcome {
    Running,
    Answered,
    Refused,
    Failed,
    Abandoned,
}

impl TraceOutcome {
    pub const ALL: [TraceOutcome; 5] = [
        TraceOutcome::Running,
        TraceOutcome::Answered,
        TraceOutcome::Refused,
        TraceOutcome::Failed,
        TraceOutcome::Abandoned,
    ];

    /// The stored and serialized form.
    pub fn as_str(self) -> &'static str {
        match self {
            TraceOutcome::Running => "running",
            TraceOutcome::Answered => "answered",
            TraceOutcome::Refused => "refused",
            TraceOutcome::Failed => "failed",
            TraceOutcome::Abandoned => "abandoned",
        }
    }
}

impl rusqlite::types::FromSql for TraceOutcome {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let s = v.as_str()?;
        TraceOutcome::ALL.into_iter().find(|o| o.as_str() == s).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown trace outcome `{s}`").into())
        })
    }
}

impl PartialEq<&str> for TraceOutcome {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A trace row as a reader may see it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TraceEntry {
    pub id: String,
    pub correlation_id: String,
    pub capability: String,
    pub actor: String,
    pub prompt: String,
    #[ts(type = "number")]
    pub prompt_version: i64,
    #[ts(optional)]
    pub model_pin: Option<String>,
    pub model_id: String,
    pub model_version: String,
    pub grounding_hash: String,
    #[ts(type = "number")]
    pub generation: i64,
    pub input: String,
    pub prompt_text: String,
    pub output_text: String,
    #[ts(optional)]
    pub result: Option<Value>,
    pub attempts: u32,
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    #[ts(type = "number")]
    pub completion_tokens: u64,
    pub estimated_cost: f64,
    pub cost: f64,
    pub currency: String,
    pub model_ms: f64,
    pub latency_ms: f64,
    pub outcome: TraceOutcome,
    #[ts(optional)]
    pub code: Option<String>,
    #[ts(optional)]
    pub fault: Option<String>,
    #[ts(optional)]
    pub message: Option<String>,
    pub started_at: String,
    #[ts(optional)]
    pub finished_at: Option<String>,
    /// Values hidden from this reader (fields they cannot read).
    pub hidden_values: u32,
}

/// Spend by capability, user and day.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SpendRow {
    pub day: String,
    pub capability: String,
    pub actor: String,
    pub invocations: u32,
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    #[ts(type = "number")]
    pub completion_tokens: u64,
    pub cost: f64,
    pub currency: String,
}

fn day_start(t: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(t.year(), t.month(), t.day(), 0, 0, 0).single().unwrap_or(t)
}

fn month_start(t: DateTime<Utc>) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(t.year(), t.month(), 1, 0, 0, 0).single().unwrap_or(t)
}

impl Session<'_> {
    /// Insert the built-in prompt versions and capability bindings that are missing. A new
    /// workspace starts on each prompt's latest built-in version; in an existing one, a version
    /// shipped later is added but the active pointer stays where it is (moving it is the only
    /// way to change behaviour: `prompt activate`).
    fn seed_capabilities(&self) -> Result<()> {
        let conn = self.ws.conn();
        let registry = self.ws.extension::<CapabilityRegistry>();
        let missing = registry.0.iter().any(|b| {
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
        if !missing {
            return Ok(());
        }
        let tx = crate::store::immediate(conn)?;
        let now = timestamp(self.ws.clock.now());
        for b in &registry.0 {
            for (i, (instructions, examples)) in b.versions.iter().enumerate() {
                tx.execute(
                    "INSERT OR IGNORE INTO ai_prompt_version (prompt, version, instructions, examples, inputs, output_contract, published_at, published_by)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'countersign')",
                    params![b.prompt, i as i64 + 1, instructions, examples().to_string(), b.inputs, b.contract, now],
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
                 VALUES (?1, ?2, NULL, 'ai.use', ?3, ?4)",
                params![b.capability, b.prompt, autonomy_str(b.autonomy), settings],
            )?;
        }
        tx.commit()?;
        Ok(())
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
            can_set: self.user().has_system_permission("ai.approve"),
        })
    }

    /// Set the auto-apply allowlist of an existing capability for an object (`ai.approve`; the
    /// fields must be ones the setter can edit).
    pub fn set_auto_apply(&self, capability: &str, object: &str, fields: &[String]) -> Result<Vec<String>> {
        self.require("ai.approve")?;
        self.capability(capability)?;
        self.set_auto_apply_fields(capability, object, fields)
    }

    /// Change a capability's binding (model, budgets, limits, scope). Needs `ai.manage`.
    pub fn bind_capability(&self, binding: &CapabilityBinding) -> Result<()> {
        self.require("ai.manage")?;
        self.capability(&binding.key)?;
        if let Some(pin) = &binding.model_pin {
            self.model_pin(pin)?;
        }
        self.prompt_versions(&binding.prompt)?;
        let tx = self.begin_write()?;
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

    pub fn prompt_versions(&self, prompt: &str) -> Result<Vec<PromptVersion>> {
        self.seed_capabilities()?;
        let mut stmt = self.ws.conn().prepare(
            "SELECT v.prompt, v.version, v.instructions, v.inputs, v.output_contract, v.published_at, v.published_by,
                    v.version = p.active_version, v.examples
             FROM ai_prompt_version v JOIN ai_prompt p ON p.key = v.prompt WHERE v.prompt = ?1 ORDER BY v.version",
        )?;
        let rows = stmt
            .query_map([prompt], |r| {
                Ok(PromptVersion {
                    prompt: r.get(0)?,
                    version: r.get(1)?,
                    instructions: r.get(2)?,
                    inputs: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or(Value::Null),
                    output_contract: r.get(4)?,
                    published_at: r.get(5)?,
                    published_by: r.get(6)?,
                    active: r.get(7)?,
                    examples: serde_json::from_str(&r.get::<_, String>(8)?).unwrap_or(Value::Null),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if rows.is_empty() {
            return Err(Error::new(Code::NotFound, format!("no prompt `{prompt}`")));
        }
        Ok(rows)
    }

    pub fn active_prompt(&self, prompt: &str) -> Result<PromptVersion> {
        self.prompt_versions(prompt)?
            .into_iter()
            .find(|v| v.active)
            .ok_or_else(|| Error::internal(format!("prompt `{prompt}` has no active version")))
    }

    /// Publish a new version (frozen from now on). Needs `ai.author`. Does not activate it.
    pub fn publish_prompt(
        &self,
        prompt: &str,
        instructions: &str,
        examples: Option<&Value>,
        output_contract: &str,
    ) -> Result<i64> {
        self.require("ai.author")?;
        let current = self.prompt_versions(prompt)?;
        let inputs = current.last().map(|v| v.inputs.to_string()).unwrap_or_else(|| "{}".into());
        let examples = examples.map_or_else(
            || current.last().map(|v| v.examples.to_string()).unwrap_or_else(|| "[]".into()),
            Value::to_string,
        );
        let version = current.last().map_or(1, |v| v.version + 1);
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO ai_prompt_version (prompt, version, instructions, examples, inputs, output_contract, published_at, published_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                prompt,
                version,
                instructions,
                examples,
                inputs,
                output_contract,
                timestamp(self.ws.clock.now()),
                self.user().key
            ],
        )?;
        tx.commit()?;
        Ok(version)
    }

    /// Move the active pointer: the only way to change a prompt's behaviour. Needs `ai.author`.
    pub fn activate_prompt(&self, prompt: &str, version: i64) -> Result<()> {
        self.require("ai.author")?;
        if !self.prompt_versions(prompt)?.iter().any(|v| v.version == version) {
            return Err(Error::new(Code::NotFound, format!("prompt `{prompt}` has no version {version}")));
        }
        let tx = self.begin_write()?;
        tx.execute("UPDATE ai_prompt SET active_version = ?2 WHERE key = ?1", params![prompt, version])?;
        tx.commit()?;
        Ok(())
    }

    pub(crate) fn require(&self, permission: &str) -> Result<()> {
        if self.user().has_system_permission(permission) {
            Ok(())
        } else {
            Err(Error::new(
                Code::Permission,
                format!("{} does not have the `{permission}` permission", self.user().name),
            ))
        }
    }

    /// The model a capability calls: its pin, or the only pin of the workspace. Resolved when a
    /// call starts, so a failure (none pinned, several, drifted) is traced as that call's.
    pub fn model_for(&self, binding: &CapabilityBinding) -> Result<ModelChoice> {
        self.bound_model(binding).map_err(|e| self.refuse_before_begin(binding, "", e))
    }

    fn bound_model(&self, binding: &CapabilityBinding) -> Result<ModelChoice> {
        let pin = match &binding.model_pin {
            Some(key) => self.model_pin(key)?,
            None => {
                let mut pins = self.model_pins()?;
                match pins.len() {
                    1 => pins.remove(0),
                    0 => {
                        return Err(Error::new(
                            Code::IntegrationUnreachable,
                            format!(
                                "no model is pinned for `{}`: add a provider and pin a model in Settings",
                                binding.key
                            ),
                        ))
                    }
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

    /// Start an invocation: the trace row (`running`), then authorize and the budget and rate
    /// pre-flight. A refusal here is traced and returned; nothing was sent.
    pub fn begin_invocation(
        &self,
        capability: &CapabilityBinding,
        model: ModelChoice,
        input: &str,
        estimated_prompt_tokens: u64,
    ) -> Result<Invocation> {
        let prompt = self.active_prompt(&capability.prompt)?;
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
            correlation_id: self.ws.ids.correlation_id(),
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
            tx.execute(
                "INSERT INTO ai_trace (id, correlation_id, capability, actor, prompt, prompt_version, model_pin, model_id, model_version,
                    grounding_hash, generation, input, prompt_text, estimated_cost, currency, outcome, started_at, holder)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, '', ?10, ?11, '', ?12, ?13, 'running', ?14, ?15)",
                params![
                    inv.trace_id,
                    inv.correlation_id,
                    capability.key,
                    inv.actor,
                    inv.prompt.prompt,
                    inv.prompt.version,
                    inv.model.stored.then_some(inv.model.pin.key.clone()),
                    inv.model.pin.model_id,
                    inv.model.pin.digest,
                    inv.generation,
                    input,
                    estimated_cost,
                    currency,
                    timestamp(self.ws.clock.now()),
                    holder()
                ],
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

    fn preflight(&self, inv: &mut Invocation) -> Result<()> {
        let cap = &inv.capability;
        self.require(&cap.required_permission)?;
        let pin = &inv.model.pin;
        let priced = pin.input_price_per_mtok > 0.0 || pin.output_price_per_mtok > 0.0;
        let currency = &self.catalog().definition.currency;
        if priced && !pin.currency.eq_ignore_ascii_case(currency) {
            return Err(Error::new(
                Code::AiBudget,
                format!(
                    "model pin `{}` is priced in {} but budgets are in the workspace currency {currency}; repin it in {currency}",
                    pin.key, pin.currency
                ),
            )
            .with_fault(Fault::Admin));
        }
        let b = &cap.settings.budget;
        let est = inv.estimated_cost;
        let over = |what: &str, ceiling: f64, spent: f64| {
            Error::new(
                Code::AiBudget,
                format!(
                    "this {} call would cost up to {est:.4} {currency}; {what} budget is {ceiling:.4} {currency} and {spent:.4} is spent or reserved",
                    cap.key
                ),
            )
        };
        let now = self.ws.clock.now();
        let mut warnings = vec![];
        if let Some(ceiling) = b.per_invocation {
            if est > ceiling {
                return Err(over("the per-call", ceiling, 0.0));
            }
        }
        let checks = [
            (b.per_user_per_day, Some(self.user().key.as_str()), day_start(now), "your daily"),
            (b.workspace_per_month, None, month_start(now), "the workspace's monthly"),
        ];
        for (ceiling, actor, since, what) in checks {
            let Some(ceiling) = ceiling else { continue };
            let spent = self.spent_since(actor, since, &inv.trace_id)?;
            if spent + est > ceiling {
                return Err(over(what, ceiling, spent));
            }
            if ceiling > 0.0 && spent + est >= b.warn_at * ceiling {
                warnings.push(format!("{:.0}% of {what} AI budget is used", 100.0 * (spent + est) / ceiling));
            }
        }
        if !warnings.is_empty() {
            inv.warning = Some(warnings.join("; "));
        }
        let minute_ago = timestamp(now - Span::seconds(60));
        let recent: u32 = self.ws.conn().query_row(
            "SELECT count(*) FROM ai_trace WHERE actor = ?1 AND capability = ?2 AND started_at > ?3 AND id <> ?4
               AND coalesce(code, '') NOT LIKE 'limit.%' AND coalesce(code, '') <> 'permission'",
            params![self.user().key, cap.key, minute_ago, inv.trace_id],
            |r| r.get(0),
        )?;
        if recent >= cap.settings.rate.per_minute {
            return Err(rate_error(format!(
                "{recent} {} calls in the last minute (limit {}); try again shortly",
                cap.key, cap.settings.rate.per_minute
            )));
        }
        self.claim_slot(inv)
    }

    /// Take one of the capability's concurrency slots for this user: in one IMMEDIATE
    /// transaction, count the user's running calls of the capability whose claim holds (in any
    /// process), and put a lease on this invocation's row if there is room.
    fn claim_slot(&self, inv: &Invocation) -> Result<()> {
        let cap = &inv.capability;
        let max = cap.settings.rate.concurrency;
        let now = self.ws.clock.now();
        let tx = crate::store::immediate(self.ws.conn())?;
        let holders: Vec<Option<String>> = tx
            .prepare(
                "SELECT holder FROM ai_trace WHERE actor = ?1 AND capability = ?2 AND outcome = 'running'
                   AND lease_until > ?3 AND id <> ?4",
            )?
            .query_map(params![inv.actor, cap.key, timestamp(now), inv.trace_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        // A claim whose process died holds no slot (its row is closed on the next open).
        let running = holders.iter().filter(|h| !holder_gone(h.as_deref())).count() as u32;
        if running >= max {
            return Err(rate_error(format!(
                "{max} {} call(s) already running for you; wait for them or cancel one",
                cap.key
            )));
        }
        tx.execute(
            "UPDATE ai_trace SET lease_until = ?2 WHERE id = ?1",
            params![inv.trace_id, timestamp(now + lease_span(&cap.settings))],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Renew the invocation's claim: called each time the call comes back to the kernel between
    /// model requests, so that a call of several requests keeps its slot. A row another process
    /// already closed as `abandoned` (this one was away longer than its lease) stays closed until
    /// the call completes it.
    pub fn renew_invocation(&self, inv: &Invocation) -> Result<()> {
        let until = self.ws.clock.now() + lease_span(&inv.capability.settings);
        self.ws.conn().execute(
            "UPDATE ai_trace SET lease_until = ?2 WHERE id = ?1 AND outcome = 'running'",
            params![inv.trace_id, timestamp(until)],
        )?;
        Ok(())
    }

    /// Spend (actual cost of finished calls, estimate of running ones) since `since`.
    fn spent_since(&self, actor: Option<&str>, since: DateTime<Utc>, except: &str) -> Result<f64> {
        Ok(self.ws.conn().query_row(
            "SELECT coalesce(sum(CASE WHEN outcome = 'running' THEN estimated_cost ELSE cost END), 0)
             FROM ai_trace WHERE started_at >= ?1 AND (?2 IS NULL OR actor = ?2) AND id <> ?3",
            params![timestamp(since), actor, except],
            |r| r.get(0),
        )?)
    }

    /// Check, before a repair call, that it still fits the per-call budget.
    pub fn preflight_repair(&self, inv: &Invocation, estimated_prompt_tokens: u64) -> Result<()> {
        let Some(ceiling) = inv.capability.settings.budget.per_invocation else { return Ok(()) };
        let max_out = inv.capability.settings.max_output_tokens.min(inv.model.pin.max_output_tokens);
        let total = inv.cost() + inv.model.cost(estimated_prompt_tokens, max_out as u64);
        if total > ceiling {
            return Err(Error::new(
                Code::AiBudget,
                format!(
                    "the repair attempt would bring this call to {total:.4}, over its budget of {ceiling:.4}"
                ),
            ));
        }
        Ok(())
    }

    /// Complete the trace row.
    /// The model call failed: a pin that drifted is marked (it refuses calls until repinned),
    /// the trace row is completed, and the error is returned for the caller.
    pub fn fail_invocation(&self, inv: &Invocation, e: Error) -> Error {
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
        let now = timestamp(self.ws.clock.now());
        let _ = self.ws.conn().execute(
            "INSERT INTO ai_trace (id, correlation_id, capability, actor, prompt, prompt_version, model_id, model_version,
                grounding_hash, generation, input, prompt_text, estimated_cost, currency, outcome, code, fault, message,
                started_at, finished_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 0, '', '', '', ?6, ?7, '', 0, ?8, ?9, ?10, ?11, ?12, ?13, ?13)",
            params![
                self.ws.ids.record_id("trace"),
                self.ws.ids.correlation_id(),
                capability.key,
                self.user().key,
                capability.prompt,
                self.catalog().generation,
                input,
                self.catalog().definition.currency,
                kind.as_str(),
                e.code.as_str(),
                fault,
                e.message,
                now
            ],
        );
        e
    }

    /// Trace entries this user may read: their own; every entry with `ai.manage`. Values of
    /// fields the reader cannot read are replaced by `[hidden]`.
    pub fn traces(&self, limit: u32) -> Result<Vec<TraceEntry>> {
        self.read_traces(None, limit)
    }

    pub fn trace(&self, id: &str) -> Result<TraceEntry> {
        self.read_traces(Some(id), 1)?
            .pop()
            .ok_or_else(|| Error::new(Code::NotFound, format!("no trace entry `{id}`")))
    }

    fn read_traces(&self, id: Option<&str>, limit: u32) -> Result<Vec<TraceEntry>> {
        let all = self.user().has_system_permission("ai.manage");
        let mut stmt = self.ws.conn().prepare(
            "SELECT id, correlation_id, capability, actor, prompt, prompt_version, model_pin, model_id, model_version,
                grounding_hash, generation, input, prompt_text, output_text, result, field_values, attempts,
                prompt_tokens, completion_tokens, estimated_cost, cost, currency, model_ms, latency_ms, outcome,
                code, fault, message, started_at, finished_at
             FROM ai_trace WHERE (?1 IS NULL OR id = ?1) AND (?2 OR actor = ?3)
             ORDER BY started_at DESC, id DESC LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![id, all, self.user().key, limit], |r| {
            let values: String = r.get(15)?;
            Ok((
                TraceEntry {
                    id: r.get(0)?,
                    correlation_id: r.get(1)?,
                    capability: r.get(2)?,
                    actor: r.get(3)?,
                    prompt: r.get(4)?,
                    prompt_version: r.get(5)?,
                    model_pin: r.get(6)?,
                    model_id: r.get(7)?,
                    model_version: r.get(8)?,
                    grounding_hash: r.get(9)?,
                    generation: r.get(10)?,
                    input: r.get(11)?,
                    prompt_text: r.get(12)?,
                    output_text: r.get(13)?,
                    result: r.get::<_, Option<String>>(14)?.and_then(|s| serde_json::from_str(&s).ok()),
                    attempts: r.get(16)?,
                    prompt_tokens: r.get::<_, i64>(17)? as u64,
                    completion_tokens: r.get::<_, i64>(18)? as u64,
                    estimated_cost: r.get(19)?,
                    cost: r.get(20)?,
                    currency: r.get(21)?,
                    model_ms: r.get(22)?,
                    latency_ms: r.get(23)?,
                    outcome: r.get(24)?,
                    code: r.get(25)?,
                    fault: r.get(26)?,
                    message: r.get(27)?,
                    started_at: r.get(28)?,
                    finished_at: r.get(29)?,
                    hidden_values: 0,
                },
                values,
            ))
        })?;
        let mut out = vec![];
        for row in rows {
            let (mut entry, values) = row?;
            let values: Vec<FieldValue> = serde_json::from_str(&values).unwrap_or_default();
            for v in values {
                let readable = self
                    .readable_object(&v.object)
                    .and_then(|(o, _)| self.readable_field(o, &v.field))
                    .is_ok_and(|(_, f)| {
                        f.ai_visibility == crate::metadata::definition::AiVisibility::Allowed
                    });
                if readable || v.value.is_empty() {
                    continue;
                }
                entry.hidden_values += 1;
                let hide = |s: &str| s.replace(&v.value, "[hidden]");
                entry.input = hide(&entry.input);
                entry.prompt_text = hide(&entry.prompt_text);
                entry.output_text = hide(&entry.output_text);
                entry.result = entry.result.map(|r| {
                    serde_json::from_str(&hide(&r.to_string())).unwrap_or(Value::String("[hidden]".into()))
                });
            }
            out.push(entry);
        }
        Ok(out)
    }

    /// Spend by day, capability and user, from `since` (`YYYY-MM-DD`), over the traces this
    /// user may read.
    pub fn spend(&self, since: &str) -> Result<Vec<SpendRow>> {
        let all = self.user().has_system_permission("ai.manage");
        let mut stmt = self.ws.conn().prepare(
            "SELECT substr(started_at, 1, 10) AS day, capability, actor, count(*), sum(prompt_tokens),
                sum(completion_tokens), sum(cost), currency
             FROM ai_trace WHERE started_at >= ?1 AND (?2 OR actor = ?3) AND outcome <> 'running'
             GROUP BY day, capability, actor, currency ORDER BY day, capability, actor",
        )?;
        let rows = stmt.query_map(params![since, all, self.user().key], |r| {
            Ok(SpendRow {
                day: r.get(0)?,
                capability: r.get(1)?,
                actor: r.get(2)?,
                invocations: r.get(3)?,
                prompt_tokens: r.get::<_, i64>(4)? as u64,
                completion_tokens: r.get::<_, i64>(5)? as u64,
                cost: r.get(6)?,
                currency: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn autonomy_str(a: Autonomy) -> &'static str {
    match a {
        Autonomy::ReadOnly => "read_only",
        Autonomy::Propose => "propose",
        Autonomy::AutoApply => "auto_apply",
    }
}

/// How a failed invocation is traced: refused (the request or its limits) or failed (the
/// model, the endpoint, the platform), and the error's fault.
fn failure_kind(e: &Error) -> (TraceOutcome, Option<String>) {
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
