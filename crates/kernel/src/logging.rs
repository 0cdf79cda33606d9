//! Logs for a user's bug report: what happened and how long it took.
//!
//! The kernel emits `tracing` events — a workspace opened or migrated, a definition deployed,
//! a record saved, a CSV imported, a document read, each invocation step, each model call.
//! They carry ids, field keys, counts, codes, outcomes and timings; never record values,
//! document text, prompts, model output, error messages (which may quote a value) or keys.
//! `crates/kernel/tests/kernel/logging.rs` plants a canary value and a canary key and checks neither
//! reaches a log.
//!
//! This module installs where the events go: the CLI's standard error when `RUST_LOG` asks for
//! them, or the app's daily log files.

use crate::error::{Error, Result};
use std::path::Path;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::EnvFilter;

/// Log files kept (one a day); older ones are deleted as new days start.
pub const KEPT_FILES: usize = 14;

/// The file names' start: `countersign.2026-12-01.log`.
pub const FILE_PREFIX: &str = "countersign";

/// Keeps the file writer flushing; drop it last (at the end of `main`).
pub struct LogGuard(#[allow(dead_code)] WorkerGuard);

/// The CLI: events to standard error, filtered by `RUST_LOG` (`RUST_LOG=info`,
/// `RUST_LOG=countersign_kernel=debug`); nothing when `RUST_LOG` is unset, so the CLI's output
/// stays what scripts read.
pub fn to_stderr() {
    let Ok(filter) = EnvFilter::try_from_default_env() else { return };
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}

/// The app: events at `info` and above (or as `RUST_LOG` says) to a daily file in `dir`,
/// keeping the newest [`KEPT_FILES`].
pub fn to_files(dir: &Path) -> Result<LogGuard> {
    std::fs::create_dir_all(dir)?;
    let appender = Builder::new()
        .rotation(Rotation::DAILY)
        .filename_prefix(FILE_PREFIX)
        .filename_suffix("log")
        .max_log_files(KEPT_FILES)
        .build(dir)
        .map_err(|e| Error::internal(format!("cannot write logs in {}: {e}", dir.display())))?;
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .map_err(|e| Error::internal(format!("logging was already set up: {e}")))?;
    Ok(LogGuard(guard))
}

/// Milliseconds since `started`, for an event's `ms` field.
pub fn ms_since(started: std::time::Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}
