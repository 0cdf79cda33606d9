//! Ask: a question → a query spec the kernel runs itself. The model never reads
//! records; it reads the user's schema projection and writes a small plan — object, filters,
//! sort, limit — or a refusal. Columns come from the object's layout, not from the model.
//!
//! Closed vocabulary at decode time: the output JSON Schema is built per request from the
//! projection (object keys, field paths, each picklist's active values as enums, value types by
//! field type) and sent as structured output, so the model cannot even write a field the user
//! may not read. The kernel validates the answer again (projection checks, then the same JSON
//! Schema, then the query compiler) — one repair attempt carrying the exact error, then
//! `contract`.
//!
//! Values the model writes for names and lookups are resolved against the records the user can
//! read (case, punctuation, legal suffixes, abbreviations, partial names); the answer shows what
//! each value resolved to, and an ambiguous value becomes a choice for the user, never a guess.

mod choice;
mod clarify;
mod contract;
mod data_check;
mod evidence;
mod learned;
mod plan;
pub mod reader;
mod ties;
mod unsayable;
mod versions;

use crate::ai::dates::{read_dates, DateRange};
use crate::ai::pipeline::drive::{Capability, Run, Step};
use crate::ai::pipeline::{
    Autonomy, CapabilitySettings, CapabilitySpec, FieldValue, Invocation, ModelChoice, Outcome,
    ShippedVersion,
};
use crate::ai::projection::{Grounding, ProjectedField, Projection};
use crate::ai::provider::{ChatResponse, Part, Prompt};
use crate::error::{Code, Error, Result};
use crate::metadata::condition::{Comparison, Condition, NotOf, Op};
use crate::metadata::definition::FieldType;
use crate::records::access::Session;
use crate::records::names::{normal_text, Resolution, ResolutionStatus};
use crate::records::query::{Direction, QueryResult, QuerySpec, SortKey};
pub use choice::ReadCondition;
pub use clarify::{Clarification, ClarifyOption};
pub use contract::output_schema;
use contract::*;
use data_check::Written;
pub use evidence::SaidTerm;
use evidence::{check_evidence, check_unused_values, refusal_contradiction, said_terms};
pub use learned::{LearnedExample, LearnedUse, MAX_LEARNED};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use ts_rs::TS;
pub use versions::*;

pub const CAPABILITY: &str = "ask";

/// What Ask ships with: its prompt versions and its default binding.
pub const SPEC: CapabilitySpec = CapabilitySpec {
    capability: CAPABILITY,
    purpose: "answering questions",
    prompt: "ask",
    versions: &[
        ShippedVersion {
            instructions: INSTRUCTIONS_V1,
            examples: examples_v1,
            contract: CONTRACT_V1,
            variants: crate::ai::pipeline::one_language,
        },
        ShippedVersion {
            instructions: INSTRUCTIONS_V2,
            examples: examples_v2,
            contract: CONTRACT_DATES_READ,
            variants: crate::ai::pipeline::one_language,
        },
        ShippedVersion {
            instructions: INSTRUCTIONS_V3,
            examples: examples_v3,
            contract: CONTRACT_TERMS,
            variants: crate::ai::pipeline::one_language,
        },
        ShippedVersion {
            instructions: INSTRUCTIONS_V4,
            examples: examples_v4,
            contract: CONTRACT_CHOICES,
            variants: crate::ai::pipeline::one_language,
        },
        ShippedVersion {
            instructions: INSTRUCTIONS_V5,
            examples: examples_v5,
            contract: CONTRACT_CHOICES_WHEN_ASKED,
            variants: crate::ai::pipeline::one_language,
        },
    ],
    inputs: r#"{"question": "string", "schema": "projection", "today": "date", "dates": "date phrases the kernel read"}"#,
    settings: CapabilitySettings::default,
    autonomy: Autonomy::ReadOnly,
};
/// Rows an answer holds when the question gives no limit: every row a query may return (the
/// answer to "invoices excluding the draft ones" is all of them, not the first 200; past this,
/// `has_more` says there are more).
pub const DEFAULT_LIMIT: u32 = 1000;

