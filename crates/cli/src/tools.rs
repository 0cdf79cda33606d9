//! `countersign-cli tool …` and the approvals of tool calls: the tools a model may be given
//! (the kernel's own and those defined here), an HTTP tool written from flags or a whole
//! definition from a file, a call run as the `--as` user through the kernel's one call path
//! (approval included), and the decisions on waiting calls. The kernel checks every right.

use crate::output::to_json;
use countersign_kernel::ai::tools::calls::{carry_out, Decision, ToolRequest, ToolStep};
use countersign_kernel::ai::tools::definition::{Effect, HttpMethod, Policy, ToolDef, ToolKind};
use countersign_kernel::ai::tools::mcp_servers::{
    inspect_mcp_server, pin_mcp_server, McpServerDef, McpTransport,
};
use countersign_kernel::{Code, Error, Result, Session};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum ToolCommand {
    /// Every tool, with its kind (kernel, http, mcp), effect and policy.
    List,
    /// One tool: its definition in use and the inputs a model gets.
    Show { name: String },
    /// Save a tool's whole definition from a JSON file as its next version (ai.manage).
    Save { file: PathBuf },
    /// Write an HTTP tool (ai.manage). `{input}` in the URL and the body is replaced by that
    /// input; the call's operation key goes in the `Idempotency-Key` header.
    AddHttp(Box<AddHttp>),
    /// Connect an MCP server (ai.manage): its tools are listed, each with the effect its
    /// annotations suggest (a read-only hint: reads_outside; anything else: changes_outside)
    /// unless `--effect TOOL=EFFECT` says otherwise, and pinned by their digest, blocked until
    /// allowed (`tool policy`). The server: a command after `--`, or `--url` on this machine.
    AddMcp {
        name: String,
        /// A streamable-HTTP endpoint on this machine instead of a command.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// The effect the admin confirms for one of the server's tools (repeatable).
        #[arg(long = "effect")]
        effects: Vec<String>,
        /// A capability that may call its tools (repeatable; default: assistant and cli).
        #[arg(long = "capability")]
        capabilities: Vec<String>,
        /// The command that starts the server, and its arguments.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// What a connected MCP server offers now against what was pinned: each tool added,
    /// changed, removed or the same. `--accept DIGEST` pins the reviewed list.
    ReviewMcp {
        name: String,
        /// The digest of the reviewed list (a list that changed since is refused).
        #[arg(long)]
        accept: Option<String>,
        #[arg(long = "effect")]
        effects: Vec<String>,
    },
    /// The connected MCP servers and their tools.
    Servers,
    /// Disconnect an MCP server: its tools are no longer offered.
    RemoveMcp { name: String },
    /// Set whether a tool's calls run (allow), wait for a person (ask) or are refused (block).
    Policy {
        name: String,
        policy: String,
        /// Let a changes_outside tool run without approval (with allow).
        #[arg(long)]
        allow_changes_outside: bool,
    },
    /// Stop offering a tool (its versions are kept).
    Remove { name: String },
    /// Call a tool as the `--as` user (the tool must allow the `cli` capability): it runs, or
    /// waits for an approval (`approve ID`), or is refused.
    Call {
        name: String,
        /// The input as JSON (a `_rationale` in it is kept as the call's reason).
        #[arg(long)]
        input: String,
        /// The run this call belongs to; with the step and the tool, its operation key (asking
        /// again with the same ones continues the same call).
        #[arg(long, default_value = "cli")]
        run: String,
        #[arg(long, default_value_t = 1)]
        step: u32,
    },
    /// Say what became of a call whose outcome is unknown (ai.approve).
    Resolve {
        id: String,
        /// It happened at the target.
        #[arg(long, conflicts_with = "did_not_happen")]
        happened: bool,
        /// It did not happen.
        #[arg(long)]
        did_not_happen: bool,
        #[arg(long)]
        note: String,
    },
}

#[derive(clap::Args)]
pub struct AddHttp {
    pub name: String,
    #[arg(long)]
    pub description: String,
    /// reads_outside or changes_outside (unsure: changes_outside).
    #[arg(long)]
    pub effect: String,
    #[arg(long, default_value = "POST")]
    pub method: String,
    #[arg(long)]
    pub url: String,
    /// The input schema as JSON, or @FILE.
    #[arg(long)]
    pub inputs: String,
    /// A header, NAME=VALUE (repeatable).
    #[arg(long = "header")]
    pub headers: Vec<String>,
    /// The body template as JSON, or @FILE.
    #[arg(long)]
    pub body: Option<String>,
    /// A key in the OS keyring (`secret://countersign/NAME`), sent as a bearer token.
    #[arg(long)]
    pub credential: Option<String>,
    /// The part of the response the model gets (a JSON pointer).
    #[arg(long)]
    pub response_pointer: Option<String>,
    /// The target deduplicates on the operation key (a lost answer may be sent again).
    #[arg(long)]
    pub deduplicates: bool,
    /// allow, ask or block (the default: nothing from outside runs until an admin says so).
    #[arg(long, default_value = "block")]
    pub policy: String,
    /// Let a changes_outside tool run without approval (with --policy allow).
    #[arg(long)]
    pub allow_changes_outside: bool,
    /// A capability that may call it (repeatable): assistant, ask, summarize, cli.
    #[arg(long = "capability")]
    pub capabilities: Vec<String>,
}

#[derive(clap::Subcommand)]
pub enum ApprovalCommand {
    /// The calls waiting for a decision, with every argument, who asked and why.
    List,
}

fn json_arg(text: &str, what: &str) -> Result<Value> {
    let text = match text.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)?,
        None => text.to_string(),
    };
    serde_json::from_str(&text).map_err(|e| Error::new(Code::InvalidTool, format!("{what} is not JSON: {e}")))
}

