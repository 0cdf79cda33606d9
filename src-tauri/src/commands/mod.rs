//! The IPC commands. Thin by rule: arguments are kernel DTOs, each command makes one kernel
//! call on the current user's session, and errors cross as the kernel's one error shape
//! `{code, fault, message, field?, retriable}` for the UI to branch on.

use crate::desk::{Desk, ModelCalls, UserDesk};
use crate::desktop;
use countersign_kernel::ai::ask::{Ask, AskAnswer, AskProgress, LearnedExample};
use countersign_kernel::ai::assistant;
use countersign_kernel::ai::extract::{Extract, ExtractAnswer};
use countersign_kernel::ai::mcp;
use countersign_kernel::ai::pins::{self, ConnectionReport, PinSettings, ProviderConfig, ProviderSettings};
use countersign_kernel::ai::pipeline::drive::{drive, Capability, Progress};
use countersign_kernel::ai::pipeline::{Activity, CapabilityBinding, TraceEntry, TraceFilter};
use countersign_kernel::ai::provider::{Cancel, ProviderKind, Secret};
use countersign_kernel::ai::runtime::{
    self, download::Progress as DownloadProgress, BuiltInModel, ModelChoice,
};
use countersign_kernel::ai::summarize::{Summarize, SummaryAnswer};
use countersign_kernel::ai::tools::calls::{self, Decision, ToolCallView};
use countersign_kernel::ai::tools::definition::{Effect, Policy, ToolDef, ToolKind};
use countersign_kernel::ai::tools::mcp_servers;
use countersign_kernel::ai::tools::registry::ToolInfo;
use countersign_kernel::backup::Backup;
use countersign_kernel::eval::suites::{
    self, CaseResult, EvalRun, Fitness, FitnessProgress, RunCandidate, Studio, SuiteProgress, SuiteRevision,
};
use countersign_kernel::ingest;
use countersign_kernel::metadata::definition::TermDef;
use countersign_kernel::open::{self, About};
use countersign_kernel::proposals::{AutoApplyList, DiffPart, Proposal, ProposalReview};
use countersign_kernel::recent::RecentWorkspace;
use countersign_kernel::records::counts::RecordCount;
use countersign_kernel::records::csvio::{self, ExportResult};
use countersign_kernel::records::deploy::{DeployPreview, DeployProgress};
use countersign_kernel::records::describe::SeenAs;
use countersign_kernel::records::describe::{ObjectView, UserRights, WorkspaceView};
use countersign_kernel::records::import::{
    self, ImportOptions, ImportProgress, ImportReport, MappingSuggestion, SourceTool, Table, Upload, Watch,
};
use countersign_kernel::records::keyset::Cursor;
use countersign_kernel::records::query::ListView;
use countersign_kernel::records::templates::{self, TemplateSummary};
use countersign_kernel::records::use_index::{UseIndex, UseIndexChange};
use countersign_kernel::records::vocabulary::ObjectVocabulary;
use countersign_kernel::{
    Code, DeployOptions, Error, HistoryEntry, QueryResult, QuerySpec, Record, Result, SaveContext,
    SaveOutcome, SaveRequest, WorkspaceDefinition,
};
use std::path::{Path, PathBuf};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

mod capabilities;
mod definition;
mod models;
mod proposals;
mod records;
mod studio;
mod workspace;

pub use capabilities::*;
pub use definition::*;
pub use models::*;
pub use proposals::*;
pub use records::*;
pub use studio::*;
pub use workspace::*;

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

/// `$COUNTERSIGN_WORKSPACE`, else `demo.countersign` in the OS app-data directory.
pub fn default_workspace_path(app: &AppHandle) -> std::result::Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(p) = std::env::var_os("COUNTERSIGN_WORKSPACE") {
        return Ok(PathBuf::from(p));
    }
    Ok(app.path().app_data_dir()?.join("demo.countersign"))
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

/// The app's data folder (its default workspace, logs, models).
pub fn app_data(app: &AppHandle) -> Result<PathBuf> {
    app.path().app_data_dir().map_err(|e| Error::new(Code::Storage, format!("no app-data folder: {e}")))
}
