//! Backups of a workspace file, taken with SQLite's online backup API: a consistent copy even
//! while another connection writes, because the copy is made in one step under one read
//! transaction.
//!
//! A backup is taken before every migration of the file and every deploy onto a definition,
//! once a day while the workspace is used, before a restore, and on request. Backups live
//! beside the workspace in `<file>.backups/`, named `<file stem>.<UTC time>.<reason>.countersign`;
//! the newest [`KEEP`] are kept, and the newest of each reason. A backup is written to a temporary name and renamed
//! once complete and checked, so a crash mid-backup never leaves a half file under a backup's
//! name.
//!
//! Restoring copies a backup over the workspace (again with the backup API, one step), after
//! taking a backup of what it replaces; a backup written by a newer Countersign is refused and
//! nothing is changed.

use crate::error::{Code, Error, Result};
use chrono::{DateTime, NaiveDateTime, Utc};
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use std::path::{Path, PathBuf};
use ts_rs::TS;

/// How many backups of one workspace are kept (the oldest go first).
pub const KEEP: usize = 10;

/// A daily backup is due when the newest backup is older than this.
pub const DAILY: chrono::Duration = chrono::Duration::hours(24);

const TIME_FORMAT: &str = "%Y%m%dT%H%M%SZ";

/// Why a backup was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "BackupReason")]
pub enum Reason {
    /// Before the file's store was migrated to a newer version.
    Migration,
    /// Before a definition was deployed onto the workspace's current one.
    Deploy,
    /// The daily backup.
    Daily,
    /// Before a restore replaced the workspace.
    BeforeRestore,
    /// Asked for (`backup`, or the app's "Back up now").
    Manual,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Migration => "migration",
            Reason::Deploy => "deploy",
            Reason::Daily => "daily",
            Reason::BeforeRestore => "before_restore",
            Reason::Manual => "manual",
        }
    }

    fn parse(s: &str) -> Option<Reason> {
        [Reason::Migration, Reason::Deploy, Reason::Daily, Reason::BeforeRestore, Reason::Manual]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// One backup file.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Backup {
    pub path: String,
    /// When it was taken (RFC 3339, UTC).
    pub taken_at: String,
    pub reason: Reason,
    #[ts(type = "number")]
    pub bytes: u64,
    /// The store version of the file it holds (`PRAGMA user_version`).
    #[ts(type = "number")]
    pub store_version: i64,
}

/// The folder that holds the backups of the workspace at `workspace`.
pub fn folder(workspace: &Path) -> PathBuf {
    let mut name = workspace.file_name().unwrap_or_default().to_owned();
    name.push(".backups");
    workspace.with_file_name(name)
}

fn stem(workspace: &Path) -> String {
    workspace.file_stem().unwrap_or_default().to_string_lossy().into_owned()
}

/// Take a backup of the open workspace `conn` (the file at `workspace`), then keep the newest
/// [`KEEP`].
pub fn take(conn: &Connection, workspace: &Path, reason: Reason, now: DateTime<Utc>) -> Result<Backup> {
    let started = std::time::Instant::now();
    let dir = folder(workspace);
    std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
    let base = format!("{}.{}.{}", stem(workspace), now.format(TIME_FORMAT), reason.as_str());
    let mut target = dir.join(format!("{base}.countersign"));
    let mut n = 1;
    while target.exists() {
        n += 1;
        target = dir.join(format!("{base}-{n}.countersign"));
    }
    let partial = target.with_extension("partial");
    let copied = (|| {
        let mut dst = Connection::open(&partial)?;
        copy_all(conn, &mut dst)?;
        // The copy is a plain file (no write-ahead log beside it) that opens on its own.
        dst.pragma_update(None, "journal_mode", "DELETE")?;
        check(&dst, &partial)?;
        let version: i64 = dst.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        dst.close().map_err(|(_, e)| e)?;
        Ok::<_, Error>(version)
    })();
    let version = match copied {
        Ok(v) => v,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
    };
    std::fs::rename(&partial, &target).map_err(|e| io_error(&target, e))?;
    let bytes = std::fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
    tracing::info!(
        reason = reason.as_str(),
        bytes,
        ms = crate::logging::ms_since(started),
        "workspace backed up"
    );
    prune(workspace)?;
    Ok(Backup {
        path: target.display().to_string(),
        taken_at: crate::clock::timestamp(now),
        reason,
        bytes,
        store_version: version,
    })
}

