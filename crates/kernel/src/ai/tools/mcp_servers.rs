//! MCP servers an admin connects, as a source of tools (the kernel as an MCP *client*, through
//! the official Rust SDK, `rmcp`). A server is a command on this machine spoken to over its
//! standard input and output, or a streamable-HTTP URL on this machine.
//!
//! - **Reviewed, then pinned.** `inspect_mcp_server` lists the server's tools and proposes an
//!   effect for each from its annotations — hints the kernel does not trust: `readOnlyHint:
//!   true` proposes `reads_outside`, anything else `changes_outside`. The admin confirms the
//!   effects (`pin_mcp_server`, `ai.manage`); each tool becomes a defined tool (`<server>_<tool>`,
//!   blocked until the admin allows or asks for it), its inputs closed by the kernel
//!   (`additionalProperties: false` at every level: the model may give only what the server
//!   declared).
//! - **The list is pinned by its digest** (sha256 of the tools' canonical JSON). Before every
//!   call the server's list is read again; a different digest refuses the call
//!   (`configuration_error`) until an admin reviews the difference and pins it again.
//! - A call carries its operation key in the request's `_meta` (`countersign/operationKey`).

use crate::ai::tools::definition::{Effect, Policy, ToolDef, ToolKind};
use crate::clock::timestamp;
use crate::error::{Code, Detail, Error, Result};
use crate::metadata::permissions::{AI_MANAGE, AI_USE};
use crate::records::access::{Session, Sessions};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::Duration;
use ts_rs::TS;

/// How long connecting to a server and listing its tools may take (a server run through `npx`
/// may install itself first).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one tool call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The `_meta` key of a call's operation key.
pub const OPERATION_KEY_META: &str = "countersign/operationKey";

/// How the kernel reaches a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum McpTransport {
    /// A command on this machine, spoken to over its standard input and output.
    Stdio {
        command: String,
        #[serde(default)]
        #[ts(optional, as = "Option<Vec<String>>")]
        args: Vec<String>,
    },
    /// A streamable-HTTP endpoint on this machine.
    Http { url: String },
}

/// A server as the admin connects it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerDef {
    pub name: String,
    pub transport: McpTransport,
    /// The capabilities that may call its tools (`assistant`, `cli`, …), given to each new tool.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub capabilities: Vec<String>,
}

/// How a tool differs from the list pinned before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolChange {
    Added,
    Changed,
    Removed,
    Same,
}

/// One of the server's tools as the admin reviews it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewedTool {
    /// The server's name for it.
    pub server_tool: String,
    /// Its name in the workspace's registry (`<server>_<tool>`).
    pub name: String,
    pub description: String,
    /// What the server's annotations suggest (`reads_outside` only for a read-only hint).
    pub proposed_effect: Effect,
    /// The effect pinned before, if the tool was.
    #[ts(optional)]
    pub pinned_effect: Option<Effect>,
    /// The server's annotations as it sent them (hints, not trusted).
    #[ts(type = "unknown")]
    pub annotations: Value,
    /// The inputs as the model will get them (closed by the kernel).
    #[ts(type = "unknown")]
    pub input_schema: Value,
    pub change: ToolChange,
}

/// What a server offers now, against what was pinned.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ServerReview {
    pub server: McpServerDef,
    /// The digest of the list now: pinning names it, so a list that changes meanwhile is refused.
    pub digest: String,
    #[ts(optional)]
    pub pinned_digest: Option<String>,
    pub tools: Vec<ReviewedTool>,
}

/// A connected server.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerInfo {
    pub server: McpServerDef,
    pub digest: String,
    /// Its tools' names in the registry.
    pub tools: Vec<String>,
    pub pinned_at: String,
    pub pinned_by: String,
}

