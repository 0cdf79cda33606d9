//! The one list of tools a model may be given: the kernel's own (reading this workspace, on the
//! user's session) and the tools an admin defines (`definition`). A saved definition is a new
//! version, kept; the tool points at the one in use until it is saved again or removed.
//! Saving and removing need `ai.manage`; listing needs `ai.use` or `ai.manage`.

use crate::ai::tools::definition::{Effect, Policy, ToolDef, ToolKind};
use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::{AI_MANAGE, AI_USE};
use crate::records::access::Session;
use rusqlite::params;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// One tool as the registry lists it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: String,
    /// `kernel`, `http` or `mcp`.
    pub kind: String,
    pub effect: Effect,
    pub description: String,
    pub policy: Policy,
    /// The version in use (none for the kernel's own tools).
    #[ts(optional, type = "number")]
    pub version: Option<i64>,
    /// The inputs a model gets: the admin's overrides applied.
    #[ts(type = "unknown")]
    pub input_schema: Value,
    /// The definition in use (none for the kernel's own tools).
    #[ts(optional)]
    pub definition: Option<ToolDef>,
}

impl Session<'_> {
    /// Save a tool's definition as its next version and put it in use (`ai.manage`). A
    /// definition that breaks the tool contract is refused (`tool.invalid`) with every problem.
    pub fn save_tool(&self, def: &ToolDef) -> Result<ToolInfo> {
        self.require(AI_MANAGE)?;
        def.check()?;
        let tx = self.begin_write()?;
        let version = self.save_tool_in(&tx, def)?;
        tx.commit()?;
        tracing::info!(version, kind = kind_of(&def.implementation), "tool saved");
        self.tool(&def.name)
    }

    /// Write a checked definition as the tool's next version, in use, inside `tx`.
    pub(crate) fn save_tool_in(&self, tx: &rusqlite::Transaction<'_>, def: &ToolDef) -> Result<i64> {
        let version: i64 = tx.query_row(
            "SELECT coalesce(max(version), 0) + 1 FROM tool_version WHERE name = ?1",
            [&def.name],
            |r| r.get(0),
        )?;
        let text = serde_json::to_string(def).map_err(|e| Error::internal(e.to_string()))?;
        tx.execute(
            "INSERT INTO tool_version (name, version, definition, saved_at, saved_by) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![def.name, version, text, timestamp(self.ws.clock.now()), self.user().key],
        )?;
        tx.execute(
            "INSERT INTO tool (name, active_version, removed) VALUES (?1, ?2, 0)
             ON CONFLICT (name) DO UPDATE SET active_version = excluded.active_version, removed = 0",
            params![def.name, version],
        )?;
        Ok(version)
    }

    /// Set whether a defined tool's calls run, wait for a person or are refused, as its next
    /// version (`ai.manage`). A `changes_outside` tool runs unapproved only with
    /// `allow_changes_outside` ticked.
    pub fn set_tool_policy(
        &self,
        name: &str,
        policy: Policy,
        allow_changes_outside: bool,
    ) -> Result<ToolInfo> {
        let tool = self.tool(name)?;
        let Some(mut def) = tool.definition else {
            return Err(Error::new(Code::InvalidTool, format!("`{name}` is a kernel tool: it always runs")));
        };
        def.policy = policy;
        def.allow_changes_outside = allow_changes_outside;
        self.save_tool(&def)
    }

    /// Stop offering a tool (`ai.manage`); its versions are kept.
    pub fn remove_tool(&self, name: &str) -> Result<()> {
        self.require(AI_MANAGE)?;
        let tx = self.begin_write()?;
        let n = tx.execute("UPDATE tool SET removed = 1 WHERE name = ?1 AND removed = 0", [name])?;
        if n == 0 {
            return Err(not_found(name));
        }
        tx.commit()?;
        Ok(())
    }

    /// Every tool: the kernel's own, then the defined ones in use, by name.
    pub fn tools(&self) -> Result<Vec<ToolInfo>> {
        self.require_any(&[AI_USE, AI_MANAGE])?;
        let mut out: Vec<ToolInfo> = kernel_tools();
        let mut stmt = self.ws.conn().prepare(
            "SELECT v.version, v.definition FROM tool t JOIN tool_version v ON v.name = t.name AND v.version = t.active_version
             WHERE t.removed = 0 ORDER BY t.name",
        )?;
        let rows: Vec<(i64, String)> =
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
        for (version, text) in rows {
            out.push(stored(version, &text)?);
        }
        Ok(out)
    }

    /// The defined tools `capability` may call: allowed to it and not blocked.
    pub fn tools_for(&self, capability: &str) -> Result<Vec<ToolInfo>> {
        Ok(self
            .tools()?
            .into_iter()
            .filter(|t| {
                t.definition.as_ref().is_some_and(|d| {
                    d.policy != Policy::Block && d.capabilities.iter().any(|c| c == capability)
                })
            })
            .collect())
    }

    /// One tool by name.
    pub fn tool(&self, name: &str) -> Result<ToolInfo> {
        self.tools()?.into_iter().find(|t| t.name == name).ok_or_else(|| not_found(name))
    }

    /// Every saved version of a defined tool, oldest first (`ai.manage`).
    pub fn tool_versions(&self, name: &str) -> Result<Vec<ToolInfo>> {
        self.require(AI_MANAGE)?;
        let mut stmt = self
            .ws
            .conn()
            .prepare("SELECT version, definition FROM tool_version WHERE name = ?1 ORDER BY version")?;
        let rows: Vec<(i64, String)> =
            stmt.query_map([name], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
        if rows.is_empty() {
            return Err(not_found(name));
        }
        rows.iter().map(|(v, t)| stored(*v, t)).collect()
    }
}

fn not_found(name: &str) -> Error {
    Error::new(Code::NotFound, format!("no tool `{name}`"))
}

fn kind_of(kind: &ToolKind) -> &'static str {
    match kind {
        ToolKind::Http { .. } => "http",
        ToolKind::Mcp { .. } => "mcp",
    }
}

fn stored(version: i64, text: &str) -> Result<ToolInfo> {
    let def: ToolDef = serde_json::from_str(text)
        .map_err(|e| Error::internal(format!("a stored tool definition does not read back: {e}")))?;
    Ok(ToolInfo {
        name: def.name.clone(),
        kind: kind_of(&def.implementation).into(),
        effect: def.effect,
        description: def.description.clone(),
        policy: def.policy,
        version: Some(version),
        input_schema: def.effective_schema()?,
        definition: Some(def),
    })
}

/// The kernel's own tools, as the registry lists them: they read this workspace on the user's
/// session and always run.
fn kernel_tools() -> Vec<ToolInfo> {
    crate::ai::tools::kernel::specs()
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| ToolInfo {
            name: s["name"].as_str().unwrap_or_default().to_string(),
            kind: "kernel".into(),
            effect: Effect::ReadsWorkspace,
            description: s["description"].as_str().unwrap_or_default().to_string(),
            policy: Policy::Allow,
            version: None,
            input_schema: s["input"].clone(),
            definition: None,
        })
        .collect()
}
