//! The assistant: a conversation whose steps are the kernel's capabilities and tools. The model
//! points and phrases; the kernel computes, writes and checks.
//!
//! - **One action per step, closed at decode time.** Each step the model chooses one action —
//!   ask (a question the Ask capability turns into a query spec and runs), read or summarize a
//!   record, search the notes, propose an update or a new record, extract the attached
//!   document, or reply — under a JSON Schema built for this request from the user's projection
//!   and the conversation's state: the objects, the fields the user may edit (a picklist's
//!   active values as an enum), the result sets and the record ids there are to point at. A
//!   small model cannot name an unknown action or a hidden field; the kernel checks the action
//!   again (one repair carrying the exact error, then `contract`).
//! - **Pointing, not copying.** Earlier results are named result sets (`R1`, `R2`…) the kernel
//!   keeps; "the biggest one" is `{"set": "R1", "pick": "largest", "by": "amount"}` (largest or
//!   smallest by an amount or a number, oldest or newest by a date), which the kernel resolves
//!   by reading the records; "it" is the conversation's focus record.
//! - **Every step runs on the user's session through the pipeline**: the step's choice is one
//!   `assistant` invocation, and what it runs (Ask, Summarize, Extract) is that capability's own
//!   invocation with its checks, budget and trace — all under the turn's one correlation.
//!   Writes are proposals; nothing is written to records.
//! - **Conversations are the user's own**, stored with the steps each turn took (result sets by
//!   spec and ids; rows are read again through the session when shown), and deletable.

use crate::ai::ask::{self, Ask};
use crate::ai::extract::Extract;
use crate::ai::pipeline::drive::{drive, Capability, Correlated, Run, Sessions, Step};
use crate::ai::pipeline::{
    Autonomy, CapabilitySettings, CapabilitySpec, ModelChoice, Outcome, RateLimits, ShippedVersion,
};
use crate::ai::projection::Projection;
use crate::ai::provider::{Cancel, ChatResponse, Part, Prompt};
use crate::ai::summarize::Summarize;
use crate::ai::tools::calls::{ToolRequest, ToolStep};
use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::logging::ms_since;
use crate::metadata::definition::{FieldLevel, FieldType};
use crate::records::access::Session;
use crate::records::query::{QueryResult, QuerySpec};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::time::Instant;
use ts_rs::TS;

mod conversations;
mod imperative;
mod prompts;
mod scope;

use prompts::*;
pub use prompts::{DEFAULT_STEPS, INSTRUCTIONS_V1, INSTRUCTIONS_V2, INSTRUCTIONS_V3};
use scope::*;

pub const CAPABILITY: &str = "assistant";

pub const SPEC: CapabilitySpec = CapabilitySpec {
    capability: CAPABILITY,
    purpose: "the assistant",
    prompt: "assistant",
    versions: &[
        ShippedVersion {
            instructions: INSTRUCTIONS_V1,
            examples: examples_v1,
            contract: CONTRACT_V1,
            variants: crate::ai::pipeline::one_language,
        },
        ShippedVersion {
            instructions: INSTRUCTIONS_V2,
            examples: examples_v1,
            contract: CONTRACT_V1,
            variants: crate::ai::pipeline::one_language,
        },
        ShippedVersion {
            instructions: INSTRUCTIONS_V3,
            examples: examples_v1,
            contract: CONTRACT_V1,
            variants: crate::ai::pipeline::one_language,
        },
    ],
    inputs: r#"{"message": "string", "conversation": "earlier turns and their results", "state": "result sets, focus, screen"}"#,
    settings: default_settings,
    autonomy: Autonomy::Propose,
};

/// A result set a step made: what was asked, and the records it returned (by id, in order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResultSet {
    /// `R1`, `R2`… in the conversation.
    pub name: String,
    pub object: String,
    pub question: String,
    pub spec: QuerySpec,
    pub ids: Vec<String>,
    /// How Ask read the question, so the set's chips read as Ask's do: the records a name
    /// resolved to, the date phrases and the workspace's terms.
    #[serde(default)]
    pub resolutions: Vec<crate::records::names::Resolution>,
    #[serde(default)]
    pub dates: Vec<ask::DateChoice>,
    #[serde(default)]
    pub terms: Vec<ask::TermChoice>,
    /// Ask's trace for the question (a correction of the spec is learned from it).
    #[serde(default)]
    #[ts(optional)]
    pub trace_id: Option<String>,
    /// The person changed the spec after Ask wrote it ([`Session::revise_result_set`]).
    #[serde(default)]
    pub revised: bool,
}