/// The phrases of the dates read (`None` under prompt version 1), as the contract offers them.
fn phrases_of(dates: Option<&[DateRange]>) -> Option<Vec<String>> {
    dates.map(|d| d.iter().map(|r| r.phrase.clone()).collect())
}

/// The conditions a date range sets on a date field (first and last day included) or a
/// date-time field (from the first day's start to the start of the day after the last, in the
/// workspace's time zone).
fn date_conditions(
    field: &str,
    field_type: FieldType,
    range: &DateRange,
    tz: Option<&str>,
) -> Vec<Condition> {
    let start_of = |day: chrono::NaiveDate| crate::clock::timestamp(crate::clock::day_start(day, tz));
    let compare = |op: Op, value: String| Condition::compare(field, op, Value::String(value));
    let mut out = vec![];
    if let Some(start) = range.start {
        out.push(match field_type {
            FieldType::Datetime => compare(Op::Gte, start_of(start)),
            _ => compare(Op::Gte, start.to_string()),
        });
    }
    if let Some(end) = range.end {
        out.push(match field_type {
            FieldType::Datetime => compare(Op::Lt, start_of(end + chrono::Duration::days(1))),
            _ => compare(Op::Lte, end.to_string()),
        });
    }
    out
}

/// The date phrases of a question as the model reads them: one a line, with the days it means.
fn dates_text(dates: &[DateRange]) -> String {
    let day = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string()).unwrap_or_else(|| "…".into());
    dates
        .iter()
        .map(|r| format!("\"{}\": {} to {}", r.phrase, day(r.start), day(r.end)))
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AskTimings {
    pub total_ms: f64,
    pub model_ms: f64,
    /// Everything but the model's time: grounding, validation, resolution, the query, the trace.
    pub kernel_ms: f64,
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    #[ts(type = "number")]
    pub completion_tokens: u64,
    pub attempts: u32,
    #[ts(type = "number")]
    pub projection_tokens: u64,
    #[ts(type = "number")]
    pub full_projection_tokens: u64,
}

/// The answer to a question.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AskAnswer {
    pub question: String,
    /// The spec the kernel ran (or would run once the choices are made).
    pub spec: QuerySpec,
    pub resolutions: Vec<Resolution>,
    /// `None` while a value is ambiguous: see `resolutions`.
    #[ts(optional)]
    pub result: Option<QueryResult>,
    pub trace_id: String,
    pub correlation_id: String,
    pub grounding_hash: String,
    #[ts(optional)]
    pub warning: Option<String>,
    pub timings: AskTimings,
    /// The date phrases the answer filters on, as the question wrote them (a chip shows the
    /// phrase; the spec holds the range).
    pub dates: Vec<DateChoice>,
    /// The workspace's terms the answer filters on (a chip reads as the term's label and
    /// expands to its condition, which the spec holds).
    pub terms: Vec<TermChoice>,
    /// Examples learned from this workspace's corrections that the prompt carried.
    pub learned: Vec<LearnedUse>,
    /// The conditions the kernel read in the question (prompt versions 4 and 5), chosen or not.
    pub read: Vec<ReadCondition>,
    /// The question's words that no chosen condition uses (prompt versions 4 and 5): the answer says
    /// what it did not use.
    pub unused: Vec<String>,
    /// Present when words of the question are unused: the answer is this, not a table
    /// (`result` is absent), and each option is a spec one click runs.
    #[ts(optional)]
    pub clarification: Option<Clarification>,
}

/// A term of the vocabulary that a filter of the answer stands for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TermChoice {
    /// As the plan named it: `open_opportunity`, or a parent's `account.key_account`.
    pub key: String,
    pub label: String,
    /// The filter it expanded to, on the queried object (one condition of the spec).
    pub condition: Condition,
}

