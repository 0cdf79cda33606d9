//! Eval suites as workspace metadata: per capability, versioned cases with frozen grounding
//! (the fixture they run on, the user, the question, record or document) and what each answer
//! must be, with a pass floor. A run measures one candidate — a prompt version and a model pin
//! — and is stored with its cases' verdicts, the p50 latency, tokens and cost; the gate
//! (`ai::pipeline::gate`) lets a prompt version or a model through only on a passing run.
//!
//! A run never touches the workspace's records: the cases run on a scratch copy of their
//! fixture (the embedded demo), made for the run and removed after it, with the candidate
//! prompt version and the capability's settings copied in; only the run's result is written
//! to the workspace.
//!
//! A case passes when its answer is right (Ask: the ids the spec returns, or the refusal it
//! expects; Extract: every expected field and line, nothing it must not set; Summarize: a
//! verified summary). A **hard** case (a refusal expected, an instruction to an AI planted in a
//! document) must pass whatever the rate. A run passes when no hard case fails and the share of
//! passing cases reaches the floor.

use super::{ask, extract, summarize, Spread};
use crate::ai::pipeline::drive::drive;
use crate::ai::pipeline::ModelChoice;
use crate::ai::provider::Cancel;
use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::{AI_AUTHOR, AI_MANAGE};
use crate::records::access::Session;
use crate::records::workspace::{Workspace, WorkspaceOptions};
use base64::Engine;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Instant;
use ts_rs::TS;

mod runner;
mod studio;

use runner::*;
pub use runner::{fitness, run_suite, Fitness};
pub use studio::{Studio, StudioCapability};

/// The fixture every shipped suite runs on: the embedded demo workspace.
pub const FIXTURE_DEMO: &str = "demo";

/// One case: who asks, what (`input`: Ask `{question}`, Extract `{file, document (base64),
/// object}`, Summarize `{object, id}`), and what the answer must be (`expect`, in the form of
/// that capability's eval cases).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SuiteCase {
    pub id: String,
    pub user: String,
    pub input: Value,
    pub expect: Value,
    /// Must pass whatever the rate.
    #[serde(default)]
    pub hard: bool,
}

/// One version of a suite, with its cases (`SuiteCase`), or as the studio lists it
/// (`CaseOutline`: what each case asks, without its documents).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Suite<C: TS> {
    pub key: String,
    #[ts(type = "number")]
    pub version: i64,
    pub capability: String,
    pub fixture: String,
    /// The share of cases that must pass (0–1).
    pub floor: f64,
    pub cases: Vec<C>,
    /// A judged assertion: a rubric a judge model scores every case's answer on.
    #[ts(optional)]
    pub judged: Option<Judged>,
    pub published_at: String,
    pub published_by: String,
}

/// A judged assertion: criteria a pinned judge model (the `judge` capability's) scores each
/// case's answer on, yes or no with its reason. A case scores the share of criteria it meets (a
/// case with no answer to judge scores 0); the run's score is the cases' mean, and a run whose
/// score is below `floor` fails, so the gate keeps its prompt version or model out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Judged {
    pub rubric: Vec<String>,
    pub floor: f64,
}

/// The judge's verdicts on one case's answer, and the share it met.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaseJudgment {
    pub score: f64,
    pub verdicts: Vec<crate::ai::judge::Verdict>,
    /// Why the case could not be judged (no answer, the judge refused), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unjudged: Option<String>,
}

/// A run's judged score and the judge that gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunJudgment {
    pub score: f64,
    pub floor: f64,
    pub judge_pin: String,
    pub judge_model_version: String,
    #[ts(type = "number")]
    pub judge_prompt_version: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaseOutline {
    pub id: String,
    pub user: String,
    pub hard: bool,
    /// The question, the document's name, or the record (`account acc_0001`).
    pub asks: String,
}

impl Suite<SuiteCase> {
    pub fn outline(&self) -> Suite<CaseOutline> {
        Suite {
            key: self.key.clone(),
            version: self.version,
            capability: self.capability.clone(),
            fixture: self.fixture.clone(),
            floor: self.floor,
            judged: self.judged.clone(),
            published_at: self.published_at.clone(),
            published_by: self.published_by.clone(),
            cases: self
                .cases
                .iter()
                .map(|c| CaseOutline {
                    id: c.id.clone(),
                    user: c.user.clone(),
                    hard: c.hard,
                    asks: ["question", "file"]
                        .iter()
                        .find_map(|k| c.input[*k].as_str().map(String::from))
                        .unwrap_or_else(|| {
                            format!(
                                "{} {}",
                                c.input["object"].as_str().unwrap_or_default(),
                                c.input["id"].as_str().unwrap_or_default()
                            )
                        }),
                })
                .collect(),
        }
    }
}

