//! Opening and creating a workspace for use: what every caller (the app, the CLI, the tests)
//! does the same way, so that behaviour does not depend on who opened the file.
//!
//! Opening registers the shipped capabilities, closes model calls whose process stopped
//! before completing them, and runs the retention job (open proposals past 30 days expire,
//! old decided ones are purged). Creating makes a new file — the demo, a template with or without
//! its sample records, or a definition with its data — and leaves nothing behind when it
//! fails.

use crate::backup::{self, Backup};
use crate::error::{Code, Error, Result};
use crate::metadata::definition::WorkspaceDefinition;
use crate::records::demo::{self, InitReport};
use crate::records::templates::Template;
use crate::records::workspace::{Workspace, WorkspaceOptions};
use std::path::{Path, PathBuf};

/// What a new workspace starts with.
pub enum Start<'a> {
    /// The demo: objects, users and records.
    Demo,
    /// A template (see `records::templates`), with its sample records or without.
    Template { template: &'a Template, records: bool },
    /// A definition, its data files read by `load` (paths relative to the definition).
    Definition { definition: &'a WorkspaceDefinition, load: &'a dyn Fn(&str) -> Result<String> },
    /// No definition yet (deploy one later).
    Empty,
}

/// Open an existing workspace file for use.
pub fn open(path: &Path, opts: WorkspaceOptions) -> Result<Workspace> {
    let ws = Workspace::open(path, opts)?;
    prepare(&ws)?;
    Ok(ws)
}

/// Open the workspace at `path`, creating the demo there first when there is no file yet (the
/// app's and the CLI's first run: useful the first minute).
pub fn open_or_create_demo(path: &Path, opts: WorkspaceOptions) -> Result<Workspace> {
    if path.exists() {
        open(path, opts)
    } else {
        Ok(create(path, Start::Demo, opts)?.0)
    }
}

/// Create a new workspace file at `path`. An existing file is refused
/// (`workspace.already_initialized`); a failure removes the half-made file.
pub fn create(
    path: &Path,
    start: Start<'_>,
    opts: WorkspaceOptions,
) -> Result<(Workspace, Option<InitReport>)> {
    if path.exists() {
        return Err(Error::new(Code::AlreadyInitialized, format!("{} already exists", path.display())));
    }
    let made = (|| {
        let mut ws = Workspace::create(path, opts)?;
        let report = match start {
            Start::Demo => Some(demo::init_demo(&mut ws)?),
            Start::Template { template, records } => Some(template.init(&mut ws, records)?),
            Start::Definition { definition, load } => Some(demo::init(&mut ws, definition, load)?),
            Start::Empty => None,
        };
        prepare(&ws)?;
        Ok((ws, report))
    })();
    if made.is_err() {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
    }
    made
}

/// Replace the workspace file at `path` with the backup at `from`, as `user`, and open it
/// (migrated, after its own backup, if the backup is from an older version). Nobody else may
/// hold `path` open. `user` needs the deploy permission in the workspace being replaced,
/// unless that file no longer opens as a workspace (restoring is then its remedy). Returns
/// the backup taken of what was replaced.
pub fn restore(path: &Path, from: &Path, user: &str, opts: WorkspaceOptions) -> Result<(Workspace, Backup)> {
    match Workspace::open(path, opts.clone()) {
        Ok(mut ws) => {
            let replaced = restore_open(&mut ws, from, user)?;
            Ok((ws, replaced))
        }
        Err(e) if matches!(e.code, Code::NotAWorkspace | Code::Storage | Code::StoreTooNew) => {
            tracing::info!(code = e.code.as_str(), "restoring over a file that does not open");
            let replaced = restore_file(path, from, opts.clock.now())?;
            Ok((open(path, opts)?, replaced))
        }
        Err(e) => Err(e),
    }
}

/// [`restore`] into a workspace that is open here: `ws` is the restored workspace afterwards
/// (on a refusal it is unchanged).
pub fn restore_open(ws: &mut Workspace, from: &Path, user: &str) -> Result<Backup> {
    ws.session(user)?.require(crate::records::deploy::DEPLOY_PERMISSION)?;
    let replaced = restore_file(ws.path(), from, ws.clock.now())?;
    let opts = WorkspaceOptions { clock: ws.clock.clone(), ids: ws.ids.clone() };
    let path = ws.path().to_path_buf();
    *ws = open(&path, opts)?;
    Ok(replaced)
}

/// The backup at `from` over the closed file at `path`, once the backup is known to be a
/// workspace this build can open.
fn restore_file(path: &Path, from: &Path, now: chrono::DateTime<chrono::Utc>) -> Result<Backup> {
    let src = backup::open_source(from)?;
    crate::store::check_restorable(&src, from)?;
    backup::restore(path, &src, from, now)
}

/// What every open workspace gets before anyone uses it.
fn prepare(ws: &Workspace) -> Result<()> {
    crate::ai::capabilities::register(ws);
    // The shipped eval suites the gate runs on. Best effort like the step below: a file
    // another process holds gets them on a later open (until then nothing is gated).
    if let Err(e) = crate::eval::suites::seed(ws) {
        tracing::warn!(code = e.code.as_str(), "eval suites not seeded");
    }
    // Calls whose process stopped before completing them (their claim ran out). Best effort:
    // a file busy in another process keeps them until a later open.
    if let Err(e) = crate::ai::pipeline::close_abandoned(ws.conn(), ws.clock.now()) {
        tracing::info!(code = e.code.as_str(), "abandoned calls left for a later open");
    }
    // The daily backup. Best effort: a full disk or a read-only folder must not keep the
    // user out of their workspace (the next open tries again).
    if let Err(e) = ws.back_up_if_due() {
        tracing::warn!(code = e.code.as_str(), "daily backup not taken");
    }
    if ws.is_initialized() {
        let system = ws.system_session()?;
        let r = system.run_retention()?;
        let traces = system.expire_traces()?;
        tracing::info!(
            generation = ws.generation(),
            expired = r.expired,
            purged_discarded = r.purged_discarded,
            purged_accepted = r.purged_accepted,
            traces_rolled_up = traces,
            "workspace ready"
        );
    }
    Ok(())
}

/// Where things are, for an About box: the version, the open workspace and its backups, and
/// the folders the caller keeps its own files in (data, logs).
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct About {
    pub version: String,
    pub workspace: String,
    pub backup_folder: String,
    pub data_folder: String,
    pub log_folder: String,
}

impl About {
    pub fn of(ws: &Workspace, data_folder: &Path, log_folder: &Path) -> About {
        About {
            version: env!("CARGO_PKG_VERSION").to_string(),
            workspace: ws.path().display().to_string(),
            backup_folder: backup::folder(ws.path()).display().to_string(),
            data_folder: data_folder.display().to_string(),
            log_folder: log_folder.display().to_string(),
        }
    }
}
