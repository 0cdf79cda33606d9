//! The built-in local model: Countersign runs llama.cpp's server itself ([`process`]) on a model
//! file from a small catalog pinned by sha256 ([`catalog`]), fetched with progress, resume,
//! cancel and checksum ([`download`]). Still local only: the server listens on 127.0.0.1.

pub mod catalog;
pub mod download;
pub mod process;

use crate::ai::provider::Cancel;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::AI_MANAGE;
use catalog::{CatalogModel, CATALOG};
use download::{Progress, Wanted};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use ts_rs::TS;

pub use crate::ai::pins::BUILT_IN_ADDRESS;

/// The key of the provider and of the pin "Use the built-in model" makes.
pub const BUILT_IN_KEY: &str = "builtin";

/// "Use the built-in model" (`ai.manage`): this process's runtime becomes the provider `builtin`,
/// its model is pinned as `builtin` by the GGUF file's sha256 — the runtime is started (and the
/// model loaded) to read what it serves — and bound to every capability without a model of its
/// own ([`use_model`](crate::ai::pipeline::use_model)). `sha256`: the file's digest when the caller
/// just checked it.
pub async fn use_built_in_model(
    sessions: &impl crate::records::access::Sessions,
    sha256: Option<&str>,
) -> Result<crate::ai::pipeline::ModelInUse> {
    use crate::ai::pins::{ProviderConfig, Weights};
    use crate::ai::pipeline::use_model;
    let runtime = built_in()?;
    let provider = ProviderConfig {
        key: BUILT_IN_KEY.into(),
        kind: crate::ai::provider::ProviderKind::BuiltIn,
        base_url: BUILT_IN_ADDRESS.into(),
        credential_ref: None,
        structured_form: Default::default(),
        region: "this machine".into(),
        retention: "none".into(),
    };
    let sha256 = match sha256 {
        Some(sha) => sha.to_string(),
        None => crate::digest::file_sha256(runtime.model())?,
    };
    let in_use = use_model(sessions, &provider, process::SERVED_NAME, Weights::Sha256(&sha256)).await?;
    tracing::info!("the built-in model was pinned");
    Ok(in_use)
}

/// The built-in model as Settings and the first-run offer show it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BuiltInModel {
    /// Where model files are kept.
    pub folder: String,
    pub catalog: Vec<CatalogEntry>,
    /// The catalog model "Use the built-in model" uses when none is chosen (see [`chosen`]).
    pub recommended: String,
    /// The `llama-server` program found.
    pub server: Option<String>,
    /// Why none was found.
    pub server_missing: Option<String>,
    /// The runtime of this app, if it serves a model.
    pub serving: Option<process::RuntimeStatus>,
    /// How this machine runs it.
    pub settings: RunSettings,
    /// The CPU cores this machine has (the most threads it may use).
    pub cores: u32,
    /// The acting user may turn it on (`ai.manage`).
    pub can_turn_on: bool,
}

impl crate::records::access::Session<'_> {
    /// The built-in model, for this user, with models kept under `app_data`.
    pub fn built_in_model(&self, app_data: &Path) -> BuiltInModel {
        let models = models_dir(app_data);
        let server = process::find_server(None);
        BuiltInModel {
            folder: models.display().to_string(),
            catalog: catalog_entries(&models),
            recommended: chosen(&models).name.into(),
            server: server.as_ref().ok().map(|p| p.display().to_string()),
            server_missing: server.err().map(|e| e.message),
            serving: built_in().ok().map(|r| r.status()),
            settings: RunSettings::read(app_data),
            cores: process::cores(),
            can_turn_on: self.user().has_system_permission(AI_MANAGE),
        }
    }
}

/// The model "Use the built-in model" uses when none is named: the largest installed one that
/// fits the memory this machine has free; else the largest in the catalog that fits (to be
/// downloaded); else the smallest.
pub fn chosen(models: &Path) -> CatalogModel {
    let entries = catalog_entries(models);
    let fitting = || entries.iter().filter(|e| e.fits != Some(false));
    fitting()
        .filter(|e| e.installed)
        .max_by_key(|e| e.model.size)
        .or_else(|| fitting().max_by_key(|e| e.model.size))
        .map_or(CATALOG[0], |e| e.model)
}

