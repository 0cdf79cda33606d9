//! The IPC commands. Thin by rule: arguments are kernel DTOs, each command makes one kernel
//! call on the current user's session, and errors cross as the kernel's one error shape
//! `{code, fault, message, field?, retriable}` for the UI to branch on.

use crate::desktop;
use countersign_kernel::ai::ask::{Ask, AskAnswer, AskProgress, LearnedExample};
use countersign_kernel::ai::assistant;
use countersign_kernel::ai::extract::{Extract, ExtractAnswer};
use countersign_kernel::ai::mcp;
use countersign_kernel::ai::pins::{self, ConnectionReport, PinSettings, ProviderConfig, ProviderSettings};
use countersign_kernel::ai::pipeline::drive::{drive, Capability, Progress, Sessions};
use countersign_kernel::ai::pipeline::{Activity, CapabilityBinding, TraceEntry, TraceFilter};
use countersign_kernel::ai::provider::{Cancel, ProviderKind, Secret};
use countersign_kernel::ai::runtime::{
    self, download::Progress as DownloadProgress, BuiltInModel, ModelChoice,
};
use countersign_kernel::ai::summarize::{Summarize, SummaryAnswer};
use countersign_kernel::backup::Backup;
use countersign_kernel::eval::suites::{
    self, CaseResult, EvalRun, Fitness, FitnessProgress, RunCandidate, Studio, SuiteProgress, SuiteRevision,
};
use countersign_kernel::ingest;
use countersign_kernel::metadata::definition::TermDef;
use countersign_kernel::open::{self, About, Start};
use countersign_kernel::proposals::{AutoApplyList, DiffPart, Proposal, ProposalReview};
use countersign_kernel::recent::RecentWorkspace;
use countersign_kernel::records::csvio::{self, ExportResult, ImportMode, ImportOptions, ImportReport};
use countersign_kernel::records::describe::{ObjectView, UserRights, WorkspaceView};
use countersign_kernel::records::query::ListView;
use countersign_kernel::records::vocabulary::ObjectVocabulary;
use countersign_kernel::{
    Code, Error, HistoryEntry, QueryResult, QuerySpec, Record, Result, SaveContext, SaveOutcome, SaveRequest,
    Session, Workspace, WorkspaceOptions,
};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

/// The open workspace and who is acting in it.
pub struct Desk(Mutex<Open>);

struct Open {
    ws: Workspace,
    user: String,
}

impl Open {
    fn new(ws: Workspace, previous_user: Option<&str>) -> Result<Open> {
        let catalog = ws.catalog()?;
        let user = previous_user
            .filter(|u| catalog.user(u).is_ok_and(|a| a.active))
            .map(str::to_string)
            .or_else(|| catalog.definition.users.iter().find(|u| u.active).map(|u| u.key.clone()))
            .ok_or_else(|| Error::new(Code::UnknownUser, "the workspace has no active user"))?;
        Ok(Open { ws, user })
    }
}

impl Desk {
    /// Open the workspace at `path`; on first run (no file yet) create the demo there.
    pub fn open_or_create_demo(path: &Path) -> Result<Desk> {
        let ws = open::open_or_create_demo(path, WorkspaceOptions::default())?;
        Ok(Desk(Mutex::new(Open::new(ws, None)?)))
    }

    /// Open the existing workspace at `path`.
    pub fn open_at(path: &Path) -> Result<Desk> {
        let ws = open::open(path, WorkspaceOptions::default())?;
        Ok(Desk(Mutex::new(Open::new(ws, None)?)))
    }

    /// The open workspace's file.
    pub fn path(&self) -> PathBuf {
        self.with(|open| Ok(open.ws.path().to_path_buf())).unwrap_or_default()
    }

    /// The daily backup, if due. Best effort (logged).
    pub fn back_up_if_due(&self) {
        if let Err(e) = self.with(|open| open.ws.back_up_if_due()) {
            tracing::warn!(code = e.code.as_str(), "daily backup not taken");
        }
    }

    /// Every command's way to the workspace. A refusal is logged by its code and fault only
    /// (its message may quote a value).
    fn with<T>(&self, f: impl FnOnce(&mut Open) -> Result<T>) -> Result<T> {
        let mut open = self.0.lock().map_err(|_| Error::internal("the workspace lock was poisoned"))?;
        f(&mut open).inspect_err(|e| {
            tracing::info!(code = e.code.as_str(), fault = ?e.fault, retriable = e.retriable, "command refused")
        })
    }