/// One record a step acted on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RecordRef {
    pub object: String,
    pub id: String,
    pub name: String,
}

/// What a step did, as the conversation shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum StepOutcome {
    /// Ask's answer: a result set, its rows read through the session when shown.
    #[serde(rename_all = "camelCase")]
    Table {
        set: Box<ResultSet>,
        #[serde(default, skip_serializing_if = "Option::is_none", skip_deserializing)]
        #[ts(optional)]
        rows: Option<Box<QueryResult>>,
    },
    /// A checked summary: sentences with citations (as Summarize returns them).
    #[serde(rename_all = "camelCase")]
    Summary {
        record: RecordRef,
        /// Summarize's sentences, each with its citations.
        sentences: Value,
        #[ts(optional)]
        insufficient: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Record { record: RecordRef, fields: Value },
    #[serde(rename_all = "camelCase")]
    Notes { hits: Value },
    /// A proposal in the inbox.
    #[serde(rename_all = "camelCase")]
    Proposal {
        proposal: String,
        object: String,
        #[ts(optional)]
        record: Option<RecordRef>,
        changes: Vec<Change>,
        /// The currency of the record's amounts before and after (`None`: the workspace's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        currency_before: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        currency_after: Option<String>,
    },
    /// A tool from outside: its call (none when refused before it was recorded) and what it
    /// came to — an output, a fault, or neither while the call waits for a person's approval
    /// (the turn pauses there; `resume_turn` goes on once it is decided).
    #[serde(rename_all = "camelCase")]
    Tool {
        tool: String,
        #[ts(optional)]
        call: Option<Box<crate::ai::tools::calls::ToolCallView>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "unknown")]
        output: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        fault: Option<crate::ai::tools::calls::ToolFault>,
    },
    /// The model's own words (it cannot help, or asks what is meant).
    Reply { text: String },
    /// The step failed; the turn stops here. `record` is the record it pointed at, if it
    /// pointed at one: the conversation is about it all the same ("mark it …" after a refused
    /// summary means that record).
    #[serde(rename_all = "camelCase")]
    Failed {
        error: Error,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        record: Option<RecordRef>,
    },
}

/// A field a proposal changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Change {
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// One step of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TurnStep {
    /// The action as the model chose it (checked).
    pub action: Value,
    pub outcome: StepOutcome,
    /// The step's choice and its run, in milliseconds.
    pub ms: f64,
    /// What makes this step's action the same as another's (a turn does not repeat itself).
    #[serde(skip)]
    #[ts(skip)]
    pub signature: Option<String>,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub seq: i64,
    pub role: String,
    pub text: String,
    pub steps: Vec<TurnStep>,
    #[ts(optional)]
    pub correlation_id: Option<String>,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    pub id: String,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
    pub messages: Vec<Message>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub updated_at: String,
}

/// What the person is looking at while they write: a record page, or a list of an object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ScreenContext {
    pub object: String,
    #[serde(default)]
    #[ts(optional)]
    pub id: Option<String>,
}

/// One message to the assistant.
#[derive(Debug, Clone, Default)]
pub struct TurnRequest {
    /// `None` starts a conversation.
    pub conversation: Option<String>,
    pub text: String,
    pub context: Option<ScreenContext>,
    /// A document dropped on the conversation (for `extract`).
    pub document: Option<crate::ingest::Document>,
}

/// A turn's answer.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub conversation: String,
    pub correlation_id: String,
    pub steps: Vec<TurnStep>,
    pub total_ms: f64,
}

/// What the caller hears during a turn.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum TurnProgress {
    /// A step starts choosing its action.
    Choosing { step: u32 },
    /// A step runs its action.
    Running { step: u32, action: String },
    /// Text the running capability writes as it streams (a summary's draft).
    Text { delta: String },
}

