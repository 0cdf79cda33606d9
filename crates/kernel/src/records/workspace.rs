//! A workspace: one SQLite file, its current metadata generation, the injected clock and id
//! source, and the extensions higher layers keep on it. Reads and writes of records happen
//! only through a [`Session`].

use crate::backup;
use crate::clock::{Clock, IdSource, SystemClock, UlidIds};
use crate::error::{Code, Error, Result};
use crate::metadata::catalog::Catalog;
use crate::metadata::definition::{WorkspaceDefinition, SYSTEM_USER};
use crate::records::access::Session;
use crate::records::deploy::{
    self, DeployOptions, DeployPreview, DeployProgress, DeployReport, DeployStep, DEPLOY_PERMISSION,
};
use crate::records::Watch;
use crate::store;
use rusqlite::Connection;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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
    extensions: Extensions,
}

/// What higher layers keep on an open workspace (the AI layer's projection cache and its
/// capability registry), one value per type, so that this layer need not name them.
#[derive(Default)]
struct Extensions(Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

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
        Self::with_connection(store::open(path, true, opts.clock.now())?, path, opts)
    }

    /// Open an existing workspace file.
    pub fn open(path: &Path, opts: WorkspaceOptions) -> Result<Workspace> {
        Self::with_connection(store::open(path, false, opts.clock.now())?, path, opts)
    }

    fn with_connection(conn: Connection, path: &Path, opts: WorkspaceOptions) -> Result<Workspace> {
        let catalog = deploy::load_latest(&conn)?.map(Arc::new);
        if let Some(c) = &catalog {
            crate::records::corpus::build_if_new(&conn, c)?;
            crate::records::value_index::build_if_new(&conn, c)?;
            crate::records::counts::follow(&conn, c)?;
            crate::records::text_index::follow(&conn, c)?;
            crate::records::use_index::drop_blank_sort_indexes(&conn)?;
        }
        Ok(Workspace {
            conn,
            catalog,
            clock: opts.clock,
            ids: opts.ids,
            path: path.to_path_buf(),
            extensions: Extensions::default(),
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
        self.deploy_watched(def, opts, Watch { progress: &mut |_| {}, cancelled: &|| false })
    }

    /// [`Workspace::deploy`], telling `watch` each step as it begins; a cancel stops it at the
    /// next step with nothing changed (a backup already taken is kept).
    pub fn deploy_watched(
        &mut self,
        def: &WorkspaceDefinition,
        opts: &DeployOptions,
        mut watch: Watch<'_, DeployProgress>,
    ) -> Result<DeployReport> {
        let actor = self.deployer(opts.user.as_deref())?;
        let doc = serde_json::to_value(def).map_err(|e| Error::internal(e.to_string()))?;
        let def = &WorkspaceDefinition::from_json(&doc)?;
        let now = self.clock.now();
        if self.catalog.is_some() {
            // What the workspace was before this deploy (a forced one may clear values).
            DeployStep::Backup.begin(&mut watch)?;
            backup::take(&self.conn, &self.path, backup::Reason::Deploy, now)?;
        }
        let started = std::time::Instant::now();
        let (report, catalog) =
            deploy::apply(&self.conn, self.catalog.as_deref(), def, opts, &actor, now, &mut watch)
                .inspect_err(|e| tracing::info!(user = %actor, code = e.code.as_str(), "deploy refused"))?;
        tracing::info!(
            generation = report.generation,
            objects = catalog.definition.objects.len(),
            changes = report.changes.len(),
            values_cleared = report.lost.len(),
            user = %actor,
            ms = crate::logging::ms_since(started),
            "definition deployed"
        );
        self.catalog = Some(Arc::new(catalog));
        Ok(report)
    }

    /// The definition as deployed (retired parts included), for `user` to edit: it names every
    /// field and user, so only a user who may deploy reads it whole.
    pub fn definition_for(&self, user: &str) -> Result<WorkspaceDefinition> {
        self.session(user)?.require(DEPLOY_PERMISSION)?;
        Ok(self.catalog()?.stored.clone())
    }

    /// Deploy the current definition with `edit` applied, as `user` (who needs the deploy
    /// permission): how one change to users, permission sets or terms is made.
    pub fn redeploy(
        &mut self,
        user: &str,
        edit: impl FnOnce(&mut WorkspaceDefinition) -> Result<()>,
    ) -> Result<DeployReport> {
        let mut def = self.definition_for(user)?;
        edit(&mut def)?;
        self.deploy(&def, &DeployOptions::by(user))
    }

    /// Add `values` (each its own label) to the picklist `object.field`, as `user`: an
    /// import's "add it to the picklist" for a value the file holds. A value already there (by
    /// value or label) is left as it is; a retired one becomes active again.
    pub fn add_picklist_values(
        &mut self,
        user: &str,
        object: &str,
        field: &str,
        values: &[String],
    ) -> Result<DeployReport> {
        use crate::metadata::definition::{FieldType, PicklistValue};
        self.redeploy(user, |def| {
            let f = def
                .objects
                .iter_mut()
                .find(|o| o.key == object && !o.retired)
                .and_then(|o| o.fields.iter_mut().find(|f| f.key == field && !f.retired))
                .filter(|f| f.field_type == FieldType::Picklist)
                .ok_or_else(|| Error::new(Code::UnknownField, format!("no picklist `{object}.{field}`")))?;
            let list = f.values.get_or_insert_with(Vec::new);
            for v in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
                match list
                    .iter_mut()
                    .find(|p| p.value.eq_ignore_ascii_case(v) || p.label.eq_ignore_ascii_case(v))
                {
                    Some(p) => p.active = true,
                    None => list.push(PicklistValue {
                        value: v.to_string(),
                        label: v.to_string(),
                        active: true,
                        category: None,
                        labels: Default::default(),
                    }),
                }
            }
            Ok(())
        })
    }

    /// What deploying `def` as `user` would change and every problem it would meet in the
    /// data (each with its rows), without writing anything: the deploy's own transaction,
    /// rolled back. The same user checks and validation as [`Workspace::deploy`].
    pub fn preview_deploy(&self, def: &WorkspaceDefinition, user: Option<&str>) -> Result<DeployPreview> {
        let actor = self.deployer(user)?;
        let doc = serde_json::to_value(def).map_err(|e| Error::internal(e.to_string()))?;
        let def = WorkspaceDefinition::from_json(&doc)?;
        deploy::preview(&self.conn, self.catalog.as_deref(), &def, &actor, self.clock.now())
    }

    /// Who deploys: `system` into an empty workspace; otherwise an active user of the current
    /// generation with the deploy permission.
    fn deployer(&self, user: Option<&str>) -> Result<String> {
        match (self.catalog.as_deref(), user) {
            // Nobody can be checked (or trusted to be who they say) before there are users.
            (None, _) => Ok(SYSTEM_USER.to_string()),
            (Some(_), None) => Err(Error::new(
                Code::UnknownUser,
                format!(
                    "deploying a new definition needs a user with the {DEPLOY_PERMISSION} permission; say who deploys"
                ),
            )),
            // The same checks as any session's: an active user, with the permission.
            (Some(_), Some(user)) => {
                let session = self.session(user)?;
                session.require(DEPLOY_PERMISSION)?;
                Ok(session.user().key.clone())
            }
        }
    }

    /// Back the workspace up now (reason `manual`).
    pub fn back_up(&self) -> Result<backup::Backup> {
        backup::take(&self.conn, &self.path, backup::Reason::Manual, self.clock.now())
    }

    /// The daily backup, if due (see [`backup::take_if_due`]).
    pub fn back_up_if_due(&self) -> Result<Option<backup::Backup>> {
        backup::take_if_due(&self.conn, &self.path, self.clock.now())
    }

    /// This workspace's backups, newest first.
    pub fn backups(&self) -> Result<Vec<backup::Backup>> {
        backup::list(&self.path)
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

    /// The workspace's value of type `T`, made with `T::default()` the first time it is asked for.
    pub fn extension<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut map = self.extensions.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let value = map.entry(TypeId::of::<T>()).or_insert_with(|| Arc::new(T::default())).clone();
        value.downcast::<T>().expect("an extension is stored under its own type")
    }

    /// Replace the workspace's value of type `T`.
    pub fn set_extension<T: Send + Sync + 'static>(&self, value: T) {
        let mut map = self.extensions.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        map.insert(TypeId::of::<T>(), Arc::new(value));
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