    /// Open the workspace file at `path` in place of the current one, keeping the acting user
    /// if the new workspace has them.
    pub fn open_path(&self, path: &Path) -> Result<WorkspaceView> {
        self.with(|open| {
            let ws = open::open(path, WorkspaceOptions::default())?;
            *open = Open::new(ws, Some(&open.user))?;
            Ok(open.ws.session(&open.user)?.describe_workspace())
        })
    }

    /// Create a workspace file at `path` (the demo, or its objects and users without records)
    /// and open it in place of the current one.
    fn create_at(&self, path: &Path, demo: bool) -> Result<WorkspaceView> {
        self.with(|open| {
            let start = if demo { Start::Demo } else { Start::DemoWithoutRecords };
            let (ws, _) = open::create(path, start, WorkspaceOptions::default())?;
            *open = Open::new(ws, Some(&open.user))?;
            Ok(open.ws.session(&open.user)?.describe_workspace())
        })
    }

    fn session<T>(&self, f: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        self.with(|open| f(&open.ws.session(&open.user)?))
    }

    /// A session of a given user (a long call keeps the user it started with even if the
    /// window switches user meanwhile).
    fn session_of<T>(&self, user: &str, f: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        self.with(|open| f(&open.ws.session(user)?))
    }
}

/// Where the log files are, for Settings; the guard keeps them flushing while the app runs.
pub struct Logs {
    pub folder: PathBuf,
    pub _guard: countersign_kernel::logging::LogGuard,
}

/// `$COUNTERSIGN_LOG_DIR`, else the OS log directory of the app.
pub fn log_folder(app: &AppHandle) -> std::result::Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(p) = std::env::var_os("COUNTERSIGN_LOG_DIR") {
        return Ok(PathBuf::from(p));
    }
    Ok(app.path().app_log_dir()?)
}

/// The folder of the app's log files (Settings shows it, for a bug report).
#[tauri::command]
pub async fn log_location(logs: State<'_, Logs>) -> Result<String> {
    Ok(logs.folder.display().to_string())
}

/// `$COUNTERSIGN_WORKSPACE`, else `demo.countersign` in the OS app-data directory.
pub fn default_workspace_path(app: &AppHandle) -> std::result::Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(p) = std::env::var_os("COUNTERSIGN_WORKSPACE") {
        return Ok(PathBuf::from(p));
    }
    Ok(app.path().app_data_dir()?.join("demo.countersign"))
}

#[tauri::command]
pub async fn app_state(desk: State<'_, Desk>) -> Result<WorkspaceView> {
    desk.session(|s| Ok(s.describe_workspace()))
}

#[tauri::command]
pub async fn open_workspace(app: AppHandle, desk: State<'_, Desk>, path: String) -> Result<WorkspaceView> {
    let view = desk.open_path(Path::new(&path))?;
    desktop::note_recent(&app, Path::new(&path));
    Ok(view)
}

/// Create a workspace file: the full demo, or (`demo: false`) the demo's objects and users
/// with no records.
#[tauri::command]
pub async fn create_workspace(
    app: AppHandle,
    desk: State<'_, Desk>,
    path: String,
    demo: bool,
) -> Result<WorkspaceView> {
    let view = desk.create_at(Path::new(&path), demo)?;
    desktop::note_recent(&app, Path::new(&path));
    Ok(view)
}

/// The native Open dialog, then open the workspace chosen (`None`: cancelled).
#[tauri::command]
pub async fn choose_workspace(app: AppHandle, desk: State<'_, Desk>) -> Result<Option<WorkspaceView>> {
    let Some(path) = desktop::pick_workspace(&app) else { return Ok(None) };
    let view = desk.open_path(&path)?;
    desktop::note_recent(&app, &path);
    Ok(Some(view))
}

/// The native Save dialog, then create the workspace there (`None`: cancelled).
#[tauri::command]
pub async fn choose_new_workspace(
    app: AppHandle,
    desk: State<'_, Desk>,
    demo: bool,
) -> Result<Option<WorkspaceView>> {
    let folder = app.path().document_dir().ok();
    let name = format!("{}.{}", if demo { "demo" } else { "workspace" }, desktop::EXTENSION);
    let filter = ("Countersign workspace", desktop::EXTENSION);
    let Some(mut path) = desktop::save_as(&app, "Create a workspace", folder, &name, filter) else {
        return Ok(None);
    };
    if path.extension().is_none() {
        path.set_extension(desktop::EXTENSION);
    }
    let view = desk.create_at(&path, demo)?;
    desktop::note_recent(&app, &path);
    Ok(Some(view))
}

