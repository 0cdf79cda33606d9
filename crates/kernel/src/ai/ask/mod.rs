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
mod data_check;
mod evidence;
mod learned;
pub mod reader;
mod versions;

use crate::ai::dates::{read_dates, DateRange};
use crate::ai::pipeline::drive::{Capability, Step};
use crate::ai::pipeline::{
    Autonomy, CapabilitySettings, CapabilitySpec, FieldValue, Invocation, ModelChoice, Outcome,
    ShippedVersion,
};
use crate::ai::projection::{Grounding, ProjectedField, Projection};
use crate::ai::provider::{ChatRequest, ChatResponse, Part, Prompt};
use crate::error::{Code, Error, Result};
use crate::metadata::condition::{Comparison, Condition, NotOf, Op};
use crate::metadata::definition::FieldType;
use crate::records::access::Session;
use crate::records::names::{normal_text, Resolution, ResolutionStatus};
use crate::records::query::{Direction, QueryResult, QuerySpec, SortKey};
pub use choice::ReadCondition;
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
    prompt: "ask",
    versions: &[
        ShippedVersion { instructions: INSTRUCTIONS_V1, examples: examples_v1, contract: CONTRACT_V1 },
        ShippedVersion {
            instructions: INSTRUCTIONS_V2,
            examples: examples_v2,
            contract: CONTRACT_DATES_READ,
        },
        ShippedVersion { instructions: INSTRUCTIONS_V3, examples: examples_v3, contract: CONTRACT_TERMS },
        ShippedVersion { instructions: INSTRUCTIONS_V4, examples: examples_v4, contract: CONTRACT_CHOICES },
        ShippedVersion {
            instructions: INSTRUCTIONS_V5,
            examples: examples_v5,
            contract: CONTRACT_CHOICES_WHEN_ASKED,
        },
    ],
    inputs: r#"{"question": "string", "schema": "projection", "today": "date", "dates": "date phrases the kernel read"}"#,
    settings: CapabilitySettings::default,
    autonomy: Autonomy::ReadOnly,
};
/// Rows an answer shows when the question gives no limit (`has_more` says if there are more).
pub const DEFAULT_LIMIT: u32 = 200;

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
#[derive(Debug)]
pub struct AskRun {
    pub invocation: Invocation,
    pub request: ChatRequest,
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
}

