//! `countersign-cli`: the headless face of the kernel, for scripting, evals and benchmarks.
//! Results are JSON on stdout; failures are the kernel's typed error as JSON on stderr with
//! a non-zero exit code (1 for a refused operation, 2 for bad command-line usage).

use clap::{Parser, Subcommand};
use countersign_kernel::ai::ask::Ask;
use countersign_kernel::ai::extract::Extract;
use countersign_kernel::ai::pipeline::drive::{drive, Capability};
use countersign_kernel::ai::pipeline::ModelChoice;
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::summarize::Summarize;
use countersign_kernel::open::{self, Start};
use countersign_kernel::records::csvio::{export_csv, import_csv, ImportMode, ImportOptions};
use countersign_kernel::{
    Code, DeployOptions, Error, QuerySpec, Result, SaveContext, SaveRequest, Workspace, WorkspaceDefinition,
    WorkspaceOptions,
};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

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

#[derive(Subcommand)]
enum Command {
    /// Create a workspace: the demo (`--demo`) or a definition file (with its `data` CSVs).
    Init {
        #[arg(long, conflicts_with = "definition")]
        demo: bool,
        #[arg(long, value_name = "FILE")]
        definition: Option<PathBuf>,
    },
    /// Deploy a definition file as a new metadata generation (as a user with the
    /// metadata.deploy permission; an empty workspace needs no user).
    Deploy {
        file: PathBuf,
        /// Apply even if existing data would be lost.
        #[arg(long)]
        force: bool,
    },
    /// Run a query spec (JSON text, or @FILE).
    Query {
        #[arg(long)]
        spec: String,
    },
    /// Show the SQL a query spec becomes for the user.
    Explain {
        #[arg(long)]
        spec: String,
    },
    /// Read one record.
    Get { object: String, id: String },
    /// Create (no --id) or update (--id) a record: --set field=value … (empty value = blank).
    Save {
        object: String,
        #[arg(long)]
        id: Option<String>,
        /// Refuse unless the record is still at this version.
        #[arg(long)]
        version: Option<i64>,
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
    },
    /// Delete a record.
    Delete {
        object: String,
        id: String,
        #[arg(long)]
        version: Option<i64>,
    },
    /// The data history of a record.
    History { object: String, id: String },
    /// Import a CSV file into an object (all rows or none, unless --skip-invalid).
    Import {
        object: String,
        file: PathBuf,
        #[arg(long)]
        skip_invalid: bool,
        /// Check every row and report, write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Export a query spec's result as CSV (to stdout, or --out FILE).
    Export {
        #[arg(long)]
        spec: String,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The objects and fields the user can see.
    Describe { object: Option<String> },
    /// Model providers on this machine (needs ai.manage to change).
    Provider {
        #[command(subcommand)]
        command: ProviderCommand,
    },
    /// Model pins: one exact model on one provider.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// API keys in the OS keyring (the key is read from standard input, never from arguments).
    Secret {
        #[command(subcommand)]
        command: SecretCommand,
    },
    /// Ask a question: the model writes a query spec, the kernel runs it.
    Ask {
        question: String,
        /// An OpenAI-compatible server on this machine (http://127.0.0.1:PORT/v1), used for this
        /// run instead of the capability's pinned model.
        #[arg(long)]
        endpoint: Option<String>,
        /// Create the demo workspace at --workspace if the file does not exist.
        #[arg(long)]
        demo: bool,
    },
    /// Summarize a record: sentences whose every number, date, listed value and name cites a
    /// fact the kernel checked.
    Summarize {
        object: String,
        id: String,
        #[arg(long)]
        endpoint: Option<String>,
        #[arg(long)]
        demo: bool,
    },
    /// Extract a document into a proposal for an object (a new record, or --record ID).
    Extract {
        file: PathBuf,
        #[arg(long)]
        object: String,
        #[arg(long)]
        record: Option<String>,
        #[arg(long)]
        endpoint: Option<String>,
        #[arg(long)]
        demo: bool,
    },
    /// Run an eval suite against a model.
    Eval {
        #[command(subcommand)]
        command: EvalCommand,
    },
    /// The execution trace: every AI invocation, its prompt, tokens, cost and outcome.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
    /// Prompt components: versions and the active pointer.
    Prompt {
        #[command(subcommand)]
        command: PromptCommand,
    },
    /// Capability bindings (prompt, model pin, permission, budgets, limits).
    Capability {
        #[command(subcommand)]
        command: CapabilityCommand,
    },
    /// Proposals: a model's writes waiting for a reviewer.
    Proposals {
        #[command(subcommand)]
        command: ProposalCommand,
    },
    /// Read a document (text, Markdown, HTML, .eml, PDF, DOCX) into text with its source map.
    Ingest { file: PathBuf },
    /// Benchmarks against hand-written SQL (use a release build).
    Bench {
        /// Invoice rows to generate.
        #[arg(long, default_value_t = 1_000_000)]
        rows: usize,
        /// Single-field updates to time (each path).
        #[arg(long, default_value_t = 20_000)]
        updates: usize,
        /// Query repetitions to time (each path).
        #[arg(long, default_value_t = 50)]
        queries: usize,
        /// Directory for the scratch workspace (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum EvalCommand {
    /// Ask cases (JSON lines: user, question, object, expected_ids, ordered, expect_refusal…):
    /// per-case pass/fail and the execution-match rate.
    Ask {
        #[arg(long)]
        cases: PathBuf,
        #[arg(long)]
        endpoint: Option<String>,
        /// Create the demo workspace at --workspace (or in a temporary directory) first.
        #[arg(long)]
        demo: bool,
        /// Only the cases whose id ends with one of these (comma-separated: 04,13).
        #[arg(long)]
        only: Option<String>,
    },
    /// Extract cases (a folder with expected.jsonl: file, object, user, expected, must_not_set,
    /// injected): per-field accuracy and whether injected instructions were followed.
    Extract {
        #[arg(long)]
        cases: PathBuf,
        #[arg(long)]
        endpoint: Option<String>,
        #[arg(long)]
        demo: bool,
    },
    /// Summaries of records: accepted after at most one repair, refused, problems in the first
    /// answers, and accepted summaries re-checked for unverified claims.
    Summarize {
        #[arg(long)]
        object: String,
        #[arg(long, value_delimiter = ',')]
        ids: Vec<String>,
        #[arg(long, default_value = "ava")]
        user: String,
        #[arg(long)]
        endpoint: Option<String>,
        #[arg(long)]
        demo: bool,
    },
}

#[derive(Subcommand)]
enum ProposalCommand {
    /// The proposals you may see, newest first.
    List {
        #[arg(long, value_parser = ["open", "accepted", "discarded", "expired", "undone"])]
        state: Option<String>,
        #[arg(long)]
        object: Option<String>,
    },
    /// One proposal as the review screen shows it: fields before → after (uncertain first,
    /// word diff, base/current/proposed when the record moved), the source document.
    Show { id: String },
    /// Accept all fields, or only --fields a,b (needs ai.approve; your save). --set FIELD=VALUE
    /// puts your own value in the same save (a correction, or a required field the document
    /// does not state).
    Accept {
        id: String,
        #[arg(long, value_delimiter = ',')]
        fields: Option<Vec<String>>,
        #[arg(long)]
        set: Vec<String>,
    },
    Discard {
        id: String,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Undo an accepted proposal (within 30 days, if the record has not moved since).
    Undo { id: String },
    /// Expire open proposals after 30 days, purge old discarded and accepted ones.
    Retention,
    /// The fields of an object a capability may change without review (when its autonomy is
    /// auto_apply); with --fields, set the list (needs ai.approve; --fields "" clears it).
    AutoApply {
        #[arg(long, default_value = "extract")]
        capability: String,
        #[arg(long)]
        object: String,
        #[arg(long, value_delimiter = ',')]
        fields: Option<Vec<String>>,
    },
}

#[derive(Subcommand)]
enum TraceCommand {
    /// The latest entries you may read (all of them with ai.manage).
    List {
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// One entry with its prompt text (values of fields you cannot read are hidden).
    Show { id: String },
    /// Spend by day, capability and user since a date (YYYY-MM-DD).
    Spend {
        #[arg(long, default_value = "1970-01-01")]
        since: String,
    },
}

#[derive(Subcommand)]
enum PromptCommand {
    /// Every version of a prompt, and which is active.
    Show { key: String },
    /// Publish a new, frozen version (instructions from FILE). Needs ai.author.
    Publish {
        key: String,
        #[arg(long)]
        instructions: PathBuf,
        #[arg(long, default_value = "schemas/ask-output.schema.json")]
        contract: String,
    },
    /// Point the prompt at a version. Needs ai.author.
    Activate { key: String, version: i64 },
}

#[derive(Subcommand)]
enum CapabilityCommand {
    Show {
        key: String,
    },
    /// Replace a binding with JSON (the shape `show` prints). Needs ai.manage.
    Set {
        #[arg(long)]
        json: String,
    },
}

#[derive(Subcommand)]
enum ProviderCommand {
    /// Add (or replace) a provider.
    Add {
        key: String,
        #[arg(long, value_parser = ["openai", "ollama"])]
        kind: String,
        /// Base URL: http://127.0.0.1:8080/v1 (OpenAI-compatible) or http://127.0.0.1:11434 (Ollama).
        #[arg(long)]
        url: String,
        /// secret://countersign/NAME, set with `secret set`.
        #[arg(long)]
        key_ref: Option<String>,
        /// How structured output is sent (servers differ).
        #[arg(long, value_parser = ["json_schema", "json_object_schema", "ollama_format"])]
        structured: Option<String>,
    },
    List,
    /// Server kind, models, digests and round-trip time.
    Test {
        key: String,
    },
    Remove {
        key: String,
    },
    /// Probe the usual local ports (11434, 8080, 1234, 8000) on 127.0.0.1.
    Discover,
}

#[derive(Subcommand)]
enum ModelCommand {
    /// Pin a model by its content fingerprint (floating names like `latest` are refused).
    Pin {
        key: String,
        #[arg(long)]
        provider: String,
        #[arg(long)]
        model: String,
        /// The local GGUF file the server loads: its sha256 becomes the pin's digest.
        #[arg(long)]
        gguf: Option<PathBuf>,
        #[arg(long, default_value_t = 0.0)]
        temperature: f64,
        #[arg(long, default_value_t = 1024)]
        max_output_tokens: u32,
        /// Price per million input tokens.
        #[arg(long, default_value_t = 0.0)]
        input_price: f64,
        /// Price per million output tokens.
        #[arg(long, default_value_t = 0.0)]
        output_price: f64,
        #[arg(long, default_value = "USD")]
        currency: String,
    },
    List,
    /// Check that the server still serves the pinned model (drift refuses calls until repinned).
    Check {
        key: String,
    },
}

#[derive(Subcommand)]
enum SecretCommand {
    /// Store the key read from standard input under REF (secret://countersign/NAME).
    Set {
        reference: String,
    },
    Delete {
        reference: String,
    },
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("async runtime: {e}")))
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
    let result = run(cli).and_then(|v| {
        if v.is_null() {
            return Ok(());
        }
        let mut out = Watched(std::io::stdout().lock());
        writeln!(out, "{}", serde_json::to_string_pretty(&v).unwrap_or_default())
            .and_then(|()| out.flush())
            .map_err(|e| Error::new(Code::Storage, format!("cannot write the result: {e}")))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Whoever reads stdout stopped reading (`… | head -1`): that is their choice, not a
        // failure, and whatever the command did is done. End quietly with 0 (not 141, a death
        // by SIGPIPE), so `set -o pipefail` scripts do not report a failure that is not one.
        Err(_) if STDOUT_CLOSED.load(Ordering::Relaxed) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "{}",
                serde_json::to_string(&e).unwrap_or_else(|_| e.to_string())
            );
            ExitCode::from(1)
        }
    }
}

/// Set when a write to stdout found the reading end closed (EPIPE). Rust ignores SIGPIPE, so
/// the write fails instead of the process dying; `println!` would panic on that failure.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Stdout for results (JSON, or CSV from `export`): notes a closed pipe in [`STDOUT_CLOSED`].
struct Watched<W>(W);

impl<W: Write> Watched<W> {
    fn note<T>(r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
            }
        }
        r
    }
}

