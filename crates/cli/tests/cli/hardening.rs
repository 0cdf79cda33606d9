//! Security findings in the CLI: `deploy` goes through the kernel's permission check, and a
//! reader that closes stdout early (`… | head -1`) ends the CLI quietly.

use crate::common;

use common::cli;
use serde_json::{json, Value};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_countersign-cli");

fn demo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("demo.countersign");
    let (code, _, err) = cli(&ws, &["init", "--demo"]);
    assert_eq!(code, 0, "{err}");
    (dir, ws)
}

fn demo_definition() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/demo/workspace.json"))
            .unwrap(),
    )
    .unwrap()
}

fn opportunities_seen_by(ws: &Path, user: &str) -> usize {
    let (code, out, err) =
        cli(ws, &["--as", user, "query", "--spec", r#"{"object":"opportunity","limit":10000}"#]);
    assert_eq!(code, 0, "{err}");
    out["records"].as_array().unwrap().len()
}

#[test]
fn deploy_needs_a_user_with_metadata_deploy() {
    let (d, ws) = demo();
    // A definition that gives sales reps viewAll.
    let mut def = demo_definition();
    for set in def["permissionSets"].as_array_mut().unwrap() {
        if set["key"] == "sales_rep" {
            set["viewAll"] = json!(true);
        }
    }
    let file = d.path().join("reps-see-all.json");
    std::fs::write(&file, def.to_string()).unwrap();
    let file = file.to_str().unwrap();
    let ben_before = opportunities_seen_by(&ws, "ben");
    assert!(ben_before < opportunities_seen_by(&ws, "ava"));
    for (args, code) in [
        (vec!["--as", "dan", "deploy", file], "permission"),
        (vec!["--as", "ben", "deploy", file, "--force"], "permission"),
        (vec!["--as", "nobody", "deploy", file], "access.unknown_user"),
        (vec!["deploy", file], "access.unknown_user"),
    ] {
        let (exit, out, err) = cli(&ws, &args);
        assert_eq!((exit, err["code"].clone()), (1, json!(code)), "{args:?}: {out} {err}");
    }
    assert_eq!(opportunities_seen_by(&ws, "ben"), ben_before, "a refused deploy changed access");
    let (exit, out, err) = cli(&ws, &["--as", "ava", "deploy", file]);
    assert_eq!((exit, out["generation"].clone()), (0, json!(2)), "{err}");
    assert_eq!(opportunities_seen_by(&ws, "ben"), opportunities_seen_by(&ws, "ava"));
}

#[test]
fn init_from_a_definition_needs_no_user() {
    let dir = tempfile::tempdir().unwrap();
    let mut def = demo_definition();
    def.as_object_mut().unwrap().remove("data");
    let file = dir.path().join("def.json");
    std::fs::write(&file, def.to_string()).unwrap();
    let ws = dir.path().join("w.countersign");
    let (code, _, err) = cli(&ws, &["init", "--definition", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
}

/// Run the CLI with stdout a pipe whose reader takes `read_lines` lines and then closes it.
/// The output is larger than a pipe holds, so the CLI is still writing when it is closed.
fn closed_early(ws: &Path, args: &[&str], read_lines: usize) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .arg("--workspace")
        .arg(ws)
        .args(args)
        .env_remove("COUNTERSIGN_WORKSPACE")
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run cli");
    let stdout = child.stdout.take().unwrap();
    if read_lines > 0 {
        let mut lines = std::io::BufReader::new(stdout).lines();
        for _ in 0..read_lines {
            lines.next().expect("a line").expect("readable");
        }
    }
    // Dropped here: the reading end is closed.
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_closed_stdout_ends_the_cli_quietly() {
    let (_d, ws) = demo();
    // `query … | head -1`: about 150 KB of JSON, the reader takes one line.
    let (code, stderr) = closed_early(
        &ws,
        &["--as", "ava", "query", "--spec", r#"{"object":"invoice_line","limit":10000}"#],
        1,
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    // `export … | head -0`: CSV to stdout, the reader reads nothing.
    let fields = [
        "description",
        "product_code",
        "quantity",
        "unit_price",
        "amount",
        "invoice.number",
        "invoice.notes",
    ];
    let spec = json!({"object": "invoice_line", "fields": fields.repeat(2)}).to_string();
    let (code, stderr) = closed_early(&ws, &["--as", "ava", "export", "--spec", &spec], 0);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
}
