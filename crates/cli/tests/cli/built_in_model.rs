//! `model catalog`, `model install` and `runtime start|status|stop`, in a fresh data folder
//! (`XDG_DATA_HOME`). The runtime test runs the real `llama-server` and model
//! (`COUNTERSIGN_LLAMA_SERVER`, `COUNTERSIGN_MODEL_GGUF`; `scripts/model-test.sh` sets them).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn cli_in(data: &Path, args: &[&str]) -> (i32, Value, Value) {
    crate::common::cli_in(&[("XDG_DATA_HOME", data.to_str().unwrap())], args)
}

fn models_folder(data: &Path) -> std::path::PathBuf {
    data.join("app.countersign.desktop/models")
}

#[test]
fn the_catalog_lists_pinned_models_and_a_picked_file_is_installed_only_if_it_is_what_it_claims() {
    let data = tempfile::tempdir().unwrap();
    let (code, out, err) = cli_in(data.path(), &["model", "catalog"]);
    assert_eq!(code, 0, "{err}");
    let models = out["models"].as_array().unwrap();
    assert!(models.len() >= 2);
    for m in models {
        assert_eq!(m["installed"], false, "{m}");
        assert_eq!(m["sha256"].as_str().unwrap().len(), 64);
        assert!(m["memory"].as_u64().unwrap() > m["size"].as_u64().unwrap());
        assert!(m["fits"].is_boolean(), "this machine says how much memory it has free: {m}");
    }

    // A file named like a catalog model but with other bytes is refused; nothing is copied.
    let picked = tempfile::tempdir().unwrap();
    let fake = picked.path().join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf");
    std::fs::write(&fake, b"GGUF not really").unwrap();
    let (code, _, err) = cli_in(data.path(), &["model", "install", "--file", fake.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(err["code"], "model.checksum", "{err}");
    assert!(!models_folder(data.path()).join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf").exists());

    // A GGUF of the person's own is installed with its digest; a file that is not .gguf is not.
    let own = picked.path().join("my-model.gguf");
    std::fs::write(&own, b"GGUF bytes of my own").unwrap();
    let (code, out, err) = cli_in(data.path(), &["model", "install", "--file", own.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let digest = Command::new("sha256sum").arg(&own).output().unwrap().stdout;
    assert_eq!(out["sha256"], String::from_utf8_lossy(&digest).split(' ').next().unwrap(), "{out}");
    assert_eq!(out["catalog"], Value::Null);
    let installed = models_folder(data.path()).join("my-model.gguf");
    assert_eq!(out["path"], installed.to_str().unwrap());
    assert_eq!(std::fs::read(&installed).unwrap(), b"GGUF bytes of my own");
    let text = picked.path().join("notes.txt");
    std::fs::write(&text, b"hello").unwrap();
    let (code, _, err) = cli_in(data.path(), &["model", "install", "--file", text.to_str().unwrap()]);
    assert_eq!((code, err["code"].as_str()), (1, Some("record.invalid_value")), "{err}");
    let (code, _, err) = cli_in(data.path(), &["model", "install", "qwen-latest"]);
    assert_eq!((code, err["code"].as_str()), (1, Some("record.invalid_value")), "{err}");
}

#[test]
#[ignore = "needs llama-server and the model: scripts/model-test.sh"]
fn real_runtime_started_reported_and_stopped_from_another_shell() {
    let data = tempfile::tempdir().unwrap();
    let gguf = std::env::var("COUNTERSIGN_MODEL_GGUF").expect("COUNTERSIGN_MODEL_GGUF");
    std::env::var("COUNTERSIGN_LLAMA_SERVER").expect("COUNTERSIGN_LLAMA_SERVER");
    let (code, out, _) = cli_in(data.path(), &["runtime", "status"]);
    assert_eq!((code, &out["running"]), (0, &Value::Bool(false)));

    let mut holder = Command::new(env!("CARGO_BIN_EXE_countersign-cli"))
        .args(["runtime", "start", "--file", &gguf, "--threads", "2", "--context", "2048"])
        .env("XDG_DATA_HOME", data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    let started: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let server = started["pid"].as_u64().unwrap();
    assert!(started["baseUrl"].as_str().unwrap().starts_with("http://127.0.0.1:"), "{started}");

    let (code, status, err) = cli_in(data.path(), &["runtime", "status"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(status["running"], true);
    assert_eq!(status["healthy"], true, "{status}");
    assert_eq!(status["pid"], started["pid"]);

    let (code, out, err) = cli_in(data.path(), &["runtime", "stop"]);
    assert_eq!((code, &out["stopped"]), (0, &Value::Bool(true)), "{err}");
    let ended = holder.wait().unwrap();
    assert!(ended.success(), "the holder ends cleanly on SIGTERM: {ended:?}");
    let until = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{server}")).exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!Path::new(&format!("/proc/{server}")).exists(), "llama-server {server} still runs");
    let (_, out, _) = cli_in(data.path(), &["runtime", "status"]);
    assert_eq!(out["running"], false);
}