/// A date phrase of the question that a filter uses: the field, the words, the days.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DateChoice {
    pub field: String,
    pub phrase: String,
    /// First day (`YYYY-MM-DD`); absent = open.
    #[ts(optional)]
    pub start: Option<String>,
    /// Last day; absent = open.
    #[ts(optional)]
    pub end: Option<String>,
}

/// A plan turned into what the kernel runs and what the answer shows.
struct Planned {
    spec: QuerySpec,
    resolutions: Vec<Resolution>,
    values: Vec<FieldValue>,
    dates: Vec<DateChoice>,
    terms: Vec<TermChoice>,
    /// The values the plan wrote for text-like fields and lookups (for the data check).
    written: Vec<Written>,
    /// The conditions read and the words not used (version 4).
    read: Vec<ReadCondition>,
    unused: Vec<String>,
}

/// Progress of an Ask call, streamed to the UI.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AskProgress {
    /// The request went to the model (attempt 2 is the repair).
    Thinking { attempt: u32 },
    /// The model has written this many characters of its answer.
    Writing { chars: u32 },
    /// What the model wrote since the last progress, for a capability whose answer is shown as
    /// it streams (Summarize). Unchecked: the UI marks it as a draft until the answer comes.
    Text { delta: String },
}

/// One Ask invocation between model calls.
pub type AskRun = Run<AskState>;

/// What Ask keeps between model calls.
#[derive(Debug)]
pub struct AskState {
    grounding: Arc<Grounding>,
    question: String,
    /// The date phrases the kernel read (prompt version 2's contract); `None` under version 1.
    dates: Option<Vec<DateRange>>,
    /// The terms the question says, offered as choices (prompt version 3's contract); `None`
    /// under earlier versions.
    terms: Option<Vec<SaidTerm>>,
    /// Examples learned from corrections that the prompt carries, with their plans (the
    /// repair's prompt carries the same).
    learned: Vec<(LearnedUse, String)>,
    /// The question as the kernel read it (prompt versions 4 and 5); `None` before.
    reading: Option<reader::Reading>,
    /// The keys a choice writes (with `reading`).
    keys: ChoiceKeys,
    /// Meanings of readings that learned corrections left out (version 4).
    declined: Vec<String>,
    /// Filter fields an answer wrote that the question does not ask for: the repair's contract
    /// leaves them out.
    unasked: Vec<String>,
    /// Picklists (object, path) whose values the question says outside a said term's words.
    values_said: Vec<(String, String)>,
    schema: Value,
    repaired: bool,
    /// The choice the kernel made itself (the reading left nothing to choose): the first
    /// answer, in place of a model call.
    decided: Option<String>,
}

/// After a model call: the answer, or the repair to send.
type AskStep = Step<Box<AskAnswer>>;

