//! The built-in runtime: llama.cpp's `llama-server` run by Countersign itself as a child
//! process, on 127.0.0.1 with a port and an API key chosen for each start.
//!
//! - **Started on first use** ([`Runtime::endpoint`]) and health-checked (`/health`) before any
//!   call goes to it.
//! - **Restarted once** after it dies; a second death is the typed error `runtime.crashed` (a
//!   model that kills its server each time would otherwise be restarted forever).
//! - **Never outlives the app**: it is killed when the [`Runtime`] is dropped, and the OS kills it
//!   if the app itself dies (Linux: `PR_SET_PDEATHSIG`). That signal follows the *thread* that
//!   started the child, so every start happens on one thread the runtime keeps for its lifetime.

use crate::ai::provider::{Endpoint, ProviderKind, Secret};
use crate::error::{Code, Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use ts_rs::TS;

/// The name the runtime serves its model under (what a pin names).
pub const SERVED_NAME: &str = "builtin";

/// How the runtime is run.
#[derive(Debug, Clone)]
pub struct RuntimeSettings {
    /// The `llama-server` program.
    pub server: PathBuf,
    /// The GGUF file it serves.
    pub model: PathBuf,
    pub threads: u32,
    /// The context window, in tokens.
    pub context: u32,
    /// How long a start may take (loading the model) before it counts as failed.
    pub start_timeout: Duration,
}

impl RuntimeSettings {
    pub fn new(server: PathBuf, model: PathBuf) -> Self {
        RuntimeSettings {
            server,
            model,
            threads: cores(),
            context: 4096,
            start_timeout: Duration::from_secs(120),
        }
    }
}

/// The CPU cores this process may use (the runtime's threads unless set otherwise).
pub fn cores() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get()) as u32
}

/// Where the app's package put its own `llama-server` (the Linux packages ship one among the
/// app's resources); the app says so once at start.
static SHIPPED: OnceLock<PathBuf> = OnceLock::new();

/// Tell [`find_server`] where the app's package ships `llama-server` (set once; later calls
/// are ignored).
pub fn ship_server_at(path: PathBuf) {
    let _ = SHIPPED.set(path);
}

/// Where `llama-server` is: the configured path; else `$COUNTERSIGN_LLAMA_SERVER`; else the one
/// the app's package ships ([`ship_server_at`]); else beside this program; else on `PATH`.
pub fn find_server(configured: Option<&Path>) -> Result<PathBuf> {
    let from_env = std::env::var_os("COUNTERSIGN_LLAMA_SERVER").map(PathBuf::from);
    if let Some(path) = configured.map(Path::to_path_buf).or(from_env) {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(unavailable(&format!("the llama-server configured ({}) does not exist", path.display())))
        };
    }
    let shipped = SHIPPED.get().cloned();
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|d| d.join("llama-server")));
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|d| d.join("llama-server")).collect::<Vec<_>>())
        .unwrap_or_default();
    shipped.into_iter().chain(beside).chain(on_path).find(|p| p.is_file()).ok_or_else(|| {
        unavailable(
            "no llama-server was found (not at $COUNTERSIGN_LLAMA_SERVER, in Countersign's package, beside Countersign or on PATH): install llama.cpp's server, or set COUNTERSIGN_LLAMA_SERVER to its path",
        )
    })
}

/// What the runtime is doing, for Settings and `runtime status`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeStatus {
    pub running: bool,
    #[ts(type = "number | null")]
    pub pid: Option<u32>,
    pub port: Option<u16>,
    pub model: String,
    /// Starts after a death so far (at most one).
    pub restarts: u32,
}

struct Running {
    child: Child,
    port: u16,
    key: String,
}

impl Running {
    /// The server still runs (reaps it if it has exited).
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// The runtime of one app (or one CLI run).
pub struct Runtime {
    settings: RuntimeSettings,
    state: Mutex<State>,
    /// Held by the one caller that starts the server and waits for it to load; others wait
    /// here, so none is handed the address of a server still loading its model.
    starting: tokio::sync::Mutex<()>,
    starter: Starter,
}

#[derive(Default)]
struct State {
    running: Option<Running>,
    /// It was started once and has died since: the next death is final.
    restarted: bool,
    failed: bool,
}

impl Runtime {
    pub fn new(settings: RuntimeSettings) -> Self {
        Runtime {
            settings,
            state: Mutex::default(),
            starting: tokio::sync::Mutex::new(()),
            starter: Starter::spawn(),
        }
    }

    /// The endpoint to call, starting the runtime if it is not running, and restarting it once
    /// if it died. Callers during a start wait for it to finish.
    pub async fn endpoint(&self) -> Result<Endpoint> {
        let _starting = self.starting.lock().await;
        let (port, key) = {
            let mut state = self.state.lock().map_err(|_| Error::internal("runtime state poisoned"))?;
            if let Some(running) = state.running.as_mut() {
                if running.alive() {
                    return Ok(endpoint(running.port, &running.key));
                }
                tracing::warn!("the built-in runtime died");
                state.running = None;
                if state.restarted {
                    state.failed = true;
                }
                state.restarted = true;
            }
            if state.failed {
                return Err(Error::new(
                    Code::RuntimeCrashed,
                    "the built-in model's runtime stopped twice (it may not fit this machine): use it again in Settings → Built-in model, or restart Countersign",
                ));
            }
            let running = self.starter.start(&self.settings)?;
            let started = (running.port, running.key.clone());
            state.running = Some(running);
            started
        };
        if let Err(e) = wait_healthy(port, &self.settings.start_timeout, || self.exited()).await {
            self.stop();
            return Err(e);
        }
        tracing::info!(port, "the built-in runtime is serving");
        Ok(endpoint(port, &key))
    }

