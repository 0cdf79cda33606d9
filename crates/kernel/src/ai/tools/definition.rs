//! A tool from outside the kernel as workspace metadata: what it does (`effect`), the inputs a
//! model may give it (a closed JSON Schema), how it runs (`ToolKind`: an HTTP request an admin
//! writes, or a tool of a connected MCP server), which capabilities may use it, whether a call
//! runs, waits for a person's approval or is refused (`Policy`), and the admin's overrides,
//! which may only narrow the inputs. `check` refuses every definition that breaks these rules,
//! each problem with its JSON pointer.

use crate::ai::secrets::SecretRef;
use crate::error::{Code, Detail, Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use ts_rs::TS;

/// What a tool's call may do, which decides how a failure is recovered and whether a person
/// must approve it. Unsure means `ChangesOutside`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Reads this workspace's records only (the kernel's own tools).
    ReadsWorkspace,
    /// Calls something outside but only reads: a repeat has the same effect as one call.
    ReadsOutside,
    /// Anything else the kernel cannot roll back: creates, changes, sends or deletes outside.
    ChangesOutside,
}

/// Whether a call runs, waits for a person, or is refused. Nothing from outside runs by
/// default: a new tool is `Block` until an admin says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Allow,
    Ask,
    #[default]
    Block,
}

/// An admin's narrowing of one input (by its dotted path among the schema's properties).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InputOverride {
    /// Replaces the input's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// `true` makes an optional input required (`false` would widen a required one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub required: Option<bool>,
    /// Keeps only these of the values the input offers, or limits free text to them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allowed_values: Option<Vec<Value>>,
    /// A lower length limit for a text input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_length: Option<u64>,
}

/// How the tool runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum ToolKind {
    /// An HTTP request: `{input}` in the URL and the body template is replaced by that input
    /// (URL-encoded in the URL, as JSON in the body); the call's operation key goes in the
    /// `Idempotency-Key` header.
    Http {
        method: HttpMethod,
        url: String,
        #[serde(default)]
        #[ts(optional, as = "Option<BTreeMap<String, String>>")]
        headers: BTreeMap<String, String>,
        /// A JSON template of the body; an input's placeholder is a string `"{input}"`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "unknown")]
        body: Option<Value>,
        /// A key in the OS keyring (`secret://countersign/<name>`), sent as a bearer token.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        credential: Option<String>,
        /// The part of the response the model gets (a JSON pointer; the whole body if none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        response_pointer: Option<String>,
        /// The target deduplicates on the operation key, so a call whose response was lost may
        /// be sent again; without it such a call's outcome is unknown until a person says.
        #[serde(default)]
        #[ts(optional, as = "Option<bool>")]
        deduplicates: bool,
    },
    /// A tool of an MCP server the admin connected.
    Mcp { server: String, tool: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

/// A tool as an admin defines it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub effect: Effect,
    /// The inputs a model gives, as a JSON Schema: an object, closed at every level.
    #[ts(type = "unknown")]
    pub input_schema: Value,
    /// How it runs.
    pub implementation: ToolKind,
    /// The capabilities that may call it (`assistant`, `ask`, …); none: no capability.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub capabilities: Vec<String>,
    #[serde(default)]
    #[ts(optional, as = "Option<Policy>")]
    pub policy: Policy,
    /// The admin's explicit choice to let a `changes_outside` tool run without approval.
    #[serde(default)]
    #[ts(optional, as = "Option<bool>")]
    pub allow_changes_outside: bool,
    #[serde(default)]
    #[ts(optional, as = "Option<BTreeMap<String, InputOverride>>")]
    pub input_overrides: BTreeMap<String, InputOverride>,
    /// How long an approval waits before it expires (default 24 hours; at most 7 days).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub approval_timeout_minutes: Option<u32>,
}

/// The names the kernel's own tools hold.
pub const KERNEL_TOOLS: [&str; 3] = ["read_record", "list_related", "search_corpus"];

/// The default approval timeout, and the longest one.
pub const DEFAULT_APPROVAL_MINUTES: u32 = 24 * 60;
pub const MAX_APPROVAL_MINUTES: u32 = 7 * 24 * 60;