impl Session<'_> {
    /// The objects Ask may query for this user: the projection's, within the capability's scope.
    fn ask_objects(&self, projection: &Projection, settings: &CapabilitySettings) -> Vec<String> {
        projection
            .objects
            .iter()
            .map(|o| o.key.clone())
            .filter(|k| settings.objects.as_ref().is_none_or(|allowed| allowed.contains(k)))
            .collect()
    }

    /// Record a call refused before any model was chosen (no `ai.use`).
    /// Authorize before anything else (no model is resolved for a user who may not ask).
    pub fn ask_authorize(&self, question: &str) -> Result<()> {
        let binding = self.capability(CAPABILITY)?;
        self.require(&binding.required_permission)
            .map_err(|e| self.refuse_before_begin(&binding, question, e))
    }

    /// Steps 1–3 and the request: authorize, budget, ground, build the prompt and contract.
    pub fn ask_begin(&self, question: &str, model: ModelChoice) -> Result<AskRun> {
        let question = question.trim();
        if question.is_empty() || question.chars().count() > 2_000 {
            return Err(Error::new(Code::InvalidQuery, "ask a question of 1 to 2,000 characters"));
        }
        let binding = self.capability(CAPABILITY)?;
        let prompt = self.active_prompt(&binding.prompt)?;
        let grounding = self.grounding(question, binding.settings.projection_tokens);
        let day = self.today();
        let today = day.to_string();
        // From prompt version 2's contract on, the kernel reads the dates (against today in the
        // workspace's time zone) and the model picks; from version 3's, it also picks terms.
        let contract = AskContract::of(&prompt.output_contract);
        let with_terms = contract == AskContract::Terms;
        let dates = matches!(contract, AskContract::DatesRead | AskContract::Terms)
            .then(|| read_dates(question, day, self.locale().language()));
        let objects = self.ask_objects(&grounding.projection, &binding.settings);
        let mut terms = with_terms.then(|| said_terms(question, &grounding.projection, &objects));
        let values_said = terms
            .as_deref()
            .map(|t| evidence::values_said(question, &grounding.projection, &objects, t))
            .unwrap_or_default();
        // A term said only by a value's name ("overdue") in a question that lists values of that
        // field ("sent or overdue") is that value, not the term.
        if let Some(t) = terms.as_mut() {
            t.retain(|said| !evidence::names_a_listed_value(said, &grounding.projection, &values_said));
        }
        let learned =
            if with_terms { self.learned_for(question, &grounding.projection, &objects) } else { vec![] };
        // From prompt version 4's contract on, the kernel reads the question into candidate
        // conditions and the model only chooses among them.
        let (reading, keys) = match contract {
            AskContract::Choices(keys) => {
                (Some(self.read_question(question, &grounding.projection, &objects)?), keys)
            }
            _ => (None, ChoiceKeys::Always),
        };
        // Under version 4, learned examples are the choices their corrections make.
        let mut declined = vec![];
        let learned = match &reading {
            Some(r) => self
                .learned_choices(question, &grounding.projection, &objects, r, keys)
                .into_iter()
                .map(|l| {
                    declined.extend(l.declined);
                    (l.use_, l.text)
                })
                .collect(),
            None => learned,
        };
        let parts = match &reading {
            Some(r) => choice::choice_parts(&grounding.projection, &objects, question, r, &learned),
            None => ask_parts(&grounding, &learned, &today, question, dates.as_deref(), terms.as_deref()),
        };
        let chat_prompt = Prompt {
            instructions: prompt.instructions.clone(),
            examples: crate::ai::pipeline::example_turns(&prompt.examples),
            parts,
        };
        let estimate = crate::ai::projection::estimate_prompt_tokens(&chat_prompt);
        let mut inv = self.begin_invocation(&binding, prompt, model, question, estimate)?;
        inv.grounding_hash = grounding.hash.clone();
        let fail = |inv: &Invocation, e: Error| -> Result<AskRun> { Err(self.fail_invocation(inv, e)) };
        if objects.is_empty() {
            return fail(&inv, Error::new(Code::Scope, "there are no records you can ask about"));
        }
        let named = self.objects_named(question);
        if !named.is_empty() && named.iter().all(|o| !objects.contains(o)) {
            return fail(
                &inv,
                Error::new(Code::Scope, format!("Ask is not enabled for {}", named.join(", "))),
            );
        }
        // Against the whole projection: a scoped one leaves out objects the user may read.
        let outside = self.terms_outside_projection(question, &self.whole_grounding().projection);
        if !outside.is_empty() {
            return fail(
                &inv,
                Error::new(
                    Code::GroundingInsufficient,
                    format!(
                        "The question mentions “{}”, which is not in the data you can read, so it cannot be answered faithfully.",
                        outside.join("”, “")
                    ),
                ),
            );
        }
        if let Some(why) =
            reading.as_ref().and_then(|r| unsayable::unsayable(r, &grounding.projection, &named))
        {
            return fail(&inv, Error::new(Code::GroundingInsufficient, why));
        }
        let schema = match &reading {
            Some(r) => choice::choice_schema(&grounding.projection, &objects, r, keys, true),
            None => output_schema(
                &grounding.projection,
                &objects,
                true,
                phrases_of(dates.as_deref()).as_deref(),
                terms.as_deref(),
                &[],
                &values_said,
            ),
        };
        let decided = reading
            .as_ref()
            .and_then(|r| {
                choice::decided_choice(&grounding.projection, &objects, r, keys, !learned.is_empty())
            })
            .map(|v| v.to_string());
        let request = inv.chat_request(chat_prompt, "ask_plan".into(), schema.clone());
        Ok(Run {
            invocation: inv,
            request,
            state: AskState {
                grounding,
                question: question.to_string(),
                dates,
                terms,
                learned,
                reading,
                keys,
                declined,
                unasked: vec![],
                values_said,
                schema,
                repaired: false,
                decided,
            },
        })
    }

    /// Steps 5–7 with the model's response: constrain (or ask for the one repair), resolve
    /// values, run the spec, trace. Ask's `advance`: callers take it through `drive::step`,
    /// which ends the invocation on a failure.
    fn ask_advance(&self, run: &mut AskRun, resp: ChatResponse) -> Result<AskStep> {
        match self.constrain(run, &resp.content) {
            Ok(Constrained::Refusal(reason)) => Err(Error::new(
                Code::GroundingInsufficient,
                format!("The model found no way to answer from your data: {reason}"),
            )),
            Ok(Constrained::Plan(plan)) => {
                let Planned { spec, resolutions, values, dates, terms, written, read, unused } = *plan;
                let ambiguous = resolutions.iter().any(|r| r.status == ResolutionStatus::Ambiguous);
                // The trust contract: words not placed make the answer a clarification, never a
                // table that ignores them.
                let clarification = run.state.reading.as_ref().and_then(|r| {
                    self.clarification(r, &run.state.grounding.projection, &spec, &read, &unused)
                });
                let answerable = !ambiguous && clarification.is_none();
                // A count that cuts through equal values shows them all (run once, widened).
                let widened = if answerable { self.with_ties(&spec)? } else { None };
                let (spec, result, tie) = match widened {
                    Some((spec, result, tie)) => (spec, Some(result), Some(tie)),
                    None => {
                        let result = if answerable { Some(self.query(&spec)?) } else { None };
                        (spec, result, None)
                    }
                };
                // A first plan that finds nothing gets one repair with what the data holds for
                // its values (never a value swapped in by the kernel).
                if !run.state.repaired && result.as_ref().is_some_and(|r| r.records.is_empty()) {
                    let hints = self.data_hints(&run.state.grounding.projection, &spec.object, &written);
                    if !hints.is_empty() {
                        let violation = format!(
                            "the plan finds no {} record. What the data holds: {}. Answer again with a corrected plan.",
                            spec.object,
                            hints.join("; ")
                        );
                        return self.ask_repair(run, &resp.content, &violation, false);
                    }
                }
                // Nothing found where another reading of the same words finds records is asked
                // back: an empty table is the answer only when no reading finds anything.
                let (clarification, result) = match (&run.state.reading, &result) {
                    (Some(r), Some(found)) if found.records.is_empty() => {
                        match self.read_otherwise(r, &run.state.grounding.projection, &spec, &read)? {
                            Some(c) => (Some(c), None),
                            None => (clarification, result),
                        }
                    }
                    _ => (clarification, result),
                };
                let inv = &run.invocation;
                let answer_json = json!({"spec": spec, "resolutions": resolutions, "dates": dates,
                    "chosen": read.iter().filter(|c| c.chosen).map(|c| &c.id).collect::<Vec<_>>(),
                    "terms": terms.iter().map(|t| &t.key).collect::<Vec<_>>(),
                    "learned": run.state.learned.iter().map(|(l, _)| &l.id).collect::<Vec<_>>(),
                    "clarification": clarification.as_ref().map(|c| &c.words),
                    "ids": result.as_ref().map(|r| r.records.iter().map(|m| m["id"].clone()).collect::<Vec<_>>())});
                self.finish_invocation(inv, Outcome::Answered { result: &answer_json, values: &values })?;
                let total_ms = inv.started.elapsed().as_secs_f64() * 1000.0;
                Ok(Step::Done(Box::new(AskAnswer {
                    question: run.state.question.clone(),
                    spec,
                    resolutions,
                    dates,
                    terms,
                    learned: run.state.learned.iter().map(|(l, _)| l.clone()).collect(),
                    read,
                    unused,
                    clarification,
                    result,
                    trace_id: inv.trace_id.clone(),
                    correlation_id: inv.correlation_id.clone(),
                    grounding_hash: inv.grounding_hash.clone(),
                    warning: match (&inv.warning, tie) {
                        (Some(w), Some(t)) => Some(format!("{w} {t}")),
                        (w, t) => t.or_else(|| w.clone()),
                    },
                    timings: AskTimings {
                        total_ms,
                        model_ms: inv.model_ms,
                        kernel_ms: inv.kernel_ms(),
                        prompt_tokens: inv.usage.prompt_tokens,
                        completion_tokens: inv.usage.completion_tokens,
                        attempts: inv.attempts,
                        projection_tokens: run.state.grounding.tokens,
                        full_projection_tokens: run.state.grounding.full_tokens,
                    },
                })))
            }
            Err(Violation { message: violation, refusal_allowed, unasked }) if !run.state.repaired => {
                run.state.unasked.extend(unasked);
                self.ask_repair(run, &resp.content, &violation, refusal_allowed)
            }
            Err(Violation { message: violation, .. }) => {
                // What the checker said is schema text: it goes to the log as its size, never to
                // the person, who gets a sentence.
                tracing::info!(
                    problem_chars = violation.len(),
                    "the model's answer broke the Ask contract twice"
                );
                Err(Error::new(
                    Code::Contract,
                    "The local model's answer could not be turned into a query, twice, so no table is shown rather than a guess. Rewording the question, or naming the records and the field, may help.",
                ))
            }
        }
    }

    /// The one repair: the question again, the previous answer, and what was wrong with it.
    /// With `refusal_allowed` false the repair's contract has no refusal (the question is
    /// answerable from the schema).
    fn ask_repair(
        &self,
        run: &mut AskRun,
        answer: &str,
        violation: &str,
        refusal_allowed: bool,
    ) -> Result<AskStep> {
        let mut parts = match &run.state.reading {
            Some(r) => {
                let objects =
                    self.ask_objects(&run.state.grounding.projection, &run.invocation.capability.settings);
                choice::choice_parts(
                    &run.state.grounding.projection,
                    &objects,
                    &run.state.question,
                    r,
                    &run.state.learned,
                )
            }
            None => ask_parts(
                &run.state.grounding,
                &run.state.learned,
                &self.today().to_string(),
                &run.state.question,
                run.state.dates.as_deref(),
                run.state.terms.as_deref(),
            ),
        };
        parts.push(Part::Untrusted { label: "your previous answer".into(), content: answer.to_string() });
        parts.push(Part::Request(if run.state.reading.is_some() {
                format!("Your previous answer was rejected: {violation}\nAnswer again with a corrected JSON choice.")
            } else if refusal_allowed {
                format!("Your previous answer was rejected: {violation}\nAnswer again with a corrected JSON plan, or with a refusal if the schema cannot answer the question.")
            } else {
                format!("Your previous answer was rejected: {violation}\nAnswer again with a corrected JSON plan.")
            }));
        if let (Some(r), false) = (&run.state.reading, refusal_allowed) {
            // The repair of a contradicted refusal may not refuse again.
            let objects =
                self.ask_objects(&run.state.grounding.projection, &run.invocation.capability.settings);
            let schema =
                choice::choice_schema(&run.state.grounding.projection, &objects, r, run.state.keys, false);
            run.request.schema = Some(("ask_plan".into(), schema.clone()));
            run.state.schema = schema;
        }
        if run.state.reading.is_none() && (!refusal_allowed || !run.state.unasked.is_empty()) {
            // The question is answerable from the schema (the model's own plan or the
            // schema says so): the repair may not turn into a refusal. A filter the question
            // does not ask for cannot be written again.
            let objects =
                self.ask_objects(&run.state.grounding.projection, &run.invocation.capability.settings);
            let phrases = phrases_of(run.state.dates.as_deref());
            let schema = output_schema(
                &run.state.grounding.projection,
                &objects,
                refusal_allowed,
                phrases.as_deref(),
                run.state.terms.as_deref(),
                &run.state.unasked,
                &run.state.values_said,
            );
            run.request.schema = Some(("ask_plan".into(), schema.clone()));
            run.state.schema = schema;
        }
        let estimate = crate::ai::projection::estimate_prompt_tokens(&Prompt {
            parts: parts.clone(),
            ..run.request.prompt.clone()
        });
        self.preflight_repair(&run.invocation, estimate)?;
        run.request.prompt.parts = parts;
        run.state.repaired = true;
        Ok(Step::Call)
    }
}

