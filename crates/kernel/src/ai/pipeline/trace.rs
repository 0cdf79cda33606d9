//! The execution trace as readers see it (values of fields they cannot read hidden) and spend.

use super::*;
use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::AI_MANAGE;
use crate::records::access::Session;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// A trace row as it opens. Every call's row is written by [`open_row`]: `running` (held by
/// this process) for an invocation or a served call, or finished at once for a call refused
/// before it began. Its completion is `finish_invocation` / `finish_served_call`.
pub(super) struct OpenRow<'a> {
    pub id: &'a str,
    pub correlation_id: &'a str,
    pub capability: &'a str,
    pub actor: &'a str,
    pub prompt: &'a str,
    pub prompt_version: i64,
    /// The stored pin, when the call runs one.
    pub model_pin: Option<&'a str>,
    pub model_id: &'a str,
    pub model_version: &'a str,
    pub generation: i64,
    pub input: &'a str,
    pub estimated_cost: f64,
    pub currency: &'a str,
    pub started_at: &'a str,
    pub state: RowState<'a>,
}

pub(super) enum RowState<'a> {
    /// In flight, held by this process (`in_flight::holder`).
    Running { holder: String },
    /// Refused before it began: finished when it started.
    Refused { outcome: TraceOutcome, code: &'a str, fault: Option<&'a str>, message: &'a str },
}

pub(super) fn open_row(conn: &rusqlite::Connection, row: &OpenRow<'_>) -> rusqlite::Result<usize> {
    let (outcome, code, fault, message, finished_at, holder) = match &row.state {
        RowState::Running { holder } => ("running", None, None, None, None, Some(holder.as_str())),
        RowState::Refused { outcome, code, fault, message } => {
            (outcome.as_str(), Some(*code), *fault, Some(*message), Some(row.started_at), None)
        }
    };
    conn.execute(
        "INSERT INTO ai_trace (id, correlation_id, capability, actor, prompt, prompt_version, model_pin, model_id,
            model_version, grounding_hash, generation, input, prompt_text, estimated_cost, currency, outcome, code,
            fault, message, started_at, finished_at, holder)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, '', ?10, ?11, '', ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
        params![
            row.id,
            row.correlation_id,
            row.capability,
            row.actor,
            row.prompt,
            row.prompt_version,
            row.model_pin,
            row.model_id,
            row.model_version,
            row.generation,
            row.input,
            row.estimated_cost,
            row.currency,
            outcome,
            code,
            fault,
            message,
            row.started_at,
            finished_at,
            holder
        ],
    )
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

/// Which trace entries to list: every filter optional; `since` and `until` are days
/// (`YYYY-MM-DD`, inclusive).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct TraceFilter {
    #[ts(optional)]
    pub capability: Option<String>,
    #[ts(optional)]
    pub actor: Option<String>,
    #[ts(optional)]
    pub outcome: Option<String>,
    #[ts(optional)]
    pub since: Option<String>,
    #[ts(optional)]
    pub until: Option<String>,
    /// At most this many, newest first (default 200).
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// The activity screen's data: the entries a filter picks (their prompt and output text left
/// out: a trace's detail has them), the spend by day from `since`, each capability's budget,
/// and the retention window.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Activity {
    pub entries: Vec<TraceEntry>,
    pub spend: Vec<SpendRow>,
    pub budgets: Vec<CapabilityBudget>,
    #[ts(type = "number")]
    pub trace_days: i64,
    /// The reader sees everyone's activity (`ai.manage`), not only their own.
    pub everyone: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityBudget {
    pub capability: String,
    pub budget: Budget,
}

/// How long trace entries are kept, in days, unless a workspace sets its own.
pub const TRACE_DAYS: i64 = 90;