/// One step's choice of action, as the model-call driver runs it.
struct Choose<'a> {
    scope: &'a Scope,
    message: &'a str,
    steps: &'a [TurnStep],
    chosen: Option<(Action, Value, Option<RecordRef>)>,
}

struct ChooseState {
    schema: Value,
    repaired: bool,
}

impl Capability for Choose<'_> {
    const KEY: &'static str = CAPABILITY;
    type State = ChooseState;
    type Answer = ();

    fn begin(&mut self, session: &Session<'_>, model: ModelChoice) -> Result<Run<ChooseState>> {
        let binding = session.capability(CAPABILITY)?;
        let prompt = session.active_prompt(&binding.prompt)?;
        let parts = vec![
            Part::Untrusted {
                label: "the conversation and what you can point at".into(),
                content: self.scope.describe(self.steps),
            },
            Part::Request(self.message.to_string()),
        ];
        let chat_prompt = Prompt {
            instructions: prompt.instructions.clone(),
            examples: crate::ai::pipeline::example_turns(&prompt.examples),
            parts,
        };
        let estimate = crate::ai::projection::estimate_prompt_tokens(&chat_prompt);
        let inv = session.begin_invocation(&binding, prompt, model, self.message, estimate)?;
        let schema = self.scope.schema();
        let request = inv.chat_request(chat_prompt, "action".into(), schema.clone());
        Ok(Run { invocation: inv, request, state: ChooseState { schema, repaired: false } })
    }
    fn advance(
        &mut self,
        session: &Session<'_>,
        run: &mut Run<ChooseState>,
        resp: ChatResponse,
    ) -> Result<Step<()>> {
        match checked_action(&run.state.schema, &resp.content, self.scope, self.message, session) {
            Ok((action, value, target)) => {
                session
                    .finish_invocation(&run.invocation, Outcome::Answered { result: &value, values: &[] })?;
                self.chosen = Some((action, value, target));
                Ok(Step::Done(()))
            }
            Err(problem) if !run.state.repaired => {
                run.state.repaired = true;
                run.request
                    .prompt
                    .parts
                    .push(Part::Request(format!("That action was refused: {problem}. Choose again.")));
                Ok(Step::Call)
            }
            Err(problem) => {
                Err(Error::new(Code::Contract, format!("the assistant's action was refused: {problem}")))
            }
        }
    }
}

