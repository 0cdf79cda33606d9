//! The workspaces this machine opened lately, newest first: a small JSON file the caller
//! places (the app keeps it in its config folder). A file that is missing or unreadable is an
//! empty list, never an error: the list is a convenience, and losing it loses no data.
//! Written to a temporary name and renamed, so a crash never leaves half a list.

use crate::error::{Code, Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use ts_rs::TS;

/// How many workspaces the list keeps.
pub const KEEP: usize = 8;

/// One workspace in the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RecentWorkspace {
    pub path: String,
    /// When it was last opened (RFC 3339, UTC).
    pub opened_at: String,
    /// Whether the file is still there (checked when the list is read).
    #[serde(default, skip_deserializing)]
    pub exists: bool,
}

/// The list, kept in the file at `file`.
pub struct RecentWorkspaces {
    file: PathBuf,
}

impl RecentWorkspaces {
    pub fn at(file: impl Into<PathBuf>) -> RecentWorkspaces {
        RecentWorkspaces { file: file.into() }
    }

    /// The list, newest first, each entry saying whether its file still exists.
    pub fn list(&self) -> Vec<RecentWorkspace> {
        let mut list: Vec<RecentWorkspace> = std::fs::read_to_string(&self.file)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        for w in &mut list {
            w.exists = Path::new(&w.path).is_file();
        }
        list
    }

    /// Put `workspace` (made absolute) first, opened at `now`; keep the newest [`KEEP`].
    pub fn note(&self, workspace: &Path, now: chrono::DateTime<chrono::Utc>) -> Result<()> {
        let path = std::path::absolute(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let path = path.display().to_string();
        let mut list = self.list();
        list.retain(|w| w.path != path);
        list.insert(0, RecentWorkspace { path, opened_at: crate::clock::timestamp(now), exists: true });
        list.truncate(KEEP);
        self.write(&list)
    }

    /// Take `workspace` off the list.
    pub fn forget(&self, workspace: &str) -> Result<()> {
        let mut list = self.list();
        list.retain(|w| w.path != workspace);
        self.write(&list)
    }

    fn write(&self, list: &[RecentWorkspace]) -> Result<()> {
        let io = |e: std::io::Error| Error::new(Code::Storage, format!("{}: {e}", self.file.display()));
        if let Some(dir) = self.file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(list).map_err(|e| Error::internal(e.to_string()))?;
        let partial = self.file.with_extension("partial");
        std::fs::write(&partial, text).map_err(io)?;
        std::fs::rename(&partial, &self.file).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn newest_first_without_repeats_bounded_and_a_broken_file_is_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let recent = RecentWorkspaces::at(dir.path().join("config/recent.json"));
        assert!(recent.list().is_empty());
        let at = |m| chrono::Utc.with_ymd_and_hms(2026, 12, 1, 10, m, 0).unwrap();
        let a = dir.path().join("a.countersign");
        std::fs::write(&a, "").unwrap();
        recent.note(&a, at(0)).unwrap();
        for i in 0..KEEP {
            recent.note(&dir.path().join(format!("w{i}.countersign")), at(1 + i as u32)).unwrap();
        }
        recent.note(&a, at(30)).unwrap();
        let list = recent.list();
        assert_eq!(list.len(), KEEP);
        assert_eq!(list[0].path, a.display().to_string());
        assert!(list[0].exists && !list[1].exists, "only a.countersign is a file");
        assert_eq!(list.iter().filter(|w| w.path == a.display().to_string()).count(), 1);
        assert_eq!(list[0].opened_at, "2026-12-01T10:30:00Z");
        recent.forget(&list[1].path.clone()).unwrap();
        assert_eq!(recent.list().len(), KEEP - 1);
        std::fs::write(dir.path().join("config/recent.json"), "{not json").unwrap();
        assert!(recent.list().is_empty());
        recent.note(&a, at(40)).unwrap();
        assert_eq!(recent.list().len(), 1);
    }
}