impl McpServerDef {
    /// A name like a tool's; a command that is not empty; an HTTP URL on this machine.
    pub fn check(&self) -> Result<()> {
        let mut problems = vec![];
        if !crate::ai::tools::definition::is_tool_name(&self.name) || self.name.len() > 24 {
            problems.push(Detail {
                path: "/name".into(),
                message:
                    "a server's name is up to 24 lowercase letters, digits and `_`, starting with a letter"
                        .into(),
            });
        }
        match &self.transport {
            McpTransport::Stdio { command, .. } if command.trim().is_empty() => problems.push(Detail {
                path: "/transport/command".into(),
                message: "the command that starts the server".into(),
            }),
            McpTransport::Http { url } if !is_local_http(url) => problems.push(Detail {
                path: "/transport/url".into(),
                message: format!("`{url}`: a server's URL is on this machine (127.0.0.1, localhost)"),
            }),
            _ => {}
        }
        if problems.is_empty() {
            return Ok(());
        }
        let first = format!("{}: {}", problems[0].path, problems[0].message);
        Err(Error::new(Code::InvalidTool, format!("the server `{}` cannot be connected: {first}", self.name))
            .with_details(problems))
    }
}

fn is_local_http(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https")
            && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"))
    })
}

type Client = RunningService<RoleClient, ()>;

/// A failure to reach a server or to hear it: nothing of a call was sent.
fn unreachable(name: &str, why: impl std::fmt::Display) -> Error {
    Error {
        retriable: true,
        ..Error::new(
            Code::IntegrationUnreachable,
            format!("the MCP server `{name}` cannot be reached: {why}"),
        )
    }
}

async fn connect(def: &McpServerDef) -> Result<Client> {
    let started = match &def.transport {
        McpTransport::Stdio { command, args } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args);
            let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|e| unreachable(&def.name, format!("`{command}` does not start ({e})")))?;
            tokio::time::timeout(CONNECT_TIMEOUT, ().serve(transport)).await
        }
        McpTransport::Http { url } => {
            let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
            tokio::time::timeout(CONNECT_TIMEOUT, ().serve(transport)).await
        }
    };
    match started {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(unreachable(&def.name, e)),
        Err(_) => Err(unreachable(&def.name, "it did not answer in time")),
    }
}

/// The server's tools as it lists them (without `_meta`), by name.
async fn listed(client: &Client, name: &str) -> Result<Vec<Value>> {
    let tools = tokio::time::timeout(CONNECT_TIMEOUT, client.list_all_tools())
        .await
        .map_err(|_| unreachable(name, "it did not list its tools in time"))?
        .map_err(|e| unreachable(name, e))?;
    let mut out: Vec<Value> = tools
        .into_iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .map(|mut t| {
            if let Some(o) = t.as_object_mut() {
                o.remove("_meta");
            }
            t
        })
        .collect();
    out.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Ok(out)
}

/// sha256 of the list's canonical JSON (keys sorted at every level).
pub fn digest(tools: &[Value]) -> String {
    let canonical = Value::Array(tools.iter().map(canonical).collect());
    format!("{:x}", Sha256::digest(canonical.to_string().as_bytes()))
}

fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, Value> = m.iter().map(|(k, x)| (k, canonical(x))).collect();
            Value::Object(sorted.into_iter().map(|(k, x)| (k.clone(), x)).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The schema with every object closed (`additionalProperties: false`) and `$schema` dropped:
/// the model may give only the inputs the server declared.
pub fn closed_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out: Map<String, Value> = m
                .iter()
                .filter(|(k, _)| k.as_str() != "$schema")
                .map(|(k, v)| (k.clone(), closed_schema(v)))
                .collect();
            let is_object =
                out.get("type").and_then(Value::as_str) == Some("object") || out.contains_key("properties");
            if is_object {
                out.insert("additionalProperties".into(), Value::Bool(false));
                out.entry("type").or_insert_with(|| Value::String("object".into()));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(closed_schema).collect()),
        other => other.clone(),
    }
}

/// The registry's name of a server's tool: `<server>_<tool>`, lowercase, `_` for the rest.
pub fn registry_name(server: &str, tool: &str) -> String {
    let tail: String =
        tool.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    let mut name = format!("{server}_{tail}");
    name.truncate(63);
    name
}

/// What a tool's annotations propose: only an explicit read-only hint reads.
fn proposed_effect(tool: &Value) -> Effect {
    if tool.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true)) {
        Effect::ReadsOutside
    } else {
        Effect::ChangesOutside
    }
}

