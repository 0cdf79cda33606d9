//! `countersign-cli mcp --workspace W --as USER`: Countersign as a local MCP server over stdio,
//! for the AI apps of this machine (Jan, LM Studio, AnythingLLM, Claude Desktop…). The tools,
//! what each may do and its trace are the kernel's (`ai::mcp`); this file is the transport
//! only: the protocol (the official Rust SDK, `rmcp`) on standard input and output. Events go to
//! standard error (`RUST_LOG`), never to standard output, which is the protocol's.
//!
//! A tool's failure (a hidden field, a bad value, a tool switched off) is a tool result marked
//! as an error whose text is the kernel's typed error `{code, fault, message, retriable}`.

use countersign_kernel::ai::mcp;
use countersign_kernel::ai::pipeline::drive::Sessions;
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::error::{Code, Error, Result};
use countersign_kernel::{Session, Workspace};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::Mutex;

/// The server's settings in the workspace (`ai.manage` changes them; anyone may see them).
#[derive(clap::Subcommand)]
pub enum McpCommand {
    /// Whether it is on, and each tool: served or why not.
    Status,
    /// Turn the server on.
    On,
    /// Turn the server off.
    Off,
    /// Switch one tool on or off.
    Tool {
        name: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
}

pub fn settings(session: &Session<'_>, command: McpCommand) -> Result<Value> {
    let mut settings = session.mcp_settings()?;
    match command {
        McpCommand::Status => {}
        McpCommand::On | McpCommand::Off => {
            settings.enabled = matches!(command, McpCommand::On);
            session.set_mcp_settings(&settings)?
        }
        McpCommand::Tool { name, state } => {
            settings.tools_off.retain(|t| t != &name);
            if state == "off" {
                settings.tools_off.push(name);
            }
            session.set_mcp_settings(&settings)?
        }
    }
    crate::output::to_json(&session.mcp_server()?)
}

/// The workspace, and the user every call acts as.
struct Served {
    workspace: Mutex<Workspace>,
    user: String,
    instructions: String,
}

impl Sessions for Served {
    fn with<T>(&self, step: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        let ws = self.workspace.lock().map_err(|_| Error::internal("the workspace lock is poisoned"))?;
        step(&ws.session(&self.user)?)
    }
}

/// Serve until the client closes standard input. Prints nothing after (standard output is the
/// protocol's to the end).
pub fn serve(workspace: Workspace, user: String) -> Result<Value> {
    let (instructions, tools) = {
        let session = workspace.session(&user)?;
        let view = session.mcp_server()?;
        (view.instructions, view.tools.iter().filter(|t| t.served).count())
    };
    tracing::info!(tools, "the MCP server is starting");
    let served = Served { workspace: Mutex::new(workspace), user, instructions };
    let rt = crate::ai::runtime()?;
    rt.block_on(async move {
        let service = served.serve(rmcp::transport::stdio()).await.map_err(|e| {
            Error::new(Code::IntegrationUnreachable, format!("the MCP client did not start a session: {e}"))
        })?;
        service.waiting().await.map_err(|e| {
            Error::new(Code::IntegrationUnreachable, format!("the MCP session ended badly: {e}"))
        })?;
        Ok::<_, Error>(())
    })?;
    tracing::info!("the MCP server stopped");
    Ok(Value::Null)
}

impl ServerHandler for Served {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("countersign", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        let served = self.with(|s| s.mcp_tools()).map_err(|e| ErrorData::internal_error(e.message, None))?;
        let tools = served
            .into_iter()
            .map(|t| {
                let schema = match t.input_schema {
                    Value::Object(map) => map,
                    _ => Default::default(),
                };
                let hints = ToolAnnotations::with_title(t.title.clone()).read_only(!t.writes);
                Tool::new(t.name, t.description, schema).with_title(t.title).with_annotations(hints)
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match mcp::call_tool(self, &request.name, &arguments, &Cancel::default()).await {
            Ok(value) => CallToolResult::structured(value),
            Err(e) => {
                let typed = serde_json::to_string(&e).unwrap_or_else(|_| e.message.clone());
                CallToolResult::error(vec![ContentBlock::text(typed)])
            }
        };
        Ok(result.into())
    }
}