/// The catalog model installed here that this process should serve: the largest installed one
/// that fits, else any installed one.
pub fn installed_model(models: &Path) -> Option<PathBuf> {
    let entries = catalog_entries(models);
    let installed = entries.iter().filter(|e| e.installed);
    let best = installed.clone().filter(|e| e.fits != Some(false)).max_by_key(|e| e.model.size);
    best.or_else(|| installed.min_by_key(|e| e.model.size)).map(|e| models.join(e.model.file))
}

/// At the app's start: serve the model [`installed_model`] picks, if one is installed.
pub fn serve_installed(app_data: &Path) -> Result<Option<Arc<process::Runtime>>> {
    installed_model(&models_dir(app_data)).map(|model| serve(app_data, model)).transpose()
}

/// Make this process's built-in runtime serve `model` with the machine's [`RunSettings`] (not
/// started until first used). A runtime serving the same file the same way is kept — renewed if
/// it had stopped for good (`runtime.crashed`), since serving it again is the person's retry;
/// one serving another file, or with other settings, is replaced (and stops once no call
/// holds it).
pub fn serve(app_data: &Path, model: PathBuf) -> Result<Arc<process::Runtime>> {
    let run = RunSettings::read(app_data);
    if let Ok(current) = built_in() {
        if current.model() == model && run.applied_to(current.settings()) {
            if current.has_failed() {
                current.stop();
            }
            return Ok(current);
        }
    }
    let mut settings = process::RuntimeSettings::new(process::find_server(None)?, model);
    run.apply(&mut settings);
    let runtime = Arc::new(process::Runtime::new(settings));
    set_built_in(Some(runtime.clone()));
    Ok(runtime)
}

/// How this machine runs the built-in model: kept in the app's data folder
/// (`built-in-model.json`), for every workspace. Changed in Settings → Built-in model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunSettings {
    /// CPU threads; `None`: one per core.
    pub threads: Option<u32>,
    /// The context window, in tokens: the longest prompt and answer together.
    pub context: u32,
}

impl Default for RunSettings {
    fn default() -> Self {
        RunSettings { threads: None, context: 4096 }
    }
}

impl RunSettings {
    /// The smallest context the capabilities' prompts fit in, and the largest the catalog's
    /// models were trained for.
    pub const CONTEXT_RANGE: std::ops::RangeInclusive<u32> = 2048..=32768;

    fn file(app_data: &Path) -> PathBuf {
        app_data.join("built-in-model.json")
    }

    /// The saved settings; the defaults where none were saved, or the file is not readable.
    pub fn read(app_data: &Path) -> RunSettings {
        std::fs::read(Self::file(app_data))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<RunSettings>(&bytes).ok())
            .filter(|s| s.check().is_ok())
            .unwrap_or_default()
    }

    fn check(&self) -> Result<()> {
        let cores = process::cores();
        if self.threads.is_some_and(|t| t == 0 || t > cores) {
            return Err(Error::on_field(
                Code::InvalidValue,
                "threads",
                format!("threads is between 1 and this machine's {cores} cores"),
            ));
        }
        if !Self::CONTEXT_RANGE.contains(&self.context) {
            return Err(Error::on_field(
                Code::InvalidValue,
                "context",
                format!(
                    "the context is between {} and {} tokens",
                    Self::CONTEXT_RANGE.start(),
                    Self::CONTEXT_RANGE.end()
                ),
            ));
        }
        Ok(())
    }

    fn apply(&self, settings: &mut process::RuntimeSettings) {
        settings.context = self.context;
        settings.threads = self.threads.unwrap_or_else(process::cores);
    }

    fn applied_to(&self, settings: &process::RuntimeSettings) -> bool {
        let mut wanted = settings.clone();
        self.apply(&mut wanted);
        (wanted.threads, wanted.context) == (settings.threads, settings.context)
    }
}