/// Parse and check a step's answer: the request's schema, then the kernel's checks.
pub fn check_action_json(schema: &Value, content: &str) -> std::result::Result<Value, String> {
    let value: Value =
        crate::ai::contract::parse_answer(content).map_err(|e| format!("the answer is not JSON ({e})"))?;
    let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
    if !validator.is_valid(&value) {
        let action = value.get("action").and_then(Value::as_str).unwrap_or("?");
        let known = schema["anyOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["properties"]["action"]["const"].as_str())
            .collect::<Vec<_>>();
        if !known.contains(&action) {
            return Err(format!(
                "there is no action `{action}` here (one of: {})",
                first_of_each(known).join(", ")
            ));
        }
        // The branch of this action (and object) says what is wrong, in its own terms.
        let object = value.get("object").and_then(Value::as_str);
        let branch = schema["anyOf"].as_array().into_iter().flatten().find(|b| {
            b["properties"]["action"]["const"].as_str() == Some(action)
                && object.is_none_or(|o| b["properties"]["object"]["const"].as_str().is_none_or(|c| c == o))
        });
        let problem = branch
            .and_then(|b| jsonschema::validator_for(b).ok())
            .map_or_else(|| first_error(&validator, &value), |v| first_error(&v, &value));
        return Err(format!("the {action} action does not fit what may be named here: {problem}"));
    }
    Ok(value)
}

/// `v` with each value once, where it first appears.
fn first_of_each<T: PartialEq + Clone>(mut v: Vec<T>) -> Vec<T> {
    let mut seen = vec![];
    v.retain(|x| {
        let new = !seen.contains(x);
        seen.push(x.clone());
        new
    });
    v
}

fn first_error(validator: &jsonschema::Validator, value: &Value) -> String {
    validator
        .iter_errors(value)
        .next()
        .map_or_else(String::new, |e| format!("at {}: {e}", e.instance_path().as_str()))
}

fn checked_action(
    schema: &Value,
    content: &str,
    scope: &Scope,
    message: &str,
    session: &Session<'_>,
) -> std::result::Result<(Action, Value, Option<RecordRef>), String> {
    let value = check_action_json(schema, content)?;
    let action: Action =
        serde_json::from_value(value.clone()).map_err(|e| format!("the action does not parse ({e})"))?;
    // A small model sometimes answers a request by writing it back as a "reply": that says
    // nothing to the person, so it is refused like any other wrong answer.
    if let Action::Reply { text } = &action {
        if words_of(text) == words_of(message) {
            return Err(
                "the reply only repeats the message: choose the action it asks for, or say why you cannot"
                    .into(),
            );
        }
    }
    let target = scope.check(session, &action)?;
    Ok((action, value, target))
}

/// A text's words, lowercased, without its punctuation.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// Take one turn of a conversation as the session's user: the message is stored, each step
/// chooses and runs one action (at most the binding's `max_steps`), and the steps are stored
/// with the reply. Everything the turn runs joins one correlation.
pub async fn take_turn(
    sessions: &impl Sessions,
    request: TurnRequest,
    cancel: &Cancel,
    progress: &mut (dyn FnMut(TurnProgress) + Send),
) -> Result<Turn> {
    let started = Instant::now();
    let text = request.text.trim().to_string();
    if text.is_empty() {
        return Err(Error::on_field(Code::InvalidValue, "text", "write a message"));
    }
    let (conversation, mut scope, max_steps, correlation) = sessions.with(|s| {
        let binding = s.capability(CAPABILITY)?;
        s.require(&binding.required_permission)?;
        let conversation = match &request.conversation {
            Some(id) => {
                s.conversation_owned(id)?;
                id.clone()
            }
            None => s.start_conversation(&text)?,
        };
        let scope = s.assistant_scope(Some(&conversation), &request)?;
        let correlation = s.correlation_id();
        s.add_message(&conversation, "user", &text, &[], Some(&correlation))?;
        Ok((
            conversation,
            scope,
            binding.settings.max_steps.unwrap_or(DEFAULT_STEPS).clamp(1, 10),
            correlation,
        ))
    })?;
    let correlated = Correlated { sessions, correlation: correlation.clone() };
    let mut steps: Vec<TurnStep> = vec![];
    let turn =
        TurnRun { text: &text, document: request.document.as_ref(), correlation: &correlation, max_steps };
    turn.run_steps(&correlated, &mut scope, &mut steps, cancel, progress).await;
    let stored: Vec<TurnStep> = steps.iter().cloned().map(without_rows).collect();
    let reply = steps.iter().map(|s| describe(&s.outcome)).collect::<Vec<_>>().join("; ");
    correlated.with(|s| s.add_message(&conversation, "assistant", &reply, &stored, Some(&correlation)))?;
    tracing::info!(steps = steps.len(), total_ms = ms_since(started).round(), "an assistant turn finished");
    Ok(Turn { conversation, correlation_id: correlation, steps, total_ms: ms_since(started) })
}

/// Go on with a turn that paused on a tool call waiting for a person's approval, once it is
/// decided: the call is taken to its end under its operation key (run again only if it was
/// approved and has not run), its outcome replaces the waiting step, and the turn takes its
/// remaining steps. A call still waiting is a `conflict`.
pub async fn resume_turn(
    sessions: &impl Sessions,
    conversation: &str,
    cancel: &Cancel,
    progress: &mut (dyn FnMut(TurnProgress) + Send),
) -> Result<Turn> {
    let started = Instant::now();
    let paused = sessions.with(|s| {
        let binding = s.capability(CAPABILITY)?;
        s.require(&binding.required_permission)?;
        s.conversation_owned(conversation)?;
        let paused = s.paused_turn(conversation)?;
        let request = TurnRequest {
            conversation: Some(conversation.into()),
            text: paused.text.clone(),
            ..TurnRequest::default()
        };
        let mut scope = s.assistant_scope(None, &request)?;
        scope.state = s.conversation_state_before(conversation, paused.seq)?;
        Ok((paused, scope, binding.settings.max_steps.unwrap_or(DEFAULT_STEPS).clamp(1, 10)))
    })?;
    let (paused, mut scope, max_steps) = paused;
    let correlated = Correlated { sessions, correlation: paused.correlation.clone() };
    // Stored steps lose their signatures: given back, so the turn does not repeat one of them
    // (a denied call asked for again).
    let mut steps: Vec<TurnStep> = paused
        .steps
        .into_iter()
        .map(|mut s| {
            s.signature =
                serde_json::from_value::<Action>(s.action.clone()).ok().map(|a| a.signature(&s.action));
            s
        })
        .collect();
    let waiting = steps.pop().ok_or_else(|| Error::internal("a paused turn without its step"))?;
    let step_started = Instant::now();
    let action: Action = serde_json::from_value(waiting.action.clone())
        .map_err(|_| Error::internal("a paused turn's step is not a tool call"))?;
    let Action::UseTool { tool, input } = &action else {
        return Err(Error::internal("a paused turn's step is not a tool call"));
    };
    let request = ToolRequest {
        tool: tool.clone(),
        input: Value::Object(input.clone()),
        capability: CAPABILITY.into(),
        run: paused.correlation.clone(),
        step: steps.len() as u32 + 1,
    };
    let step = correlated.with(|s| s.request_tool_call(&request))?;
    if let ToolStep::Waiting(call) = &step {
        return Err(Error::new(
            Code::Conflict,
            format!("the call of {} still waits for a person's decision", call.tool),
        ));
    }
    let outcome = tool_outcome(tool, crate::ai::tools::calls::carry_out(&correlated, step).await?);
    for done in &steps {
        scope.state.apply(done);
    }
    let step = TurnStep { outcome, ms: waiting.ms + ms_since(step_started), ..waiting };
    scope.state.apply(&step);
    let ends = ends_turn(&action, &step.outcome);
    steps.push(step);
    // A denied or expired call, or a failure, goes back to the model: it may say so.
    if !ends {
        let turn =
            TurnRun { text: &paused.text, document: None, correlation: &paused.correlation, max_steps };
        turn.run_steps(&correlated, &mut scope, &mut steps, cancel, progress).await;
    }
    let stored: Vec<TurnStep> = steps.iter().cloned().map(without_rows).collect();
    let reply = steps.iter().map(|s| describe(&s.outcome)).collect::<Vec<_>>().join("; ");
    correlated.with(|s| s.update_message(conversation, paused.seq, &reply, &stored))?;
    tracing::info!(
        steps = steps.len(),
        total_ms = ms_since(started).round(),
        "a paused assistant turn went on"
    );
    Ok(Turn {
        conversation: conversation.into(),
        correlation_id: paused.correlation,
        steps,
        total_ms: ms_since(started),
    })
}

/// A turn as it runs: its message, the document dropped with it, its correlation (the run of
/// its tool calls' operation keys) and its step budget.
struct TurnRun<'a> {
    text: &'a str,
    document: Option<&'a crate::ingest::Document>,
    correlation: &'a str,
    max_steps: u32,
}