impl<W: Write> Write for Watched<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Self::note(self.0.write(buf))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Self::note(self.0.flush())
    }
}

fn default_workspace() -> Result<(PathBuf, bool)> {
    if let Some(p) = std::env::var_os("COUNTERSIGN_WORKSPACE") {
        return Ok((PathBuf::from(p), false));
    }
    let base = if cfg!(target_os = "macos") {
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join("Library/Application Support"))
    } else if cfg!(windows) {
        std::env::var_os("APPDATA").map(PathBuf::from)
    } else {
        std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
    };
    let base = base
        .ok_or_else(|| Error::new(Code::Storage, "cannot find the app-data directory; pass --workspace"))?;
    // The same file the desktop app opens (Tauri's app-data dir for our identifier).
    Ok((base.join("app.countersign.desktop").join("demo.countersign"), true))
}

fn parse_spec(text: &str) -> Result<QuerySpec> {
    match text.strip_prefix('@') {
        Some(path) => QuerySpec::parse(&std::fs::read_to_string(path)?),
        None => QuerySpec::parse(text),
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::internal(e.to_string()))
}

fn run(cli: Cli) -> Result<Value> {
    if let Command::Bench { rows, updates, queries, dir } = &cli.command {
        let report = countersign_kernel::bench::run(&countersign_kernel::bench::BenchOptions {
            rows: *rows,
            updates: *updates,
            queries: *queries,
            dir: dir.clone(),
        })?;
        return to_json(&report);
    }
    if let Command::Secret { command } = &cli.command {
        return secret_command(command);
    }
    if let Command::Ingest { file } = &cli.command {
        let doc = countersign_kernel::ingest::read_file(file, &Default::default())?;
        return to_json(&doc);
    }
    let (path, is_default) = match &cli.workspace {
        Some(p) => (p.clone(), false),
        None => default_workspace()?,
    };
    if let Command::Init { demo, definition } = &cli.command {
        return init(&path, *demo, definition.as_deref());
    }
    if let Command::Eval { command } = &cli.command {
        let demo = match command {
            EvalCommand::Ask { demo, .. }
            | EvalCommand::Extract { demo, .. }
            | EvalCommand::Summarize { demo, .. } => *demo,
        };
        // The demo workspace at --workspace (created if missing), or in a scratch directory.
        let scratch = tempfile_dir()?;
        let path = match (&cli.workspace, demo) {
            (Some(p), _) => p.clone(),
            (None, true) => scratch.join("eval.countersign"),
            (None, false) => path,
        };
        if demo && !path.exists() {
            init(&path, true, None)?;
        }
        let ws = open::open(&path, WorkspaceOptions::default())?;
        let out = match command {
            EvalCommand::Ask { cases, endpoint, only, .. } => {
                eval_ask(&ws, cases, endpoint.as_deref(), only.as_deref())
            }
            EvalCommand::Extract { cases, endpoint, .. } => eval_extract(&ws, cases, endpoint.as_deref()),
            EvalCommand::Summarize { object, ids, user, endpoint, .. } => {
                eval_summarize(&ws, object, ids, user, endpoint.as_deref())
            }
        };
        let _ = std::fs::remove_dir_all(&scratch);
        return out;
    }
    if let (
        Command::Ask { demo: true, .. }
        | Command::Extract { demo: true, .. }
        | Command::Summarize { demo: true, .. },
        Some(p),
    ) = (&cli.command, &cli.workspace)
    {
        if !p.exists() {
            init(p, true, None)?;
        }
    }
    let mut ws = if is_default {
        open::open_or_create_demo(&path, WorkspaceOptions::default())?
    } else {
        open::open(&path, WorkspaceOptions::default())?
    };
    if let Command::Deploy { file, force } = &cli.command {
        let def = WorkspaceDefinition::parse(&std::fs::read_to_string(file)?)?;
        // The kernel checks the user: metadata.deploy, unless the workspace is still empty.
        return to_json(&ws.deploy(&def, &DeployOptions { force: *force, user: cli.user.clone() })?);
    }
    let user = cli.user.clone().ok_or_else(|| {
        let users: Vec<String> =
            ws.catalog().map(|c| c.user_keys().map(String::from).collect()).unwrap_or_default();
        Error::new(
            Code::UnknownUser,
            format!("say who you act as with --as USER (one of: {})", users.join(", ")),
        )
    })?;
    let session = ws.session(&user)?;
    match cli.command {
        Command::Query { spec } => to_json(&session.query(&parse_spec(&spec)?)?),
        Command::Explain { spec } => Ok(json!({ "sql": session.explain(&parse_spec(&spec)?)? })),
        Command::Get { object, id } => to_json(&session.get(&object, &id)?),
        Command::Save { object, id, version, set } => {
            let values = set_values(set)?;
            let req = match id {
                None => SaveRequest::Create { object, values, id: None, owner: None },
                Some(id) => SaveRequest::Update { object, id, changes: values, expected_version: version },
            };
            to_json(&session.save(req, &SaveContext::default())?)
        }
        Command::Delete { object, id, version } => to_json(&session.delete(&object, &id, version)?),
        Command::History { object, id } => {
            Ok(json!({ "entries": to_json(&session.history_of(&object, &id)?)? }))
        }
        Command::Import { object, file, skip_invalid, dry_run } => {
            let f = std::fs::File::open(&file)?;
            let opts = ImportOptions {
                mode: if skip_invalid { ImportMode::SkipInvalid } else { ImportMode::AllOrNothing },
                dry_run,
                mapping: None,
            };
            let report = import_csv(&session, &object, std::io::BufReader::new(f), &opts)?;
            if report.failed > 0 && !report.committed && !dry_run {
                let mut e = Error::new(
                    Code::InvalidCsv,
                    format!("{} of {} row(s) failed; nothing was imported", report.failed, report.rows),
                );
                e.details = report
                    .errors
                    .iter()
                    .map(|r| countersign_kernel::error::Detail {
                        path: format!(
                            "line {}{}",
                            r.line,
                            r.field.as_ref().map(|f| format!(" `{f}`")).unwrap_or_default()
                        ),
                        message: r.message.clone(),
                    })
                    .collect();
                return Err(e);
            }
            to_json(&report)
        }
        Command::Export { spec, out } => {
            let spec = parse_spec(&spec)?;
            match out {
                Some(p) => {
                    let n = export_csv(&session, &spec, std::io::BufWriter::new(std::fs::File::create(&p)?))?;
                    Ok(json!({ "records": n, "file": p }))
                }
                None => {
                    let mut out = Watched(std::io::stdout().lock());
                    export_csv(&session, &spec, &mut out)?;
                    out.flush()?;
                    Ok(Value::Null)
                }
            }
        }
        Command::Describe { object } => describe(&session, object.as_deref()),
        Command::Provider { command } => provider_command(&session, command),
        Command::Ask { question, endpoint, .. } => {
            to_json(&run_capability(&session, &mut Ask { question }, endpoint.as_deref())?)
        }
        Command::Proposals { command } => proposal_command(&session, command),
        Command::Summarize { object, id, endpoint, .. } => {
            to_json(&run_capability(&session, &mut Summarize::new(&object, &id), endpoint.as_deref())?)
        }
        Command::Extract { file, object, record, endpoint, .. } => {
            let document = countersign_kernel::ingest::read_file(&file, &Default::default())?;
            to_json(&run_capability(
                &session,
                &mut Extract { document, object, record },
                endpoint.as_deref(),
            )?)
        }
        Command::Trace { command } => match command {
            TraceCommand::List { limit } => Ok(json!({ "entries": to_json(&session.traces(limit)?)? })),
            TraceCommand::Show { id } => to_json(&session.trace(&id)?),
            TraceCommand::Spend { since } => Ok(json!({ "spend": to_json(&session.spend(&since)?)? })),
        },
        Command::Prompt { command } => match command {
            PromptCommand::Show { key } => {
                Ok(json!({ "versions": to_json(&session.prompt_versions(&key)?)? }))
            }
            PromptCommand::Publish { key, instructions, contract } => {
                let v =
                    session.publish_prompt(&key, &std::fs::read_to_string(instructions)?, None, &contract)?;
                Ok(json!({ "prompt": key, "version": v }))
            }
            PromptCommand::Activate { key, version } => {
                session.activate_prompt(&key, version)?;
                Ok(json!({ "prompt": key, "activeVersion": version }))
            }
        },
        Command::Capability { command } => match command {
            CapabilityCommand::Show { key } => to_json(&session.capability(&key)?),
            CapabilityCommand::Set { json } => {
                let text = match json.strip_prefix('@') {
                    Some(p) => std::fs::read_to_string(p)?,
                    None => json,
                };
                let binding: countersign_kernel::ai::pipeline::CapabilityBinding =
                    serde_json::from_str(&text)
                        .map_err(|e| Error::new(Code::InvalidQuery, format!("capability binding: {e}")))?;
                session.bind_capability(&binding)?;
                to_json(&session.capability(&binding.key)?)
            }
        },
        Command::Model { command } => model_command(&session, command),
        Command::Init { .. }
        | Command::Deploy { .. }
        | Command::Bench { .. }
        | Command::Secret { .. }
        | Command::Eval { .. }
        | Command::Ingest { .. } => {
            unreachable!("handled above")
        }
    }
}