/// The workspaces opened lately on this machine, newest first.
#[tauri::command]
pub async fn recent_workspaces(app: AppHandle) -> Result<Vec<RecentWorkspace>> {
    Ok(desktop::recent(&app)?.list())
}

#[tauri::command]
pub async fn forget_recent_workspace(app: AppHandle, path: String) -> Result<()> {
    desktop::recent(&app)?.forget(&path)
}

/// The About box: the version, the workspace and its backups, the data and log folders.
#[tauri::command]
pub async fn about(app: AppHandle, desk: State<'_, Desk>, logs: State<'_, Logs>) -> Result<About> {
    let data = app.path().app_data_dir().map_err(|e| Error::internal(format!("no data folder: {e}")))?;
    desk.with(|open| Ok(About::of(&open.ws, &data, &logs.folder)))
}

/// The open workspace's backups, newest first.
#[tauri::command]
pub async fn backups(desk: State<'_, Desk>) -> Result<Vec<Backup>> {
    desk.with(|open| open.ws.backups())
}

#[tauri::command]
pub async fn back_up(desk: State<'_, Desk>) -> Result<Backup> {
    desk.with(|open| open.ws.back_up())
}

/// Replace the open workspace with one of its backups (needs metadata.deploy); what it
/// replaces is backed up first.
#[tauri::command]
pub async fn restore_backup(desk: State<'_, Desk>, path: String) -> Result<WorkspaceView> {
    desk.with(|open| {
        open::restore_open(&mut open.ws, Path::new(&path), &open.user)?;
        Ok(open.ws.session(&open.user)?.describe_workspace())
    })
}

#[tauri::command]
pub async fn switch_user(desk: State<'_, Desk>, user: String) -> Result<WorkspaceView> {
    desk.with(|open| {
        let view = open.ws.session(&user)?.describe_workspace();
        open.user = user;
        Ok(view)
    })
}

#[tauri::command]
pub async fn describe_object(desk: State<'_, Desk>, object: String) -> Result<ObjectView> {
    desk.session(|s| s.describe_object(&object))
}

#[tauri::command]
pub async fn query_records(desk: State<'_, Desk>, spec: QuerySpec) -> Result<QueryResult> {
    desk.session(|s| s.query(&spec))
}

#[tauri::command]
pub async fn get_record(desk: State<'_, Desk>, object: String, id: String) -> Result<Record> {
    desk.session(|s| s.get(&object, &id))
}

#[tauri::command]
pub async fn save_record(desk: State<'_, Desk>, request: SaveRequest) -> Result<SaveOutcome> {
    desk.session(|s| s.save(request, &SaveContext::default()))
}

#[tauri::command]
pub async fn record_history(desk: State<'_, Desk>, object: String, id: String) -> Result<Vec<HistoryEntry>> {
    desk.session(|s| s.history_of(&object, &id))
}

/// Import CSV text (read by the UI from a file the user picked; the app needs no file-system
/// permission for it). `dry_run` is the mapping preview.
#[tauri::command]
pub async fn import_csv(
    desk: State<'_, Desk>,
    object: String,
    content: String,
    mode: ImportMode,
    dry_run: bool,
) -> Result<ImportReport> {
    desk.session(|s| {
        csvio::import_csv(s, &object, content.as_bytes(), &ImportOptions { mode, dry_run, mapping: None })
    })
}

/// Export a list (its query spec, without paging) as CSV to the file the user chooses in the
/// native Save dialog (it opens on the Downloads folder with `name.csv`); `None`: cancelled.
#[tauri::command]
pub async fn export_csv(
    app: AppHandle,
    desk: State<'_, Desk>,
    spec: QuerySpec,
    name: String,
) -> Result<Option<ExportResult>> {
    let folder = app.path().download_dir().or_else(|_| app.path().home_dir()).ok();
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    let Some(path) = desktop::save_as(&app, "Export as CSV", folder, &format!("{safe}.csv"), ("CSV", "csv"))
    else {
        return Ok(None);
    };
    desk.session(|s| {
        let file = std::fs::File::create(&path)?;
        let records = csvio::export_csv(s, &spec, std::io::BufWriter::new(file))?;
        Ok(Some(ExportResult { path: path.display().to_string(), records }))
    })
}

