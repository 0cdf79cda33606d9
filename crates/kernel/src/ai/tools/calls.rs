//! Calls of tools from outside, under the tool contract. A call has an **operation key**
//! (`run:step:tool`), unique per logical call and stable across retries: the tool gets it (an
//! HTTP tool's `Idempotency-Key` header), and asking for the same key again continues that
//! call instead of making another. In order:
//!
//! 1. `request_tool_call`: the tool must be allowed to the capability and not blocked; the
//!    input (without `_rationale`, kept as the call's reason) must satisfy the inputs the model
//!    was given. A tool whose policy is `ask` waits for a person (`ToolStep::Waiting`); one that
//!    may run is prepared (`ToolStep::Run`): its request built, its credential read from the
//!    keyring, nothing held on the workspace.
//! 2. `PreparedCall::execute`: the request, sent again with the same key only when a repeat is
//!    safe (the tool only reads, or its target deduplicates on the key, or the answer says
//!    nothing happened: 429, 503); a change whose answer was lost is `outcome_unknown`.
//! 3. `finish_tool_call`: the outcome recorded, the output filtered for the asking user
//!    (`record_data`: this workspace's records and fields they could not read taken out) and
//!    bounded (131,072 characters per string, 262,144 in all) before anything stores it or a
//!    model reads it.
//!
//! A person decides a waiting call (`decide_tool_call`, `ai.approve`) with every argument shown
//! (`approvals`); an undecided one expires (24 hours unless the tool says otherwise) and the
//! model gets `TOOL_APPROVAL_EXPIRED`, a denied one `TOOL_APPROVAL_DENIED` with the comment. A
//! person also says what became of an `outcome_unknown` call (`resolve_tool_call`). Secrets are
//! never stored, logged or put in an output; arguments and outputs are not logged either.

use crate::ai::provider::Secret;
use crate::ai::secrets::{self, SecretRef};
use crate::ai::tools::definition::{Effect, HttpMethod, Policy, ToolDef, ToolKind, DEFAULT_APPROVAL_MINUTES};
use crate::ai::tools::mcp_servers::{call_mcp_tool, McpOutcome, McpServerDef};
use crate::ai::tools::record_data::as_user_sees;
use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::AI_APPROVE;
use crate::records::access::{Session, Sessions};
use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::time::Duration;
use ts_rs::TS;

/// The cap on one string of a tool's output, and on all of it.
pub const MAX_STRING_CHARS: usize = 131_072;
pub const MAX_OUTPUT_CHARS: usize = 262_144;
/// How many times a call is sent at most (the first and two repeats).
const MAX_ATTEMPTS: u32 = 3;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A model's (or a person's) call of a tool.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolRequest {
    pub tool: String,
    /// The input as the model gave it, `_rationale` included.
    pub input: Value,
    /// The capability calling (`assistant`, `ask`, `cli`, …).
    pub capability: String,
    /// The run and its step: with the tool, the call's operation key.
    pub run: String,
    pub step: u32,
}

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CallState {
    Waiting,
    Approved,
    Denied,
    Expired,
    Running,
    Succeeded,
    Failed,
    OutcomeUnknown,
}

impl CallState {
    /// Its name as stored and sent (`outcome_unknown`): its serde name.
    fn as_str(self) -> String {
        name_of(&self)
    }
}

/// A unit enum's serde name (`changes_outside`).
fn name_of(v: &impl Serialize) -> String {
    serde_json::to_value(v).ok().and_then(|n| n.as_str().map(String::from)).unwrap_or_default()
}

/// A unit enum from its serde name.
fn from_name<T: serde::de::DeserializeOwned>(s: String) -> Option<T> {
    serde_json::from_value(Value::String(s)).ok()
}

/// One call as a person (or the model) sees it: every argument in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallView {
    pub id: String,
    pub operation_key: String,
    pub tool: String,
    #[ts(type = "number")]
    pub tool_version: i64,
    pub effect: crate::ai::tools::definition::Effect,
    pub capability: String,
    pub asked_by: String,
    #[ts(type = "unknown")]
    pub arguments: Value,
    /// Why the model made the call (its `_rationale`).
    pub rationale: String,
    pub state: CallState,
    #[ts(optional)]
    pub comment: Option<String>,
    pub created_at: String,
    #[ts(optional)]
    pub expires_at: Option<String>,
    #[ts(optional)]
    pub decided_by: Option<String>,
    pub attempts: u32,
    /// What the model gets back (bounded), once the call ended.
    #[ts(optional, type = "unknown")]
    pub result: Option<Value>,
}