/// The user message: the schema (a stable prefix per user and generation), the examples
/// learned from corrections, today, the question, and what the kernel read in it (dates, terms).
fn ask_parts(
    g: &Grounding,
    learned: &[(LearnedUse, String)],
    today: &str,
    question: &str,
    dates: Option<&[DateRange]>,
    terms: Option<&[SaidTerm]>,
) -> Vec<Part> {
    let mut parts = vec![Part::Untrusted { label: "schema".into(), content: g.text.clone() }];
    if !learned.is_empty() {
        parts.push(Part::Untrusted {
            label: "questions answered in this workspace before, as corrected by their users".into(),
            content: learned::learned_text(learned),
        });
    }
    parts.push(Part::Request(format!("Today is {today}.")));
    parts.push(Part::Untrusted { label: "question".into(), content: question.to_string() });
    if let Some(dates) = dates.filter(|d| !d.is_empty()) {
        parts.push(Part::Untrusted { label: "dates".into(), content: dates_text(dates) });
    }
    if let Some(terms) = terms.filter(|t| !t.is_empty()) {
        let lines: Vec<String> =
            terms.iter().map(|t| format!("\"{}\": term {} of {}", t.phrase, t.key, t.object)).collect();
        parts.push(Part::Untrusted { label: "terms".into(), content: lines.join("\n") });
    }
    parts
}

/// Ask as the model-call driver runs it (`pipeline::drive`).
pub struct Ask {
    pub question: String,
}

impl Capability for Ask {
    const KEY: &'static str = CAPABILITY;
    type State = AskState;
    type Answer = AskAnswer;

    fn authorize(&mut self, session: &Session<'_>) -> Result<()> {
        session.ask_authorize(&self.question)
    }
    fn begin(&mut self, session: &Session<'_>, model: ModelChoice) -> Result<AskRun> {
        session.ask_begin(&self.question, model)
    }
    fn decided(&mut self, run: &mut AskRun) -> Option<String> {
        run.state.decided.take()
    }
    fn advance(
        &mut self,
        session: &Session<'_>,
        run: &mut AskRun,
        response: ChatResponse,
    ) -> Result<Step<AskAnswer>> {
        Ok(match session.ask_advance(run, response)? {
            Step::Done(answer) => Step::Done(*answer),
            Step::Call => Step::Call,
        })
    }
}

/// The ids of a result's records, in order.
pub fn ids(result: &QueryResult) -> Vec<String> {
    result
        .records
        .iter()
        .filter_map(|r: &Map<String, Value>| r.get("id")?.as_str().map(String::from))
        .collect()
}