impl ToolDef {
    /// Every way this definition breaks the tool contract, or the definition itself.
    pub fn check(&self) -> Result<()> {
        let mut problems = Vec::new();
        let mut say = |path: &str, message: String| problems.push(Detail { path: path.into(), message });
        if !is_tool_name(&self.name) {
            say("/name", "a tool's name is lowercase letters, digits and `_`, starting with a letter".into());
        } else if KERNEL_TOOLS.contains(&self.name.as_str()) {
            say("/name", format!("`{}` is one of the kernel's own tools", self.name));
        }
        if self.description.trim().is_empty() || self.description.chars().count() > 2000 {
            say(
                "/description",
                "a description of 1 to 2,000 characters tells the model what the tool does".into(),
            );
        }
        if self.effect == Effect::ReadsWorkspace {
            say("/effect", "a tool from outside reads or changes something outside: `reads_outside` or `changes_outside`".into());
        }
        if self.policy == Policy::Allow
            && self.effect == Effect::ChangesOutside
            && !self.allow_changes_outside
        {
            say(
                "/policy",
                "a tool that changes something outside runs without approval only when `allowChangesOutside` is ticked for it".into(),
            );
        }
        if self.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            say("/inputSchema/type", "a tool's inputs are an object".into());
        }
        closed("/inputSchema", &self.input_schema, &mut say);
        if self.input_schema.pointer("/properties/_rationale").is_some() {
            say(
                "/inputSchema/properties/_rationale",
                "`_rationale` is added to every tool by the kernel".into(),
            );
        }
        if let Err(e) = narrowed(&self.input_schema, &self.input_overrides) {
            problems.extend(e.details);
        }
        if let Some(m) = self.approval_timeout_minutes.filter(|m| !(1..=MAX_APPROVAL_MINUTES).contains(m)) {
            problems.push(Detail {
                path: "/approvalTimeoutMinutes".into(),
                message: format!("{m} minutes: an approval waits 1 minute to 7 days"),
            });
        }
        if let ToolKind::Http { method, url, body, credential, response_pointer, headers, .. } =
            &self.implementation
        {
            let inputs = input_names(&self.input_schema);
            check_url(url, &inputs, &mut problems);
            if *method == HttpMethod::Get && body.is_some() {
                problems.push(Detail {
                    path: "/implementation/body".into(),
                    message: "a GET request has no body".into(),
                });
            }
            if let Some(b) = body {
                placeholders_known(b, &inputs, "/implementation/body", &mut problems);
            }
            if let Some(c) = credential {
                if let Err(e) = SecretRef::parse(c) {
                    problems.push(Detail { path: "/implementation/credential".into(), message: e.message });
                }
            }
            if response_pointer.as_deref().is_some_and(|p| !p.is_empty() && !p.starts_with('/')) {
                problems.push(Detail {
                    path: "/implementation/responsePointer".into(),
                    message: "a JSON pointer starts with `/`".into(),
                });
            }
            for k in headers.keys() {
                let lower = k.to_ascii_lowercase();
                if lower == "authorization" || lower == "idempotency-key" {
                    problems.push(Detail {
                        path: format!("/implementation/headers/{k}"),
                        message: format!("`{k}` is set by the kernel (the credential, the operation key)"),
                    });
                }
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        let first = format!("{}: {}", problems[0].path, problems[0].message);
        Err(Error::new(Code::InvalidTool, format!("the tool `{}` cannot be saved: {first}", self.name))
            .with_details(problems))
    }

    /// The input schema the model gets: the admin's overrides applied.
    pub fn effective_schema(&self) -> Result<Value> {
        narrowed(&self.input_schema, &self.input_overrides)
    }
}

/// Lowercase letters, digits and `_`, starting with a letter, at most 63 characters.
pub fn is_tool_name(name: &str) -> bool {
    name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Every object in a schema (its properties, items, definitions, combinations) must say
/// `additionalProperties: false`.
fn closed(path: &str, schema: &Value, say: &mut impl FnMut(&str, String)) {
    let Some(obj) = schema.as_object() else { return };
    let is_object =
        obj.get("type").and_then(Value::as_str) == Some("object") || obj.contains_key("properties");
    if is_object && obj.get("additionalProperties") != Some(&Value::Bool(false)) {
        say(
            &format!("{path}/additionalProperties"),
            "every object of a tool's inputs says `additionalProperties: false`".into(),
        );
    }
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(children)) = obj.get(key) {
            for (name, child) in children {
                closed(&format!("{path}/{key}/{name}"), child, say);
            }
        }
    }
    for key in ["items", "additionalItems", "not", "if", "then", "else"] {
        if let Some(child) = obj.get(key) {
            closed(&format!("{path}/{key}"), child, say);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = obj.get(key) {
            for (i, child) in children.iter().enumerate() {
                closed(&format!("{path}/{key}/{i}"), child, say);
            }
        }
    }
}

/// The top-level input names.
fn input_names(schema: &Value) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The URL: http only on this machine (127.0.0.1, localhost, ::1), https elsewhere; every
/// `{placeholder}` names an input.
fn check_url(url: &str, inputs: &[String], problems: &mut Vec<Detail>) {
    let say = |m: String| Detail { path: "/implementation/url".into(), message: m };
    let probe = placeholder_free(url);
    match reqwest::Url::parse(&probe) {
        Ok(u) => {
            let local = matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
            if !(u.scheme() == "https" || (u.scheme() == "http" && local)) {
                problems.push(say(format!(
                    "`{url}`: a tool calls https, or http on this machine only (127.0.0.1, localhost)"
                )));
            }
        }
        Err(e) => problems.push(say(format!("`{url}` is not a URL: {e}"))),
    }
    for p in placeholders(url) {
        if !inputs.contains(&p) {
            problems.push(say(format!("`{{{p}}}` names no input")));
        }
    }
}

/// The `{name}` placeholders of a template string.
fn placeholders(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start + 1..].find('}') else { break };
        out.push(rest[start + 1..start + 1 + len].to_string());
        rest = &rest[start + 1 + len + 1..];
    }
    out
}