/// What the model gets for a call that did not run or did not succeed: a code and a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolFault {
    /// `TOOL_APPROVAL_DENIED`, `TOOL_APPROVAL_EXPIRED`, `TOOL_AUTHORIZATION_DENIED`,
    /// `invalid_input`, `execution_error`, `outcome_unknown`, …
    pub code: String,
    pub message: String,
    /// A repeat is safe (nothing happened).
    pub retryable: bool,
}

/// The next step of a call.
#[derive(Debug)]
pub enum ToolStep {
    /// Prepared to run: `execute` it, then `finish_tool_call`.
    Run(PreparedCall),
    /// Waiting for a person's decision.
    Waiting(ToolCallView),
    /// Ended: what the model gets (an output, or a fault), and the call (none when it was
    /// refused before being recorded: an unknown or blocked tool, an invalid input).
    Done { call: Option<ToolCallView>, result: std::result::Result<Value, ToolFault> },
}

/// A call ready to send, holding nothing of the workspace.
pub struct PreparedCall {
    pub call_id: String,
    pub operation_key: String,
    effect: Effect,
    target: Target,
}

/// Where a prepared call goes.
enum Target {
    Http(HttpRequest),
    Mcp { server: McpServerDef, digest: String, tool: String, arguments: Map<String, Value> },
}

struct HttpRequest {
    deduplicates: bool,
    method: HttpMethod,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Value>,
    credential: Option<Secret>,
    response_pointer: Option<String>,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall").field("call_id", &self.call_id).finish_non_exhaustive()
    }
}

/// What sending a call came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Executed {
    Succeeded { output: Value, attempts: u32 },
    Failed { fault: ToolFault, attempts: u32 },
    OutcomeUnknown { message: String, attempts: u32 },
}

/// A person's decision on a waiting call.
#[derive(Debug, Clone, PartialEq, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Deny,
}

fn fault(code: &str, message: impl Into<String>, retryable: bool) -> ToolFault {
    ToolFault { code: code.into(), message: message.into(), retryable }
}

fn done(call: Option<ToolCallView>, f: ToolFault) -> ToolStep {
    ToolStep::Done { call, result: Err(f) }
}

const SELECT_CALL: &str =
    "SELECT id, operation_key, tool, tool_version, effect, capability, asked_by, arguments,
    rationale, state, comment, created_at, expires_at, decided_by, attempts, result FROM tool_call";

fn call_row(r: &Row<'_>) -> rusqlite::Result<ToolCallView> {
    let json = |s: Option<String>| s.and_then(|t| serde_json::from_str(&t).ok());
    Ok(ToolCallView {
        id: r.get(0)?,
        operation_key: r.get(1)?,
        tool: r.get(2)?,
        tool_version: r.get(3)?,
        effect: from_name(r.get(4)?).unwrap_or(Effect::ChangesOutside),
        capability: r.get(5)?,
        asked_by: r.get(6)?,
        arguments: json(r.get(7)?).unwrap_or(Value::Null),
        rationale: r.get(8)?,
        state: from_name(r.get(9)?).unwrap_or(CallState::OutcomeUnknown),
        comment: r.get(10)?,
        created_at: r.get(11)?,
        expires_at: r.get(12)?,
        decided_by: r.get(13)?,
        attempts: r.get(14)?,
        result: json(r.get(15)?),
    })
}