/// After a model call: the answer, or the repair to send.
pub type AskStep = Step<Box<AskRun>, Box<AskAnswer>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanOut {
    // `sort` and `limit` are required by the contract (so the model decides them explicitly);
    // `limit` may be null.
    object: String,
    /// Keys of terms (version 3's contract).
    #[serde(default)]
    terms: Vec<String>,
    #[serde(default)]
    filters: Vec<FilterOut>,
    #[serde(default)]
    sort: Vec<SortOut>,
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilterOut {
    field: String,
    op: String,
    #[serde(default)]
    value: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SortOut {
    field: String,
    #[serde(default)]
    direction: Option<Direction>,
}

const OPS: &[&str] =
    &["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "contains", "is_set", "is_blank"];

fn ops_for(t: FieldType) -> (&'static [&'static str], &'static [&'static str]) {
    // (scalar ops, list ops)
    match t {
        FieldType::Picklist | FieldType::Lookup => (&["eq", "ne"], &["in", "not_in"]),
        FieldType::Number | FieldType::Currency | FieldType::Date | FieldType::Datetime => {
            (&["eq", "ne", "lt", "lte", "gt", "gte"], &[])
        }
        FieldType::Boolean => (&["eq"], &[]),
        FieldType::LongText => (&["contains"], &[]),
        _ => (&["eq", "ne", "contains"], &["in", "not_in"]),
    }
}

fn value_schema(f: &ProjectedField) -> Value {
    let values: Vec<String> = f.values.iter().map(|(v, _)| v.clone()).collect();
    crate::ai::contract::value_schema(f.field_type, &values, 200)
}

fn item(path: &str, ops: &[&str], value: Value) -> Value {
    json!({
        "type": "object",
        "properties": {"field": {"const": path}, "op": {"enum": ops}, "value": value},
        "required": ["field", "op", "value"],
        "additionalProperties": false
    })
}

/// The output contract for one request: one alternative per object in scope, each with its
/// own field paths, ops by type and picklist enums — plus the refusal. With `dates` (prompt
/// version 2), a date field is filtered only with `during` one of those phrases, and not at all
/// when the question names no date.
pub fn output_schema(
    projection: &Projection,
    objects: &[String],
    refusal: bool,
    dates: Option<&[String]>,
    terms: Option<&[SaidTerm]>,
    unasked: &[String],
    values_said: &[(String, String)],
) -> Value {
    let mut alternatives = vec![];
    for key in objects {
        let paths = projection.paths(key);
        let mut items = vec![];
        let mut all_paths = vec![];
        let mut sortable = vec![];
        // A picklist a said term constrains ("still in play" sets the stage) takes no filter of
        // its own — a small model otherwise lists the term's values again, or wrong ones —
        // unless the question also says values of it outside the term's words ("unpaid (sent
        // or overdue)").
        let said: Vec<String> =
            terms.into_iter().flatten().filter(|t| &t.object == key).map(|t| t.key.clone()).collect();
        let covered: Vec<String> = projection
            .terms(key)
            .into_iter()
            .filter(|(k, _, _)| said.contains(k))
            .flat_map(|(_, _, c)| c.fields().into_iter().map(String::from).collect::<Vec<_>>())
            .filter(|path| !values_said.iter().any(|(o, f)| o == key && f == path))
            .collect();
        for (path, f) in &paths {
            let (scalar, list) = ops_for(f.field_type);
            if f.field_type == FieldType::Picklist && (f.values.is_empty() || covered.contains(path)) {
                continue;
            }
            if evidence::name_root(projection, key, path).is_some_and(|root| unasked.contains(&root))
                || unasked.contains(path)
            {
                if !matches!(f.field_type, FieldType::LongText | FieldType::Lookup) {
                    sortable.push(path.clone());
                }
                continue;
            }
            match (dates, matches!(f.field_type, FieldType::Date | FieldType::Datetime)) {
                (Some(phrases), true) => {
                    if !phrases.is_empty() {
                        items.push(item(path, &["during"], json!({ "enum": phrases })));
                    }
                }
                _ => items.push(item(path, scalar, value_schema(f))),
            }
            if !list.is_empty() {
                items.push(item(
                    path,
                    list,
                    json!({"type": "array", "items": value_schema(f), "minItems": 1, "maxItems": 20}),
                ));
            }
            all_paths.push(path.clone());
            if !matches!(f.field_type, FieldType::LongText | FieldType::Lookup) {
                sortable.push(path.clone());
            }
        }
        items.push(json!({
            "type": "object",
            "properties": {"field": {"enum": all_paths}, "op": {"enum": ["is_set", "is_blank"]}},
            "required": ["field", "op"],
            "additionalProperties": false
        }));
        let mut properties = Map::new();
        properties.insert("object".into(), json!({"const": key}));
        let mut required = vec!["object"];
        if let Some(terms) = terms {
            let keys: Vec<&str> = terms.iter().filter(|t| &t.object == key).map(|t| t.key.as_str()).collect();
            properties.insert(
                "terms".into(),
                if keys.is_empty() {
                    // (llama.cpp's grammar ignores `maxItems: 0` without `items`; a const holds.)
                    json!({"const": []})
                } else {
                    json!({"type": "array", "items": {"enum": keys}, "maxItems": 4, "uniqueItems": true})
                },
            );
            required.push("terms");
        }
        properties
            .insert("filters".into(), json!({"type": "array", "items": {"anyOf": items}, "maxItems": 8}));
        properties.insert(
            "sort".into(),
            json!({"type": "array", "maxItems": 3, "items": {
                "type": "object",
                "properties": {"field": {"enum": sortable}, "direction": {"enum": ["asc", "desc"]}},
                "required": ["field", "direction"],
                "additionalProperties": false
            }}),
        );
        properties.insert(
            "limit".into(),
            json!({"anyOf": [{"type": "integer", "minimum": 1, "maximum": 1000}, {"type": "null"}]}),
        );
        required.extend(["filters", "sort", "limit"]);
        alternatives.push(json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }));
    }
    if refusal {
        alternatives.push(refusal_alternative());
    }
    json!({"anyOf": alternatives})
}

