//! The eval gate. A capability gets a new prompt version, or a different model, only when its
//! eval suite has a passing run against that pair (prompt version, model pin) — or when a user
//! with `ai.manage` overrides the gate with a written reason. Every decision is stored
//! (`ai_gate_decision`) and listed with the activity. A capability without a suite, or without
//! a model to run it on, has nothing to gate.
//!
//! The gate reads stored runs only; running a suite is the eval layer's (`eval::suites`).

use super::CapabilityBinding;
use crate::ai::pins::ModelPin;
use crate::clock::timestamp;
use crate::error::{Code, Detail, Error, Result};
use crate::metadata::permissions::AI_MANAGE;
use crate::records::access::Session;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use ts_rs::TS;

/// One decision of the gate: a change let through by a passing run, or by an override.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GateDecision {
    pub id: String,
    pub capability: String,
    /// What changed, in words ("activate prompt ask version 4").
    pub change: String,
    #[ts(type = "number")]
    pub prompt_version: i64,
    pub model_pin: String,
    /// The passing run that let it through.
    #[ts(optional)]
    pub run_id: Option<String>,
    pub overridden: bool,
    /// The override's written reason.
    #[ts(optional)]
    pub reason: Option<String>,
    pub decided_by: String,
    pub decided_at: String,
}

/// What the gate asks of a change.
pub struct Candidate<'a> {
    pub capability: &'a str,
    pub prompt_version: i64,
    pub pin: &'a ModelPin,
    pub change: String,
}

