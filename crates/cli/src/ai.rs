//! The AI capabilities from the command line: running Ask, Summarize and Extract (with a pinned
//! model or a local endpoint), reading documents, and what governs the runs — the trace, prompt
//! versions and capability bindings.

use crate::output::to_json;
use clap::Subcommand;
use countersign_kernel::ai::ask::Ask;
use countersign_kernel::ai::extract::Extract;
use countersign_kernel::ai::pipeline::drive::{drive, Capability};
use countersign_kernel::ai::pipeline::{CapabilityBinding, ModelChoice};
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::summarize::Summarize;
use countersign_kernel::{ingest, Code, Error, Result, Session};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A capability run on the acting user's session.
#[derive(Subcommand)]
pub enum RunCommand {
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
        /// Print the fact sheet a summary of the record stands on (as you may read it), without
        /// calling a model.
        #[arg(long)]
        facts: bool,
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
}

impl RunCommand {
    /// `--demo`: create the demo workspace first when the file does not exist.
    pub fn demo(&self) -> bool {
        match self {
            RunCommand::Ask { demo, .. }
            | RunCommand::Summarize { demo, .. }
            | RunCommand::Extract { demo, .. } => *demo,
        }
    }
}

#[derive(Subcommand)]
pub enum TraceCommand {
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
pub enum PromptCommand {
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
    /// Point the prompt at a version. Needs ai.author, and a passing run of the eval suite of
    /// each capability using the prompt against that version with its model — or --override
    /// REASON (ai.manage), which is recorded.
    Activate {
        key: String,
        version: i64,
        #[arg(long = "override")]
        override_reason: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum BindingCommand {
    Show {
        key: String,
    },
    /// Replace a binding with JSON (the shape `show` prints). Needs ai.manage.
    /// A different model (or prompt) needs a passing run of the capability's eval suite
    /// against it, or --override REASON (ai.manage), which is recorded.
    Set {
        #[arg(long)]
        json: String,
        #[arg(long = "override")]
        override_reason: Option<String>,
    },
}

pub fn run(session: &Session<'_>, command: RunCommand) -> Result<Value> {
    match command {
        RunCommand::Ask { question, endpoint, .. } => {
            to_json(&run_capability(session, &mut Ask { question }, endpoint.as_deref())?)
        }
        RunCommand::Summarize { object, id, facts: true, .. } => {
            Ok(json!({ "facts": session.fact_lines(&object, &id)? }))
        }
        RunCommand::Summarize { object, id, endpoint, .. } => {
            to_json(&run_capability(session, &mut Summarize::new(&object, &id), endpoint.as_deref())?)
        }
        RunCommand::Extract { file, object, record, endpoint, .. } => {
            let document = ingest::read_file(&file, &Default::default())?;
            let mut extract = Extract { document, object, record };
            to_json(&run_capability(session, &mut extract, endpoint.as_deref())?)
        }
    }
}

/// A document (text, Markdown, HTML, .eml, PDF, DOCX) as text with its source map.
pub fn read_document(file: &Path) -> Result<Value> {
    to_json(&ingest::read_file(file, &Default::default())?)
}

#[derive(Subcommand)]
pub enum LearnedCommand {
    /// The kept corrections you may be offered, newest first.
    List,
    /// Keep a correction of one of your Ask answers: the spec (a JSON file) you ran instead.
    Correct {
        trace: String,
        #[arg(long)]
        spec: PathBuf,
    },
    /// Delete a kept correction (its author, or ai.manage).
    Forget { id: String },
}

pub fn learned(session: &Session<'_>, command: LearnedCommand) -> Result<Value> {
    match command {
        LearnedCommand::List => Ok(json!({ "examples": to_json(&session.learned_examples()?)? })),
        LearnedCommand::Correct { trace, spec } => {
            let spec = countersign_kernel::QuerySpec::parse(&std::fs::read_to_string(spec)?)?;
            Ok(json!({ "kept": to_json(&session.ask_learn(&trace, &spec)?)? }))
        }
        LearnedCommand::Forget { id } => {
            session.forget_example(&id)?;
            Ok(json!({ "forgotten": id }))
        }
    }
}

pub fn trace(session: &Session<'_>, command: TraceCommand) -> Result<Value> {
    match command {
        TraceCommand::List { limit } => Ok(json!({ "entries": to_json(&session.traces(limit)?)? })),
        TraceCommand::Show { id } => to_json(&session.trace(&id)?),
        TraceCommand::Spend { since } => Ok(json!({ "spend": to_json(&session.spend(&since)?)? })),
    }
}

pub fn prompt(session: &Session<'_>, command: PromptCommand) -> Result<Value> {
    match command {
        PromptCommand::Show { key } => Ok(json!({ "versions": to_json(&session.prompt_versions(&key)?)? })),
        PromptCommand::Publish { key, instructions, contract } => {
            let v = session.publish_prompt(&key, &std::fs::read_to_string(instructions)?, None, &contract)?;
            Ok(json!({ "prompt": key, "version": v }))
        }
        PromptCommand::Activate { key, version, override_reason } => {
            session.activate_prompt_with(&key, version, override_reason.as_deref())?;
            Ok(json!({ "prompt": key, "activeVersion": version }))
        }
    }
}

pub fn binding(session: &Session<'_>, command: BindingCommand) -> Result<Value> {
    match command {
        BindingCommand::Show { key } => to_json(&session.capability(&key)?),
        BindingCommand::Set { json, override_reason } => {
            let text = match json.strip_prefix('@') {
                Some(p) => std::fs::read_to_string(p)?,
                None => json,
            };
            let binding: CapabilityBinding = serde_json::from_str(&text)
                .map_err(|e| Error::new(Code::InvalidQuery, format!("capability binding: {e}")))?;
            session.bind_capability_with(&binding, override_reason.as_deref())?;
            to_json(&session.capability(&binding.key)?)
        }
    }
}

/// The async runtime model calls and server probes run on (one thread: the CLI does one
/// thing at a time).
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("async runtime: {e}")))
}

/// Run a capability to its answer on this session: with the model at `endpoint` (a local
/// OpenAI-compatible server) for this run, or the capability's pinned model.
fn run_capability<C: Capability>(
    session: &Session<'_>,
    capability: &mut C,
    endpoint: Option<&str>,
) -> Result<C::Answer> {
    run_capability_on(&runtime()?, session, capability, endpoint)
}

/// [`run_capability`] on a runtime the caller keeps (an eval runs many cases on one).
pub fn run_capability_on<C: Capability>(
    rt: &tokio::runtime::Runtime,
    session: &Session<'_>,
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