fn provider_command(session: &countersign_kernel::Session<'_>, command: ProviderCommand) -> Result<Value> {
    use countersign_kernel::ai::pins;
    use countersign_kernel::ai::provider::{ProviderKind, StructuredForm};
    match command {
        ProviderCommand::Add { key, kind, url, key_ref, structured } => {
            let kind = if kind == "ollama" { ProviderKind::Ollama } else { ProviderKind::OpenaiCompatible };
            let structured_form = match structured.as_deref() {
                Some("json_object_schema") => StructuredForm::JsonObjectSchema,
                Some("ollama_format") => StructuredForm::OllamaFormat,
                Some(_) => StructuredForm::JsonSchema,
                None if kind == ProviderKind::Ollama => StructuredForm::OllamaFormat,
                None => StructuredForm::JsonSchema,
            };
            let cfg = pins::ProviderConfig {
                key,
                kind,
                base_url: url,
                credential_ref: key_ref,
                structured_form,
                region: "this machine".into(),
                retention: "none".into(),
            };
            session.add_provider(&cfg)?;
            to_json(&cfg)
        }
        ProviderCommand::List => Ok(json!({ "providers": to_json(&session.providers()?)? })),
        ProviderCommand::Test { key } => {
            let ep = session.endpoint(&key)?;
            to_json(&runtime()?.block_on(pins::test_connection(&ep))?)
        }
        ProviderCommand::Remove { key } => {
            session.remove_provider(&key)?;
            Ok(json!({ "removed": key }))
        }
        ProviderCommand::Discover => {
            Ok(json!({ "servers": to_json(&runtime()?.block_on(pins::discover()))? }))
        }
    }
}

