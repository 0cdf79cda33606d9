//! The workspace file: which one a command works on, creating it (`init`), deploying a
//! definition into it (`deploy`), and opening it as the acting user for every other command.

use crate::output::to_json;
use clap::Subcommand;
use countersign_kernel::open::{self, Start};
use countersign_kernel::records::demo::InitReport;
use countersign_kernel::records::templates;
use countersign_kernel::{
    Code, DeployOptions, Error, Result, Session, Workspace, WorkspaceDefinition, WorkspaceOptions,
};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum WorkspaceCommand {
    /// Create a workspace: the demo (`--demo`), a template (`--template NAME`: blank, crm,
    /// freelance, inventory) or a definition file (with its `data` CSVs).
    Init {
        #[arg(long, conflicts_with_all = ["definition", "template"])]
        demo: bool,
        #[arg(long, value_name = "NAME", conflicts_with = "definition")]
        template: Option<String>,
        /// With `--template`: its objects and users only, no sample records.
        #[arg(long, requires = "template")]
        no_records: bool,
        #[arg(long, value_name = "FILE")]
        definition: Option<PathBuf>,
    },
    /// Deploy a definition file as a new metadata generation (as a user with the
    /// metadata.deploy permission; an empty workspace needs no user).
    Deploy {
        file: PathBuf,
        /// Apply even if existing data would be lost.
        #[arg(long, conflicts_with = "preview")]
        force: bool,
        /// Print what the deploy would change and every problem it would meet in the data
        /// (with the rows), and deploy nothing.
        #[arg(long)]
        preview: bool,
    },
    /// Back the workspace up now (SQLite's online backup API, beside the file in
    /// `<file>.backups/`); `--list` lists its backups instead, newest first. Backups are also
    /// taken before every migration and deploy, and daily.
    Backup {
        #[arg(long)]
        list: bool,
    },
    /// Replace the workspace with a backup, as a user with metadata.deploy (what it replaces is
    /// backed up first). A backup from a newer Countersign is refused.
    Restore { backup: PathBuf },
}

/// Where a workspace path came from: it decides what may create the file.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `--workspace`: `--demo` may create the demo there.
    Flag,
    /// `$COUNTERSIGN_WORKSPACE`.
    Environment,
    /// The demo workspace in the OS app-data directory, created on first use.
    AppData,
}

/// The workspace file a command works on.
pub struct WorkspaceFile {
    pub path: PathBuf,
    pub origin: Origin,
}

impl WorkspaceFile {
    /// `--workspace`, else `$COUNTERSIGN_WORKSPACE`, else the demo workspace in the OS
    /// app-data directory: the same file the desktop app opens.
    pub fn locate(flag: Option<PathBuf>) -> Result<WorkspaceFile> {
        if let Some(path) = flag {
            return Ok(WorkspaceFile { path, origin: Origin::Flag });
        }
        if let Some(p) = std::env::var_os("COUNTERSIGN_WORKSPACE") {
            return Ok(WorkspaceFile { path: PathBuf::from(p), origin: Origin::Environment });
        }
        let base = app_data_dir().ok_or_else(|| {
            Error::new(Code::Storage, "cannot find the app-data directory; pass --workspace")
        })?;
        let path = base.join(APP_IDENTIFIER).join("demo.countersign");
        Ok(WorkspaceFile { path, origin: Origin::AppData })
    }

    /// The workspace, opened for use; the app-data demo is created on first use.
    pub fn open(&self) -> Result<Workspace> {
        match self.origin {
            Origin::AppData => open::open_or_create_demo(&self.path, WorkspaceOptions::default()),
            Origin::Flag | Origin::Environment => open::open(&self.path, WorkspaceOptions::default()),
        }
    }

    /// For `--demo` of a model command: create the demo at a `--workspace` path that does not
    /// exist yet.
    pub fn create_demo_if_missing(&self) -> Result<()> {
        if self.origin == Origin::Flag && !self.path.exists() {
            init(&self.path, true, None)?;
        }
        Ok(())
    }
}

/// The desktop app's identifier: its folder in the OS app-data directory (Tauri's app-data dir).
pub const APP_IDENTIFIER: &str = "app.countersign.desktop";

