//! The built-in runtime's own rules, with a stand-in for `llama-server` (a small Python program
//! that takes a while to "load", then answers `/health` on the port it is given) — the real
//! server and model are `real_model::built_in_runtime`:
//! - callers during a start wait for it: none is handed the address of a server still loading;
//! - serving the same file again after `runtime.crashed` is the person's retry, and renews it;
//! - the machine's run settings (threads, context) are checked, kept, and replace a runtime
//!   serving with others.

use crate::common;
use countersign_kernel::ai::runtime::{self, process, RunSettings};
use countersign_kernel::error::Code;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A stand-in `llama-server`: waits `LOAD_SECONDS`, then answers `/health` on `--port`, and
/// writes one line to `$FAKE_STARTS` per start.
const STAND_IN: &str = r#"#!/usr/bin/env python3
import http.server, os, sys, time
with open(os.environ["FAKE_STARTS"], "a") as f:
    f.write("start\n")
time.sleep(LOAD_SECONDS)
port = int(sys.argv[sys.argv.index("--port") + 1])
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"status":"ok"}')
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"#;

struct Machine {
    dir: tempfile::TempDir,
    model: PathBuf,
}

impl Machine {
    /// An app-data folder with a model file, and the stand-in server found through the
    /// environment (nextest runs each test in its own process).
    fn new(load_seconds: f64) -> Machine {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let server = dir.path().join("llama-server");
        std::fs::write(&server, STAND_IN.replace("LOAD_SECONDS", &load_seconds.to_string())).unwrap();
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::env::set_var("COUNTERSIGN_LLAMA_SERVER", &server);
        std::env::set_var("FAKE_STARTS", dir.path().join("starts"));
        let models = runtime::models_dir(dir.path());
        std::fs::create_dir_all(&models).unwrap();
        let model = models.join("mine.gguf");
        std::fs::write(&model, b"GGUF").unwrap();
        Machine { dir, model }
    }

    fn app_data(&self) -> &Path {
        self.dir.path()
    }

    fn starts(&self) -> usize {
        std::fs::read_to_string(self.dir.path().join("starts")).map_or(0, |s| s.lines().count())
    }
}

fn port(base_url: &str) -> u16 {
    base_url.trim_start_matches("http://127.0.0.1:").trim_end_matches("/v1").parse().unwrap()
}

fn kill(pid: u32) {
    // SAFETY: kill(2) with a pid this test read from the runtime's status.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
}

fn seen_dead(runtime: &process::Runtime) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if !runtime.status().running {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_during_a_start_wait_for_the_model_and_serving_again_renews_a_crashed_runtime() {
    let machine = Machine::new(1.0);
    let served = runtime::serve(machine.app_data(), machine.model.clone()).unwrap();
    assert!(!served.status().running, "nothing starts before the first use");

    // Two calls at once while the server loads: one start, and both are handed the address
    // only once it answers.
    let call = || {
        let served = served.clone();
        async move {
            let endpoint = served.endpoint().await.unwrap();
            let ready = process::healthy(port(&endpoint.base_url)).await;
            (endpoint.base_url, ready)
        }
    };
    let (first, second) = tokio::join!(tokio::spawn(call()), tokio::spawn(call()));
    let (first, second) = (first.unwrap(), second.unwrap());
    assert!(first.1 && second.1, "a caller was handed a server still loading: {first:?} {second:?}");
    assert_eq!(first.0, second.0);
    assert_eq!(machine.starts(), 1);

    // Died twice: runtime.crashed, and it stays down.
    kill(served.status().pid.unwrap());
    assert!(seen_dead(&served));
    served.endpoint().await.unwrap();
    kill(served.status().pid.unwrap());
    assert!(seen_dead(&served));
    assert_eq!(served.endpoint().await.unwrap_err().code, Code::RuntimeCrashed);
    assert!(served.has_failed());
    assert_eq!(machine.starts(), 2);

    // "Use" the same model again (Settings): the same runtime, renewed, serving again.
    let again = runtime::serve(machine.app_data(), machine.model.clone()).unwrap();
    assert!(Arc::ptr_eq(&again, &served));
    assert!(!again.has_failed());
    again.endpoint().await.unwrap();
    assert_eq!(machine.starts(), 3);
    runtime::set_built_in(None);
}

#[test]
fn the_run_settings_are_checked_kept_and_replace_the_runtime_serving_with_others() {
    let machine = Machine::new(0.0);
    let f = common::demo();
    let (ava, ben) = (f.ws.session("ava").unwrap(), f.ws.session("ben").unwrap());
    assert_eq!(RunSettings::read(machine.app_data()), RunSettings::default());
    let served = runtime::serve(machine.app_data(), machine.model.clone()).unwrap();
    assert_eq!(served.settings().threads, process::cores());
    assert_eq!(served.settings().context, 4096);

    let wanted = RunSettings { threads: Some(1), context: 8192 };
    let e = runtime::set_run_settings(&ben, machine.app_data(), wanted).unwrap_err();
    assert_eq!(e.code, Code::Permission);
    for (bad, field) in [
        (RunSettings { threads: Some(0), context: 4096 }, "threads"),
        (RunSettings { threads: Some(process::cores() + 1), context: 4096 }, "threads"),
        (RunSettings { threads: None, context: 100 }, "context"),
        (RunSettings { threads: None, context: 1 << 20 }, "context"),
    ] {
        let e = runtime::set_run_settings(&ava, machine.app_data(), bad).unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), (Code::InvalidValue, Some(field)), "{bad:?}");
    }
    assert_eq!(RunSettings::read(machine.app_data()), RunSettings::default(), "nothing refused was kept");
    assert!(Arc::ptr_eq(&runtime::built_in().unwrap(), &served));

    runtime::set_run_settings(&ava, machine.app_data(), wanted).unwrap();
    assert_eq!(RunSettings::read(machine.app_data()), wanted);
    let now = runtime::built_in().unwrap();
    assert!(!Arc::ptr_eq(&now, &served), "the runtime serving with the old settings is replaced");
    assert_eq!(
        (now.settings().threads, now.settings().context, now.model()),
        (1, 8192, machine.model.as_path())
    );
    // Serving the same file with the same settings keeps it (the app's start, a second "Use").
    assert!(Arc::ptr_eq(&runtime::serve(machine.app_data(), machine.model.clone()).unwrap(), &now));
    // An unreadable settings file is the defaults, not a failure.
    std::fs::write(machine.app_data().join("built-in-model.json"), b"{ not json").unwrap();
    assert_eq!(RunSettings::read(machine.app_data()), RunSettings::default());
    runtime::set_built_in(None);
}