fn named<T: serde::de::DeserializeOwned>(value: &str, what: &str) -> Result<T> {
    serde_json::from_value(Value::String(value.to_string()))
        .map_err(|_| Error::new(Code::InvalidTool, format!("`{value}` is not a {what}")))
}

/// `TOOL=EFFECT` pairs: the effects an admin confirms for a server's tools.
fn effect_args(pairs: &[String]) -> Result<BTreeMap<String, Effect>> {
    pairs
        .iter()
        .map(|p| {
            let (tool, effect) = p
                .split_once('=')
                .ok_or_else(|| Error::new(Code::InvalidTool, format!("`{p}`: an effect is TOOL=EFFECT")))?;
            Ok((tool.to_string(), named::<Effect>(effect, "tool effect (reads_outside, changes_outside)")?))
        })
        .collect()
}

fn http_tool(a: AddHttp) -> Result<ToolDef> {
    let mut headers = BTreeMap::new();
    for h in &a.headers {
        let (k, v) = h
            .split_once('=')
            .ok_or_else(|| Error::new(Code::InvalidTool, format!("`{h}`: a header is NAME=VALUE")))?;
        headers.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(ToolDef {
        name: a.name,
        description: a.description,
        effect: named::<Effect>(&a.effect, "tool effect (reads_outside, changes_outside)")?,
        input_schema: json_arg(&a.inputs, "--inputs")?,
        implementation: ToolKind::Http {
            method: named::<HttpMethod>(
                &a.method.to_ascii_uppercase(),
                "method (GET, POST, PUT, PATCH, DELETE)",
            )?,
            url: a.url,
            headers,
            body: a.body.as_deref().map(|b| json_arg(b, "--body")).transpose()?,
            credential: a.credential,
            response_pointer: a.response_pointer,
            deduplicates: a.deduplicates,
        },
        capabilities: a.capabilities,
        policy: named::<Policy>(&a.policy, "policy (allow, ask, block)")?,
        allow_changes_outside: a.allow_changes_outside,
        input_overrides: BTreeMap::new(),
        approval_timeout_minutes: None,
    })
}

pub fn run(session: &Session<'_>, command: ToolCommand) -> Result<Value> {
    match command {
        ToolCommand::List => {
            let tools = session.tools()?;
            Ok(Value::Array(
                tools
                    .iter()
                    .map(|t| json!({"name": t.name, "kind": t.kind, "effect": t.effect, "policy": t.policy, "version": t.version, "description": t.description}))
                    .collect(),
            ))
        }
        ToolCommand::Show { name } => to_json(&session.tool(&name)?),
        ToolCommand::Save { file } => {
            let def: ToolDef = serde_json::from_value(json_arg(&format!("@{}", file.display()), "the file")?)
                .map_err(|e| {
                    Error::new(Code::InvalidTool, format!("the tool definition does not read: {e}"))
                })?;
            to_json(&session.save_tool(&def)?)
        }
        ToolCommand::AddHttp(a) => to_json(&session.save_tool(&http_tool(*a)?)?),
        ToolCommand::AddMcp { name, url, effects, capabilities, command } => {
            let transport = match (url, command.split_first()) {
                (Some(url), _) => McpTransport::Http { url },
                (None, Some((cmd, args))) => {
                    McpTransport::Stdio { command: cmd.clone(), args: args.to_vec() }
                }
                (None, None) => {
                    return Err(Error::new(
                        Code::InvalidTool,
                        "give the server's command after `--`, or --url",
                    ))
                }
            };
            let capabilities =
                if capabilities.is_empty() { vec!["assistant".into(), "cli".into()] } else { capabilities };
            let def = McpServerDef { name, transport, capabilities };
            let rt = crate::ai::runtime()?;
            let review = rt.block_on(inspect_mcp_server(session, &def))?;
            let server =
                rt.block_on(pin_mcp_server(session, &def, &review.digest, &effect_args(&effects)?))?;
            Ok(json!({"server": server, "review": review}))
        }
        ToolCommand::ReviewMcp { name, accept, effects } => {
            let def = session
                .mcp_servers()?
                .into_iter()
                .find(|s| s.server.name == name)
                .ok_or_else(|| Error::new(Code::NotFound, format!("no MCP server `{name}`")))?
                .server;
            let rt = crate::ai::runtime()?;
            match accept {
                None => to_json(&rt.block_on(inspect_mcp_server(session, &def))?),
                Some(digest) => {
                    to_json(&rt.block_on(pin_mcp_server(session, &def, &digest, &effect_args(&effects)?))?)
                }
            }
        }
        ToolCommand::Servers => to_json(&session.mcp_servers()?),
        ToolCommand::RemoveMcp { name } => {
            session.remove_mcp_server(&name)?;
            Ok(json!({"removed": name}))
        }
        ToolCommand::Policy { name, policy, allow_changes_outside } => to_json(&session.set_tool_policy(
            &name,
            named::<Policy>(&policy, "policy (allow, ask, block)")?,
            allow_changes_outside,
        )?),
        ToolCommand::Remove { name } => {
            session.remove_tool(&name)?;
            Ok(json!({"removed": name}))
        }
        ToolCommand::Call { name, input, run, step } => {
            let req = ToolRequest {
                tool: name,
                input: json_arg(&input, "--input")?,
                capability: "cli".into(),
                run,
                step,
            };
            step_json(session, session.request_tool_call(&req)?)
        }
        ToolCommand::Resolve { id, happened, did_not_happen, note } => {
            if happened == did_not_happen {
                return Err(Error::new(Code::InvalidValue, "say --happened or --did-not-happen"));
            }
            to_json(&session.resolve_tool_call(&id, happened, &note)?)
        }
    }
}

pub fn approvals(session: &Session<'_>, command: Option<ApprovalCommand>) -> Result<Value> {
    match command {
        None | Some(ApprovalCommand::List) => to_json(&session.approvals()?),
    }
}

/// Approve (running the call now) or deny a waiting call.
pub fn decide(session: &Session<'_>, id: &str, decision: Decision, comment: Option<&str>) -> Result<Value> {
    step_json(session, session.decide_tool_call(id, decision, comment)?)
}

/// A call's step as JSON, running it first when it may run.
fn step_json(session: &Session<'_>, step: ToolStep) -> Result<Value> {
    let step = crate::ai::runtime()?.block_on(carry_out(session, step))?;
    Ok(match step {
        ToolStep::Run(_) => unreachable!("a finished call does not run again"),
        ToolStep::Waiting(call) => {
            json!({"state": "waiting", "call": call, "next": format!("an approver runs `approve {}` or `deny {}`", call.id, call.id)})
        }
        ToolStep::Done { call, result: Ok(output) } => {
            json!({"state": "succeeded", "output": output, "call": call})
        }
        ToolStep::Done { call, result: Err(fault) } => {
            json!({"state": "refused", "fault": fault, "call": call})
        }
    })
}
