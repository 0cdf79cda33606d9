//! What the CLI writes: results as JSON on stdout, failures as the kernel's typed error on
//! stderr. A reader of stdout that stops early (`… | head -1`) is noted, not treated as a
//! failure.

use countersign_kernel::{Code, Error, Result};
use serde_json::Value;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when a write to stdout found the reading end closed (EPIPE). Rust ignores SIGPIPE, so
/// the write fails instead of the process dying; `println!` would panic on that failure.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write to stdout found its reader gone.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Stdout for results (JSON, or CSV from `export`): notes a closed pipe in [`STDOUT_CLOSED`].
pub struct Watched<W>(W);

/// Stdout, locked, watched for a closed pipe.
pub fn stdout() -> Watched<std::io::StdoutLock<'static>> {
    Watched(std::io::stdout().lock())
}

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

/// A command's result as pretty JSON on stdout; `null` (a command that wrote its own output)
/// prints nothing.
pub fn print(result: &Value) -> Result<()> {
    if result.is_null() {
        return Ok(());
    }
    let mut out = stdout();
    writeln!(out, "{}", serde_json::to_string_pretty(result).unwrap_or_default())
        .and_then(|()| out.flush())
        .map_err(|e| Error::new(Code::Storage, format!("cannot write the result: {e}")))
}

/// A failure as one line of JSON on stderr.
pub fn print_error(e: &Error) {
    let _ = writeln!(std::io::stderr(), "{}", serde_json::to_string(e).unwrap_or_else(|_| e.to_string()));
}

/// Any kernel answer as a JSON value.
pub fn to_json<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::internal(e.to_string()))
}