impl Session<'_> {
    /// Start (or continue, by its operation key) a call of a defined tool as this user.
    pub fn request_tool_call(&self, req: &ToolRequest) -> Result<ToolStep> {
        let key = format!("{}:{}:{}", req.run, req.step, req.tool);
        if let Some(call) = self.tool_call_by_key(&key)? {
            return self.continue_call(call);
        }
        let tool = match self.tool(&req.tool) {
            Ok(t) => t,
            Err(e) if e.code == Code::NotFound => {
                return Ok(done(None, fault("invalid_input", format!("no tool `{}`", req.tool), false)))
            }
            Err(e) => return Err(e),
        };
        let Some(def) = tool.definition.clone() else {
            return Ok(done(None, fault("invalid_input", format!("`{}` is a kernel tool", req.tool), false)));
        };
        if def.policy == Policy::Block || !def.capabilities.iter().any(|c| c == &req.capability) {
            return Ok(done(
                None,
                fault("TOOL_AUTHORIZATION_DENIED", format!("`{}` may not be called here", req.tool), false),
            ));
        }
        let mut input = req.input.as_object().cloned().unwrap_or_default();
        let rationale = match input.remove("_rationale") {
            Some(Value::String(s)) => s,
            _ => String::new(),
        };
        let arguments = Value::Object(input);
        if let Some(problem) = input_problem(&tool.input_schema, &arguments) {
            return Ok(done(None, fault("invalid_input", problem, false)));
        }
        let now = self.ws.clock.now();
        let waits = def.policy == Policy::Ask;
        let minutes = def.approval_timeout_minutes.unwrap_or(DEFAULT_APPROVAL_MINUTES);
        let expires = waits.then(|| timestamp(now + chrono::Duration::minutes(i64::from(minutes))));
        let id = self.ws.ids.record_id("tool_call");
        let state = if waits { CallState::Waiting } else { CallState::Approved };
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO tool_call (id, operation_key, tool, tool_version, effect, capability, asked_by, arguments,
                rationale, state, created_at, expires_at, attempts)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0)",
            params![
                id,
                key,
                req.tool,
                tool.version.unwrap_or(0),
                name_of(&def.effect),
                req.capability,
                self.user().key,
                arguments.to_string(),
                rationale,
                state.as_str(),
                timestamp(now),
                expires,
            ],
        )?;
        tx.commit()?;
        tracing::info!(tool = %req.tool, waits, "tool call requested");
        let call = self.tool_call(&id)?;
        if waits {
            return Ok(ToolStep::Waiting(call));
        }
        self.prepare(call, &def)
    }

    /// The calls waiting for a decision that this user may make (`ai.approve`), oldest first;
    /// those past their time are expired first.
    pub fn approvals(&self) -> Result<Vec<ToolCallView>> {
        self.require(AI_APPROVE)?;
        self.expire_calls()?;
        let mut stmt = self
            .ws
            .conn()
            .prepare(&format!("{SELECT_CALL} WHERE state = 'waiting' ORDER BY created_at, id"))?;
        let calls = stmt.query_map([], call_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(calls)
    }

    /// The calls whose outcome is unknown (a change whose answer was lost), oldest first, for a
    /// person who may approve to say what became of them (`resolve_tool_call`).
    pub fn calls_to_resolve(&self) -> Result<Vec<ToolCallView>> {
        self.require(AI_APPROVE)?;
        let mut stmt = self
            .ws
            .conn()
            .prepare(&format!("{SELECT_CALL} WHERE state = 'outcome_unknown' ORDER BY created_at, id"))?;
        let calls = stmt.query_map([], call_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(calls)
    }

    /// One call by id (its asker, or a user who may approve).
    pub fn tool_call(&self, id: &str) -> Result<ToolCallView> {
        let call = self
            .ws
            .conn()
            .query_row(&format!("{SELECT_CALL} WHERE id = ?1"), [id], call_row)
            .optional()?
            .ok_or_else(|| Error::new(Code::NotFound, format!("no tool call `{id}`")))?;
        if call.asked_by != self.user().key && self.require(AI_APPROVE).is_err() {
            return Err(Error::new(Code::NotFound, format!("no tool call `{id}`")));
        }
        Ok(call)
    }

    /// Approve or deny a waiting call (`ai.approve`). Approved, it is prepared to run; denied or
    /// past its time, it ends with what the model gets.
    pub fn decide_tool_call(&self, id: &str, decision: Decision, comment: Option<&str>) -> Result<ToolStep> {
        self.require(AI_APPROVE)?;
        self.expire_calls()?;
        let call = self.tool_call(id)?;
        if call.state != CallState::Waiting {
            return Err(Error::new(
                Code::Conflict,
                format!("the call `{id}` is {} and no longer waits for a decision", call.state.as_str()),
            ));
        }
        let state = match decision {
            Decision::Approve => CallState::Approved,
            Decision::Deny => CallState::Denied,
        };
        let tx = self.begin_write()?;
        let n = tx.execute(
            "UPDATE tool_call SET state = ?2, comment = ?3, decided_by = ?4, decided_at = ?5 WHERE id = ?1 AND state = 'waiting'",
            params![id, state.as_str(), comment, self.user().key, timestamp(self.ws.clock.now())],
        )?;
        if n == 0 {
            return Err(Error::new(Code::Conflict, format!("the call `{id}` was decided meanwhile")));
        }
        tx.commit()?;
        tracing::info!(tool = %call.tool, decision = ?decision, "tool call decided");
        self.continue_call(self.tool_call(id)?)
    }

    /// Record what sending a prepared call came to; what the model gets: the output as the
    /// asking user may see it (record data they could not read taken out), bounded.
    pub fn finish_tool_call(&self, id: &str, executed: Executed) -> Result<ToolStep> {
        let (state, result, attempts) = match executed {
            Executed::Succeeded { output, attempts } => {
                let asker = self.tool_call(id)?.asked_by;
                let seen = if asker == self.user().key {
                    as_user_sees(self, output)
                } else {
                    // An asker no longer in the workspace sees nothing of it.
                    match self.ws.session(&asker) {
                        Ok(s) => as_user_sees(&s, output),
                        Err(_) => Value::Null,
                    }
                };
                (CallState::Succeeded, bounded(seen), attempts)
            }
            Executed::Failed { fault, attempts } => (CallState::Failed, fault_value(&fault), attempts),
            Executed::OutcomeUnknown { message, attempts } => {
                (CallState::OutcomeUnknown, fault_value(&fault("outcome_unknown", message, false)), attempts)
            }
        };
        let tx = self.begin_write()?;
        tx.execute(
            "UPDATE tool_call SET state = ?2, result = ?3, attempts = ?4, finished_at = ?5 WHERE id = ?1",
            params![id, state.as_str(), result.to_string(), attempts, timestamp(self.ws.clock.now())],
        )?;
        tx.commit()?;
        tracing::info!(state = state.as_str(), attempts, "tool call finished");
        self.continue_call(self.tool_call(id)?)
    }

    /// A person says what became of a call whose outcome was unknown (`ai.approve`): it
    /// happened (`succeeded`) or it did not (`failed`, with their message for the model).
    pub fn resolve_tool_call(&self, id: &str, happened: bool, note: &str) -> Result<ToolCallView> {
        self.require(AI_APPROVE)?;
        let call = self.tool_call(id)?;
        if call.state != CallState::OutcomeUnknown {
            return Err(Error::new(Code::Conflict, format!("the call `{id}` has a known outcome")));
        }
        let (state, result) = if happened {
            (CallState::Succeeded, json!({"confirmedBy": self.user().key, "note": note}))
        } else {
            (CallState::Failed, fault_value(&fault("execution_error", note, false)))
        };
        let tx = self.begin_write()?;
        tx.execute(
            "UPDATE tool_call SET state = ?2, result = ?3, comment = ?4, decided_by = ?5 WHERE id = ?1",
            params![id, state.as_str(), result.to_string(), note, self.user().key],
        )?;
        tx.commit()?;
        self.tool_call(id)
    }

    fn tool_call_by_key(&self, key: &str) -> Result<Option<ToolCallView>> {
        self.expire_calls()?;
        Ok(self
            .ws
            .conn()
            .query_row(&format!("{SELECT_CALL} WHERE operation_key = ?1"), [key], call_row)
            .optional()?)
    }

    /// Waiting calls past their time become expired.
    fn expire_calls(&self) -> Result<()> {
        let now = timestamp(self.ws.clock.now());
        let due: i64 = self.ws.conn().query_row(
            "SELECT count(*) FROM tool_call WHERE state = 'waiting' AND expires_at <= ?1",
            [&now],
            |r| r.get(0),
        )?;
        if due > 0 {
            let tx = self.begin_write()?;
            tx.execute(
                "UPDATE tool_call SET state = 'expired' WHERE state = 'waiting' AND expires_at <= ?1",
                [&now],
            )?;
            tx.commit()?;
        }
        Ok(())
    }

    /// The next step of a recorded call.
    fn continue_call(&self, call: ToolCallView) -> Result<ToolStep> {
        match call.state {
            CallState::Waiting => Ok(ToolStep::Waiting(call)),
            CallState::Denied => {
                let why = call.comment.clone().unwrap_or_default();
                Ok(done(
                    Some(call),
                    fault("TOOL_APPROVAL_DENIED", format!("a person denied the call: {why}"), false),
                ))
            }
            CallState::Expired => Ok(done(
                Some(call),
                fault("TOOL_APPROVAL_EXPIRED", "nobody decided on the call in time", false),
            )),
            CallState::Approved => {
                let def = self.tool_version(&call.tool, call.tool_version)?;
                self.prepare(call, &def)
            }
            // Asked again while (or after) it ran, say after the app stopped mid-call: sent
            // again only when a repeat is safe.
            CallState::Running => {
                let def = self.tool_version(&call.tool, call.tool_version)?;
                let dedupes = matches!(def.implementation, ToolKind::Http { deduplicates: true, .. });
                if def.effect == Effect::ChangesOutside && !dedupes {
                    let message = "the call was under way when it was asked for again".to_string();
                    return self.finish_tool_call(
                        &call.id,
                        Executed::OutcomeUnknown { message, attempts: call.attempts },
                    );
                }
                self.prepare(call, &def)
            }
            CallState::Succeeded => {
                let result = call.result.clone().unwrap_or(Value::Null);
                Ok(ToolStep::Done { call: Some(call), result: Ok(result) })
            }
            CallState::Failed | CallState::OutcomeUnknown => {
                let r = call.result.clone().unwrap_or(Value::Null);
                let f = fault(
                    r["code"].as_str().unwrap_or("execution_error"),
                    r["message"].as_str().unwrap_or_default(),
                    r["retryable"].as_bool().unwrap_or(false),
                );
                Ok(done(Some(call), f))
            }
        }
    }

    fn tool_version(&self, name: &str, version: i64) -> Result<ToolDef> {
        let text: String = self.ws.conn().query_row(
            "SELECT definition FROM tool_version WHERE name = ?1 AND version = ?2",
            params![name, version],
            |r| r.get(0),
        )?;
        serde_json::from_str(&text)
            .map_err(|e| Error::internal(format!("a stored tool does not read back: {e}")))
    }

    /// Build the call's request (marked running); the credential read from the keyring, the
    /// MCP server's pinned digest read.
    fn prepare(&self, call: ToolCallView, def: &ToolDef) -> Result<ToolStep> {
        let args = call.arguments.as_object().cloned().unwrap_or_default();
        let target = match &def.implementation {
            ToolKind::Http { method, url, headers, body, credential, response_pointer, deduplicates } => {
                let credential = match credential.as_deref().map(SecretRef::parse).transpose()? {
                    Some(r) => match secrets::get(&r)? {
                        Some(s) => Some(s),
                        None => {
                            let f = fault(
                                "configuration_error",
                                format!("no key in the keyring under {}", r.uri()),
                                false,
                            );
                            return self
                                .finish_tool_call(&call.id, Executed::Failed { fault: f, attempts: 0 });
                        }
                    },
                    None => None,
                };
                Target::Http(HttpRequest {
                    deduplicates: *deduplicates,
                    method: *method,
                    url: fill_url(url, &args),
                    headers: headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                    body: body.as_ref().map(|b| fill_body(b, &args)),
                    credential,
                    response_pointer: response_pointer.clone(),
                })
            }
            ToolKind::Mcp { server, tool } => match self.mcp_target(server) {
                Ok((server, digest)) => Target::Mcp { server, digest, tool: tool.clone(), arguments: args },
                Err(e) if e.code == Code::NotFound => {
                    let f = fault("configuration_error", e.message, false);
                    return self.finish_tool_call(&call.id, Executed::Failed { fault: f, attempts: 0 });
                }
                Err(e) => return Err(e),
            },
        };
        let tx = self.begin_write()?;
        tx.execute("UPDATE tool_call SET state = 'running' WHERE id = ?1", [&call.id])?;
        tx.commit()?;
        Ok(ToolStep::Run(PreparedCall {
            call_id: call.id.clone(),
            operation_key: call.operation_key.clone(),
            effect: def.effect,
            target,
        }))
    }
}

/// Take a call's step to its end: a call that may run is sent (no session held meanwhile) and
/// recorded; a waiting or ended step is returned as it is.
pub async fn carry_out<S: Sessions>(sessions: &S, step: ToolStep) -> Result<ToolStep> {
    match step {
        ToolStep::Run(prepared) => {
            let executed = prepared.execute().await;
            sessions.with(|s| s.finish_tool_call(&prepared.call_id, executed))
        }
        other => Ok(other),
    }
}

/// A person's decision on a waiting call, and the call carried out if approved: the call as
/// it then stands.
pub async fn decide_and_carry_out<S: Sessions>(
    sessions: &S,
    id: &str,
    decision: Decision,
    comment: Option<&str>,
) -> Result<ToolCallView> {
    let step = sessions.with(|s| s.decide_tool_call(id, decision, comment))?;
    carry_out(sessions, step).await?;
    sessions.with(|s| s.tool_call(id))
}

fn fault_value(f: &ToolFault) -> Value {
    json!({"code": f.code, "message": cut(&f.message, 2000), "retryable": f.retryable})
}

/// The first problem of `input` against the tool's schema, for the model to correct.
fn input_problem(schema: &Value, input: &Value) -> Option<String> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => return Some(format!("the tool's input schema does not compile: {e}")),
    };
    let problem = validator.iter_errors(input).next().map(|e| format!("{}: {e}", e.instance_path()));
    problem
}

