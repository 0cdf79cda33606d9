//! The built-in local model: Countersign runs llama.cpp's server itself ([`process`]) on a model
//! file from a small catalog pinned by sha256 ([`catalog`]), fetched with progress, resume,
//! cancel and checksum ([`download`]). Still local only: the server listens on 127.0.0.1.

pub mod catalog;
pub mod download;
pub mod process;

use crate::ai::provider::Cancel;
use crate::error::{Code, Error, Result};
use catalog::{CatalogModel, CATALOG};
use download::{Progress, Wanted};
use serde::Serialize;
use std::path::{Path, PathBuf};
use ts_rs::TS;

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
    let sha256 = crate::ai::pins::file_sha256(source)?;
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
        std::fs::copy(source, &partial)?;
        std::fs::rename(&partial, &target)?;
    }
    Ok(InstalledModel {
        path: target.display().to_string(),
        size,
        sha256,
        catalog: known.map(|m| m.name.into()),
    })
}