impl TurnRun<'_> {
    /// Choose and run steps after those taken, until the message is answered, a step fails,
    /// a tool call waits for a person, or the budget is spent.
    async fn run_steps(
        &self,
        correlated: &impl Sessions,
        scope: &mut Scope,
        steps: &mut Vec<TurnStep>,
        cancel: &Cancel,
        progress: &mut (dyn FnMut(TurnProgress) + Send),
    ) {
        for n in steps.len() as u32 + 1..=self.max_steps {
            let step_started = Instant::now();
            progress(TurnProgress::Choosing { step: n });
            // A change said in full is read by the kernel; the model chooses the rest.
            let read = match steps.is_empty() {
                true => correlated.with(|s| {
                    Ok(imperative::read_update(s, scope, self.text).and_then(|v| {
                        checked_action(&scope.schema(), &v.to_string(), scope, self.text, s).ok()
                    }))
                }),
                false => Ok(None),
            };
            let chosen = match read {
                Ok(Some(read)) => Ok(Some(read)),
                Ok(None) => {
                    let mut choose = Choose { scope, message: self.text, steps, chosen: None };
                    let chosen = drive(correlated, &mut choose, None, cancel, &mut |_| {}).await;
                    chosen.map(|()| choose.chosen.take())
                }
                Err(e) => Err(e),
            };
            let (action, value, target) = match chosen {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(error) => {
                    steps.push(TurnStep {
                        action: Value::Null,
                        outcome: StepOutcome::Failed { error, record: None },
                        ms: ms_since(step_started),
                        signature: None,
                    });
                    break;
                }
            };
            // The same action again would show the same result again: the message is answered.
            let signature = action.signature(&value);
            if steps.iter().any(|s| s.signature.as_deref() == Some(signature.as_str())) {
                break;
            }
            progress(TurnProgress::Running { step: n, action: action.name().into() });
            let run = RunContext { scope, document: self.document, correlation: self.correlation, step: n };
            let outcome = run_action(correlated, &run, &action, target.clone(), cancel, progress)
                .await
                .unwrap_or_else(|error| StepOutcome::Failed { error, record: target });
            let step =
                TurnStep { action: value, outcome, ms: ms_since(step_started), signature: Some(signature) };
            scope.state.apply(&step);
            let stop = ends_turn(&action, &step.outcome);
            steps.push(step);
            if stop || cancel.is_cancelled() {
                break;
            }
        }
    }
}