/// An input's value as text: a string as it is, anything else as JSON.
fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `{input}` in a URL replaced by the input, URL-encoded.
fn fill_url(template: &str, args: &Map<String, Value>) -> String {
    args.iter()
        .fold(template.to_string(), |u, (k, v)| u.replace(&format!("{{{k}}}"), &urlencoding(&as_text(v))))
}

fn urlencoding(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A body template filled: a string that is only `"{input}"` becomes the input's JSON value
/// (absent input: null); `{input}` inside a longer string, its text.
fn fill_body(template: &Value, args: &Map<String, Value>) -> Value {
    match template {
        Value::String(s) => {
            if let Some(name) =
                s.strip_prefix('{').and_then(|r| r.strip_suffix('}')).filter(|n| !n.contains('{'))
            {
                if !name.contains('}') {
                    return args.get(name).cloned().unwrap_or(Value::Null);
                }
            }
            Value::String(
                args.iter().fold(s.clone(), |t, (k, v)| t.replace(&format!("{{{k}}}"), &as_text(v))),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| fill_body(v, args)).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), fill_body(v, args))).collect())
        }
        other => other.clone(),
    }
}

/// `s` at most `max` characters, a cut one ending in "…".
pub(crate) fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// A tool's output within the contract's bounds: each string at most `MAX_STRING_CHARS`
/// characters, all strings at most `MAX_OUTPUT_CHARS`; what is cut is said (`truncated`).
pub fn bounded(output: Value) -> Value {
    let mut budget = MAX_OUTPUT_CHARS;
    let mut truncated = false;
    let out = bound(output, &mut budget, &mut truncated);
    if truncated {
        json!({"output": out, "truncated": true})
    } else {
        out
    }
}