/// Change how this machine runs the built-in model (`ai.manage`). A runtime serving now is
/// replaced: the next call starts it with the new settings.
pub fn set_run_settings(
    sessions: &impl crate::records::access::Sessions,
    app_data: &Path,
    settings: RunSettings,
) -> Result<RunSettings> {
    sessions.with(|s| s.require(AI_MANAGE))?;
    settings.check()?;
    std::fs::create_dir_all(app_data)?;
    let file = RunSettings::file(app_data);
    let partial = download::partial_path(&file);
    std::fs::write(
        &partial,
        serde_json::to_vec_pretty(&settings).map_err(|e| Error::internal(e.to_string()))?,
    )?;
    std::fs::rename(&partial, &file)?;
    if let Ok(current) = built_in() {
        serve(app_data, current.model().to_path_buf())?;
    }
    tracing::info!("the built-in model's run settings were changed");
    Ok(settings)
}

/// What "Use the built-in model" serves.
#[derive(Debug, Clone)]
pub enum ModelChoice<'a> {
    /// The catalog model [`chosen`] for this machine.
    Chosen,
    /// A catalog model by name, fetched from `source` (a base address holding its file) when
    /// given, else from `$COUNTERSIGN_MODEL_SOURCE` or the catalog's address.
    Catalog { name: &'a str, source: Option<&'a str> },
    /// A GGUF file the person picked (copied into the models folder).
    File(&'a Path),
}

/// "Use the built-in model", in one click (`ai.manage`): the model is installed if it is not
/// yet — fetched, resumable, checked; or the picked file copied in — served, and pinned (see
/// [`use_built_in_model`]).
pub async fn turn_on(
    sessions: &impl crate::records::access::Sessions,
    app_data: &Path,
    choice: ModelChoice<'_>,
    cancel: &Cancel,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<crate::ai::pipeline::ModelInUse> {
    sessions.with(|s| s.require(AI_MANAGE))?;
    // Fail before a long download when there is nothing to run it with.
    process::find_server(None)?;
    let models = models_dir(app_data);
    let installed = match choice {
        ModelChoice::File(path) => install_file(&models, path)?,
        ModelChoice::Chosen => {
            let model = chosen(&models);
            install(&models, &model, source_url(&model, None).as_deref(), cancel, on_progress).await?
        }
        ModelChoice::Catalog { name, source } => {
            let model = catalog::model(name)?;
            install(&models, model, source_url(model, source).as_deref(), cancel, on_progress).await?
        }
    };
    serve(app_data, PathBuf::from(installed.path))?;
    use_built_in_model(sessions, Some(&installed.sha256)).await
}

/// Where a catalog model is fetched from: `<source>/<file>` when a person (or an offline mirror,
/// `$COUNTERSIGN_MODEL_SOURCE`) names another source, else the catalog's address.
pub fn source_url(model: &CatalogModel, source: Option<&str>) -> Option<String> {
    let base = source.map(str::to_string).or_else(|| std::env::var("COUNTERSIGN_MODEL_SOURCE").ok());
    let base = base.filter(|b| !b.trim().is_empty())?;
    Some(format!("{}/{}", base.trim().trim_end_matches('/'), model.file))
}

/// This process's built-in runtime, if it has one: one `llama-server` per app, whichever
/// workspace is open. The app sets it at start; a provider of kind `built_in` calls it.
static BUILT_IN: Mutex<Option<Arc<process::Runtime>>> = Mutex::new(None);

/// Make `runtime` this process's built-in runtime (`None`: it has none), where providers of
/// kind `built_in` reach it too. Returns the one it had.
pub fn set_built_in(runtime: Option<Arc<process::Runtime>>) -> Option<Arc<process::Runtime>> {
    let server = runtime.clone().map(|r| r as Arc<dyn crate::ai::provider::BuiltInServer>);
    crate::ai::provider::serve_built_in(server);
    std::mem::replace(&mut *BUILT_IN.lock().unwrap_or_else(|e| e.into_inner()), runtime)
}

impl crate::ai::provider::BuiltInServer for process::Runtime {
    fn serving_endpoint(&self) -> crate::ai::provider::BoxFuture<'_, Result<crate::ai::provider::Endpoint>> {
        Box::pin(self.endpoint())
    }
}