/// Connect to a server and review its tools against what was pinned (`ai.manage`).
pub async fn inspect_mcp_server<S: Sessions>(sessions: &S, def: &McpServerDef) -> Result<ServerReview> {
    let tools = listed_for_admin(sessions, def).await?;
    sessions.with(|s| s.review(def, &tools))
}

/// The server's tools now, listed for an admin (`ai.manage`) on a checked definition.
async fn listed_for_admin<S: Sessions>(sessions: &S, def: &McpServerDef) -> Result<Vec<Value>> {
    def.check()?;
    sessions.with(|s| s.require(AI_MANAGE))?;
    let client = connect(def).await?;
    let tools = listed(&client, &def.name).await;
    let _ = client.cancel().await;
    tools
}

/// Pin a reviewed server (`ai.manage`): its list must still have the digest the admin reviewed;
/// each tool is saved with the effect the admin confirmed (`effects`, by the server's tool
/// name; absent: the proposed one), a tool gone from the list is removed. A new tool is blocked
/// until allowed; a changed one keeps the admin's settings where they still fit.
pub async fn pin_mcp_server<S: Sessions>(
    sessions: &S,
    def: &McpServerDef,
    reviewed_digest: &str,
    effects: &BTreeMap<String, Effect>,
) -> Result<McpServerInfo> {
    let tools = listed_for_admin(sessions, def).await?;
    if digest(&tools) != reviewed_digest {
        return Err(Error::new(
            Code::Conflict,
            format!("the tools of `{}` changed since they were reviewed; review them again", def.name),
        ));
    }
    sessions.with(|s| s.pin(def, &tools, effects))
}