fn bound(v: Value, budget: &mut usize, truncated: &mut bool) -> Value {
    match v {
        Value::String(s) => {
            let n = s.chars().count();
            let keep = n.min(MAX_STRING_CHARS).min(*budget);
            *budget -= keep;
            if keep < n {
                *truncated = true;
                Value::String(s.chars().take(keep).collect())
            } else {
                Value::String(s)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|x| bound(x, budget, truncated)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, x)| {
                    let keep = k.chars().count().min(*budget);
                    *budget -= keep;
                    (k, bound(x, budget, truncated))
                })
                .collect(),
        ),
        other => other,
    }
}

impl PreparedCall {
    /// Send the call; repeated with the same operation key only when a repeat is safe.
    pub async fn execute(&self) -> Executed {
        match &self.target {
            Target::Http(request) => self.execute_http(request).await,
            Target::Mcp { server, digest, tool, arguments } => {
                self.execute_mcp(server, digest, tool, arguments).await
            }
        }
    }

    /// What a call whose answer was lost comes to, when it is not sent again.
    fn lost(&self, message: String, attempts: u32) -> Executed {
        if self.effect == Effect::ChangesOutside {
            return Executed::OutcomeUnknown { message, attempts };
        }
        Executed::Failed { fault: fault("execution_error", message, true), attempts }
    }

