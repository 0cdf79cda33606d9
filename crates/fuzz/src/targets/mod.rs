//! The targets. Each keeps what it needs between cases (a workspace, seeds) and checks its
//! invariants after every case.

use crate::gen::{self, Rng};
use crate::{clip, typed, Outcome, Target};
use countersign_kernel::ai::ask::Ask;
use countersign_kernel::ai::extract::Extract;
use countersign_kernel::ai::pipeline::drive::{self, Step};
use countersign_kernel::ai::pipeline::ModelChoice;
use countersign_kernel::ai::provider::{ChatResponse, Part};
use countersign_kernel::ai::summarize::Summarize;
use countersign_kernel::ingest::{ingest, Document, Limits};
use countersign_kernel::metadata::definition::{FieldLevel, FieldType, WorkspaceDefinition};
use countersign_kernel::metadata::value;
use countersign_kernel::records::demo::{demo_definition, DEMO_DATA};
use countersign_kernel::records::import::{import_csv, ImportMode, ImportOptions};
use countersign_kernel::FixedClock;
use countersign_kernel::{Code, DeployOptions, Error, QuerySpec, Session, Workspace, WorkspaceOptions};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

mod csv_import;
mod definitions;
mod documents;
mod model_output;
mod queries;
mod vocabulary;

use csv_import::*;
use definitions::*;
use documents::*;
use model_output::*;
use queries::*;
use vocabulary::*;

pub const TARGETS: &[&str] = &[
    "documents-text",
    "documents-markdown",
    "documents-html",
    "documents-email",
    "documents-pdf",
    "documents-docx",
    "query-specs",
    "definitions",
    "csv-import",
    "ask",
    "extract",
    "summarize",
];

/// Build a target by name; workspaces go in `dir`.
pub fn make(name: &str, dir: &std::path::Path) -> Result<Box<dyn Target>, Error> {
    Ok(match name {
        n if n.starts_with("documents-") => Box::new(Documents::new(n)?),
        "query-specs" => Box::new(Queries::new(dir)?),
        "definitions" => Box::new(Definitions::new(dir)?),
        "csv-import" => Box::new(CsvImport::new(dir)?),
        "ask" | "extract" | "summarize" => Box::new(Capability::new(name, dir)?),
        other => {
            return Err(Error::new(
                Code::InvalidQuery,
                format!("no fuzz target `{other}`; targets: {}", TARGETS.join(", ")),
            ))
        }
    })
}

const USERS: &[&str] = &["ava", "ben", "cara", "dan", "eve"];

/// Real documents of every format (the demo's), and the hostile ones found so far.
const SEED_DOCUMENTS: &[(&str, &[u8])] = &[
    ("INV-2026-50946.txt", include_bytes!("../../../../fixtures/demo/documents/INV-2026-50946.txt")),
    ("INV-2026-50971.md", include_bytes!("../../../../fixtures/demo/documents/INV-2026-50971.md")),
    ("INV-2026-51011.html", include_bytes!("../../../../fixtures/demo/documents/INV-2026-51011.html")),
    ("INV-2026-51030.eml", include_bytes!("../../../../fixtures/demo/documents/INV-2026-51030.eml")),
    ("INV-2026-51047.pdf", include_bytes!("../../../../fixtures/demo/documents/INV-2026-51047.pdf")),
    ("INV-2026-51067.docx", include_bytes!("../../../../fixtures/demo/documents/INV-2026-51067.docx")),
];

fn fresh_demo(dir: &std::path::Path, name: &str) -> Result<Workspace, Error> {
    fresh_demo_with(dir, name, WorkspaceOptions::default())
}

fn fresh_demo_with(dir: &std::path::Path, name: &str, opts: WorkspaceOptions) -> Result<Workspace, Error> {
    let path = dir.join(format!("{name}.countersign"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    Ok(countersign_kernel::open::create(&path, countersign_kernel::open::Start::Demo, opts)?.0)
}

fn scalar(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap_or(-1)
}

/// Writes the kernel made to records: the length of the data history.
fn history_len(ws: &Workspace) -> i64 {
    scalar(ws.raw_connection(), "SELECT count(*) FROM data_history")
}

/// Every value of every record changed since history entry `since` is one the save path
/// would accept now (coerces for its field, no unsafe characters in text).
fn stored_values_are_valid(ws: &Workspace, since: i64) -> Result<(), String> {
    let conn = ws.raw_connection();
    let mut stmt = conn
        .prepare("SELECT DISTINCT object, record_id FROM data_history WHERE seq > ?1 AND op != 'delete'")
        .map_err(|e| e.to_string())?;
    let changed: Vec<(String, String)> = stmt
        .query_map([since], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(|e| e.to_string())?
        .flatten()
        .collect();
    let system = ws.system_session().map_err(|e| e.to_string())?;
    let catalog = ws.catalog().map_err(|e| e.to_string())?;
    for (object, id) in changed {
        let Ok(record) = system.get(&object, &id) else { continue };
        let Ok(meta) = catalog.object_meta(&object) else { continue };
        for field in meta.fields() {
            let v = record.fields.get(&field.key).cloned().unwrap_or(Value::Null);
            if v.is_null() {
                continue;
            }
            if let Err(e) = value::coerce(field, &v) {
                return Err(format!(
                    "{object} {id}.{} = {} does not coerce: {e}",
                    field.key,
                    clip(&v.to_string())
                ));
            }
            if let Some(s) = v.as_str() {
                if let Some(c) = value::unsafe_char(s, field.field_type == FieldType::LongText) {
                    return Err(format!("{object} {id}.{} holds U+{:04X}", field.key, c as u32));
                }
            }
        }
    }
    Ok(())
}

/// With `COUNTERSIGN_FUZZ_KEEP=DIR`, each case's input is written to `DIR/case-N.EXT`, to
/// replay a finding or add it to the regression corpus.
fn keep_input(case: u64, ext: &str, bytes: &[u8]) {
    if let Some(dir) = std::env::var_os("COUNTERSIGN_FUZZ_KEEP") {
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(std::path::Path::new(&dir).join(format!("case-{case}.{ext}")), bytes);
    }
}