/// The refusal a contract offers beside its answers: `{"refusal": {"reason": …}}`.
fn refusal_alternative() -> Value {
    json!({
        "type": "object",
        "properties": {"refusal": {
            "type": "object",
            "properties": {"reason": {"type": "string", "minLength": 1, "maxLength": 200}},
            "required": ["reason"],
            "additionalProperties": false
        }},
        "required": ["refusal"],
        "additionalProperties": false
    })
}

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
            .then(|| read_dates(question, day));
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
        let keys = match contract {
            AskContract::Choices(keys) => Some(keys),
            _ => None,
        };
        let reading = match keys {
            Some(_) => Some(self.read_question(question, &grounding.projection, &objects)?),
            None => None,
        };
        let keys = keys.unwrap_or(ChoiceKeys::Always);
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
        let mut inv = self.begin_invocation(&binding, model, question, estimate)?;
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
        if let Some(why) = reading.as_ref().and_then(|r| choice::unsayable(r, &grounding.projection)) {
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
        let request = inv.chat_request(chat_prompt, "ask_plan".into(), schema.clone());
        Ok(AskRun {
            invocation: inv,
            request,
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
        })
    }

    /// Steps 5–7 with the model's response: constrain (or ask for the one repair), resolve
    /// values, run the spec, trace.
    pub fn ask_advance(&self, mut run: AskRun, resp: ChatResponse) -> Result<AskStep> {
        match self.constrain(&run, &resp.content) {
            Ok(Constrained::Refusal(reason)) => {
                let e = Error::new(
                    Code::GroundingInsufficient,
                    format!("The model found no way to answer from your data: {reason}"),
                );
                Err(self.fail_invocation(&run.invocation, e))
            }
            Ok(Constrained::Plan(plan)) => {
                let Planned { spec, resolutions, values, dates, terms, written, read, unused } = *plan;
                let ambiguous = resolutions.iter().any(|r| r.status == ResolutionStatus::Ambiguous);
                let result = if ambiguous {
                    None
                } else {
                    match self.query(&spec) {
                        Ok(r) => Some(r),
                        Err(e) => {
                            return Err(self.fail_invocation(&run.invocation, e));
                        }
                    }
                };
                // A first plan that finds nothing gets one repair with what the data holds for
                // its values (never a value swapped in by the kernel).
                if !run.repaired && result.as_ref().is_some_and(|r| r.records.is_empty()) {
                    let hints = self.data_hints(&run.grounding.projection, &spec.object, &written);
                    if !hints.is_empty() {
                        let violation = format!(
                            "the plan finds no {} record. What the data holds: {}. Answer again with a corrected plan.",
                            spec.object,
                            hints.join("; ")
                        );
                        return self.ask_repair(run, &resp.content, &violation, false);
                    }
                }
                let inv = &run.invocation;
                let answer_json = json!({"spec": spec, "resolutions": resolutions, "dates": dates,
                    "chosen": read.iter().filter(|c| c.chosen).map(|c| &c.id).collect::<Vec<_>>(),
                    "terms": terms.iter().map(|t| &t.key).collect::<Vec<_>>(),
                    "learned": run.learned.iter().map(|(l, _)| &l.id).collect::<Vec<_>>(),
                    "ids": result.as_ref().map(|r| r.records.iter().map(|m| m["id"].clone()).collect::<Vec<_>>())});
                self.finish_invocation(inv, Outcome::Answered { result: &answer_json, values: &values })?;
                let total_ms = inv.started.elapsed().as_secs_f64() * 1000.0;
                Ok(Step::Done(Box::new(AskAnswer {
                    question: run.question.clone(),
                    spec,
                    resolutions,
                    dates,
                    terms,
                    learned: run.learned.iter().map(|(l, _)| l.clone()).collect(),
                    read,
                    unused,
                    result,
                    trace_id: inv.trace_id.clone(),
                    correlation_id: inv.correlation_id.clone(),
                    grounding_hash: inv.grounding_hash.clone(),
                    warning: inv.warning.clone(),
                    timings: AskTimings {
                        total_ms,
                        model_ms: inv.model_ms,
                        kernel_ms: inv.kernel_ms(),
                        prompt_tokens: inv.usage.prompt_tokens,
                        completion_tokens: inv.usage.completion_tokens,
                        attempts: inv.attempts,
                        projection_tokens: run.grounding.tokens,
                        full_projection_tokens: run.grounding.full_tokens,
                    },
                })))
            }
            Err(Violation { message: violation, refusal_allowed, unasked }) if !run.repaired => {
                run.unasked.extend(unasked);
                self.ask_repair(run, &resp.content, &violation, refusal_allowed)
            }
            Err(Violation { message: violation, .. }) => {
                let e = Error::new(
                    Code::Contract,
                    format!("the model's answer broke the Ask contract twice; last problem: {violation}"),
                );
                Err(self.fail_invocation(&run.invocation, e))
            }
        }
    }

    /// The one repair: the question again, the previous answer, and what was wrong with it.
    /// With `refusal_allowed` false the repair's contract has no refusal (the question is
    /// answerable from the schema).
    fn ask_repair(
        &self,
        mut run: AskRun,
        answer: &str,
        violation: &str,
        refusal_allowed: bool,
    ) -> Result<AskStep> {
        let mut parts = match &run.reading {
            Some(r) => {
                let objects =
                    self.ask_objects(&run.grounding.projection, &run.invocation.capability.settings);
                choice::choice_parts(&run.grounding.projection, &objects, &run.question, r, &run.learned)
            }
            None => ask_parts(
                &run.grounding,
                &run.learned,
                &self.today().to_string(),
                &run.question,
                run.dates.as_deref(),
                run.terms.as_deref(),
            ),
        };
        parts.push(Part::Untrusted { label: "your previous answer".into(), content: answer.to_string() });
        parts.push(Part::Request(if run.reading.is_some() {
                format!("Your previous answer was rejected: {violation}\nAnswer again with a corrected JSON choice.")
            } else if refusal_allowed {
                format!("Your previous answer was rejected: {violation}\nAnswer again with a corrected JSON plan, or with a refusal if the schema cannot answer the question.")
            } else {
                format!("Your previous answer was rejected: {violation}\nAnswer again with a corrected JSON plan.")
            }));
        if let (Some(r), false) = (&run.reading, refusal_allowed) {
            // The repair of a contradicted refusal may not refuse again.
            let objects = self.ask_objects(&run.grounding.projection, &run.invocation.capability.settings);
            let schema = choice::choice_schema(&run.grounding.projection, &objects, r, run.keys, false);
            run.request.schema = Some(("ask_plan".into(), schema.clone()));
            run.schema = schema;
        }
        if run.reading.is_none() && (!refusal_allowed || !run.unasked.is_empty()) {
            // The question is answerable from the schema (the model's own plan or the
            // schema says so): the repair may not turn into a refusal. A filter the question
            // does not ask for cannot be written again.
            let objects = self.ask_objects(&run.grounding.projection, &run.invocation.capability.settings);
            let phrases = phrases_of(run.dates.as_deref());
            let schema = output_schema(
                &run.grounding.projection,
                &objects,
                refusal_allowed,
                phrases.as_deref(),
                run.terms.as_deref(),
                &run.unasked,
                &run.values_said,
            );
            run.request.schema = Some(("ask_plan".into(), schema.clone()));
            run.schema = schema;
        }
        let estimate = crate::ai::projection::estimate_prompt_tokens(&Prompt {
            parts: parts.clone(),
            ..run.request.prompt.clone()
        });
        if let Err(e) = self.preflight_repair(&run.invocation, estimate) {
            return Err(self.fail_invocation(&run.invocation, e));
        }
        run.request.prompt.parts = parts;
        run.repaired = true;
        Ok(Step::Call(Box::new(run)))
    }

    /// Parse and check the model's text; problems are returned as the exact message the repair
    /// attempt carries.
    fn constrain(&self, run: &AskRun, content: &str) -> std::result::Result<Constrained, Violation> {
        if run.reading.is_some() {
            return self.choose(run, content);
        }
        let doc: Value = serde_json::from_str(content.trim())
            .map_err(|e| format!("the answer is not valid JSON ({e})"))?;
        if let Some(r) = doc.get("refusal") {
            let reason = r.get("reason").and_then(Value::as_str).unwrap_or("no reason given");
            if doc.as_object().is_some_and(|m| m.len() == 1) {
                // A refusal must name something the grounding lacks; one that names a field,
                // object or value the schema has (or a date, a number) is contradicted.
                if !run.repaired {
                    if let Some(found) = refusal_contradiction(&run.grounding.projection, reason) {
                        return Err(Violation::answerable(format!(
                            "the refusal \"{reason}\" is contradicted: {found}. Names, dates and numbers are filter values. Answer with a plan."
                        )));
                    }
                }
                return Ok(Constrained::Refusal(reason.chars().take(200).collect()));
            }
        }
        let plan: PlanOut = serde_json::from_value(doc.clone())
            .map_err(|e| format!("the answer does not have the plan's shape ({e})"))?;
        let p = &run.grounding.projection;
        let allowed = self.ask_objects(p, &run.invocation.capability.settings);
        if !allowed.contains(&plan.object) {
            return Err(Violation::from(format!(
                "`{}` is not an object you may query; use one of: {}",
                plan.object,
                allowed.join(", ")
            )));
        }
        if !plan.terms.is_empty() {
            let offered: Vec<String> = run
                .terms
                .iter()
                .flatten()
                .filter(|t| t.object == plan.object)
                .map(|t| t.key.clone())
                .collect();
            if let Some(t) = plan.terms.iter().find(|t| !offered.contains(t)) {
                return Err(Violation::from(format!(
                    "`{t}` is not a term of {}; terms: {}",
                    plan.object,
                    if offered.is_empty() { "none".to_string() } else { offered.join(", ") }
                )));
            }
        }
        for (i, f) in plan.filters.iter().enumerate() {
            let Some((_, field)) = p.field(&plan.object, &f.field) else {
                let known: Vec<String> = p.paths(&plan.object).into_iter().map(|(k, _)| k).collect();
                return Err(Violation::from(format!(
                    "filters[{i}]: `{}` is not a field of {} you may use; fields: {}",
                    f.field,
                    plan.object,
                    known.join(", ")
                )));
            };
            if f.op == "during" {
                let written = f.value.as_ref().and_then(Value::as_str).unwrap_or_default();
                if !matches!(field.field_type, FieldType::Date | FieldType::Datetime) {
                    return Err(Violation::from(format!(
                        "filters[{i}]: op `during` applies to date fields, not to `{}`",
                        f.field
                    )));
                }
                let Some(dates) = &run.dates else {
                    return Err(Violation::from(format!("filters[{i}]: unknown op `during`")));
                };
                if !dates.iter().any(|d| d.phrase == written) {
                    let listed: Vec<&str> = dates.iter().map(|d| d.phrase.as_str()).collect();
                    return Err(Violation::from(format!(
                        "filters[{i}]: \"{written}\" is not a date the question names; dates: {}",
                        if listed.is_empty() { "none".to_string() } else { listed.join(", ") }
                    )));
                }
                continue;
            }
            if !OPS.contains(&f.op.as_str()) {
                return Err(Violation::from(format!("filters[{i}]: unknown op `{}`", f.op)));
            }
            let (scalar, list) = ops_for(field.field_type);
            let blank = f.op == "is_set" || f.op == "is_blank";
            if !blank && !scalar.contains(&f.op.as_str()) && !list.contains(&f.op.as_str()) {
                return Err(Violation::from(format!(
                    "filters[{i}]: op `{}` does not apply to {} field `{}`",
                    f.op,
                    field.field_type.key(),
                    f.field
                )));
            }
            if field.field_type == FieldType::Picklist && !blank {
                let vals: Vec<&Value> = match &f.value {
                    Some(Value::Array(a)) => a.iter().collect(),
                    Some(v) => vec![v],
                    None => vec![],
                };
                for v in vals {
                    if !field.values.iter().any(|(k, _)| Some(k.as_str()) == v.as_str()) {
                        let active: Vec<&str> = field.values.iter().map(|(k, _)| k.as_str()).collect();
                        return Err(Violation::from(format!(
                            "filters[{i}]: {v} is not an active value of `{}`; values: {}",
                            f.field,
                            active.join(", ")
                        )));
                    }
                }
            }
        }
        for s in &plan.sort {
            if p.field(&plan.object, &s.field).is_none() {
                return Err(Violation::from(format!(
                    "sort: `{}` is not a field of {} you may use",
                    s.field, plan.object
                )));
            }
        }
        let validator = jsonschema::validator_for(&run.schema).map_err(|e| format!("internal: {e}"))?;
        if let Some(e) = validator.iter_errors(&doc).next() {
            return Err(Violation::from(format!(
                "at {}: {e}",
                if e.instance_path().as_str().is_empty() { "/" } else { e.instance_path().as_str() }
            )));
        }
        check_evidence(&run.question, p, &plan).map_err(|u| Violation {
            message: u.message,
            refusal_allowed: false,
            unasked: u.field,
        })?;
        if !run.repaired {
            check_unused_values(&run.question, p, &plan, run.terms.is_some())
                .map_err(Violation::answerable)?;
        }
        // The values written for text-like fields and lookups, for the data check below.
        let written: Vec<Written> = plan
            .filters
            .iter()
            .filter(|f| matches!(f.op.as_str(), "eq" | "in" | "contains"))
            .filter(|f| {
                p.field(&plan.object, &f.field)
                    .is_some_and(|(_, x)| x.field_type.is_textual() || x.field_type == FieldType::Lookup)
            })
            .flat_map(|f| {
                let values: Vec<String> = match &f.value {
                    Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(String::from).collect(),
                    Some(Value::String(v)) => vec![v.clone()],
                    _ => vec![],
                };
                values.into_iter().map(|value| Written { path: f.field.clone(), value })
            })
            .collect();
        let planned =
            self.plan_to_spec(p, plan, run.dates.as_deref()).map_err(|e| Violation::from(e.message))?;
        let (spec, resolutions) = (&planned.spec, &planned.resolutions);
        for r in
            resolutions.iter().filter(|r| r.status == ResolutionStatus::Unmatched && r.object == spec.object)
        {
            let holders: Vec<String> = p
                .paths(&spec.object)
                .into_iter()
                .filter(|(_, f)| {
                    f.values.iter().any(|(v, l)| {
                        normal_text(v) == normal_text(&r.written) || normal_text(l) == normal_text(&r.written)
                    })
                })
                .map(|(k, _)| k)
                .collect();
            if !holders.is_empty() && !holders.contains(&r.field) {
                return Err(Violation::answerable(format!(
                    "no {} has {} \"{}\", but it is a value of the picklist {}; use that field",
                    spec.object,
                    r.field,
                    r.written,
                    holders.join(", ")
                )));
            }
        }
        self.explain(spec).map_err(|e| Violation::from(e.message))?;
        Ok(Constrained::Plan(Box::new(Planned { written, ..planned })))
    }

    fn plan_to_spec(&self, p: &Projection, plan: PlanOut, dates: Option<&[DateRange]>) -> Result<Planned> {
        let mut conditions = vec![];
        let mut resolutions = vec![];
        let mut values = vec![];
        let mut chosen = vec![];
        let mut fields = self.describe_object(&plan.object)?.list_columns;
        // Terms first: each is one condition (a chip), its fields shown as columns.
        let mut terms = vec![];
        for (i, key) in plan.terms.iter().enumerate() {
            if plan.terms[..i].contains(key) {
                continue; // named twice: one condition
            }
            let (_, term, condition) = p
                .terms(&plan.object)
                .into_iter()
                .find(|(k, _, _)| k == key)
                .ok_or_else(|| Error::internal("checked above"))?;
            for path in condition.fields() {
                let shown =
                    p.field(&plan.object, path).is_some_and(|(_, f)| f.field_type != FieldType::Lookup);
                if shown && !fields.iter().any(|f| f == path) {
                    fields.push(path.to_string());
                }
            }
            conditions.push(condition.clone());
            terms.push(TermChoice { key: key.clone(), label: term.label.clone(), condition });
        }
        for f in plan.filters {
            let (owner, field) =
                p.field(&plan.object, &f.field).ok_or_else(|| Error::internal("checked above"))?;
            let op = f.op.as_str();
            let list: Vec<Value> = match &f.value {
                Some(Value::Array(a)) => a.clone(),
                Some(v) => vec![v.clone()],
                None => vec![],
            };
            for v in &list {
                values.push(FieldValue {
                    object: owner.key.clone(),
                    field: field.key.clone(),
                    value: v.as_str().map(String::from).unwrap_or_else(|| v.to_string()),
                });
            }
            if op == "during" {
                // A date phrase the kernel read: its range, first and last day included.
                let range = dates
                    .into_iter()
                    .flatten()
                    .find(|d| Some(d.phrase.as_str()) == f.value.as_ref().and_then(Value::as_str))
                    .ok_or_else(|| Error::internal("checked above"))?;
                // One condition (a chip) for the range: both ends together.
                let mut ends = date_conditions(&f.field, field.field_type, range, self.time_zone());
                conditions.push(match ends.len() {
                    1 => ends.remove(0),
                    _ => Condition::All(crate::metadata::condition::AllOf { all: ends }),
                });
                chosen.push(DateChoice {
                    field: f.field.clone(),
                    phrase: range.phrase.clone(),
                    start: range.start.map(|d| d.to_string()),
                    end: range.end.map(|d| d.to_string()),
                });
                if !fields.contains(&f.field) {
                    fields.push(f.field.clone());
                }
                continue;
            }
            let mut path = f.field.clone();
            let mut value = f.value.clone();
            let resolvable = matches!(op, "eq" | "ne" | "in" | "not_in")
                && (field.field_type.is_textual() || field.field_type == FieldType::Lookup)
                && !list.is_empty();
            if resolvable {
                // Resolve written names against readable records (lookups, name fields) or
                // against stored values (other text fields).
                let mut resolved = vec![];
                for v in list.iter().filter_map(Value::as_str) {
                    let r = if field.field_type == FieldType::Lookup {
                        self.resolve_name(field.target.as_deref().unwrap_or_default(), &path, v)?
                    } else if field.key == owner.name_field {
                        self.resolve_name(&owner.key, &path, v)?
                    } else {
                        self.resolve_text(&plan.object, &path, v)?
                    };
                    resolved.push(r);
                }
                // Records that all bear the very name written are one answer, not a choice.
                for r in resolved.iter_mut().filter(|r| r.status == ResolutionStatus::Ambiguous) {
                    let literal = normal_text(&r.written);
                    if field.field_type != FieldType::Lookup
                        && r.matches.iter().all(|c| normal_text(&c.name) == literal)
                    {
                        r.status = ResolutionStatus::Resolved;
                    }
                }
                let mut out_values: Vec<Value> = vec![];
                for r in &resolved {
                    match r.status {
                        // Resolved: the one match; ambiguous: every candidate (the query is not
                        // run until the user chooses).
                        ResolutionStatus::Resolved | ResolutionStatus::Ambiguous => {
                            out_values.extend(r.matches.iter().map(|c| {
                                Value::String(if field.field_type == FieldType::Lookup {
                                    c.id.clone()
                                } else {
                                    c.name.clone()
                                })
                            }))
                        }
                        ResolutionStatus::Unmatched => out_values.push(Value::String(r.written.clone())),
                    }
                }
                // A parent's name path (`account.name`) becomes the lookup itself.
                if field.field_type != FieldType::Lookup
                    && owner.key != plan.object
                    && field.key == owner.name_field
                {
                    if let Some((lookup, _)) = path.split_once('.') {
                        path = lookup.to_string();
                        out_values = resolved
                            .iter()
                            .flat_map(|r| r.matches.iter().map(|c| Value::String(c.id.clone())))
                            .collect();
                        if out_values.is_empty() {
                            out_values = resolved
                                .iter()
                                .map(|r| Value::String(format!("(no match: {})", r.written)))
                                .collect();
                        }
                    }
                }
                resolutions.extend(
                    resolved
                        .into_iter()
                        .filter(|r| !r.matches.is_empty() || r.status == ResolutionStatus::Unmatched),
                );
                value = Some(match (op, out_values.len()) {
                    ("eq" | "ne", 1) => out_values.remove(0),
                    _ => Value::Array(out_values),
                });
            }
            let op = match (op, &value) {
                ("eq", Some(Value::Array(_))) => "in",
                ("ne", Some(Value::Array(_))) => "not_in",
                (o, _) => o,
            };
            let compare = |op: Op| {
                Condition::Compare(Comparison {
                    field: path.clone(),
                    op,
                    value: value.clone(),
                    other_field: None,
                })
            };
            conditions.push(match op {
                "not_in" => Condition::Not(NotOf { not: Box::new(compare(Op::In)) }),
                o => compare(
                    serde_json::from_value(Value::String(o.into()))
                        .map_err(|e| Error::internal(e.to_string()))?,
                ),
            });
            if !fields.contains(&f.field)
                && p.field(&plan.object, &f.field).is_some_and(|(_, x)| x.field_type != FieldType::Lookup)
            {
                fields.push(f.field.clone());
            }
        }
        let sort: Vec<SortKey> = plan
            .sort
            .into_iter()
            .map(|s| SortKey { field: s.field, direction: s.direction.unwrap_or_default() })
            .collect();
        for s in &sort {
            if !fields.contains(&s.field) {
                fields.push(s.field.clone());
            }
        }
        let spec = QuerySpec {
            object: plan.object,
            fields,
            filters: match conditions.len() {
                0 => None,
                1 => conditions.pop(),
                _ => Some(Condition::All(crate::metadata::condition::AllOf { all: conditions })),
            },
            sort,
            limit: Some(plan.limit.unwrap_or(DEFAULT_LIMIT).min(1000)),
            offset: None,
        };
        Ok(Planned {
            spec,
            resolutions,
            values,
            dates: chosen,
            terms,
            written: vec![],
            read: vec![],
            unused: vec![],
        })
    }
}