    async fn execute_mcp(
        &self,
        server: &McpServerDef,
        digest: &str,
        tool: &str,
        arguments: &Map<String, Value>,
    ) -> Executed {
        // A server's tool cannot say it deduplicates: only a read is sent again.
        let repeat_safe = self.effect != Effect::ChangesOutside;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match call_mcp_tool(server, digest, tool, arguments.clone(), &self.operation_key).await {
                McpOutcome::Output(output) => return Executed::Succeeded { output, attempts },
                McpOutcome::ToolError(text) => {
                    let f = fault("execution_error", format!("the tool failed: {}", cut(&text, 2000)), false);
                    return Executed::Failed { fault: f, attempts };
                }
                McpOutcome::NotSent { code, message, retryable } => {
                    return Executed::Failed { fault: fault(code, message, retryable), attempts }
                }
                McpOutcome::Lost(_) if repeat_safe && attempts < MAX_ATTEMPTS => continue,
                McpOutcome::Lost(message) => return self.lost(message, attempts),
            }
        }
    }

    async fn execute_http(&self, http: &HttpRequest) -> Executed {
        let client = match reqwest::Client::builder().no_proxy().timeout(REQUEST_TIMEOUT).build() {
            Ok(c) => c,
            Err(e) => {
                return Executed::Failed {
                    fault: fault("configuration_error", e.to_string(), false),
                    attempts: 0,
                }
            }
        };
        let repeat_safe = self.effect != Effect::ChangesOutside || http.deduplicates;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut req =
                client.request(method(http.method), &http.url).header("Idempotency-Key", &self.operation_key);
            for (k, v) in &http.headers {
                req = req.header(k, v);
            }
            if let Some(s) = &http.credential {
                req = req.bearer_auth(s.expose());
            }
            if let Some(b) = &http.body {
                req = req.header("Content-Type", "application/json").body(b.to_string());
            }
            let sent = match req.send().await {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    resp.bytes().await.map(|b| (status, b))
                }
                Err(e) => Err(e),
            };
            let lost = match sent {
                Ok((status, body)) if (200..300).contains(&status) => {
                    return Executed::Succeeded { output: http.output(&body), attempts };
                }
                // The target says nothing happened: a repeat is safe.
                Ok((429 | 503, _)) if attempts < MAX_ATTEMPTS => continue,
                Ok((status @ (429 | 503), _)) => {
                    let f =
                        fault("execution_error", format!("the tool's target is busy (HTTP {status})"), true);
                    return Executed::Failed { fault: f, attempts };
                }
                Ok((status, body)) if (400..500).contains(&status) => {
                    let text = String::from_utf8_lossy(&body);
                    let f = fault("execution_error", format!("HTTP {status}: {}", cut(&text, 2000)), false);
                    return Executed::Failed { fault: f, attempts };
                }
                Ok((status, _)) => format!("the tool's target failed (HTTP {status})"),
                // Nothing was sent: a repeat is safe, and nothing happened.
                Err(e) if e.is_connect() => {
                    let f = fault("execution_error", "the tool's target cannot be reached", true);
                    return Executed::Failed { fault: f, attempts };
                }
                Err(e) if e.is_timeout() => "the tool's target did not answer in time".to_string(),
                Err(_) => "the connection to the tool's target failed before its answer".to_string(),
            };
            if repeat_safe && attempts < MAX_ATTEMPTS {
                continue;
            }
            return self.lost(lost, attempts);
        }
    }
}

impl HttpRequest {
    fn output(&self, body: &[u8]) -> Value {
        let whole = serde_json::from_slice::<Value>(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        match self.response_pointer.as_deref().filter(|p| !p.is_empty()) {
            Some(p) => whole.pointer(p).cloned().unwrap_or(Value::Null),
            None => whole,
        }
    }
}

fn method(m: HttpMethod) -> reqwest::Method {
    match m {
        HttpMethod::Get => reqwest::Method::GET,
        HttpMethod::Post => reqwest::Method::POST,
        HttpMethod::Put => reqwest::Method::PUT,
        HttpMethod::Patch => reqwest::Method::PATCH,
        HttpMethod::Delete => reqwest::Method::DELETE,
    }
}