/// Copy `src` over `dst` in one step of the backup API: the whole file under one read
/// transaction, so a concurrent writer's transactions are each all in the copy or not at all.
/// A writer holding the file a moment makes the step wait and retry (up to 10 s).
fn copy_all(src: &Connection, dst: &mut Connection) -> Result<()> {
    use rusqlite::backup::StepResult;
    let backup = rusqlite::backup::Backup::new(src, dst)?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match backup.step(-1)? {
            StepResult::Done => return Ok(()),
            StepResult::More => {}
            _ if std::time::Instant::now() > deadline => {
                return Err(Error::new(Code::Storage, "the workspace stayed busy; the backup was not taken"))
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
}

/// `PRAGMA integrity_check` of a copy: `ok`, or a storage error naming the file.
fn check(conn: &Connection, path: &Path) -> Result<()> {
    let verdict: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if verdict == "ok" {
        Ok(())
    } else {
        Err(Error::new(Code::Storage, format!("{} failed its integrity check: {verdict}", path.display())))
    }
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::new(Code::Storage, format!("{}: {e}", path.display()))
}

/// The backups of the workspace at `workspace`, newest first, with the store version each
/// holds (read from each file).
pub fn list(workspace: &Path) -> Result<Vec<Backup>> {
    let mut out = on_disk(workspace);
    for b in &mut out {
        b.store_version = Connection::open_with_flags(&b.path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("PRAGMA user_version", [], |r| r.get(0)))
            .unwrap_or(-1);
    }
    Ok(out)
}

/// The backup files of `workspace`, newest first, as their names tell (when, why) without
/// opening them: `store_version` is -1. Enough to prune and to see whether a backup is due,
/// which every open does.
fn on_disk(workspace: &Path) -> Vec<Backup> {
    let dir = folder(workspace);
    let Ok(entries) = std::fs::read_dir(&dir) else { return vec![] };
    let prefix = format!("{}.", stem(workspace));
    let mut out = vec![];
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".countersign")) else {
            continue;
        };
        // <time>.<reason>[-n]
        let Some((time, reason)) = rest.split_once('.') else { continue };
        let reason = reason.split('-').next().unwrap_or_default();
        let (Ok(time), Some(reason)) =
            (NaiveDateTime::parse_from_str(time, TIME_FORMAT), Reason::parse(reason))
        else {
            continue;
        };
        out.push(Backup {
            path: entry.path().display().to_string(),
            taken_at: crate::clock::timestamp(time.and_utc()),
            reason,
            bytes: entry.metadata().map(|m| m.len()).unwrap_or(0),
            store_version: -1,
        });
    }
    out.sort_by(|a, b| b.taken_at.cmp(&a.taken_at).then_with(|| b.path.cmp(&a.path)));
    out
}

/// Remove all but the newest [`KEEP`] backups, keeping the newest of each reason too (a run of
/// deploys never pushes out the last backup taken before a migration).
fn prune(workspace: &Path) -> Result<()> {
    let mut seen = vec![];
    for (i, b) in on_disk(workspace).into_iter().enumerate() {
        let first_of_reason = !seen.contains(&b.reason);
        seen.push(b.reason);
        if i >= KEEP && !first_of_reason {
            std::fs::remove_file(&b.path).map_err(|e| io_error(Path::new(&b.path), e))?;
        }
    }
    Ok(())
}

/// Take the daily backup if the newest backup is older than [`DAILY`] — or, with none yet, if
/// the workspace's first definition is (a workspace made today has nothing to lose yet).
pub fn take_if_due(conn: &Connection, workspace: &Path, now: DateTime<Utc>) -> Result<Option<Backup>> {
    let since = match on_disk(workspace).into_iter().next() {
        Some(newest) => Some(newest.taken_at),
        None => conn.query_row("SELECT min(deployed_at) FROM metadata_generation", [], |r| r.get(0))?,
    };
    let due = since
        .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
        .is_some_and(|t| now.signed_duration_since(t) >= DAILY);
    if due {
        take(conn, workspace, Reason::Daily, now).map(Some)
    } else {
        Ok(None)
    }
}

/// The backup file at `from`, opened read-only for [`restore`].
pub fn open_source(from: &Path) -> Result<Connection> {
    Connection::open_with_flags(from, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| Error::new(Code::NotFound, format!("cannot open the backup {}: {e}", from.display())))
}

/// Replace the workspace file at `workspace` (closed: nobody may hold it open) with the backup
/// `src` (opened from `from` by [`open_source`]), which the caller has checked is a workspace
/// this build can open (`store::check_restorable`); it passes its integrity check first. What
/// it replaces is backed up first (reason `before_restore`); that backup is returned.
pub fn restore(workspace: &Path, src: &Connection, from: &Path, now: DateTime<Utc>) -> Result<Backup> {
    check(src, from)?;
    let version: i64 = src.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let mut dst = Connection::open_with_flags(workspace, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .map_err(|e| io_error(workspace, std::io::Error::other(e.to_string())))?;
    let before = take(&dst, workspace, Reason::BeforeRestore, now)?;
    copy_all(src, &mut dst)?;
    // Back to write-ahead logging (the copy brought the backup's journal mode).
    let _: String = dst.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    check(&dst, workspace)?;
    drop(dst);
    tracing::info!(store_version = version, "workspace restored from a backup");
    Ok(before)
}
