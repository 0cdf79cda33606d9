//! `countersign-cli`: the headless face of the kernel, for scripting, evals and benchmarks.
//! Results are JSON on stdout; failures are the kernel's typed error as JSON on stderr with
//! a non-zero exit code (1 for a refused operation, 2 for bad command-line usage).

use clap::{Parser, Subcommand};
use countersign_kernel::csvio::{export_csv, import_csv, ImportMode, ImportOptions};
use countersign_kernel::demo;
use countersign_kernel::{
    Code, DeployOptions, Error, QuerySpec, Result, SaveContext, SaveRequest, Workspace, WorkspaceDefinition,
    WorkspaceOptions,
};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    /// Deploy a definition file as a new metadata generation.
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

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(v) => {
            if !v.is_null() {
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}", serde_json::to_string(&e).unwrap_or_else(|_| e.to_string()));
            ExitCode::from(1)
        }
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
    let (path, is_default) = match &cli.workspace {
        Some(p) => (p.clone(), false),
        None => default_workspace()?,
    };
    if let Command::Init { demo, definition } = &cli.command {
        return init(&path, *demo, definition.as_deref());
    }
    let mut ws = if is_default && !path.exists() {
        // First run: the demo workspace, so the app is useful the first minute.
        let mut ws = Workspace::create(&path, WorkspaceOptions::default())?;
        demo::init_demo(&mut ws)?;
        ws
    } else {
        Workspace::open(&path, WorkspaceOptions::default())?
    };
    if let Command::Deploy { file, force } = &cli.command {
        let def = WorkspaceDefinition::parse(&std::fs::read_to_string(file)?)?;
        let actor = cli.user.clone().unwrap_or_else(|| "cli".into());
        return to_json(&ws.deploy(&def, &DeployOptions { force: *force, actor })?);
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
            let mut values = Map::new();
            for kv in set {
                let (k, v) = kv.split_once('=').ok_or_else(|| {
                    Error::new(Code::InvalidValue, format!("--set takes FIELD=VALUE, got `{kv}`"))
                })?;
                values.insert(k.trim().to_string(), Value::String(v.to_string()));
            }
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
                    let stdout = std::io::stdout();
                    export_csv(&session, &spec, stdout.lock())?;
                    stdout.lock().flush()?;
                    Ok(Value::Null)
                }
            }
        }
        Command::Describe { object } => describe(&session, object.as_deref()),
        Command::Init { .. } | Command::Deploy { .. } | Command::Bench { .. } => {
            unreachable!("handled above")
        }
    }
}

fn init(path: &Path, demo: bool, definition: Option<&Path>) -> Result<Value> {
    if !demo && definition.is_none() {
        return Err(Error::new(Code::InvalidDefinition, "init needs --demo or --definition FILE"));
    }
    let existed = path.exists();
    let result = (|| {
        let mut ws = Workspace::create(path, WorkspaceOptions::default())?;
        let report = match definition {
            None => demo::init_demo(&mut ws)?,
            Some(file) => {
                let def = WorkspaceDefinition::parse(&std::fs::read_to_string(file)?)?;
                let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
                demo::init(&mut ws, &def, &|rel| Ok(std::fs::read_to_string(dir.join(rel))?))?
            }
        };
        Ok(json!({
            "workspace": path,
            "generation": report.deploy.generation,
            "imported": report.imports.iter().map(|r| (r.object.clone(), json!(r.imported))).collect::<Map<_, _>>(),
        }))
    })();
    if result.is_err() && !existed {
        // A failed init leaves no half-made workspace behind.
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
    }
    result
}

fn describe(session: &countersign_kernel::Session<'_>, object: Option<&str>) -> Result<Value> {
    let catalog = session.catalog();
    let mut objects = Vec::new();
    for meta in catalog.objects() {
        if object.is_some_and(|o| o != meta.key()) {
            continue;
        }
        let Ok((_, acc)) = session.readable_object(meta.key()) else { continue };
        let fields: Vec<Value> = meta
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, _)| acc.fields[*i] >= countersign_kernel::definition::FieldLevel::Read)
            .map(|(i, f)| {
                json!({
                    "key": f.key, "label": f.label, "type": f.field_type,
                    "access": acc.fields[i], "required": f.required,
                })
            })
            .collect();
        objects.push(json!({
            "key": meta.key(), "label": meta.def.label,
            "rights": {"read": acc.read, "create": acc.create, "edit": acc.edit, "delete": acc.delete, "viewAll": acc.view_all},
            "fields": fields,
        }));
    }
    if let (Some(o), true) = (object, objects.is_empty()) {
        return Err(Error::new(Code::UnknownObject, format!("no object `{o}`")));
    }
    Ok(json!({ "generation": catalog.generation, "user": session.user().key, "objects": objects }))
}