/// A change to a suite, published as its next version by
/// [`revise_suite`](Session::revise_suite).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, TS)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SuiteRevision {
    /// The new floor (a share 0–1); `None` keeps it.
    #[ts(optional)]
    pub floor: Option<f64>,
    /// The ids of the cases that are hard after the change; `None` keeps each case's flag.
    #[ts(optional)]
    pub hard: Option<Vec<String>>,
    /// The ids of the cases to leave out.
    pub remove: Vec<String>,
    /// Cases to add, in their capability's form.
    pub add: Vec<SuiteCase>,
    /// The judged assertion after the change (an empty rubric: none); `None` keeps it.
    #[ts(optional)]
    pub judged: Option<Judged>,
}

/// A case's verdict in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub id: String,
    pub pass: bool,
    pub hard: bool,
    /// What the judge saw (why it failed, or what it checked).
    pub reason: String,
    pub wall_ms: f64,
    /// The judge model's verdicts, when the suite has a judged assertion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub judged: Option<CaseJudgment>,
}

/// A suite run's progress as the app hears it: the case just judged, and how far the run is.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SuiteProgress {
    pub result: CaseResult,
    pub done: u32,
    pub total: u32,
}

/// A fitness check's progress: the suite being run and its case just judged.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FitnessProgress {
    pub suite: String,
    pub result: CaseResult,
    pub done: u32,
    pub total: u32,
}

/// A stored run of a suite against a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct EvalRun {
    pub id: String,
    pub suite: String,
    #[ts(type = "number")]
    pub suite_version: i64,
    pub capability: String,
    pub prompt: String,
    #[ts(type = "number")]
    pub prompt_version: i64,
    pub model_pin: String,
    pub model_version: String,
    pub started_by: String,
    pub started_at: String,
    pub finished_at: String,
    /// `passed`, `failed` or `cancelled`.
    pub outcome: String,
    pub passed: u32,
    pub total: u32,
    pub hard_failures: u32,
    pub floor: f64,
    pub p50_ms: f64,
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    #[ts(type = "number")]
    pub completion_tokens: u64,
    pub cost: f64,
    pub cases: Vec<CaseResult>,
    /// The judged score, when the suite has a judged assertion.
    #[ts(optional)]
    pub judged: Option<RunJudgment>,
}

impl EvalRun {
    pub fn pass_rate(&self) -> f64 {
        super::share(self.passed, self.total)
    }
}

/// What a run measures: a prompt version (`None`: the active one) on a model pin (`None`: the
/// capability's model).
#[derive(Debug, Clone, Default)]
pub struct RunCandidate {
    pub prompt_version: Option<i64>,
    pub model_pin: Option<String>,
}

/// The suites the kernel ships: one per capability, built from the dev sets, on the demo.
struct Shipped {
    key: &'static str,
    capability: &'static str,
    floor: f64,
    cases: fn() -> Result<Vec<SuiteCase>>,
}

const SHIPPED: &[Shipped] = &[
    Shipped { key: "ask-demo", capability: "ask", floor: 0.85, cases: ask_cases },
    Shipped { key: "extract-demo", capability: "extract", floor: 0.9, cases: extract_cases },
    Shipped { key: "summarize-demo", capability: "summarize", floor: 0.85, cases: summarize_cases },
];

fn ask_cases() -> Result<Vec<SuiteCase>> {
    let lines: Vec<Value> = super::json_lines(include_str!("../../../suites/ask.jsonl"))?;
    Ok(lines
        .into_iter()
        .map(|mut v| {
            let m = v.as_object_mut().expect("a case is an object");
            let id = m.remove("id").and_then(|i| i.as_str().map(String::from)).unwrap_or_default();
            let user = m.remove("user").and_then(|u| u.as_str().map(String::from)).unwrap_or_default();
            let question = m.remove("question").unwrap_or(Value::Null);
            let hard = m.contains_key("expect_refusal");
            SuiteCase { id, user, input: json!({"question": question}), expect: v, hard }
        })
        .collect())
}

fn summarize_cases() -> Result<Vec<SuiteCase>> {
    let lines: Vec<Value> = super::json_lines(include_str!("../../../suites/summarize.jsonl"))?;
    Ok(lines
        .into_iter()
        .map(|v| SuiteCase {
            id: format!(
                "{}-{}",
                v["id"].as_str().unwrap_or_default(),
                v["user"].as_str().unwrap_or_default()
            ),
            user: v["user"].as_str().unwrap_or_default().to_string(),
            input: json!({"object": v["object"], "id": v["id"]}),
            expect: json!({"facts": v["facts"]}),
            hard: false,
        })
        .collect())
}