/// This process's built-in runtime.
pub fn built_in() -> Result<Arc<process::Runtime>> {
    BUILT_IN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or_else(|| Error::new(Code::RuntimeUnavailable, crate::ai::provider::BUILT_IN_NOT_RUNNING))
}

/// The models folder under the app's data directory.
pub fn models_dir(app_data: &Path) -> PathBuf {
    app_data.join("models")
}

/// A model file in the models folder.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InstalledModel {
    pub path: String,
    #[ts(type = "number")]
    pub size: u64,
    pub sha256: String,
    /// The catalog model it is, if it is one.
    pub catalog: Option<String>,
}

/// A catalog model, and where it stands on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogEntry {
    #[serde(flatten)]
    pub model: CatalogModel,
    /// Its file is in the models folder (at its size; the digest is checked when it is used).
    pub installed: bool,
    /// Whether it fits the memory this machine has free now (`None`: the OS does not say).
    pub fits: Option<bool>,
}

/// The catalog as this machine sees it.
pub fn catalog_entries(models: &Path) -> Vec<CatalogEntry> {
    let available = catalog::available_memory();
    CATALOG
        .iter()
        .map(|m| CatalogEntry {
            model: *m,
            installed: std::fs::metadata(models.join(m.file)).is_ok_and(|f| f.len() == m.size),
            fits: available.map(|a| m.fits(a)),
        })
        .collect()
}

/// Install a catalog model into the models folder: fetched from `url` (the catalog's address
/// unless the person gave another), resumed if a try was cut off, and checked.
pub async fn install(
    models: &Path,
    model: &CatalogModel,
    url: Option<&str>,
    cancel: &Cancel,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<InstalledModel> {
    let target = models.join(model.file);
    let wanted = Wanted { url: url.unwrap_or(model.url), size: model.size, sha256: model.sha256 };
    download::fetch(&wanted, &target, cancel, on_progress).await?;
    Ok(InstalledModel {
        path: target.display().to_string(),
        size: model.size,
        sha256: model.sha256.into(),
        catalog: Some(model.name.into()),
    })
}

/// Install a model file the person picked: copied into the models folder with its sha256. A file
/// named like a catalog model must be that model (else it is refused, and nothing is copied).
pub fn install_file(models: &Path, source: &Path) -> Result<InstalledModel> {
    let name = source.file_name().ok_or_else(|| Error::on_field(Code::InvalidValue, "file", "not a file"))?;
    if !name.to_string_lossy().to_ascii_lowercase().ends_with(".gguf") {
        return Err(Error::on_field(
            Code::InvalidValue,
            "file",
            "a model for the built-in runtime is a .gguf file",
        ));
    }
    let size = std::fs::metadata(source)?.len();
    let sha256 = crate::digest::file_sha256(source)?;
    let known = CATALOG.iter().find(|m| m.file == name.to_string_lossy());
    if let Some(m) = known {
        if m.size != size || m.sha256 != sha256 {
            return Err(Error::new(
                Code::ModelChecksum,
                format!(
                    "{} is named like the catalog's {} but is not that file (sha256 {sha256})",
                    source.display(),
                    m.name
                ),
            ));
        }
    }
    std::fs::create_dir_all(models)?;
    let target = models.join(name);
    if target != source {
        let partial = download::partial_path(&target);
        let _ = std::fs::remove_file(&partial);
        // A hard link where the file system allows (a model is a gigabyte), else a copy.
        if std::fs::hard_link(source, &partial).is_err() {
            std::fs::copy(source, &partial)?;
        }
        std::fs::rename(&partial, &target)?;
    }
    Ok(InstalledModel {
        path: target.display().to_string(),
        size,
        sha256,
        catalog: known.map(|m| m.name.into()),
    })
}
