//! The built-in model from the command line: `model catalog`, `model install NAME|--file PATH`
//! and `runtime start|stop|status`. Models live in the app's data folder (`models/`), the same
//! one the desktop app uses. `runtime start` holds the runtime in the foreground until it is
//! stopped (Ctrl-C, or `runtime stop` from another shell, which finds it through
//! `runtime.json` in the same folder).

use crate::ai::runtime as async_runtime;
use crate::output::to_json;
use crate::providers::ModelCommand;
use clap::Subcommand;
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::runtime::{self, catalog, process};
use countersign_kernel::error::{Code, Error, Result};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Subcommand)]
pub enum RuntimeCommand {
    /// Start the built-in runtime and hold it until Ctrl-C or `runtime stop`.
    Start {
        /// A catalog model (installed with `model install`).
        #[arg(long, conflicts_with = "file", required_unless_present = "file")]
        model: Option<String>,
        /// Or any GGUF file.
        #[arg(long)]
        file: Option<PathBuf>,
        /// The llama-server program. Default: $COUNTERSIGN_LLAMA_SERVER, else beside
        /// Countersign, else on PATH.
        #[arg(long)]
        server: Option<PathBuf>,
        /// CPU threads. Default: the app's setting (Settings → Built-in model), else one per core.
        #[arg(long)]
        threads: Option<u32>,
        /// The context window in tokens. Default: the app's setting, else 4096.
        #[arg(long)]
        context: Option<u32>,
    },
    /// Stop the runtime `runtime start` holds.
    Stop,
    /// Whether it runs, and where.
    Status,
}

/// The app's data folder (where the desktop app keeps its workspace, models and runtime state).
fn app_data() -> Result<PathBuf> {
    crate::workspace::app_data_dir()
        .map(|d| d.join(crate::workspace::APP_IDENTIFIER))
        .ok_or_else(|| Error::new(Code::Storage, "cannot find the app-data directory (set HOME)"))
}

/// `model catalog` and `model install`.
pub fn model_files(command: ModelCommand) -> Result<Value> {
    match command {
        ModelCommand::Catalog => catalog_command(),
        ModelCommand::Install { name, file, from } => install(name, file, from),
        _ => Err(Error::internal("not a model-file command")),
    }
}

fn catalog_command() -> Result<Value> {
    let models = runtime::models_dir(&app_data()?);
    Ok(json!({ "folder": models, "models": to_json(&runtime::catalog_entries(&models))? }))
}

fn install(name: Option<String>, file: Option<PathBuf>, from: Option<String>) -> Result<Value> {
    let models = runtime::models_dir(&app_data()?);
    let installed = match (name, file) {
        (_, Some(file)) => runtime::install_file(&models, &file)?,
        (Some(name), None) => {
            let model = catalog::model(&name)?;
            let mut shown = 0;
            let mut progress = |p: countersign_kernel::ai::runtime::download::Progress| {
                let percent = p.done * 100 / p.total.max(1);
                if percent >= shown + 5 || p.done == p.total {
                    shown = percent;
                    eprint!("\r{name}: {percent}% of {} MiB", p.total >> 20);
                    let _ = std::io::stderr().flush();
                }
            };
            let done = async_runtime()?.block_on(runtime::install(
                &models,
                model,
                runtime::source_url(model, from.as_deref()).as_deref(),
                &Cancel::default(),
                &mut progress,
            ));
            eprintln!();
            done?
        }
        (None, None) => {
            return Err(Error::on_field(Code::InvalidValue, "model", "name a catalog model or give --file"))
        }
    };
    to_json(&installed)
}

pub fn run(command: RuntimeCommand) -> Result<Value> {
    let state_file = app_data()?.join("runtime.json");
    match command {
        RuntimeCommand::Start { model, file, server, threads, context } => {
            let model_path = match (model, file) {
                (_, Some(file)) => file,
                (Some(name), None) => runtime::models_dir(&app_data()?).join(catalog::model(&name)?.file),
                (None, None) => unreachable!("clap requires --model or --file"),
            };
            let configured =
                server.or_else(|| std::env::var_os("COUNTERSIGN_LLAMA_SERVER").map(PathBuf::from));
            let mut settings =
                process::RuntimeSettings::new(process::find_server(configured.as_deref())?, model_path);
            let saved = runtime::RunSettings::read(&app_data()?);
            settings.context = context.unwrap_or(saved.context);
            settings.threads = threads.or(saved.threads).unwrap_or(settings.threads);
            hold(process::Runtime::new(settings), &state_file)
        }
        RuntimeCommand::Status => {
            let Some(state) = read_state(&state_file) else { return Ok(json!({ "running": false })) };
            let port = state["port"].as_u64().unwrap_or_default();
            let healthy = async_runtime()?.block_on(process::healthy(port as u16));
            Ok(
                json!({ "running": true, "healthy": healthy, "holder": state["holder"], "pid": state["pid"], "port": port, "model": state["model"] }),
            )
        }
        RuntimeCommand::Stop => {
            let Some(state) = read_state(&state_file) else {
                return Ok(json!({ "stopped": false, "running": false }));
            };
            let holder = state["holder"].as_i64().unwrap_or_default() as i32;
            terminate(holder)?;
            for _ in 0..100 {
                if !alive(holder) {
                    return Ok(json!({ "stopped": true }));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(Error::new(
                Code::IntegrationTimeout,
                format!("the runtime's process {holder} did not stop within 10 s"),
            ))
        }
    }
}

/// Start the runtime, say where it serves (one JSON line on stdout, and `runtime.json`), and
/// hold it until SIGINT or SIGTERM.
fn hold(runtime: process::Runtime, state_file: &Path) -> Result<Value> {
    let rt = async_runtime()?;
    let endpoint = rt.block_on(runtime.endpoint())?;
    let status = runtime.status();
    let state = json!({ "holder": std::process::id(), "pid": status.pid, "port": status.port, "model": status.model, "baseUrl": endpoint.base_url });
    if let Some(dir) = state_file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(state_file, serde_json::to_vec(&state).map_err(|e| Error::internal(e.to_string()))?)?;
    println!("{state}");
    let _ = std::io::stdout().flush();
    rt.block_on(stopped())?;
    runtime.stop();
    let _ = std::fs::remove_file(state_file);
    Ok(json!({ "stopped": true }))
}

/// Until Ctrl-C (or, on Unix, SIGTERM: what `runtime stop` sends).
async fn stopped() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r,
            _ = term.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await
}

#[cfg(unix)]
fn terminate(pid: i32) -> Result<()> {
    // SAFETY: kill(2) on the pid of the process that holds the runtime (checked alive).
    unsafe { libc::kill(pid, libc::SIGTERM) };
    Ok(())
}

#[cfg(not(unix))]
fn terminate(pid: i32) -> Result<()> {
    Err(Error::new(
        Code::RuntimeUnavailable,
        format!("stop the runtime with Ctrl-C in its window (process {pid})"),
    ))
}

fn read_state(state_file: &Path) -> Option<Value> {
    let state: Value = serde_json::from_slice(&std::fs::read(state_file).ok()?).ok()?;
    let holder = state["holder"].as_i64()? as i32;
    if alive(holder) {
        Some(state)
    } else {
        let _ = std::fs::remove_file(state_file); // left by a holder that was killed
        None
    }
}

/// The process runs (a zombie, dead but not yet reaped by its parent, does not).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => pid > 0 && !stat.rsplit(')').next().unwrap_or_default().trim_start().starts_with('Z'),
        Err(_) => false,
    }
}