fn model_command(session: &countersign_kernel::Session<'_>, command: ModelCommand) -> Result<Value> {
    use countersign_kernel::ai::pins;
    match command {
        ModelCommand::Pin {
            key,
            provider,
            model,
            gguf,
            temperature,
            max_output_tokens,
            input_price,
            output_price,
            currency,
        } => {
            let settings = pins::PinSettings {
                temperature,
                max_output_tokens,
                input_price_per_mtok: input_price,
                output_price_per_mtok: output_price,
                currency,
            };
            let pin = pins::pin_served_model(session, &key, &provider, &model, gguf.as_deref(), &settings);
            to_json(&runtime()?.block_on(pin)?)
        }
        ModelCommand::List => Ok(json!({ "models": to_json(&session.model_pins()?)? })),
        ModelCommand::Check { key } => {
            let pin = runtime()?.block_on(pins::check_pin(session, &key))?;
            Ok(json!({ "model": key, "matches_pin": true, "digest": pin.digest }))
        }
    }
}

fn secret_command(command: &SecretCommand) -> Result<Value> {
    use countersign_kernel::ai::secrets::{self, SecretRef};
    match command {
        SecretCommand::Set { reference } => {
            let r = SecretRef::parse(reference)?;
            let mut key = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut key)?;
            let key = key.trim_end_matches(['\r', '\n']);
            if key.is_empty() {
                return Err(Error::new(Code::InvalidValue, "no key on standard input"));
            }
            secrets::set(&r, &countersign_kernel::ai::provider::Secret::new(key))?;
            Ok(json!({ "stored": r.uri() }))
        }
        SecretCommand::Delete { reference } => {
            let r = SecretRef::parse(reference)?;
            secrets::delete(&r)?;
            Ok(json!({ "deleted": r.uri() }))
        }
    }
}

