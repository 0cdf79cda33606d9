//! `countersign-cli`: the headless face of the kernel, for scripting, evals and benchmarks.
//! Results are JSON on stdout; failures are the kernel's typed error as JSON on stderr with
//! a non-zero exit code (1 for a refused operation, 2 for bad command-line usage).
//!
//! This file parses the command line and dispatches each command to the module of its area,
//! which holds its subcommands and runs them on the kernel.

mod ai;
mod assistant;
mod bench;
mod evals;
mod indexes;
mod mcp;
mod output;
mod people;
mod proposals;
mod providers;
mod records;
mod runtime;
mod tools;
mod workspace;

use clap::{Parser, Subcommand};
use countersign_kernel::ai::tools::calls::Decision;
use countersign_kernel::error::{Code, Error};
use countersign_kernel::{Result, Session};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;
use workspace::{as_user, WorkspaceFile};

#[derive(Parser)]
#[command(name = "countersign-cli", version, about = "Countersign workspaces from the command line")]
struct Cli {
    /// Workspace file. Default: $COUNTERSIGN_WORKSPACE, else the demo workspace in the OS
    /// app-data directory (created on first use).
    #[arg(long, global = true)]
    workspace: Option<PathBuf>,
    /// The user to act as (a user key of the workspace).
    #[arg(long = "as", global = true, value_name = "USER")]
    user: Option<String>,
    #[command(subcommand)]
    command: Command,
}

/// The commands, in the order `--help` lists them; the flattened ones are each area's own.
#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Workspace(workspace::WorkspaceCommand),
    #[command(flatten)]
    Records(records::RecordCommand),
    /// Users: list, add, change (each change a deploy, as a user with metadata.deploy).
    User {
        #[command(subcommand)]
        command: people::UserCommand,
    },
    /// Permission sets: object rights, field levels, system permissions, view-all.
    PermissionSet {
        #[command(subcommand)]
        command: people::PermissionSetCommand,
    },
    /// Model providers on this machine (needs ai.manage to change).
    Provider {
        #[command(subcommand)]
        command: providers::ProviderCommand,
    },
    /// Model pins: one exact model on one provider.
    Model {
        #[command(subcommand)]
        command: providers::ModelCommand,
    },
    /// API keys in the OS keyring (the key is read from standard input, never from arguments).
    Secret {
        #[command(subcommand)]
        command: providers::SecretCommand,
    },
    #[command(flatten)]
    Run(ai::RunCommand),
    /// Run an eval suite against a model.
    Eval {
        #[command(subcommand)]
        command: evals::EvalCommand,
    },
    /// The execution trace: every AI invocation, its prompt, tokens, cost and outcome.
    Trace {
        #[command(subcommand)]
        command: ai::TraceCommand,
    },
    /// Ask's examples learned from corrections (those you may be offered).
    Learned {
        #[command(subcommand)]
        command: ai::LearnedCommand,
    },
    /// Prompt components: versions and the active pointer.
    Prompt {
        #[command(subcommand)]
        command: ai::PromptCommand,
    },
    /// The built-in runtime: llama.cpp's server run by Countersign on an installed model.
    Runtime {
        #[command(subcommand)]
        command: runtime::RuntimeCommand,
    },
    /// Capability bindings (prompt, model pin, permission, budgets, limits).
    Capability {
        #[command(subcommand)]
        command: ai::BindingCommand,
    },
    /// The assistant: a conversation whose steps are the capabilities (writes are proposals).
    Assist {
        #[command(subcommand)]
        command: assistant::AssistCommand,
    },
    /// Proposals: a model's writes waiting for a reviewer.
    Proposals {
        #[command(subcommand)]
        command: proposals::ProposalCommand,
    },
    /// Read a document (text, Markdown, HTML, .eml, PDF, DOCX) into text with its source map.
    Ingest { file: PathBuf },
    /// Benchmarks against hand-written SQL (use a release build).
    Bench(bench::BenchArgs),
    /// The indexes made from how lists are used: list, pin, unpin, drop (needs metadata.deploy).
    Index {
        #[command(subcommand)]
        command: indexes::IndexCommand,
    },
    /// Tools a model may call: the kernel's own and those from outside (list, show, save,
    /// add-http, remove, call, resolve).
    Tool {
        #[command(subcommand)]
        command: tools::ToolCommand,
    },
    /// Tool calls waiting for a person's decision (needs ai.approve).
    Approvals {
        #[command(subcommand)]
        command: Option<tools::ApprovalCommand>,
    },
    /// Approve a waiting tool call: it runs now (needs ai.approve).
    Approve {
        id: String,
        #[arg(long)]
        comment: Option<String>,
    },
    /// Deny a waiting tool call; the model gets TOOL_APPROVAL_DENIED with the comment.
    Deny {
        id: String,
        #[arg(long)]
        comment: String,
    },
    /// Serve the workspace to other AI apps of this machine as a local MCP server on standard
    /// input and output, acting as the `--as` user (once turned on: Settings → "Use your
    /// records from other AI apps", or `mcp on`).
    Mcp {
        #[command(subcommand)]
        command: Option<mcp::McpCommand>,
    },
}