impl Session<'_> {
    /// The connected servers (`ai.use` or `ai.manage`).
    pub fn mcp_servers(&self) -> Result<Vec<McpServerInfo>> {
        self.require_any(&[AI_USE, AI_MANAGE])?;
        let mut stmt = self.ws.conn().prepare(
            "SELECT definition, digest, tools, pinned_at, pinned_by FROM mcp_server WHERE removed = 0 ORDER BY name",
        )?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
            .collect::<rusqlite::Result<Vec<(String, String, String, String, String)>>>()?;
        rows.into_iter()
            .map(|(definition, digest, tools, pinned_at, pinned_by)| {
                let server: McpServerDef = from_stored(&definition)?;
                let tools: Vec<Value> = from_stored(&tools)?;
                let tools = tools
                    .iter()
                    .map(|t| registry_name(&server.name, t["name"].as_str().unwrap_or("")))
                    .collect();
                Ok(McpServerInfo { server, digest, tools, pinned_at, pinned_by })
            })
            .collect()
    }

    /// Disconnect a server (`ai.manage`): its tools are removed from the registry.
    pub fn remove_mcp_server(&self, name: &str) -> Result<()> {
        self.require(AI_MANAGE)?;
        let (_, tools) = self.pinned(name)?.ok_or_else(|| no_server(name))?;
        let tx = self.begin_write()?;
        tx.execute("UPDATE mcp_server SET removed = 1 WHERE name = ?1", [name])?;
        for t in &tools {
            tx.execute(
                "UPDATE tool SET removed = 1 WHERE name = ?1",
                [registry_name(name, t["name"].as_str().unwrap_or(""))],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The pinned server and its pinned tool list.
    fn pinned(&self, name: &str) -> Result<Option<(McpServerDef, Vec<Value>)>> {
        let row: Option<(String, String)> = self
            .ws
            .conn()
            .query_row(
                "SELECT definition, tools FROM mcp_server WHERE name = ?1 AND removed = 0",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        row.map(|(d, t)| Ok((from_stored(&d)?, from_stored(&t)?))).transpose()
    }

    /// The server a call goes to and the digest its list must have.
    pub(crate) fn mcp_target(&self, name: &str) -> Result<(McpServerDef, String)> {
        self.ws
            .conn()
            .query_row(
                "SELECT definition, digest FROM mcp_server WHERE name = ?1 AND removed = 0",
                [name],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
            )
            .optional()?
            .ok_or_else(|| no_server(name))
            .and_then(|(d, digest)| Ok((from_stored(&d)?, digest)))
    }

    fn review(&self, def: &McpServerDef, tools: &[Value]) -> Result<ServerReview> {
        let pinned = self.pinned(&def.name)?;
        let pinned_digest = pinned.as_ref().map(|(_, t)| digest(t));
        let before: BTreeMap<String, Value> = pinned
            .map(|(_, t)| t.into_iter().map(|x| (x["name"].as_str().unwrap_or("").to_string(), x)).collect())
            .unwrap_or_default();
        let mut out = vec![];
        for t in tools {
            let server_tool = t["name"].as_str().unwrap_or("");
            let change = match before.get(server_tool) {
                None => ToolChange::Added,
                Some(b) if canonical(b) == canonical(t) => ToolChange::Same,
                Some(_) => ToolChange::Changed,
            };
            let mut reviewed = reviewed(&def.name, t, change);
            if change != ToolChange::Added {
                reviewed.pinned_effect = self.tool(&reviewed.name).ok().map(|i| i.effect);
            }
            out.push(reviewed);
        }
        for (server_tool, t) in &before {
            if !tools.iter().any(|x| x["name"].as_str() == Some(server_tool)) {
                out.push(reviewed(&def.name, t, ToolChange::Removed));
            }
        }
        Ok(ServerReview { server: def.clone(), digest: digest(tools), pinned_digest, tools: out })
    }

    fn pin(
        &self,
        def: &McpServerDef,
        tools: &[Value],
        effects: &BTreeMap<String, Effect>,
    ) -> Result<McpServerInfo> {
        let review = self.review(def, tools)?;
        let mut defs = vec![];
        for t in review.tools.iter().filter(|t| t.change != ToolChange::Removed) {
            let effect = effects.get(&t.server_tool).copied().unwrap_or(t.proposed_effect);
            let mut tool = ToolDef {
                name: t.name.clone(),
                description: if t.description.trim().is_empty() {
                    t.server_tool.clone()
                } else {
                    cut(&t.description, 2000)
                },
                effect,
                input_schema: t.input_schema.clone(),
                implementation: ToolKind::Mcp { server: def.name.clone(), tool: t.server_tool.clone() },
                capabilities: def.capabilities.clone(),
                policy: Policy::Block,
                allow_changes_outside: false,
                input_overrides: BTreeMap::new(),
                approval_timeout_minutes: None,
            };
            // A tool pinned before keeps the admin's settings where they still fit.
            if let Some(old) = self.tool(&t.name).ok().and_then(|i| i.definition) {
                let kept = ToolDef {
                    capabilities: old.capabilities,
                    policy: old.policy,
                    allow_changes_outside: old.allow_changes_outside,
                    input_overrides: old.input_overrides,
                    approval_timeout_minutes: old.approval_timeout_minutes,
                    ..tool.clone()
                };
                if kept.check().is_ok() {
                    tool = kept;
                }
            }
            tool.check().map_err(|e| Error {
                message: format!("the server's tool `{}` cannot be offered: {}", t.server_tool, e.message),
                ..e
            })?;
            let unchanged = self.tool(&t.name).ok().and_then(|i| i.definition).is_some_and(|d| d == tool);
            if !unchanged {
                defs.push(tool);
            }
        }
        let stored_def = serde_json::to_string(def).map_err(|e| Error::internal(e.to_string()))?;
        let stored_tools = Value::Array(tools.to_vec()).to_string();
        let now = timestamp(self.ws.clock.now());
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO mcp_server (name, definition, digest, tools, pinned_at, pinned_by, removed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)
             ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, digest = excluded.digest,
               tools = excluded.tools, pinned_at = excluded.pinned_at, pinned_by = excluded.pinned_by, removed = 0",
            params![def.name, stored_def, review.digest, stored_tools, now, self.user().key],
        )?;
        for tool in &defs {
            self.save_tool_in(&tx, tool)?;
        }
        for gone in review.tools.iter().filter(|t| t.change == ToolChange::Removed) {
            tx.execute("UPDATE tool SET removed = 1 WHERE name = ?1", [&gone.name])?;
        }
        tx.commit()?;
        tracing::info!(tools = tools.len(), saved = defs.len(), "MCP server pinned");
        self.mcp_servers()?
            .into_iter()
            .find(|s| s.server.name == def.name)
            .ok_or_else(|| no_server(&def.name))
    }
}

/// One of a server's tools (as it listed it) for the admin's review.
fn reviewed(server: &str, t: &Value, change: ToolChange) -> ReviewedTool {
    let server_tool = t["name"].as_str().unwrap_or("").to_string();
    ReviewedTool {
        name: registry_name(server, &server_tool),
        description: t["description"].as_str().unwrap_or("").to_string(),
        proposed_effect: proposed_effect(t),
        pinned_effect: None,
        annotations: t.get("annotations").cloned().unwrap_or(Value::Null),
        input_schema: closed_schema(&t["inputSchema"]),
        change,
        server_tool,
    }
}

fn no_server(name: &str) -> Error {
    Error::new(Code::NotFound, format!("no MCP server `{name}`"))
}

fn from_stored<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| Error::internal(format!("a stored MCP server does not read back: {e}")))
}