impl Session<'_> {
    /// Trace entries this user may read: their own; every entry with `ai.manage`. Values of
    /// fields the reader cannot read are replaced by `[hidden]`.
    pub fn traces(&self, limit: u32) -> Result<Vec<TraceEntry>> {
        self.read_traces(None, &TraceFilter { limit: Some(limit), ..Default::default() })
    }

    /// [`traces`](Self::traces), filtered.
    pub fn traces_where(&self, filter: &TraceFilter) -> Result<Vec<TraceEntry>> {
        self.read_traces(None, filter)
    }

    pub fn trace(&self, id: &str) -> Result<TraceEntry> {
        self.read_traces(Some(id), &TraceFilter { limit: Some(1), ..Default::default() })?
            .pop()
            .ok_or_else(|| Error::new(Code::NotFound, format!("no trace entry `{id}`")))
    }

    pub(super) fn read_traces(&self, id: Option<&str>, f: &TraceFilter) -> Result<Vec<TraceEntry>> {
        let all = self.user().has_system_permission(AI_MANAGE);
        let mut stmt = self.ws.conn().prepare(
            "SELECT id, correlation_id, capability, actor, prompt, prompt_version, model_pin, model_id, model_version,
                grounding_hash, generation, input, prompt_text, output_text, result, field_values, attempts,
                prompt_tokens, completion_tokens, estimated_cost, cost, currency, model_ms, latency_ms, outcome,
                code, fault, message, started_at, finished_at
             FROM ai_trace WHERE (?1 IS NULL OR id = ?1) AND (?2 OR actor = ?3)
               AND (?5 IS NULL OR capability = ?5) AND (?6 IS NULL OR actor = ?6) AND (?7 IS NULL OR outcome = ?7)
               AND (?8 IS NULL OR substr(started_at, 1, 10) >= ?8) AND (?9 IS NULL OR substr(started_at, 1, 10) <= ?9)
             ORDER BY started_at DESC, id DESC LIMIT ?4",
        )?;
        let limit = f.limit.unwrap_or(200);
        let args =
            params![id, all, self.user().key, limit, f.capability, f.actor, f.outcome, f.since, f.until];
        let rows = stmt.query_map(args, |r| {
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
                let readable = self.readable_object(&v.object).is_ok_and(|(o, _)| {
                    o.field_index(&v.field).is_some_and(|i| {
                        self.ai_field_level(o, i) >= crate::metadata::definition::FieldLevel::Read
                    })
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
    /// user may read — the live entries and the rollups of those past their retention.
    pub fn spend(&self, since: &str) -> Result<Vec<SpendRow>> {
        let all = self.user().has_system_permission(AI_MANAGE);
        let mut stmt = self.ws.conn().prepare(
            "SELECT day, capability, actor, sum(n), sum(pt), sum(ct), sum(c), currency FROM (
                SELECT substr(started_at, 1, 10) AS day, capability, actor, count(*) AS n, sum(prompt_tokens) AS pt,
                    sum(completion_tokens) AS ct, sum(cost) AS c, currency
                FROM ai_trace WHERE started_at >= ?1 AND (?2 OR actor = ?3) AND outcome <> 'running'
                GROUP BY day, capability, actor, currency
                UNION ALL
                SELECT day, capability, actor, invocations, prompt_tokens, completion_tokens, cost, currency
                FROM spend_rollup WHERE day >= substr(?1, 1, 10) AND (?2 OR actor = ?3))
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

    /// The activity screen: entries by `filter`, spend from `since` (`YYYY-MM-DD`).
    pub fn activity(&self, filter: &TraceFilter, since: &str) -> Result<Activity> {
        let mut entries = self.traces_where(filter)?;
        for e in &mut entries {
            e.prompt_text.clear();
            e.output_text.clear();
        }
        Ok(Activity {
            entries,
            spend: self.spend(since)?,
            budgets: self
                .capabilities()?
                .into_iter()
                .map(|b| CapabilityBudget { capability: b.key, budget: b.settings.budget })
                .collect(),
            trace_days: self.trace_days()?,
            everyone: self.user().has_system_permission(AI_MANAGE),
        })
    }

    /// How many days trace entries are kept.
    pub fn trace_days(&self) -> Result<i64> {
        Ok(self
            .ws
            .conn()
            .query_row("SELECT value FROM kernel_state WHERE key = 'trace_days'", [], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
            .and_then(|v| v.parse().ok())
            .unwrap_or(TRACE_DAYS))
    }

    /// Keep trace entries `days` days (at least 1). Needs `ai.manage`.
    pub fn set_trace_days(&self, days: i64) -> Result<()> {
        self.require(AI_MANAGE)?;
        if days < 1 {
            return Err(Error::new(Code::InvalidValue, "trace entries are kept at least 1 day"));
        }
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO kernel_state (key, value) VALUES ('trace_days', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [days.to_string()],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Remove the finished trace entries older than the retention window, their spend added
    /// to the daily rollups first (in one transaction): the spend charts lose nothing.
    /// Returns how many entries were removed.
    pub fn expire_traces(&self) -> Result<u32> {
        let cutoff = timestamp(self.ws.clock.now() - chrono::Duration::days(self.trace_days()?));
        let due: bool = self.ws.conn().query_row(
            "SELECT EXISTS (SELECT 1 FROM ai_trace WHERE started_at < ?1 AND outcome <> 'running')",
            [&cutoff],
            |r| r.get(0),
        )?;
        if !due {
            return Ok(0);
        }
        let tx = crate::store::immediate(self.ws.conn())?;
        tx.execute(
            "INSERT INTO spend_rollup (day, capability, actor, currency, invocations, prompt_tokens, completion_tokens, cost)
             SELECT substr(started_at, 1, 10), capability, actor, currency, count(*), sum(prompt_tokens),
                 sum(completion_tokens), sum(cost)
             FROM ai_trace WHERE started_at < ?1 AND outcome <> 'running'
             GROUP BY substr(started_at, 1, 10), capability, actor, currency
             ON CONFLICT (day, capability, actor, currency) DO UPDATE SET
                 invocations = invocations + excluded.invocations,
                 prompt_tokens = prompt_tokens + excluded.prompt_tokens,
                 completion_tokens = completion_tokens + excluded.completion_tokens,
                 cost = cost + excluded.cost",
            [&cutoff],
        )?;
        let removed =
            tx.execute("DELETE FROM ai_trace WHERE started_at < ?1 AND outcome <> 'running'", [&cutoff])?;
        tx.commit()?;
        tracing::info!(removed, "trace entries past retention rolled up");
        Ok(removed as u32)
    }
}
