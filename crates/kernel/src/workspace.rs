//! A workspace: one SQLite file, its current metadata generation, and the injected clock and
//! id source. Reads and writes of records happen only through a [`Session`].

use crate::access::Session;
use crate::catalog::Catalog;
use crate::clock::{Clock, IdSource, SystemClock, UlidIds};
use crate::definition::{WorkspaceDefinition, SYSTEM_USER};
use crate::deploy::{self, DeployOptions, DeployReport, DEPLOY_PERMISSION};
use crate::error::{Code, Error, Result};
use crate::store;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone)]
pub struct WorkspaceOptions {
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdSource>,
}

impl Default for WorkspaceOptions {
    fn default() -> Self {
        WorkspaceOptions { clock: Arc::new(SystemClock), ids: Arc::new(UlidIds) }
    }
}

pub struct Workspace {
    conn: Connection,
    catalog: Option<Arc<Catalog>>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) ids: Arc<dyn IdSource>,
    path: PathBuf,
    pub(crate) projections: crate::projection::ProjectionCache,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Workspace {
    /// Open a workspace file, creating an empty one if it does not exist.
    pub fn create(path: &Path, opts: WorkspaceOptions) -> Result<Workspace> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        Self::with_connection(store::open(path, true)?, path, opts)
    }

    /// Open an existing workspace file.
    pub fn open(path: &Path, opts: WorkspaceOptions) -> Result<Workspace> {
        Self::with_connection(store::open(path, false)?, path, opts)
    }

    fn with_connection(conn: Connection, path: &Path, opts: WorkspaceOptions) -> Result<Workspace> {
        // Calls whose process stopped before completing them (their claim ran out).
        // Best effort: a file busy in another process keeps them until a later open.
        let _ = crate::pipeline::close_abandoned(&conn, opts.clock.now());
        let catalog = deploy::load_latest(&conn)?.map(Arc::new);
        if let Some(c) = &catalog {
            crate::corpus::build_if_new(&conn, c)?;
        }
        Ok(Workspace {
            conn,
            catalog,
            clock: opts.clock,
            ids: opts.ids,
            path: path.to_path_buf(),
            projections: Default::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_initialized(&self) -> bool {
        self.catalog.is_some()
    }

    /// The current metadata generation.
    pub fn catalog(&self) -> Result<&Arc<Catalog>> {
        self.catalog.as_ref().ok_or_else(|| {
            Error::new(Code::NotInitialized, "this workspace has no definition yet; run `init` or `deploy`")
        })
    }

    pub fn generation(&self) -> i64 {
        self.catalog.as_ref().map_or(0, |c| c.generation)
    }

    /// Validate (JSON Schema and semantic rules, whatever built `def`) and deploy a
    /// definition as a new metadata generation, as `opts.user`.
    ///
    /// A workspace that holds a definition changes only for an active user of its current
    /// generation with the `metadata.deploy` system permission: no user or an unknown one is
    /// `access.unknown_user`, an inactive one or one without the permission `permission`, and
    /// nothing is changed. The first deploy into an empty workspace (the bootstrap `init`
    /// does) has no users to check against and needs none; it is recorded as `system`.
    pub fn deploy(&mut self, def: &WorkspaceDefinition, opts: &DeployOptions) -> Result<DeployReport> {
        let actor = match (self.catalog.as_deref(), opts.user.as_deref()) {
            // Nobody can be checked (or trusted to be who they say) before there are users.
            (None, _) => SYSTEM_USER.to_string(),
            (Some(_), None) => {
                return Err(Error::new(
                    Code::UnknownUser,
                    format!(
                        "deploying a new definition needs a user with the {DEPLOY_PERMISSION} permission; say who deploys"
                    ),
                ))
            }
            // The same checks as any session's: an active user, with the permission.
            (Some(_), Some(user)) => {
                let session = self.session(user)?;
                session.require(DEPLOY_PERMISSION)?;
                session.user().key.clone()
            }
        };
        let doc = serde_json::to_value(def).map_err(|e| Error::internal(e.to_string()))?;
        let def = &WorkspaceDefinition::from_json(&doc)?;
        let now = self.clock.now();
        let (report, catalog) = deploy::apply(&self.conn, self.catalog.as_deref(), def, opts, &actor, now)?;
        self.catalog = Some(Arc::new(catalog));
        Ok(report)
    }

    /// A session acting as `user`. Unknown or inactive users get none.
    pub fn session(&self, user: &str) -> Result<Session<'_>> {
        let access = self.catalog()?.user(user)?;
        if !access.active {
            return Err(Error::new(Code::Permission, format!("user `{user}` is inactive")));
        }
        Ok(Session::new(self, access))
    }

    /// The kernel's own session (loading demo data). Not for anything a person does.
    pub fn system_session(&self) -> Result<Session<'_>> {
        Ok(Session::new(self, self.catalog()?.system_user()))
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Raw connection for benchmarks and tests that compare against hand-written SQL.
    #[doc(hidden)]
    pub fn raw_connection(&self) -> &Connection {
        &self.conn
    }
}