/// What a step's action runs with besides the action.
struct RunContext<'a> {
    scope: &'a Scope,
    document: Option<&'a crate::ingest::Document>,
    correlation: &'a str,
    step: u32,
}

/// A tool call's step as the conversation keeps it.
fn tool_outcome(tool: &str, step: ToolStep) -> StepOutcome {
    match step {
        ToolStep::Waiting(call) => {
            StepOutcome::Tool { tool: tool.into(), call: Some(Box::new(call)), output: None, fault: None }
        }
        ToolStep::Done { call, result } => {
            let (output, fault) = match result {
                Ok(out) => (Some(out), None),
                Err(f) => (None, Some(f)),
            };
            StepOutcome::Tool { tool: tool.into(), call: call.map(Box::new), output, fault }
        }
        ToolStep::Run(prepared) => StepOutcome::Failed {
            error: Error::internal(format!("the call {} was not carried out", prepared.call_id)),
            record: None,
        },
    }
}

/// The question an `ask` writes, up to its question mark (a small model tends to go on:
/// "Please provide …"; Ask reads the question, not a request about how to show it).
fn question_of(written: &str) -> String {
    match written.find('?') {
        Some(end) => written[..=end].trim().to_string(),
        None => written.trim().to_string(),
    }
}

/// A step as stored: a table's rows are not kept (they are read again when shown).
fn without_rows(mut step: TurnStep) -> TurnStep {
    if let StepOutcome::Table { rows, .. } = &mut step.outcome {
        *rows = None;
    }
    step
}