impl Session<'_> {
    /// The pin a binding runs on without failing: its own, or the workspace's only pin.
    pub fn effective_pin(&self, binding: &CapabilityBinding) -> Result<Option<ModelPin>> {
        Ok(match &binding.model_pin {
            Some(key) => Some(self.model_pin(key)?),
            None => {
                let mut pins = self.model_pins()?;
                (pins.len() == 1).then(|| pins.remove(0))
            }
        })
    }

    /// The latest version of the suite that gates `capability`, if there is one: the one its
    /// binding names, else its most recently published suite.
    pub fn gating_suite(&self, capability: &str) -> Result<Option<(String, i64)>> {
        let named = self.capability(capability)?.settings.eval_suite;
        Ok(self
            .ws
            .conn()
            .query_row(
                "SELECT key, version FROM eval_suite WHERE capability = ?1 AND (?2 IS NULL OR key = ?2)
                 ORDER BY published_at DESC, rowid DESC LIMIT 1",
                params![capability, named],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// Let `candidate` through, or refuse it (`eval.gate`, the failing cases as details). With
    /// `override_reason`, a user with `ai.manage` lets it through anyway. The decision is
    /// recorded in `tx`.
    pub(crate) fn pass_gate(
        &self,
        tx: &rusqlite::Connection,
        candidate: &Candidate<'_>,
        override_reason: Option<&str>,
    ) -> Result<()> {
        let Some((suite, version)) = self.gating_suite(candidate.capability)? else { return Ok(()) };
        let run: Option<StoredRun> = tx
            .query_row(
                "SELECT id, outcome, passed, total, hard_failures, floor, cases, judged FROM eval_run
                 WHERE suite = ?1 AND suite_version = ?2 AND capability = ?3 AND prompt_version = ?4
                   AND model_pin = ?5 AND model_version = ?6 AND outcome != 'cancelled'
                 ORDER BY finished_at DESC, id DESC LIMIT 1",
                params![
                    suite,
                    version,
                    candidate.capability,
                    candidate.prompt_version,
                    candidate.pin.key,
                    candidate.pin.digest
                ],
                |r| {
                    Ok(StoredRun {
                        id: r.get(0)?,
                        outcome: r.get(1)?,
                        passed: r.get(2)?,
                        total: r.get(3)?,
                        hard: r.get(4)?,
                        floor: r.get(5)?,
                        cases: r.get(6)?,
                        judged: r.get(7)?,
                    })
                },
            )
            .optional()?;
        let passed_run = run.as_ref().filter(|r| r.outcome == "passed").map(|r| r.id.clone());
        let reason = override_reason.map(str::trim).filter(|r| !r.is_empty());
        if passed_run.is_none() {
            let Some(reason) = reason else {
                let (message, details) = match &run {
                    None => (
                        format!(
                            "{}: suite `{suite}` (version {version}) has no run against prompt version {} with model `{}`; run it first (eval run {suite}), or override with a reason (ai.manage)",
                            candidate.change, candidate.prompt_version, candidate.pin.key
                        ),
                        vec![],
                    ),
                    Some(StoredRun { id, passed, total, hard, floor, cases, judged, .. }) => (
                        format!(
                            "{}: suite `{suite}` failed against prompt version {} with model `{}` (run {id}: {passed}/{total} passed, floor {:.0} %, {hard} hard assertion(s) failed{}); override with a reason (ai.manage) to go ahead",
                            candidate.change,
                            candidate.prompt_version,
                            candidate.pin.key,
                            floor * 100.0,
                            judged_score(judged.as_deref())
                        ),
                        failing_cases(cases),
                    ),
                };
                return Err(Error::new(Code::EvalGate, message).with_details(details));
            };
            self.require(AI_MANAGE)?;
            self.record_gate(tx, candidate, run.map(|r| r.id), Some(reason))?;
            return Ok(());
        }
        self.record_gate(tx, candidate, passed_run, None)
    }

    fn record_gate(
        &self,
        tx: &rusqlite::Connection,
        candidate: &Candidate<'_>,
        run_id: Option<String>,
        reason: Option<&str>,
    ) -> Result<()> {
        tx.execute(
            "INSERT INTO ai_gate_decision (id, capability, change, prompt_version, model_pin, run_id, overridden, reason, decided_by, decided_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                self.ws.ids.record_id("gate"),
                candidate.capability,
                candidate.change,
                candidate.prompt_version,
                candidate.pin.key,
                run_id,
                reason.is_some(),
                reason,
                self.user().key,
                timestamp(self.ws.clock.now())
            ],
        )?;
        tracing::info!(capability = candidate.capability, overridden = reason.is_some(), "gate decision");
        Ok(())
    }

    /// The gate's decisions, newest first (`ai.manage`: everyone's; others: their own).
    pub fn gate_decisions(&self) -> Result<Vec<GateDecision>> {
        let everyone = self.user().has_system_permission(AI_MANAGE);
        let mut stmt = self.ws.conn().prepare(
            "SELECT id, capability, change, prompt_version, model_pin, run_id, overridden, reason, decided_by, decided_at
             FROM ai_gate_decision WHERE ?1 OR decided_by = ?2 ORDER BY decided_at DESC, id DESC",
        )?;
        let rows = stmt.query_map(params![everyone, self.user().key], |r| {
            Ok(GateDecision {
                id: r.get(0)?,
                capability: r.get(1)?,
                change: r.get(2)?,
                prompt_version: r.get(3)?,
                model_pin: r.get(4)?,
                run_id: r.get(5)?,
                overridden: r.get(6)?,
                reason: r.get(7)?,
                decided_by: r.get(8)?,
                decided_at: r.get(9)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The latest stored run of a candidate, as the gate reads it.
struct StoredRun {
    id: String,
    outcome: String,
    passed: i64,
    total: i64,
    hard: i64,
    floor: f64,
    cases: String,
    judged: Option<String>,
}

/// A stored run's judged score against its floor, as the refusal says it (empty: none).
fn judged_score(judged: Option<&str>) -> String {
    let Some(j) = judged.and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok()) else {
        return String::new();
    };
    let (score, floor) = (j["score"].as_f64().unwrap_or(0.0), j["floor"].as_f64().unwrap_or(0.0));
    format!(
        ", judged {:.0} % against its floor of {:.0} % by `{}`",
        score * 100.0,
        floor * 100.0,
        j["judgePin"].as_str().unwrap_or("?")
    )
}

/// The failing cases of a stored run's `cases` column, as details (`case id: why`): a case
/// that failed its check, and a criterion the judge found a case's answer did not meet.
fn failing_cases(cases: &str) -> Vec<Detail> {
    let cases = serde_json::from_str::<Vec<serde_json::Value>>(cases).unwrap_or_default();
    let mut out: Vec<Detail> = cases
        .iter()
        .filter(|c| c["pass"] != serde_json::json!(true))
        .map(|c| Detail {
            path: c["id"].as_str().unwrap_or_default().to_string(),
            message: format!(
                "{}{}",
                if c["hard"] == serde_json::json!(true) { "hard assertion: " } else { "" },
                c["reason"].as_str().unwrap_or("failed")
            ),
        })
        .collect();
    for c in &cases {
        let judged = &c["judged"];
        let misses = judged["verdicts"].as_array().into_iter().flatten().filter(|v| v["pass"] == false);
        for v in misses {
            out.push(Detail {
                path: c["id"].as_str().unwrap_or_default().to_string(),
                message: format!(
                    "judged: “{}” not met (the judge quoted: “{}”)",
                    v["criterion"].as_str().unwrap_or_default(),
                    v["reason"].as_str().unwrap_or_default()
                ),
            });
        }
        if let Some(why) = judged["unjudged"].as_str() {
            out.push(Detail {
                path: c["id"].as_str().unwrap_or_default().to_string(),
                message: format!("judged: {why}"),
            });
        }
    }
    out
}