/// Why an answer broke the contract: the exact message the repair carries, and whether the
/// repair may refuse (not when the question is known to be answerable from the schema).
struct Violation {
    message: String,
    refusal_allowed: bool,
    /// A filter field the question does not ask for (left out of the repair's contract).
    unasked: Option<String>,
}

impl Violation {
    fn answerable(message: String) -> Violation {
        Violation { message, refusal_allowed: false, unasked: None }
    }
}

impl From<String> for Violation {
    fn from(message: String) -> Violation {
        Violation { message, refusal_allowed: true, unasked: None }
    }
}

enum Constrained {
    Plan(Box<Planned>),
    Refusal(String),
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
    type Run = Box<AskRun>;
    type Answer = AskAnswer;

    fn authorize(&mut self, session: &Session<'_>) -> Result<()> {
        session.ask_authorize(&self.question)
    }
    fn begin(&mut self, session: &Session<'_>, model: ModelChoice) -> Result<Self::Run> {
        Ok(Box::new(session.ask_begin(&self.question, model)?))
    }
    fn request(run: &Self::Run) -> &ChatRequest {
        &run.request
    }
    fn invocation(run: &Self::Run) -> &Invocation {
        &run.invocation
    }
    fn invocation_mut(run: &mut Self::Run) -> &mut Invocation {
        &mut run.invocation
    }
    fn advance(
        &mut self,
        session: &Session<'_>,
        run: Self::Run,
        response: ChatResponse,
    ) -> Result<Step<Self::Run, AskAnswer>> {
        Ok(match session.ask_advance(*run, response)? {
            Step::Done(answer) => Step::Done(*answer),
            Step::Call(next) => Step::Call(next),
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