#[tauri::command]
pub async fn provider_settings(desk: State<'_, Desk>) -> Result<ProviderSettings> {
    desk.session(|s| s.provider_settings())
}

/// Add or replace a provider; a key typed with it goes to the OS keyring, never the workspace.
#[tauri::command]
pub async fn save_provider(
    desk: State<'_, Desk>,
    config: ProviderConfig,
    secret: Option<String>,
) -> Result<ProviderSettings> {
    desk.session(|s| {
        // The provider is validated and saved first, so a refused one leaves no key behind.
        s.add_provider(&config)?;
        if let (Some(r), Some(k)) = (&config.credential_ref, secret.filter(|k| !k.is_empty())) {
            s.store_provider_secret(r, &Secret::new(k))?;
        }
        s.provider_settings()
    })
}

#[tauri::command]
pub async fn remove_provider(desk: State<'_, Desk>, key: String) -> Result<ProviderSettings> {
    desk.session(|s| {
        s.remove_provider(&key)?;
        s.provider_settings()
    })
}

/// "Test connection": server kind, models and digests, round-trip time.
#[tauri::command]
pub async fn test_provider(desk: State<'_, Desk>, key: String) -> Result<ConnectionReport> {
    let endpoint = desk.session(|s| s.endpoint(&key))?;
    pins::test_connection(&endpoint).await
}

/// Local model servers answering on the usual ports of 127.0.0.1.
#[tauri::command]
pub async fn discover_providers() -> Result<Vec<ConnectionReport>> {
    Ok(pins::discover().await)
}

/// Pin a model by what the server serves now.
#[tauri::command]
pub async fn pin_model(
    desk: State<'_, Desk>,
    key: String,
    provider: String,
    model: String,
    settings: PinSettings,
) -> Result<ProviderSettings> {
    pins::pin_served_model(
        &UserDesk::current(&desk)?,
        &key,
        &provider,
        &model,
        pins::Weights::Served,
        &settings,
    )
    .await?;
    desk.session(|s| s.provider_settings())
}

/// Check a pin against the server; drift is recorded and refuses calls until repinned.
#[tauri::command]
pub async fn check_model(desk: State<'_, Desk>, key: String) -> Result<ProviderSettings> {
    pins::check_pin(&UserDesk::current(&desk)?, &key).await?;
    desk.session(|s| s.provider_settings())
}

/// Model calls (Ask, Extract, Summarize, suite runs, fitness checks) in flight by the UI's call
/// id, so the UI can cancel one. A cancel that arrives before its call registers is kept, and
/// the call starts cancelled.
#[derive(Default)]
pub struct ModelCalls(Mutex<std::collections::HashMap<String, Cancel>>);

impl ModelCalls {
    fn token(&self, call: &str) -> Result<Cancel> {
        let mut map = self.0.lock().map_err(|_| Error::internal("model call lock poisoned"))?;
        Ok(map.entry(call.to_string()).or_default().clone())
    }

    fn forget(&self, call: &str) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(call);
        }
    }

    /// Register the call `call` for as long as the returned value lives: it is forgotten
    /// however the command returns (an early refusal included).
    fn begin<'a>(&'a self, call: &'a str) -> Result<RunningCall<'a>> {
        Ok(RunningCall { calls: self, call, cancel: self.token(call)? })
    }
}

/// A model call in flight, with its cancel token; forgotten when dropped.
struct RunningCall<'a> {
    calls: &'a ModelCalls,
    call: &'a str,
    cancel: Cancel,
}

impl Drop for RunningCall<'_> {
    fn drop(&mut self) {
        self.calls.forget(self.call);
    }
}

/// Ask: the pipeline's synchronous steps run on the session; the model is awaited with no
/// lock on the workspace held, and progress streams to the UI over `progress`.
#[tauri::command]
pub async fn ask(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    question: String,
    progress: Channel<AskProgress>,
) -> Result<AskAnswer> {
    let running = calls.begin(&call)?;
    run_capability(&desk, &mut Ask { question }, &running.cancel, &progress, false).await
}

/// The user a long call started with, lending the driver a session of that user for each
/// step (the lock on the workspace is held only while the kernel works, never while the model
/// thinks; the window may switch user meanwhile).
struct UserDesk<'a> {
    desk: &'a Desk,
    user: String,
}