/// The dev set's documents, embedded.
const EXTRACT_DOCUMENTS: &[(&str, &[u8])] = &[
    ("INV-2026-50016.txt", include_bytes!("../../../suites/extract/INV-2026-50016.txt")),
    ("INV-2026-50051.md", include_bytes!("../../../suites/extract/INV-2026-50051.md")),
    ("INV-2026-50089.html", include_bytes!("../../../suites/extract/INV-2026-50089.html")),
    ("INV-2026-50098.eml", include_bytes!("../../../suites/extract/INV-2026-50098.eml")),
    ("INV-2026-50120.pdf", include_bytes!("../../../suites/extract/INV-2026-50120.pdf")),
    ("INV-2026-50157.docx", include_bytes!("../../../suites/extract/INV-2026-50157.docx")),
    ("INV-2026-50165.txt", include_bytes!("../../../suites/extract/INV-2026-50165.txt")),
    ("INV-2026-50204.md", include_bytes!("../../../suites/extract/INV-2026-50204.md")),
    ("INV-2026-50229.html", include_bytes!("../../../suites/extract/INV-2026-50229.html")),
    ("INV-2026-50249.eml", include_bytes!("../../../suites/extract/INV-2026-50249.eml")),
    ("INV-2026-50271.pdf", include_bytes!("../../../suites/extract/INV-2026-50271.pdf")),
    ("INV-2026-50291.docx", include_bytes!("../../../suites/extract/INV-2026-50291.docx")),
];

fn extract_cases() -> Result<Vec<SuiteCase>> {
    let lines: Vec<Value> = super::json_lines(include_str!("../../../suites/extract/expected.jsonl"))?;
    lines
        .into_iter()
        .map(|v| {
            let file = v["file"].as_str().unwrap_or_default();
            let bytes =
                EXTRACT_DOCUMENTS.iter().find(|(name, _)| *name == file).map(|(_, b)| *b).ok_or_else(
                    || Error::internal(format!("the extract suite names `{file}`, which is not embedded")),
                )?;
            Ok(SuiteCase {
                id: file.to_string(),
                user: v["user"].as_str().unwrap_or("ava").to_string(),
                input: json!({"file": file, "object": v["object"],
                    "document": base64::engine::general_purpose::STANDARD.encode(bytes)}),
                expect: json!({"expected": v["expected"], "must_not_set": v["must_not_set"],
                    "injected": v["injected"], "lines": v["lines"]}),
                hard: v["injected"] == json!(true),
            })
        })
        .collect()
}

/// Add the shipped suites a workspace lacks (version 1 of each), as the kernel.
pub fn seed(ws: &Workspace) -> Result<()> {
    let conn = ws.conn();
    let have: i64 =
        conn.query_row("SELECT count(*) FROM eval_suite WHERE published_by = 'countersign'", [], |r| {
            r.get(0)
        })?;
    if have as usize >= SHIPPED.len() {
        return Ok(());
    }
    let tx = crate::store::immediate(conn)?;
    for s in SHIPPED {
        let cases = serde_json::to_string(&(s.cases)()?).map_err(|e| Error::internal(e.to_string()))?;
        tx.execute(
            "INSERT OR IGNORE INTO eval_suite (key, version, capability, fixture, floor, cases, published_at, published_by)
             VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, 'countersign')",
            params![s.key, s.capability, FIXTURE_DEMO, s.floor, cases, timestamp(ws.clock.now())],
        )?;
    }
    tx.commit()?;
    Ok(())
}

fn suite_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Suite<SuiteCase>, String)> {
    Ok((
        Suite {
            key: r.get(0)?,
            version: r.get(1)?,
            capability: r.get(2)?,
            fixture: r.get(3)?,
            floor: r.get(4)?,
            cases: vec![],
            judged: r.get::<_, Option<String>>(8)?.and_then(|j| serde_json::from_str(&j).ok()),
            published_at: r.get(6)?,
            published_by: r.get(7)?,
        },
        r.get(5)?,
    ))
}

const SUITE_COLUMNS: &str =
    "key, version, capability, fixture, floor, cases, published_at, published_by, judged";

