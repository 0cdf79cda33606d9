//! Running the CLI binary as a user would.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `countersign-cli --workspace WS ARGS…`: exit code, stdout and stderr as JSON (or as a string
/// when they are not JSON).
pub fn cli(ws: &Path, args: &[&str]) -> (i32, Value, Value) {
    let ws = ws.to_str().expect("a UTF-8 path");
    cli_in(&[], &[&["--workspace", ws], args].concat())
}

/// `countersign-cli ARGS…` with `env` set and `COUNTERSIGN_WORKSPACE` unset.
pub fn cli_in(env: &[(&str, &str)], args: &[&str]) -> (i32, Value, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_countersign-cli"))
        .args(args)
        .env_remove("COUNTERSIGN_WORKSPACE")
        .envs(env.iter().copied())
        .output()
        .expect("run cli");
    let parse = |b: &[u8]| {
        serde_json::from_slice(b).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(b).into_owned()))
    };
    (out.status.code().unwrap_or(-1), parse(&out.stdout), parse(&out.stderr))
}