async fn run_action(
    sessions: &impl Sessions,
    run: &RunContext<'_>,
    action: &Action,
    target: Option<RecordRef>,
    cancel: &Cancel,
    progress: &mut (dyn FnMut(TurnProgress) + Send),
) -> Result<StepOutcome> {
    let (scope, document) = (run.scope, run.document);
    let target = || target.clone().ok_or_else(|| Error::internal("a checked action without its record"));
    Ok(match action {
        Action::Ask { question, .. } => {
            let question = question_of(question);
            let mut ask = Ask { question: question.clone() };
            let answer = drive(sessions, &mut ask, None, cancel, &mut |_| {}).await?;
            // A question with words Ask could not place is not answered with a table.
            if let Some(c) = &answer.clarification {
                return Err(Error::new(Code::GroundingInsufficient, c.message.clone()));
            }
            let Some(result) = answer.result else {
                return Err(Error::new(
                    Code::InvalidValue,
                    "the question names something that matches several records; ask it in the Ask bar to choose",
                ));
            };
            let set = ResultSet {
                // The state holds every set so far, this turn's included.
                name: format!("R{}", scope.state.sets.len() + 1),
                object: answer.spec.object.clone(),
                question,
                spec: answer.spec.clone(),
                ids: ask::ids(&result),
                resolutions: answer.resolutions,
                dates: answer.dates,
                terms: answer.terms,
                trace_id: Some(answer.trace_id),
                revised: false,
            };
            StepOutcome::Table { set: Box::new(set), rows: Some(Box::new(result)) }
        }
        Action::Summarize { .. } => {
            let record = target()?;
            let mut summarize = Summarize::new(&record.object, &record.id);
            // Its draft streams to the caller as the model writes it (what is kept is checked).
            let mut draft = |p: crate::ai::pipeline::drive::Progress<'_>| {
                if let crate::ai::pipeline::drive::Progress::Text(delta) = p {
                    progress(TurnProgress::Text { delta: delta.to_string() });
                }
            };
            let answer = drive(sessions, &mut summarize, None, cancel, &mut draft).await?;
            StepOutcome::Summary {
                record,
                sentences: serde_json::to_value(&answer.sentences)
                    .map_err(|e| Error::internal(e.to_string()))?,
                insufficient: answer.insufficient,
            }
        }
        Action::Read { .. } => {
            let record = target()?;
            let read = sessions.with(|s| {
                crate::ai::tools::run_tool(
                    s,
                    &crate::ai::tools::ToolCall::ReadRecord {
                        object: record.object.clone(),
                        id: record.id.clone(),
                    },
                )
                .map_err(|f| Error::new(Code::InvalidValue, f.message))
            })?;
            StepOutcome::Record { record, fields: read["fields"].clone() }
        }
        Action::SearchNotes { text, .. } => {
            let hits = sessions.with(|s| s.search_corpus(text, 5))?;
            StepOutcome::Notes {
                hits: serde_json::to_value(hits).map_err(|e| Error::internal(e.to_string()))?,
            }
        }
        Action::ProposeUpdate { object, changes, .. } => {
            let record = target()?;
            let proposal = sessions.with(|s| propose(s, object, Some(record.id.clone()), changes))?;
            proposal_outcome(sessions.with(|s| s.proposal_currencies(&proposal))?, proposal, Some(record))
        }
        Action::ProposeCreate { object, values, .. } => {
            let proposal = sessions.with(|s| propose(s, object, None, values))?;
            proposal_outcome(sessions.with(|s| s.proposal_currencies(&proposal))?, proposal, None)
        }
        Action::Extract { object, .. } => {
            let document =
                document.ok_or_else(|| Error::new(Code::InvalidValue, "no document is attached"))?;
            let mut extract = Extract { document: document.clone(), object: object.clone(), record: None };
            let answer = drive(sessions, &mut extract, None, cancel, &mut |_| {}).await?;
            let currencies = sessions.with(|s| s.proposal_currencies(&answer.proposal))?;
            proposal_outcome(currencies, answer.proposal, None)
        }
        Action::UseTool { tool, input, .. } => {
            let request = ToolRequest {
                tool: tool.clone(),
                input: Value::Object(input.clone()),
                capability: CAPABILITY.into(),
                run: run.correlation.into(),
                step: run.step,
            };
            let step = sessions.with(|s| s.request_tool_call(&request))?;
            tool_outcome(tool, crate::ai::tools::calls::carry_out(sessions, step).await?)
        }
        Action::Reply { text } => {
            StepOutcome::Reply { text: crate::metadata::value::strip_unsafe_chars(text).into_owned() }
        }
    })
}

fn propose(
    s: &Session<'_>,
    object: &str,
    id: Option<String>,
    values: &Map<String, Value>,
) -> Result<crate::proposals::Proposal> {
    let model = s.model_for(&s.capability(CAPABILITY)?)?.pin.model_id;
    let by = crate::ai::tools::Proposing {
        capability: CAPABILITY,
        model_id: &model,
        rationale: "proposed in a conversation with the assistant",
    };
    crate::ai::tools::propose_values(s, &by, object, id, values)
}

fn proposal_outcome(
    (currency_before, currency_after): (Option<String>, Option<String>),
    p: crate::proposals::Proposal,
    record: Option<RecordRef>,
) -> StepOutcome {
    let changes = p
        .fields
        .iter()
        .map(|f| Change { field: f.field.clone(), before: f.before.clone(), after: f.value.clone() })
        .collect();
    StepOutcome::Proposal {
        proposal: p.id,
        object: p.object,
        record,
        changes,
        currency_before,
        currency_after,
    }
}