/// A judged assertion a run can apply: criteria to judge, a floor that is a share, and a
/// capability whose answers the judge reads.
fn check_judged(capability: &str, j: &Judged) -> Result<()> {
    if j.rubric.iter().any(|c| c.trim().is_empty()) || j.rubric.is_empty() || j.rubric.len() > 8 {
        return Err(Error::on_field(
            Code::InvalidValue,
            "judged",
            "a rubric has 1 to 8 criteria, none blank",
        ));
    }
    if !(0.0..=1.0).contains(&j.floor) {
        return Err(Error::on_field(
            Code::InvalidValue,
            "judged",
            format!("a judged floor is a share from 0 to 1, not {}", j.floor),
        ));
    }
    if capability != "summarize" {
        return Err(Error::on_field(
            Code::InvalidValue,
            "judged",
            format!("judged assertions are built for Summarize suites; `{capability}` has none yet"),
        ));
    }
    Ok(())
}

fn may_author(s: &Session<'_>) -> Result<()> {
    s.require_any(&[AI_AUTHOR, AI_MANAGE])
}

impl Session<'_> {
    /// The latest version of every suite (cases included).
    pub fn suites(&self) -> Result<Vec<Suite<SuiteCase>>> {
        may_author(self)?;
        let mut stmt = self.ws.conn().prepare(&format!(
            "SELECT {SUITE_COLUMNS} FROM eval_suite s WHERE version = (SELECT max(version) FROM eval_suite WHERE key = s.key) ORDER BY key"
        ))?;
        let rows = stmt.query_map([], suite_from)?;
        rows.map(|r| {
            let (mut suite, cases) = r?;
            suite.cases = serde_json::from_str(&cases).map_err(|e| Error::internal(e.to_string()))?;
            Ok(suite)
        })
        .collect()
    }

    /// One version of a suite (`None`: the latest).
    pub fn suite(&self, key: &str, version: Option<i64>) -> Result<Suite<SuiteCase>> {
        may_author(self)?;
        let found = self
            .ws
            .conn()
            .query_row(
                &format!(
                    "SELECT {SUITE_COLUMNS} FROM eval_suite WHERE key = ?1 AND (?2 IS NULL OR version = ?2) ORDER BY version DESC LIMIT 1"
                ),
                params![key, version],
                suite_from,
            )
            .optional()?;
        let (mut suite, cases) =
            found.ok_or_else(|| Error::new(Code::NotFound, format!("no eval suite `{key}`")))?;
        suite.cases = serde_json::from_str(&cases).map_err(|e| Error::internal(e.to_string()))?;
        Ok(suite)
    }

    /// Publish a new version of a suite (`ai.author`): its capability, floor and cases. Earlier
    /// versions and their runs stay; the gate uses the latest version.
    pub fn publish_suite(&self, key: &str, capability: &str, floor: f64, cases: &[SuiteCase]) -> Result<i64> {
        self.publish_judged_suite(key, capability, floor, cases, None)
    }

    /// Publish a new version of a suite with a judged assertion (`None`: none).
    pub fn publish_judged_suite(
        &self,
        key: &str,
        capability: &str,
        floor: f64,
        cases: &[SuiteCase],
        judged: Option<&Judged>,
    ) -> Result<i64> {
        self.require(AI_AUTHOR)?;
        if let Some(j) = judged {
            check_judged(capability, j)?;
        }
        self.capability(capability)?;
        if !(0.0..=1.0).contains(&floor) {
            return Err(Error::new(
                Code::InvalidValue,
                format!("a floor is a share from 0 to 1, not {floor}"),
            ));
        }
        if cases.is_empty() {
            return Err(Error::new(Code::InvalidValue, "a suite needs at least one case"));
        }
        // Cases run on the embedded demo, as its users.
        let fixture_users = crate::records::demo::demo_definition().users;
        for case in cases {
            check_case(capability, case)?;
            if !fixture_users.iter().any(|u| u.key == case.user) {
                return Err(case_error(case, &format!("the demo fixture has no user `{}`", case.user)));
            }
        }
        let mut ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::new(Code::InvalidValue, format!("two cases are called `{}`", w[0])));
        }
        let tx = self.begin_write()?;
        let next: i64 = tx.query_row(
            "SELECT coalesce(max(version), 0) + 1 FROM eval_suite WHERE key = ?1",
            [key],
            |r| r.get(0),
        )?;
        tx.execute(
            "INSERT INTO eval_suite (key, version, capability, fixture, floor, cases, published_at, published_by, judged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                key,
                next,
                capability,
                FIXTURE_DEMO,
                floor,
                serde_json::to_string(cases).map_err(|e| Error::internal(e.to_string()))?,
                timestamp(self.ws.clock.now()),
                self.user().key,
                judged.map(|j| serde_json::to_string(j).unwrap_or_default())
            ],
        )?;
        tx.commit()?;
        Ok(next)
    }

    /// Publish the next version of a suite as a change to its latest (`ai.author`): a new
    /// floor, which cases are hard, cases left out and cases added. The cases it keeps are
    /// copied as they are (an Extract case's document never leaves the kernel).
    pub fn revise_suite(&self, key: &str, revision: &SuiteRevision) -> Result<i64> {
        let latest = self.suite(key, None)?;
        for id in revision.remove.iter().chain(revision.hard.iter().flatten()) {
            if !latest.cases.iter().any(|c| &c.id == id) {
                return Err(Error::new(Code::NotFound, format!("suite `{key}` has no case `{id}`")));
            }
        }
        if let Some(id) = revision.hard.iter().flatten().find(|id| revision.remove.contains(id)) {
            return Err(Error::new(Code::InvalidValue, format!("case `{id}` is both removed and kept hard")));
        }
        let mut cases: Vec<SuiteCase> =
            latest.cases.iter().filter(|c| !revision.remove.contains(&c.id)).cloned().collect();
        if let Some(hard) = &revision.hard {
            for c in &mut cases {
                c.hard = hard.contains(&c.id);
            }
        }
        cases.extend(revision.add.iter().cloned());
        let judged = match &revision.judged {
            Some(j) if j.rubric.is_empty() => None,
            Some(j) => Some(j.clone()),
            None => latest.judged.clone(),
        };
        if cases == latest.cases
            && revision.floor.is_none_or(|f| f == latest.floor)
            && judged == latest.judged
        {
            return Err(Error::new(Code::InvalidValue, "the revision changes nothing"));
        }
        let floor = revision.floor.unwrap_or(latest.floor);
        self.publish_judged_suite(key, &latest.capability, floor, &cases, judged.as_ref())
    }

    /// Stored runs, newest first (of one suite, or all).
    pub fn eval_runs(&self, suite: Option<&str>) -> Result<Vec<EvalRun>> {
        may_author(self)?;
        let mut stmt = self.ws.conn().prepare(
            "SELECT id, suite, suite_version, capability, prompt, prompt_version, model_pin, model_version, started_by,
                started_at, finished_at, outcome, passed, total, hard_failures, floor, p50_ms, prompt_tokens,
                completion_tokens, cost, cases, judged
             FROM eval_run WHERE ?1 IS NULL OR suite = ?1 ORDER BY finished_at DESC, id DESC",
        )?;
        let rows = stmt.query_map([suite], |r| {
            Ok(EvalRun {
                id: r.get(0)?,
                suite: r.get(1)?,
                suite_version: r.get(2)?,
                capability: r.get(3)?,
                prompt: r.get(4)?,
                prompt_version: r.get(5)?,
                model_pin: r.get(6)?,
                model_version: r.get(7)?,
                started_by: r.get(8)?,
                started_at: r.get(9)?,
                finished_at: r.get(10)?,
                outcome: r.get(11)?,
                passed: r.get(12)?,
                total: r.get(13)?,
                hard_failures: r.get(14)?,
                floor: r.get(15)?,
                p50_ms: r.get(16)?,
                prompt_tokens: r.get::<_, i64>(17)? as u64,
                completion_tokens: r.get::<_, i64>(18)? as u64,
                cost: r.get(19)?,
                cases: serde_json::from_str(&r.get::<_, String>(20)?).unwrap_or_default(),
                judged: r.get::<_, Option<String>>(21)?.and_then(|j| serde_json::from_str(&j).ok()),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn store_run(&self, run: &EvalRun) -> Result<()> {
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO eval_run (id, suite, suite_version, capability, prompt, prompt_version, model_pin, model_version,
                started_by, started_at, finished_at, outcome, passed, total, hard_failures, floor, p50_ms, prompt_tokens,
                completion_tokens, cost, cases, judged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
            params![
                run.id,
                run.suite,
                run.suite_version,
                run.capability,
                run.prompt,
                run.prompt_version,
                run.model_pin,
                run.model_version,
                run.started_by,
                run.started_at,
                run.finished_at,
                run.outcome,
                run.passed,
                run.total,
                run.hard_failures,
                run.floor,
                run.p50_ms,
                run.prompt_tokens as i64,
                run.completion_tokens as i64,
                run.cost,
                serde_json::to_string(&run.cases).map_err(|e| Error::internal(e.to_string()))?,
                run.judged.as_ref().map(|j| serde_json::to_string(j).unwrap_or_default())
            ],
        )?;
        tx.commit()?;
        Ok(())
    }
}