impl<'a> UserDesk<'a> {
    fn current(desk: &'a Desk) -> Result<UserDesk<'a>> {
        Ok(UserDesk { desk, user: desk.with(|open| Ok(open.user.clone()))? })
    }
}

impl Sessions for UserDesk<'_> {
    fn with<T>(&self, step: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        self.desk.session_of(&self.user, step)
    }
}

/// Run a capability from the window: its progress goes to the UI over `progress` — which
/// attempt, then the characters written (and, when `stream_text`, the text itself).
async fn run_capability<C: Capability + Send>(
    desk: &Desk,
    capability: &mut C,
    cancel: &Cancel,
    progress: &Channel<AskProgress>,
    stream_text: bool,
) -> Result<C::Answer> {
    let sessions = UserDesk::current(desk)?;
    let mut chars = 0usize;
    let mut report = |p: Progress<'_>| match p {
        Progress::Thinking { attempt } => {
            chars = 0;
            let _ = progress.send(AskProgress::Thinking { attempt });
        }
        Progress::Text(delta) => {
            chars += delta.len();
            if stream_text {
                let _ = progress.send(AskProgress::Text { delta: delta.to_string() });
            }
            let _ = progress.send(AskProgress::Writing { chars: chars as u32 });
        }
    };
    drive(&sessions, capability, None, cancel, &mut report).await
}

/// Activity: trace entries by filter (the reader's own; everyone's with ai.manage), spend by
/// day from `since`, budgets and the retention window.
#[tauri::command]
pub async fn activity(desk: State<'_, Desk>, filter: TraceFilter, since: String) -> Result<Activity> {
    desk.session(|s| s.activity(&filter, &since))
}

/// One trace entry with its prompt and raw output (values the reader cannot read hidden).
#[tauri::command]
pub async fn trace_detail(desk: State<'_, Desk>, id: String) -> Result<TraceEntry> {
    desk.session(|s| s.trace(&id))
}

/// Keep trace entries this many days (ai.manage); older ones are rolled up into the spend.
#[tauri::command]
pub async fn set_trace_days(desk: State<'_, Desk>, days: i64) -> Result<()> {
    desk.session(|s| s.set_trace_days(days))
}

/// The AI studio: capabilities with their bindings, prompt versions, suites and runs.
#[tauri::command]
pub async fn ai_studio(desk: State<'_, Desk>) -> Result<Studio> {
    desk.session(|s| s.studio())
}

#[tauri::command]
pub async fn prompt_diff(desk: State<'_, Desk>, prompt: String, a: i64, b: i64) -> Result<Vec<DiffPart>> {
    desk.session(|s| s.prompt_diff(&prompt, a, b))
}

/// Publish the next version of an eval suite as a change to its latest (ai.author).
#[tauri::command]
pub async fn revise_suite(desk: State<'_, Desk>, suite: String, revision: SuiteRevision) -> Result<i64> {
    desk.session(|s| s.revise_suite(&suite, &revision))
}

/// A new prompt version from `base` with new instructions (not activated).
#[tauri::command]
pub async fn publish_prompt(
    desk: State<'_, Desk>,
    prompt: String,
    base: i64,
    instructions: String,
) -> Result<i64> {
    desk.session(|s| s.publish_prompt_from(&prompt, base, &instructions))
}

/// Activate a prompt version through the eval gate (`overrideReason`: ai.manage's written reason).
#[tauri::command]
pub async fn activate_prompt(
    desk: State<'_, Desk>,
    prompt: String,
    version: i64,
    override_reason: Option<String>,
) -> Result<()> {
    desk.session(|s| s.activate_prompt_with(&prompt, version, override_reason.as_deref()))
}

/// Bind a model pin to a capability through the eval gate.
#[tauri::command]
pub async fn bind_model(
    desk: State<'_, Desk>,
    capability: String,
    model_pin: Option<String>,
    override_reason: Option<String>,
) -> Result<CapabilityBinding> {
    desk.session(|s| s.bind_model(&capability, model_pin.as_deref(), override_reason.as_deref()))
}

/// The model fitness check: every suite on `model_pin`, beside the current model's runs; each
/// judged case is sent over `progress`; `cancel_model_call(call)` stops it.
/// The built-in model: the catalog, what is installed, whether a `llama-server` was found, what
/// runs, and whether this user may turn it on.
#[tauri::command]
pub async fn built_in_model(app: AppHandle, desk: State<'_, Desk>) -> Result<BuiltInModel> {
    let data = app_data(&app)?;
    desk.session(|s| Ok(s.built_in_model(&data)))
}