fn cut(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// How one call to a server's tool went.
pub(crate) enum McpOutcome {
    /// The tool's output (its structured content, or its text).
    Output(Value),
    /// The tool said it failed (`isError`).
    ToolError(String),
    /// Nothing was sent: the server could not be reached, or its list is not the pinned one.
    NotSent { code: &'static str, message: String, retryable: bool },
    /// Sent, and no answer came back.
    Lost(String),
}

/// Call a server's tool: its list read first and held to the pinned digest, the operation key
/// in the request's `_meta`.
pub(crate) async fn call_mcp_tool(
    def: &McpServerDef,
    pinned_digest: &str,
    tool: &str,
    arguments: Map<String, Value>,
    operation_key: &str,
) -> McpOutcome {
    let client = match connect(def).await {
        Ok(c) => c,
        Err(e) => {
            return McpOutcome::NotSent { code: "execution_error", message: e.message, retryable: true }
        }
    };
    let outcome = call_on(&client, def, pinned_digest, tool, arguments, operation_key).await;
    let _ = client.cancel().await;
    outcome
}

async fn call_on(
    client: &Client,
    def: &McpServerDef,
    pinned_digest: &str,
    tool: &str,
    arguments: Map<String, Value>,
    operation_key: &str,
) -> McpOutcome {
    match listed(client, &def.name).await {
        Ok(tools) if digest(&tools) == pinned_digest => {}
        Ok(_) => {
            return McpOutcome::NotSent {
                code: "configuration_error",
                message: format!(
                    "the tools of the MCP server `{}` changed since an admin reviewed them; nothing is called until they are reviewed again",
                    def.name
                ),
                retryable: false,
            }
        }
        Err(e) => return McpOutcome::NotSent { code: "execution_error", message: e.message, retryable: true },
    }
    let mut meta = Map::new();
    meta.insert(OPERATION_KEY_META.into(), Value::String(operation_key.into()));
    let mut params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    params.meta = Some(rmcp::model::RequestMetaObject(rmcp::model::MetaObject(meta)));
    let result: CallToolResult = match tokio::time::timeout(CALL_TIMEOUT, client.call_tool(params)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return McpOutcome::Lost(format!("the MCP server's answer was lost: {e}")),
        Err(_) => return McpOutcome::Lost("the MCP server did not answer in time".into()),
    };
    let text: Vec<String> = result
        .content
        .iter()
        .map(|c| match c.as_text() {
            Some(t) => t.text.clone(),
            None => "[content other than text, left out]".to_string(),
        })
        .collect();
    if result.is_error == Some(true) {
        return McpOutcome::ToolError(text.join("\n"));
    }
    // Text that is JSON is read as JSON, so the record data in it is seen as such (and
    // filtered for the asking user).
    let text = text.join("\n");
    let output = result.structured_content.unwrap_or_else(|| match serde_json::from_str::<Value>(&text) {
        Ok(v @ (Value::Object(_) | Value::Array(_))) => v,
        _ => Value::String(text),
    });
    McpOutcome::Output(output)
}