/// The URL with each placeholder replaced by a harmless value, to parse it.
fn placeholder_free(url: &str) -> String {
    placeholders(url).iter().fold(url.to_string(), |u, p| u.replace(&format!("{{{p}}}"), "x"))
}

fn placeholders_known(template: &Value, inputs: &[String], path: &str, problems: &mut Vec<Detail>) {
    match template {
        Value::String(s) => {
            for p in placeholders(s) {
                if !inputs.contains(&p) {
                    problems.push(Detail { path: path.into(), message: format!("`{{{p}}}` names no input") });
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                placeholders_known(v, inputs, &format!("{path}/{i}"), problems);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                placeholders_known(v, inputs, &format!("{path}/{k}"), problems);
            }
        }
        _ => {}
    }
}

/// `schema` with `overrides` applied, refusing an override that names an unknown input or
/// would widen one.
fn narrowed(schema: &Value, overrides: &BTreeMap<String, InputOverride>) -> Result<Value> {
    let mut out = schema.clone();
    let mut problems = Vec::new();
    for (path, o) in overrides {
        let at = format!("/inputOverrides/{path}");
        let mut say = |m: String| problems.push(Detail { path: at.clone(), message: m });
        let segments: Vec<&str> = path.split('.').collect();
        let (parent_segments, name) = segments.split_at(segments.len() - 1);
        let mut parent = Some(&mut out);
        for s in parent_segments {
            parent = parent.and_then(|p| p.get_mut("properties")).and_then(|p| p.get_mut(*s));
        }
        let Some(parent) = parent.and_then(Value::as_object_mut) else {
            say(format!("`{path}` is not an input of this tool"));
            continue;
        };
        let required = parent
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(name[0])));
        let Some(input) =
            parent.get_mut("properties").and_then(|p| p.get_mut(name[0])).and_then(Value::as_object_mut)
        else {
            say(format!("`{path}` is not an input of this tool"));
            continue;
        };
        if let Some(d) = &o.description {
            input.insert("description".into(), Value::String(d.clone()));
        }
        if let Some(max) = o.max_length {
            if input.get("type").and_then(Value::as_str) != Some("string") {
                say("only a text input has a length limit".into());
            } else if input.get("maxLength").and_then(Value::as_u64).is_some_and(|m| max > m) {
                say(format!("a length limit of {max} widens the input's own ({})", input["maxLength"]));
            } else {
                input.insert("maxLength".into(), max.into());
            }
        }
        if let Some(values) = &o.allowed_values {
            let offered = input.get("enum").and_then(Value::as_array).cloned();
            let text = input.get("type").and_then(Value::as_str) == Some("string");
            if values.is_empty() {
                say("an override keeps at least one value".into());
            } else if let Some(offered) = offered {
                if let Some(v) = values.iter().find(|v| !offered.contains(v)) {
                    say(format!("{v} is not one of the values the input offers"));
                } else {
                    input.insert("enum".into(), Value::Array(values.clone()));
                }
            } else if text && values.iter().all(Value::is_string) {
                input.insert("enum".into(), Value::Array(values.clone()));
            } else {
                say("only a text input, or one with a list of values, is limited to values".into());
            }
        }
        match o.required {
            Some(true) if !required => {
                let list = parent.entry("required").or_insert_with(|| Value::Array(vec![]));
                if let Some(a) = list.as_array_mut() {
                    a.push(Value::String(name[0].to_string()));
                }
            }
            Some(false) if required => say("an override cannot make a required input optional".into()),
            _ => {}
        }
    }
    if problems.is_empty() {
        return Ok(out);
    }
    let first = format!("{}: {}", problems[0].path, problems[0].message);
    Err(Error::new(Code::InvalidTool, format!("an input override is refused: {first}"))
        .with_details(problems))
}