/// "Use the built-in model" (one click, `ai.manage`): install a catalog model (`model`, or the
/// one chosen for this machine; from `source` when given) with its download's progress over
/// `progress`, serve it, pin it and bind it where no model is bound. `cancel_model_call(call)` stops the download (what was
/// fetched is kept).
#[tauri::command]
pub async fn turn_on_built_in_model(
    app: AppHandle,
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    model: Option<String>,
    source: Option<String>,
    progress: Channel<DownloadProgress>,
) -> Result<countersign_kernel::ai::pipeline::ModelInUse> {
    let running = calls.begin(&call)?;
    let data = app_data(&app)?;
    let sessions = UserDesk::current(&desk)?;
    let choice = match model.as_deref() {
        Some(name) => ModelChoice::Catalog { name, source: source.as_deref() },
        None => ModelChoice::Chosen,
    };
    runtime::turn_on(&sessions, &data, choice, &running.cancel, &mut |p| {
        let _ = progress.send(p);
    })
    .await
}

/// The native Open dialog for a GGUF model file, then it is installed, served and pinned as the
/// built-in model (`None`: cancelled).
#[tauri::command]
pub async fn choose_built_in_model_file(
    app: AppHandle,
    desk: State<'_, Desk>,
) -> Result<Option<countersign_kernel::ai::pipeline::ModelInUse>> {
    let Some(path) = desktop::pick_model_file(&app) else { return Ok(None) };
    let data = app_data(&app)?;
    let sessions = UserDesk::current(&desk)?;
    runtime::turn_on(&sessions, &data, ModelChoice::File(&path), &Cancel::default(), &mut |_| {})
        .await
        .map(Some)
}

/// How this machine runs the built-in model (threads, context; `ai.manage`). A running one
/// restarts with them on its next use.
#[tauri::command]
pub async fn set_built_in_settings(
    app: AppHandle,
    desk: State<'_, Desk>,
    settings: runtime::RunSettings,
) -> Result<runtime::RunSettings> {
    let data = app_data(&app)?;
    runtime::set_run_settings(&UserDesk::current(&desk)?, &data, settings)
}

/// "Use this server" on the first-run offer: a model server found on this machine is added,
/// its model pinned and bound where no model is bound (`ai.manage`).
#[tauri::command]
pub async fn use_found_server(
    desk: State<'_, Desk>,
    kind: ProviderKind,
    base_url: String,
    model: String,
) -> Result<countersign_kernel::ai::pipeline::ModelInUse> {
    countersign_kernel::ai::pipeline::use_found_server(&UserDesk::current(&desk)?, kind, &base_url, &model)
        .await
}

/// Settings → "Use your records from other AI apps": the MCP server of this workspace, its
/// tools, and how the usual AI apps run it as this user.
#[tauri::command]
pub async fn mcp_setup(app: AppHandle, desk: State<'_, Desk>) -> Result<mcp::ServerSetup> {
    let program = desktop::mcp_program(&app);
    desk.session(|s| s.mcp_setup(&program))
}

/// Turn the MCP server and its tools on or off (`ai.manage`).
#[tauri::command]
pub async fn set_mcp_settings(
    app: AppHandle,
    desk: State<'_, Desk>,
    settings: mcp::ServerSettings,
) -> Result<mcp::ServerSetup> {
    let program = desktop::mcp_program(&app);
    desk.session(|s| {
        s.set_mcp_settings(&settings)?;
        s.mcp_setup(&program)
    })
}

/// A file dropped on the assistant: its name and bytes.
#[derive(serde::Deserialize)]
pub struct DroppedFile {
    name: String,
    bytes: Vec<u8>,
}

/// One turn of the assistant as the acting user (with a dropped document to extract, if any):
/// each step's progress over `progress`; `cancel_model_call(call)` stops the model call running.
#[tauri::command]
#[allow(clippy::too_many_arguments)]
pub async fn assistant_turn(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    conversation: Option<String>,
    text: String,
    context: Option<assistant::ScreenContext>,
    document: Option<DroppedFile>,
    progress: Channel<assistant::TurnProgress>,
) -> Result<assistant::Turn> {
    let running = calls.begin(&call)?;
    let document = match document {
        Some(f) => Some(read_dropped(f.name, f.bytes).await?),
        None => None,
    };
    let request = assistant::TurnRequest { conversation, text, context, document };
    assistant::take_turn(&UserDesk::current(&desk)?, request, &running.cancel, &mut |p| {
        let _ = progress.send(p);
    })
    .await
}