fn main() -> ExitCode {
    // Documents are read in a child process of this same program (see the kernel's `ingest`).
    if let Some(code) = countersign_kernel::ingest::reader_entry_point() {
        return ExitCode::from(code as u8);
    }
    // Events to standard error when RUST_LOG asks for them (RUST_LOG=info).
    countersign_kernel::logging::to_stderr();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli).and_then(|v| output::print(&v)) {
        Ok(()) => ExitCode::SUCCESS,
        // Whoever reads stdout stopped reading (`… | head -1`): that is their choice, not a
        // failure, and whatever the command did is done. End quietly with 0 (not 141, a death
        // by SIGPIPE), so `set -o pipefail` scripts do not report a failure that is not one.
        Err(_) if output::stdout_closed() => ExitCode::SUCCESS,
        Err(e) => {
            output::print_error(&e);
            ExitCode::from(1)
        }
    }
}

/// Run a command: those that need no workspace first, then `init` and `deploy` and the evals
/// (which open the workspace their own way), then everything done as the `--as` user.
fn run(cli: Cli) -> Result<Value> {
    let Cli { workspace, user, command } = cli;
    match command {
        Command::Bench(args) => bench::run(args),
        Command::Secret { command } => providers::secret(command),
        Command::Ingest { file } => ai::read_document(&file),
        Command::Runtime { command } => runtime::run(command),
        Command::Model { command } if command.on_model_files() => runtime::model_files(command),
        Command::Workspace(command) => workspace::run(WorkspaceFile::locate(workspace)?, user, command),
        Command::User { command } => people::user(WorkspaceFile::locate(workspace)?, user, command),
        Command::PermissionSet { command } => {
            people::permission_set(WorkspaceFile::locate(workspace)?, user, command)
        }
        Command::Eval { command } if command.on_stored_suites() => {
            acting(workspace, user, |s| evals::on_session(s, command))
        }
        Command::Eval { command } => evals::run(WorkspaceFile::locate(workspace)?, command),
        Command::Run(command) => {
            let file = WorkspaceFile::locate(workspace)?;
            if command.demo() {
                file.create_demo_if_missing()?;
            }
            as_user(&file, user, |session| ai::run(session, command))
        }
        Command::Records(command) => acting(workspace, user, |s| records::run(s, command)),
        Command::Provider { command } => acting(workspace, user, |s| providers::provider(s, command)),
        Command::Model { command } => acting(workspace, user, |s| providers::model(s, command)),
        Command::Trace { command } => acting(workspace, user, |s| ai::trace(s, command)),
        Command::Learned { command } => acting(workspace, user, |s| ai::learned(s, command)),
        Command::Prompt { command } => acting(workspace, user, |s| ai::prompt(s, command)),
        Command::Capability { command } => acting(workspace, user, |s| ai::binding(s, command)),
        Command::Proposals { command } => acting(workspace, user, |s| proposals::run(s, command)),
        Command::Assist { command } => acting(workspace, user, |s| assistant::run(s, command)),
        Command::Index { command } => acting(workspace, user, |s| indexes::run(s, command)),
        Command::Tool { command } => acting(workspace, user, |s| tools::run(s, command)),
        Command::Approvals { command } => acting(workspace, user, |s| tools::approvals(s, command)),
        Command::Approve { id, comment } => {
            acting(workspace, user, |s| tools::decide(s, &id, Decision::Approve, comment.as_deref()))
        }
        Command::Deny { id, comment } => {
            acting(workspace, user, |s| tools::decide(s, &id, Decision::Deny, Some(&comment)))
        }
        Command::Mcp { command: Some(command) } => acting(workspace, user, |s| mcp::settings(s, command)),
        Command::Mcp { command: None } => {
            let ws = WorkspaceFile::locate(workspace)?.open()?;
            // The user is checked before the session starts (an unknown one ends it at once).
            let user = user
                .ok_or_else(|| Error::new(Code::UnknownUser, "say who the server acts as with --as USER"))?;
            ws.session(&user)?;
            mcp::serve(ws, user)
        }
    }
}

/// Do `act` as the `--as` user in the workspace the command names.
fn acting(
    workspace: Option<PathBuf>,
    user: Option<String>,
    act: impl FnOnce(&Session<'_>) -> Result<Value>,
) -> Result<Value> {
    as_user(&WorkspaceFile::locate(workspace)?, user, act)
}