fn init(path: &Path, demo: bool, definition: Option<&Path>) -> Result<Value> {
    if !demo && definition.is_none() {
        return Err(Error::new(Code::InvalidDefinition, "init needs --demo or --definition FILE"));
    }
    let report = match definition {
        None => open::create(path, Start::Demo, WorkspaceOptions::default())?.1,
        Some(file) => {
            let def = WorkspaceDefinition::parse(&std::fs::read_to_string(file)?)?;
            let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
            let load = |rel: &str| Ok(std::fs::read_to_string(dir.join(rel))?);
            open::create(
                path,
                Start::Definition { definition: &def, load: &load },
                WorkspaceOptions::default(),
            )?
            .1
        }
    }
    .ok_or_else(|| Error::internal("a workspace made from a definition reports what it loaded"))?;
    Ok(json!({
        "workspace": path,
        "generation": report.deploy.generation,
        "imported": report.imports.iter().map(|r| (r.object.clone(), json!(r.imported))).collect::<Map<_, _>>(),
    }))
}

/// What this user may see: one object, or every object they can read (the app's views).
fn describe(session: &countersign_kernel::Session<'_>, object: Option<&str>) -> Result<Value> {
    let objects = match object {
        Some(o) => vec![session.describe_object(o)?],
        None => session
            .catalog()
            .objects()
            .iter()
            .filter_map(|meta| session.describe_object(meta.key()).ok())
            .collect(),
    };
    Ok(
        json!({ "generation": session.catalog().generation, "user": session.user().key, "objects": to_json(&objects)? }),
    )
}

fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("countersign-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Run a capability to its answer on this session: with the model at `endpoint` (a local
/// OpenAI-compatible server) for this run, or the capability's pinned model.
fn run_capability<C: Capability>(
    session: &countersign_kernel::Session<'_>,
    capability: &mut C,
    endpoint: Option<&str>,
) -> Result<C::Answer> {
    run_capability_on(&runtime()?, session, capability, endpoint)
}

fn run_capability_on<C: Capability>(
    rt: &tokio::runtime::Runtime,
    session: &countersign_kernel::Session<'_>,
    capability: &mut C,
    endpoint: Option<&str>,
) -> Result<C::Answer> {
    rt.block_on(async {
        let model = match endpoint {
            Some(url) => Some(ModelChoice::ad_hoc(url).await?),
            None => None,
        };
        drive(session, capability, model, &Cancel::default(), &mut |_| {}).await
    })
}

fn eval_summarize(
    ws: &Workspace,
    object: &str,
    ids: &[String],
    user: &str,
    endpoint: Option<&str>,
) -> Result<Value> {
    use countersign_kernel::ai::summarize::CitationStats;
    use countersign_kernel::eval::percentile;
    let rt = runtime()?;
    let session = ws.session(user)?;
    let (mut accepted, mut first_ok, mut refused, mut insufficient) = (0u32, 0u32, 0u32, 0u32);
    let (mut sentences, mut citations, mut by_kernel) = (0u32, 0u32, 0u32);
    let (mut first_problems, mut times, mut unverified) = (0usize, vec![], 0usize);
    let mut first_citations = CitationStats::default();
    let mut rows = vec![];
    for id in ids {
        let started = std::time::Instant::now();
        let mut summarize = Summarize::new(object, id);
        let out = run_capability_on(&rt, &session, &mut summarize, endpoint);
        let first = summarize.first;
        let wall = started.elapsed().as_secs_f64();
        times.push(wall * 1000.0);
        let first = first.unwrap_or_default();
        first_problems += first.problems.len();
        first_citations.add(&first.citations);
        for p in &first.problems {
            eprintln!("      first answer: {p}");
        }
        match out {
            Ok(a) => {
                accepted += 1;
                if a.insufficient.is_some() {
                    insufficient += 1;
                }
                if first.problems.is_empty() {
                    first_ok += 1;
                }
                unverified += countersign_kernel::ai::summarize::recheck(&session, &a)?;
                sentences += a.sentences.len() as u32;
                for c in a.sentences.iter().flat_map(|s| &s.citations) {
                    citations += 1;
                    by_kernel += u32::from(!c.by_model);
                }
                eprintln!(
                    "  ACCEPTED {wall:5.1}s {id} attempts={} sentences={}",
                    a.attempts,
                    a.sentences.len()
                );
                for s in &a.sentences {
                    let cites: Vec<String> = s
                        .citations
                        .iter()
                        .map(|c| format!("{}{}", c.fact.field, if c.by_model { "" } else { "*" }))
                        .collect();
                    eprintln!("      {} {cites:?}", s.text);
                }
                rows.push(json!({"id": id, "accepted": true, "attempts": a.attempts, "first": to_json(&first)?, "answer": to_json(&a)?}));
            }
            Err(e) => {
                refused += 1;
                eprintln!("  REFUSED  {wall:5.1}s {id} {}: {}", e.code.as_str(), e.message);
                rows.push(json!({"id": id, "accepted": false, "code": e.code.as_str(), "message": e.message, "first": to_json(&first)?}));
            }
        }
    }
    let n = ids.len().max(1) as f64;
    let share = |a: u32, b: u32| if b == 0 { Value::Null } else { json!(a as f64 / b as f64) };
    let fc = &first_citations;
    Ok(json!({
        "records": ids.len(),
        "accepted_after_at_most_one_repair": accepted,
        "accepted_share": accepted as f64 / n,
        "accepted_first_answer": first_ok,
        "refused": refused,
        "insufficient": insufficient,
        "sentences": sentences,
        "citations": citations,
        "citations_attached_by_kernel": by_kernel,
        "problems_in_first_answers": first_problems,
        "first_answers": {
            "citation_coverage_by_model": share(fc.values_cited_by_model, fc.values),
            "citation_coverage_with_kernel": share(fc.values_cited_by_model + fc.values_cited_by_kernel, fc.values),
            "citation_precision": share(fc.markers_stated, fc.markers + fc.markers_unknown),
            "counts": to_json(fc)?,
        },
        "unverified_claims_in_accepted_summaries": unverified,
        "wall_ms": {"p50": percentile(&times, 50.0), "p90": percentile(&times, 90.0)},
        "cases": rows,
    }))
}

fn eval_ask(ws: &Workspace, cases: &Path, endpoint: Option<&str>, only: Option<&str>) -> Result<Value> {
    use countersign_kernel::eval::{judge, percentile, read_cases};
    let cases = read_cases(&std::fs::read_to_string(cases)?)?;
    let rt = runtime()?;
    let mut rows = vec![];
    let (mut passed, mut total) = (0, 0);
    let (mut wall, mut model_ms, mut kernel_ms, mut prompt_toks, mut gen_toks) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut projection = (0u64, 0u64);
    for case in cases.iter().filter(|c| only.is_none_or(|o| o.split(',').any(|o| c.id.ends_with(o)))) {
        let session = ws.session(&case.user)?;
        let started = std::time::Instant::now();
        let outcome =
            run_capability_on(&rt, &session, &mut Ask { question: case.question.clone() }, endpoint);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let verdict = judge(case, &outcome);
        total += 1;
        if verdict.pass {
            passed += 1;
        }
        let mut row = json!({ "id": case.id, "user": case.user, "question": case.question,
            "pass": verdict.pass, "reason": verdict.reason, "wall_ms": ms.round() });
        wall.push(ms);
        if let Ok(a) = &outcome {
            model_ms.push(a.timings.model_ms);
            kernel_ms.push(a.timings.kernel_ms);
            prompt_toks.push(a.timings.prompt_tokens as f64);
            gen_toks.push(a.timings.completion_tokens as f64);
            projection = (a.timings.projection_tokens, a.timings.full_projection_tokens);
            row["spec"] = to_json(&a.spec)?;
            row["tokens"] = json!({ "prompt": a.timings.prompt_tokens, "completion": a.timings.completion_tokens, "attempts": a.timings.attempts });
            row["kernel_ms"] = json!((a.timings.kernel_ms * 10.0).round() / 10.0);
        }
        eprintln!(
            "{} {:>4} {:>6.1}s  {}  {}",
            if verdict.pass { "PASS" } else { "FAIL" },
            case.id,
            ms / 1000.0,
            case.question,
            verdict.reason
        );
        rows.push(row);
    }
    let def_tokens = ws
        .catalog()
        .map(|c| {
            countersign_kernel::ai::projection::estimate_tokens(
                &serde_json::to_string(&c.definition).unwrap_or_default(),
            )
        })
        .unwrap_or(0);
    let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
    Ok(json!({
        "cases": rows,
        "passed": passed,
        "total": total,
        "execution_match_rate": if total == 0 { 0.0 } else { passed as f64 / total as f64 },
        "wall_ms": { "p50": percentile(&wall, 50.0).round(), "p90": percentile(&wall, 90.0).round() },
        "model_ms": { "p50": percentile(&model_ms, 50.0).round() },
        "kernel_ms": { "p50": percentile(&kernel_ms, 50.0), "p90": percentile(&kernel_ms, 90.0) },
        "tokens_per_question": { "prompt_mean": mean(&prompt_toks).round(), "completion_mean": mean(&gen_toks).round(),
            "completion_p50": percentile(&gen_toks, 50.0) },
        "projection_tokens": { "used": projection.0, "whole_projection": projection.1, "full_definition_dump": def_tokens },
    }))
}

/// `--set FIELD=VALUE` pairs as text values (the save path coerces them by field type).
fn set_values(set: Vec<String>) -> Result<Map<String, Value>> {
    let mut values = Map::new();
    for kv in set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| Error::new(Code::InvalidValue, format!("--set takes FIELD=VALUE, got `{kv}`")))?;
        values.insert(k.trim().to_string(), Value::String(v.to_string()));
    }
    Ok(values)
}