/// The acting user's conversations with the assistant, newest first.
#[tauri::command]
pub async fn conversations(desk: State<'_, Desk>) -> Result<Vec<assistant::ConversationSummary>> {
    desk.session(|s| s.conversations())
}

/// One of the acting user's conversations, its tables read again through their session.
#[tauri::command]
pub async fn conversation(desk: State<'_, Desk>, id: String) -> Result<assistant::Conversation> {
    desk.session(|s| s.conversation(&id))
}

#[tauri::command]
pub async fn revise_result_set(
    desk: State<'_, Desk>,
    conversation: String,
    set: String,
    spec: QuerySpec,
) -> Result<assistant::Conversation> {
    desk.session(|s| s.revise_result_set(&conversation, &set, &spec))
}

#[tauri::command]
pub async fn delete_conversation(desk: State<'_, Desk>, id: String) -> Result<()> {
    desk.session(|s| s.delete_conversation(&id))
}

/// The app's data folder (its default workspace, logs, models).
pub fn app_data(app: &AppHandle) -> Result<PathBuf> {
    app.path().app_data_dir().map_err(|e| Error::new(Code::Storage, format!("no app-data folder: {e}")))
}

#[tauri::command]
pub async fn model_fitness(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    model_pin: String,
    progress: Channel<FitnessProgress>,
) -> Result<Vec<Fitness>> {
    let running = calls.begin(&call)?;
    let sessions = UserDesk::current(&desk)?;
    let mut report = |suite: &str, result: &CaseResult, done: usize, total: usize| {
        let _ = progress.send(FitnessProgress {
            suite: suite.to_string(),
            result: result.clone(),
            done: done as u32,
            total: total as u32,
        });
    };
    suites::fitness(&sessions, &model_pin, &running.cancel, &mut report).await
}

/// Save a capability's whole binding (model, autonomy, scope, timeouts, output cap, budgets,
/// limits) through the eval gate (ai.manage).
#[tauri::command]
pub async fn save_binding(
    desk: State<'_, Desk>,
    binding: CapabilityBinding,
    override_reason: Option<String>,
) -> Result<CapabilityBinding> {
    desk.session(|s| {
        s.bind_capability_with(&binding, override_reason.as_deref())?;
        s.capability(&binding.key)
    })
}

/// Every user's rights, read-only (the definition is where they change).
#[tauri::command]
pub async fn user_rights(desk: State<'_, Desk>) -> Result<Vec<UserRights>> {
    desk.session(|s| s.user_rights())
}

/// Run a capability's eval suite against a prompt version and a model; each judged case is
/// sent over `progress`; `cancel_model_call(call)` stops it.
#[tauri::command]
pub async fn run_eval_suite(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    suite: String,
    prompt_version: Option<i64>,
    model_pin: Option<String>,
    progress: Channel<SuiteProgress>,
) -> Result<EvalRun> {
    let running = calls.begin(&call)?;
    let candidate = RunCandidate { prompt_version, model_pin };
    let sessions = UserDesk::current(&desk)?;
    let mut report = |result: &CaseResult, done: usize, total: usize| {
        let _ =
            progress.send(SuiteProgress { result: result.clone(), done: done as u32, total: total as u32 });
    };
    suites::run_suite(&sessions, &suite, &candidate, &running.cancel, &mut report).await
}

#[tauri::command]
pub async fn cancel_model_call(calls: State<'_, ModelCalls>, call: String) -> Result<()> {
    calls.token(&call)?.cancel();
    Ok(())
}

#[tauri::command]
pub async fn save_list_view(
    desk: State<'_, Desk>,
    name: String,
    spec: QuerySpec,
    source: Option<String>,
) -> Result<ListView> {
    desk.session(|s| s.save_list_view(&name, &spec, source.as_deref()))
}

#[tauri::command]
pub async fn list_views(desk: State<'_, Desk>, object: String) -> Result<Vec<ListView>> {
    desk.session(|s| s.list_views(&object))
}

/// Extract a document (its bytes, read by the UI from a file the user dropped or picked) into
/// a proposal for `object` (or an update of `record`). Reading the document runs off the async
/// runtime; the model is awaited with no lock on the workspace held.
#[tauri::command]
#[allow(clippy::too_many_arguments)]
pub async fn extract(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    name: String,
    bytes: Vec<u8>,
    object: String,
    record: Option<String>,
    progress: Channel<AskProgress>,
) -> Result<ExtractAnswer> {
    let running = calls.begin(&call)?;
    let document = read_dropped(name, bytes).await?;
    run_capability(&desk, &mut Extract { document, object, record }, &running.cancel, &progress, false).await
}