    /// It died twice (`runtime.crashed`) and stays down until [`stop`](Self::stop) renews it.
    pub fn has_failed(&self) -> bool {
        self.state.lock().is_ok_and(|s| s.failed)
    }

    /// How it is run.
    pub fn settings(&self) -> &RuntimeSettings {
        &self.settings
    }

    fn exited(&self) -> bool {
        let Ok(mut state) = self.state.lock() else { return true };
        state.running.as_mut().is_none_or(|r| !r.alive())
    }

    /// Stop it (it starts again on the next use, with its restart allowance renewed).
    pub fn stop(&self) {
        if let Ok(mut state) = self.state.lock() {
            if let Some(mut running) = state.running.take() {
                let _ = running.child.kill();
                let _ = running.child.wait();
                tracing::info!("the built-in runtime was stopped");
            }
            *state = State::default();
        }
    }

    /// The model file it serves.
    pub fn model(&self) -> &Path {
        &self.settings.model
    }

    pub fn status(&self) -> RuntimeStatus {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let restarts = u32::from(state.restarted);
        let alive = state.running.as_mut().is_some_and(Running::alive);
        let live = state.running.as_ref().filter(|_| alive);
        RuntimeStatus {
            running: alive,
            pid: live.map(|r| r.child.id()),
            port: live.map(|r| r.port),
            model: self.settings.model.file_name().unwrap_or_default().to_string_lossy().into_owned(),
            restarts,
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop();
    }
}

fn endpoint(port: u16, key: &str) -> Endpoint {
    let mut endpoint = Endpoint::new(ProviderKind::OpenaiCompatible, format!("http://127.0.0.1:{port}/v1"));
    endpoint.api_key = Some(Secret::new(key.to_string()));
    endpoint
}

/// Whether a `llama-server` on this port of 127.0.0.1 has its model loaded (`/health` says ok).
pub async fn healthy(port: u16) -> bool {
    let Ok(client) = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(2)).build() else {
        return false;
    };
    let url = format!("http://127.0.0.1:{port}/health");
    client.get(url).send().await.is_ok_and(|r| r.status().is_success())
}

/// Wait for the server to be [`healthy`], the child to exit, or the timeout.
async fn wait_healthy(port: u16, timeout: &Duration, exited: impl Fn() -> bool) -> Result<()> {
    let start = Instant::now();
    loop {
        if healthy(port).await {
            return Ok(());
        }
        if exited() {
            return Err(Error::new(
                Code::RuntimeCrashed,
                "the built-in model's runtime stopped while loading the model (is the file a GGUF model this runtime can serve?)",
            ));
        }
        if start.elapsed() > *timeout {
            return Err(Error::new(
                Code::IntegrationTimeout,
                format!("the built-in model did not load within {} s", timeout.as_secs()),
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Starts children on one long-lived thread (see the module's note on `PR_SET_PDEATHSIG`).
struct Starter {
    requests: Mutex<mpsc::Sender<(RuntimeSettings, mpsc::Sender<Result<Running>>)>>,
}

impl Starter {
    fn spawn() -> Self {
        let (tx, rx) = mpsc::channel::<(RuntimeSettings, mpsc::Sender<Result<Running>>)>();
        std::thread::Builder::new()
            .name("runtime-starter".into())
            .spawn(move || {
                for (settings, reply) in rx {
                    let _ = reply.send(start_child(&settings));
                }
            })
            .expect("the runtime's starter thread");
        Starter { requests: Mutex::new(tx) }
    }

    fn start(&self, settings: &RuntimeSettings) -> Result<Running> {
        let (reply, answer) = mpsc::channel();
        self.requests
            .lock()
            .map_err(|_| Error::internal("runtime starter poisoned"))?
            .send((settings.clone(), reply))
            .map_err(|_| Error::internal("the runtime's starter thread is gone"))?;
        answer.recv().map_err(|_| Error::internal("the runtime's starter thread is gone"))?
    }
}

fn start_child(settings: &RuntimeSettings) -> Result<Running> {
    if !settings.model.is_file() {
        return Err(unavailable(&format!("the model file {} is not installed", settings.model.display())));
    }
    let port = free_port()?;
    let key = random_key()?;
    let mut command = Command::new(&settings.server);
    command
        .arg("-m")
        .arg(&settings.model)
        .args(["--alias", SERVED_NAME, "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", &settings.context.to_string(), "-t", &settings.threads.to_string()])
        // The key is read from the environment, so it is not in the process list.
        .env("LLAMA_API_KEY", &key)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    dies_with_parent(&mut command);
    let child = command.spawn().map_err(|e| unavailable(&format!("llama-server could not start: {e}")))?;
    tracing::info!(pid = child.id(), port, "the built-in runtime was started");
    Ok(Running { child, port, key })
}

#[cfg(target_os = "linux")]
fn dies_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl and getppid are async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl: do not run as an orphan.
            if libc::getppid() == 1 {
                return Err(std::io::Error::other("the app is gone"));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn dies_with_parent(_command: &mut Command) {}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

fn random_key() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn unavailable(message: &str) -> Error {
    Error::new(Code::RuntimeUnavailable, message)
}