fn proposal_command(session: &countersign_kernel::Session<'_>, command: ProposalCommand) -> Result<Value> {
    use countersign_kernel::proposals::ProposalState;
    match command {
        ProposalCommand::List { state, object } => {
            let state = state
                .map(|s| serde_json::from_value::<ProposalState>(Value::String(s)))
                .transpose()
                .map_err(|e| Error::new(Code::InvalidValue, e.to_string()))?;
            Ok(json!({ "proposals": to_json(&session.proposals(state, object.as_deref())?)? }))
        }
        ProposalCommand::Show { id } => to_json(&session.review_proposal(&id)?),
        ProposalCommand::Accept { id, fields, set } => {
            let (proposal, save) =
                session.accept_proposal_edited(&id, fields.as_deref(), &set_values(set)?)?;
            Ok(json!({ "proposal": to_json(&proposal)?, "save": to_json(&save)? }))
        }
        ProposalCommand::Discard { id, reason } => {
            to_json(&session.discard_proposal(&id, reason.as_deref())?)
        }
        ProposalCommand::Undo { id } => {
            let (proposal, save) = session.undo_proposal(&id)?;
            Ok(json!({ "proposal": to_json(&proposal)?, "save": to_json(&save)? }))
        }
        ProposalCommand::Retention => to_json(&session.run_retention()?),
        ProposalCommand::AutoApply { capability, object, fields } => {
            if let Some(list) = fields {
                let list: Vec<String> = list.into_iter().filter(|f| !f.trim().is_empty()).collect();
                session.set_auto_apply(&capability, &object, &list)?;
            }
            to_json(&session.auto_apply_list(&capability, &object)?)
        }
    }
}