/// The OS app-data directory (the folder the app's own folder is in).
pub fn app_data_dir() -> Option<PathBuf> {
    if cfg!(target_os = "macos") {
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join("Library/Application Support"))
    } else if cfg!(windows) {
        std::env::var_os("APPDATA").map(PathBuf::from)
    } else {
        std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
    }
}

pub fn run(file: WorkspaceFile, user: Option<String>, command: WorkspaceCommand) -> Result<Value> {
    match command {
        WorkspaceCommand::Init { demo, template, no_records, definition } => match template {
            Some(name) => {
                let template = templates::template(&name)?;
                let start = Start::Template { template, records: !no_records };
                let report = open::create(&file.path, start, WorkspaceOptions::default())?.1;
                init_report(&file.path, report)
            }
            None => init(&file.path, demo, definition.as_deref()),
        },
        WorkspaceCommand::Deploy { file: definition, force, preview } => {
            let mut ws = file.open()?;
            let def = WorkspaceDefinition::parse(&std::fs::read_to_string(definition)?)?;
            if preview {
                return to_json(&ws.preview_deploy(&def, user.as_deref())?);
            }
            // The kernel checks the user: metadata.deploy, unless the workspace is still empty.
            to_json(&ws.deploy(&def, &DeployOptions { force, user })?)
        }
        WorkspaceCommand::Backup { list } => {
            let ws = file.open()?;
            if list {
                Ok(json!({ "backups": to_json(&ws.backups()?)? }))
            } else {
                to_json(&ws.back_up()?)
            }
        }
        WorkspaceCommand::Restore { backup } => {
            let user = user.ok_or_else(|| {
                Error::new(Code::UnknownUser, "restoring replaces the workspace: say who does it with --as")
            })?;
            let (ws, replaced) = open::restore(&file.path, &backup, &user, WorkspaceOptions::default())?;
            Ok(json!({"workspace": ws.path(), "restoredFrom": backup, "generation": ws.generation(),
                "replacedBackup": to_json(&replaced)?}))
        }
    }
}

/// Create the workspace at `path`: the demo, or a definition file with the CSVs its `data`
/// names (relative to the file).
pub fn init(path: &Path, demo: bool, definition: Option<&Path>) -> Result<Value> {
    if !demo && definition.is_none() {
        return Err(Error::new(
            Code::InvalidDefinition,
            "init needs --demo, --template NAME or --definition FILE",
        ));
    }
    let report = match definition {
        None => open::create(path, Start::Demo, WorkspaceOptions::default())?.1,
        Some(file) => {
            let def = WorkspaceDefinition::parse(&std::fs::read_to_string(file)?)?;
            let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
            let load = |rel: &str| Ok(std::fs::read_to_string(dir.join(rel))?);
            open::create(
                path,
                Start::Definition { definition: &def, load: &load },
                WorkspaceOptions::default(),
            )?
            .1
        }
    };
    init_report(path, report)
}

/// What `init` prints: the workspace, its generation and the records loaded per object.
fn init_report(path: &Path, report: Option<InitReport>) -> Result<Value> {
    let report =
        report.ok_or_else(|| Error::internal("a workspace made from a definition reports what it loaded"))?;
    Ok(json!({
        "workspace": path,
        "generation": report.deploy.generation,
        "imported": report.imports.iter().map(|r| (r.object.clone(), json!(r.imported))).collect::<Map<_, _>>(),
    }))
}

/// Run `act` in a session of the workspace as `--as USER`: every command on records, proposals
/// and the AI needs to know who acts.
pub fn as_user<T>(
    file: &WorkspaceFile,
    user: Option<String>,
    act: impl FnOnce(&Session<'_>) -> Result<T>,
) -> Result<T> {
    let ws = file.open()?;
    let user = user.ok_or_else(|| {
        let users: Vec<String> =
            ws.catalog().map(|c| c.user_keys().map(String::from).collect()).unwrap_or_default();
        Error::new(
            Code::UnknownUser,
            format!("say who you act as with --as USER (one of: {})", users.join(", ")),
        )
    })?;
    act(&ws.session(&user)?)
}
