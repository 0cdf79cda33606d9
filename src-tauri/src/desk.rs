//! The desk: the open workspace and who is acting in it, the model calls in flight, and a
//! long call's way back to its user's session. Every command reaches the workspace through it.

use countersign_kernel::ai::pipeline::drive::Sessions;
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::open::{self, Start};
use countersign_kernel::records::describe::WorkspaceView;
use countersign_kernel::records::templates;
use countersign_kernel::{Code, Error, Result, Session, Workspace, WorkspaceOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The open workspace and who is acting in it.
pub struct Desk {
    open: Mutex<Open>,
    /// Long writes running on a connection of their own (`beside`).
    beside: AtomicUsize,
}

pub(crate) struct Open {
    pub(crate) ws: Workspace,
    pub(crate) user: String,
    /// When indexes were last tuned (see `Desk::tune_indexes`).
    tuned_at: Option<std::time::Instant>,
}

impl Open {
    pub(crate) fn new(ws: Workspace, previous_user: Option<&str>) -> Result<Open> {
        let catalog = ws.catalog()?;
        let user = previous_user
            .filter(|u| catalog.user(u).is_ok_and(|a| a.active))
            .map(str::to_string)
            .or_else(|| catalog.definition.users.iter().find(|u| u.active).map(|u| u.key.clone()))
            .ok_or_else(|| Error::new(Code::UnknownUser, "the workspace has no active user"))?;
        Ok(Open { ws, user, tuned_at: None })
    }
}

impl Desk {
    /// Open the workspace at `path`; on first run (no file yet) create the demo there.
    pub fn open_or_create_demo(path: &Path) -> Result<Desk> {
        let ws = open::open_or_create_demo(path, WorkspaceOptions::default())?;
        Ok(Desk { open: Mutex::new(Open::new(ws, None)?), beside: AtomicUsize::new(0) })
    }

    /// Open the existing workspace at `path`.
    pub fn open_at(path: &Path) -> Result<Desk> {
        let ws = open::open(path, WorkspaceOptions::default())?;
        Ok(Desk { open: Mutex::new(Open::new(ws, None)?), beside: AtomicUsize::new(0) })
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

    /// Indexes that follow use: the shapes counted so far are written under the lock (quick),
    /// then the indexes are made or dropped on a connection of their own, so the window keeps
    /// reading while one builds. Best effort (logged).
    pub fn tune_indexes(&self) {
        // Not while a long write runs beside (`beside`): its writes would wait on it, holding
        // the lock the window reads through.
        if self.beside.load(Ordering::SeqCst) > 0 {
            return;
        }
        // Tuned when lists were used since, and hourly (idle indexes are dropped).
        let due = self.with(|open| {
            let used = open.ws.flush_index_use()?;
            let hourly = open.tuned_at.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(3600));
            if used == 0 && !hourly {
                return Ok(None);
            }
            open.tuned_at = Some(std::time::Instant::now());
            Ok(Some(open.ws.path().to_path_buf()))
        });
        let path = match due {
            Ok(Some(p)) => p,
            Ok(None) => return,
            Err(e) => return tracing::warn!(code = e.code.as_str(), "index use not recorded"),
        };
        let tuned = open::open(&path, WorkspaceOptions::default())
            .and_then(|ws| ws.tune_indexes(&Default::default()));
        match tuned {
            Ok(r) if !r.created.is_empty() || !r.dropped.is_empty() => {
                tracing::info!(created = r.created.len(), dropped = r.dropped.len(), "indexes tuned")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(code = e.code.as_str(), "indexes not tuned"),
        }
    }

    /// Every command's way to the workspace. A refusal is logged by its code and fault only
    /// (its message may quote a value).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut Open) -> Result<T>) -> Result<T> {
        let mut open = self.open.lock().map_err(|_| Error::internal("the workspace lock was poisoned"))?;
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

    /// Create a workspace file at `path` from a template (with its sample records or without)
    /// and open it in place of the current one.
    pub(crate) fn create_at(&self, path: &Path, template: &str, records: bool) -> Result<WorkspaceView> {
        let template = templates::template(template)?;
        self.with(|open| {
            let start = Start::Template { template, records };
            let (ws, _) = open::create(path, start, WorkspaceOptions::default())?;
            *open = Open::new(ws, Some(&open.user))?;
            Ok(open.ws.session(&open.user)?.describe_workspace())
        })
    }

    /// A long write (an import, a deploy) on a connection of its own, as the current user, so
    /// the window keeps reading meanwhile: it sees the workspace as it was until the write
    /// commits, and its own writes wait for it (then say the workspace is busy). `f` gets the
    /// workspace opened again and the user.
    pub(crate) fn beside<T>(&self, f: impl FnOnce(Workspace, &str) -> Result<T>) -> Result<T> {
        let (path, user) = self.with(|open| Ok((open.ws.path().to_path_buf(), open.user.clone())))?;
        let ws = open::open(&path, WorkspaceOptions::default())?;
        self.beside.fetch_add(1, Ordering::SeqCst);
        let done = f(ws, &user);
        self.beside.fetch_sub(1, Ordering::SeqCst);
        done
    }

    /// Take a workspace that deployed beside the window's (`beside`) in place of the window's,
    /// whose metadata is now older, unless another workspace was opened meanwhile. The
    /// workspace as the current user sees it.
    pub(crate) fn take_deployed(&self, ws: Workspace) -> Result<WorkspaceView> {
        self.with(|open| {
            if open.ws.path() == ws.path() {
                open.ws = ws;
            }
            Ok(open.ws.session(&open.user)?.describe_workspace())
        })
    }

    pub(crate) fn session<T>(&self, f: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        self.with(|open| f(&open.ws.session(&open.user)?))
    }

    /// A session of a given user (a long call keeps the user it started with even if the
    /// window switches user meanwhile).
    pub(crate) fn session_of<T>(&self, user: &str, f: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        self.with(|open| f(&open.ws.session(user)?))
    }
}

/// Model calls (Ask, Extract, Summarize, suite runs, fitness checks) in flight by the UI's call
/// id, so the UI can cancel one. A cancel that arrives before its call registers is kept, and
/// the call starts cancelled.
#[derive(Default)]
pub struct ModelCalls(Mutex<std::collections::HashMap<String, Cancel>>);

impl ModelCalls {
    pub(crate) fn token(&self, call: &str) -> Result<Cancel> {
        let mut map = self.0.lock().map_err(|_| Error::internal("model call lock poisoned"))?;
        Ok(map.entry(call.to_string()).or_default().clone())
    }

    pub(crate) fn forget(&self, call: &str) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(call);
        }
    }

    /// Register the call `call` for as long as the returned value lives: it is forgotten
    /// however the command returns (an early refusal included).
    pub(crate) fn begin<'a>(&'a self, call: &'a str) -> Result<RunningCall<'a>> {
        Ok(RunningCall { calls: self, call, cancel: self.token(call)? })
    }
}

/// A model call in flight, with its cancel token; forgotten when dropped.
pub(crate) struct RunningCall<'a> {
    calls: &'a ModelCalls,
    call: &'a str,
    pub(crate) cancel: Cancel,
}

impl Drop for RunningCall<'_> {
    fn drop(&mut self) {
        self.calls.forget(self.call);
    }
}

/// The user a long call started with, lending the driver a session of that user for each
/// step (the lock on the workspace is held only while the kernel works, never while the model
/// thinks; the window may switch user meanwhile).
pub(crate) struct UserDesk<'a> {
    desk: &'a Desk,
    user: String,
}

impl<'a> UserDesk<'a> {
    pub(crate) fn current(desk: &'a Desk) -> Result<UserDesk<'a>> {
        Ok(UserDesk { desk, user: desk.with(|open| Ok(open.user.clone()))? })
    }
}

impl Sessions for UserDesk<'_> {
    fn with<T>(&self, step: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        self.desk.session_of(&self.user, step)
    }
}