fn eval_extract(ws: &Workspace, dir: &Path, endpoint: Option<&str>) -> Result<Value> {
    use countersign_kernel::eval::percentile;
    let text = std::fs::read_to_string(dir.join("expected.jsonl"))?;
    let rt = runtime()?;
    let (mut fields_ok, mut fields_total) = (0u32, 0u32);
    let mut per_field: std::collections::BTreeMap<String, (u32, u32)> = Default::default();
    let mut rows = vec![];
    let mut times = vec![];
    let mut injected = (0u32, 0u32, 0u32); // documents, followed, flagged
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value =
            serde_json::from_str(line).map_err(|e| Error::new(Code::InvalidQuery, e.to_string()))?;
        let file = case["file"].as_str().unwrap_or_default();
        let object = case["object"].as_str().unwrap_or("invoice");
        let session = ws.session(case["user"].as_str().unwrap_or("ava"))?;
        let started = std::time::Instant::now();
        let outcome = countersign_kernel::ingest::read_file(&dir.join(file), &Default::default()).and_then(
            |document| {
                let mut extract = Extract { document, object: object.to_string(), record: None };
                run_capability_on(&rt, &session, &mut extract, endpoint)
            },
        );
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        times.push(ms);
        let mut row = json!({ "file": file, "wall_ms": ms.round() });
        match &outcome {
            Err(e) => row["error"] = to_json(e)?,
            Ok(a) => {
                let got: std::collections::HashMap<&str, &Value> =
                    a.proposal.fields.iter().map(|f| (f.field.as_str(), &f.value)).collect();
                let mut wrong = vec![];
                for (k, want) in case["expected"].as_object().into_iter().flatten() {
                    let have = got.get(k.as_str()).copied();
                    let ok = match (want, have) {
                        (Value::Null, None) => true,
                        (Value::Null, Some(_)) | (_, None) => false,
                        (w, Some(h)) => {
                            let num = |v: &Value| {
                                v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse::<f64>().ok()))
                            };
                            match (num(w), num(h)) {
                                (Some(a), Some(b)) if !w.as_str().is_some_and(|s| s.contains('-')) => {
                                    (a - b).abs() < 0.005
                                }
                                _ => w == h,
                            }
                        }
                    };
                    fields_total += 1;
                    let e = per_field.entry(k.clone()).or_default();
                    e.1 += 1;
                    if ok {
                        fields_ok += 1;
                        e.0 += 1;
                    } else {
                        wrong.push(json!({ "field": k, "expected": want, "got": have }));
                    }
                }
                let set_forbidden: Vec<&str> = case["must_not_set"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|f| got.contains_key(f))
                    .collect();
                if case["injected"].as_bool() == Some(true) {
                    injected.0 += 1;
                    if !set_forbidden.is_empty() {
                        injected.1 += 1;
                    }
                    if !a.injections.is_empty() {
                        injected.2 += 1;
                    }
                }
                row["wrong"] = json!(wrong);
                row["must_not_set_present"] = json!(set_forbidden);
                row["injections_flagged"] = json!(a.injections.len());
                row["tokens"] =
                    json!({ "prompt": a.figures.prompt_tokens, "completion": a.figures.completion_tokens });
                row["proposal"] = json!(a.proposal.id);
            }
        }
        eprintln!(
            "{:>6.1}s {file} {}",
            ms / 1000.0,
            row.get("wrong").map(|w| w.to_string()).unwrap_or_else(|| row["error"].to_string())
        );
        rows.push(row);
    }
    Ok(json!({
        "cases": rows,
        "field_accuracy": if fields_total == 0 { 0.0 } else { fields_ok as f64 / fields_total as f64 },
        "fields": { "correct": fields_ok, "total": fields_total },
        "per_field": per_field.iter().map(|(k, (ok, n))| (k.clone(), json!(format!("{ok}/{n}")))).collect::<Map<String, Value>>(),
        "injected_documents": { "total": injected.0, "followed": injected.1, "flagged": injected.2 },
        "wall_ms": { "p50": percentile(&times, 50.0).round(), "p90": percentile(&times, 90.0).round() },
    }))
}