/// A dropped file read into a document (in the reader's own process), off the async threads.
async fn read_dropped(name: String, bytes: Vec<u8>) -> Result<ingest::Document> {
    tauri::async_runtime::spawn_blocking(move || ingest::ingest(&name, bytes, &Default::default()))
        .await
        .map_err(|e| Error::internal(format!("reading the document stopped: {e}")))?
}

/// Summarize a record: the answer streams to the UI as the model writes it (a draft), and the
/// kernel's checked answer, with its citations, is what this returns.
#[tauri::command]
pub async fn summarize(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    object: String,
    id: String,
    progress: Channel<AskProgress>,
) -> Result<SummaryAnswer> {
    let running = calls.begin(&call)?;
    run_capability(&desk, &mut Summarize::new(&object, &id), &running.cancel, &progress, true).await
}

/// The proposals this user may see, newest first (the inbox filters and counts them).
#[tauri::command]
pub async fn proposals(desk: State<'_, Desk>) -> Result<Vec<Proposal>> {
    desk.session(|s| s.proposals(None, None))
}

#[tauri::command]
pub async fn review_proposal(desk: State<'_, Desk>, id: String) -> Result<ProposalReview> {
    desk.session(|s| s.review_proposal(&id))
}

/// Accept all fields (`fields: null`) or the chosen ones, with the reviewer's own values in
/// `edits`, and all child rows (`rows: null`) or the chosen ones, as this user's save.
#[tauri::command]
pub async fn accept_proposal(
    desk: State<'_, Desk>,
    id: String,
    fields: Option<Vec<String>>,
    edits: Option<serde_json::Map<String, serde_json::Value>>,
    rows: Option<Vec<usize>>,
) -> Result<Proposal> {
    desk.session(|s| {
        Ok(s.accept_proposal_edited(&id, fields.as_deref(), &edits.unwrap_or_default(), rows.as_deref())?.0)
    })
}

#[tauri::command]
pub async fn discard_proposal(desk: State<'_, Desk>, id: String, reason: Option<String>) -> Result<Proposal> {
    desk.session(|s| s.discard_proposal(&id, reason.as_deref()))
}

#[tauri::command]
pub async fn undo_proposal(desk: State<'_, Desk>, id: String) -> Result<Proposal> {
    desk.session(|s| Ok(s.undo_proposal(&id)?.0))
}

#[tauri::command]
pub async fn auto_apply_list(
    desk: State<'_, Desk>,
    capability: String,
    object: String,
) -> Result<AutoApplyList> {
    desk.session(|s| s.auto_apply_list(&capability, &object))
}

#[tauri::command]
pub async fn set_auto_apply(
    desk: State<'_, Desk>,
    capability: String,
    object: String,
    fields: Vec<String>,
) -> Result<AutoApplyList> {
    desk.session(|s| {
        s.set_auto_apply(&capability, &object, &fields)?;
        s.auto_apply_list(&capability, &object)
    })
}

/// Keep the user's correction of an answer (the spec they ran or saved after editing it);
/// `None` when the spec is the one the answer ran.
#[tauri::command]
pub async fn learn_from_correction(
    desk: State<'_, Desk>,
    trace_id: String,
    spec: QuerySpec,
) -> Result<Option<LearnedExample>> {
    desk.session(|s| s.ask_learn(&trace_id, &spec))
}

#[tauri::command]
pub async fn learned_examples(desk: State<'_, Desk>) -> Result<Vec<LearnedExample>> {
    desk.session(|s| s.learned_examples())
}

#[tauri::command]
pub async fn forget_example(desk: State<'_, Desk>, id: String) -> Result<()> {
    desk.session(|s| s.forget_example(&id))
}

#[tauri::command]
pub async fn vocabulary(desk: State<'_, Desk>) -> Result<Vec<ObjectVocabulary>> {
    desk.session(|s| s.vocabulary())
}

/// Replace one object's terms (a deploy by the current user).
#[tauri::command]
pub async fn save_terms(desk: State<'_, Desk>, object: String, terms: Vec<TermDef>) -> Result<()> {
    desk.with(|open| open.ws.deploy_terms(&open.user, &object, terms).map(|_| ()))
}
