//! Importing records from a file — CSV, a spreadsheet (`.xlsx`, `.ods`) or vCards (`.vcf`) —
//! through the save path, row by row, with per-row errors.
//!
//! An import is one transaction and one [`Batch`] of saves. A row refused for its own reasons
//! leaves nothing behind (a create writes only after its checks pass, and its first write is
//! one statement); a storage failure stops the import. `AllOrNothing` (the default) commits only if every row passed;
//! `SkipInvalid` commits the rows that passed. `dry_run` always rolls back: it lists every
//! row's problem before anything is written. A cancelled import rolls back too. Lookup cells
//! may hold a record id or the exact name of a record the user can read; a name that matches
//! several records is an error on that row, never a guess.
//!
//! Columns map to fields by an explicit mapping (see [`suggest`] for one suggested by name and
//! content), or, without one, by field key or label. Several columns may fill one text field
//! (First Name + Last Name → Name): their non-blank cells are joined with a space. A value map
//! turns a column's own words into the field's (a picklist value, or blank).

mod suggest;
mod table;
mod vcard;
mod xlsx;

pub use suggest::{
    suggest, ColumnSuggestion, MappingSuggestion, MatchedBy, SourceTool, UnknownValue, UnknownValues,
};
pub use table::{FileFormat, Table};

use crate::error::{Code, Error, Result};
use crate::metadata::catalog::{column, ObjectMeta};
use crate::metadata::definition::{FieldLevel, FieldType};
use crate::metadata::value::Scalar;
use crate::records::access::{RowAccess, Session};
use crate::records::save::{Batch, SaveContext, SaveRequest};
use rusqlite::params_from_iter;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Read;
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ImportMode {
    #[default]
    AllOrNothing,
    SkipInvalid,
}

#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct ImportOptions {
    pub mode: ImportMode,
    pub dry_run: bool,
    /// Column header → field key (`id`, `owner` allowed; empty string ignores the column).
    /// Without it, columns map to fields by key or, case-insensitively, by label.
    #[ts(optional, as = "Option<BTreeMap<String, String>>")]
    pub mapping: Option<BTreeMap<String, String>>,
    /// Field key → (a cell's text → the value to save instead; empty: leave it blank).
    #[ts(optional, as = "Option<BTreeMap<String, BTreeMap<String, String>>>")]
    pub value_map: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct ColumnMapping {
    pub column: String,
    /// `None`: the column is ignored.
    pub field: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct RowError {
    /// 1-based line of the row in the file (the header is line 1); a spreadsheet's row; a
    /// vCard's first line.
    #[ts(type = "number")]
    pub line: u64,
    pub code: Code,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub field: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct ImportReport {
    pub object: String,
    pub mode: ImportMode,
    pub dry_run: bool,
    pub mapping: Vec<ColumnMapping>,
    #[ts(type = "number")]
    pub rows: u64,
    /// Rows written (or, in a dry run or a refused all-or-nothing import, that would be).
    #[ts(type = "number")]
    pub imported: u64,
    #[ts(type = "number")]
    pub failed: u64,
    /// Whether anything was written.
    pub committed: bool,
    /// Stopped by the user before the end: nothing was written.
    pub cancelled: bool,
    pub errors: Vec<RowError>,
    pub correlation_id: String,
}

/// How far an import is.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct ImportProgress {
    #[ts(type = "number")]
    pub rows: u64,
    /// About how many rows the file has.
    #[ts(type = "number")]
    pub total: u64,
    #[ts(type = "number")]
    pub imported: u64,
    #[ts(type = "number")]
    pub failed: u64,
}

pub use crate::records::Watch;

/// A file the app sends: its name (which says its format) and its bytes in base64.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Upload {
    pub name: String,
    pub content_base64: String,
}

impl Upload {
    pub fn format(&self) -> Result<FileFormat> {
        FileFormat::of_name(&self.name)
    }

    pub fn bytes(&self) -> Result<Vec<u8>> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(self.content_base64.trim())
            .map_err(|e| Error::new(Code::InvalidCsv, format!("`{}` did not arrive whole: {e}", self.name)))
    }
}

/// Rows between two progress reports (and cancel checks).
const PROGRESS_EVERY: u64 = 500;

/// Read a CSV into `object` as this session's user (no progress, no cancel).
pub fn import_csv(
    session: &Session<'_>,
    object: &str,
    mut input: impl Read,
    opts: &ImportOptions,
) -> Result<ImportReport> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    let mut quiet = |_: &ImportProgress| {};
    let watch = Watch { progress: &mut quiet, cancelled: &|| false };
    import_file(session, object, FileFormat::Csv, &bytes, opts, watch)
}

/// Read a file of `format` into `object` as this session's user.
pub fn import_file(
    session: &Session<'_>,
    object: &str,
    format: FileFormat,
    bytes: &[u8],
    opts: &ImportOptions,
    watch: Watch<'_, ImportProgress>,
) -> Result<ImportReport> {
    let started = std::time::Instant::now();
    let report =
        Table::read(format, bytes).and_then(|table| import_rows(session, object, table, opts, watch));
    let ms = crate::logging::ms_since(started);
    match &report {
        Ok(r) => tracing::info!(
            object,
            format = ?format,
            user = %session.user().key,
            rows = r.rows,
            imported = r.imported,
            failed = r.failed,
            committed = r.committed,
            cancelled = r.cancelled,
            dry_run = r.dry_run,
            ms,
            "file imported"
        ),
        Err(e) => tracing::info!(object, code = e.code.as_str(), ms, "import refused"),
    }
    report
}

fn import_rows(
    session: &Session<'_>,
    object: &str,
    mut table: Table<'_>,
    opts: &ImportOptions,
    watch: Watch<'_, ImportProgress>,
) -> Result<ImportReport> {
    let (meta, _) = session.readable_object(object)?;
    let mapping = map_columns(session, meta, &table.headers, opts.mapping.as_ref())?;
    let tx = session.begin_write()?;
    let correlation_id = session.workspace().ids.correlation_id();
    let ctx = SaveContext { proposed_by: None, correlation_id: Some(correlation_id.clone()) };
    let batch = Batch::default();
    let mut report = ImportReport {
        object: object.to_string(),
        mode: opts.mode,
        dry_run: opts.dry_run,
        mapping: mapping.clone(),
        rows: 0,
        imported: 0,
        failed: 0,
        committed: false,
        cancelled: false,
        errors: Vec::new(),
        correlation_id,
    };
    let total = table.total;
    let progress = |r: &ImportReport| ImportProgress {
        rows: r.rows,
        total: total.max(r.rows),
        imported: r.imported,
        failed: r.failed,
    };
    for (line, cells) in table.by_ref() {
        if report.rows % PROGRESS_EVERY == 0 && report.rows > 0 {
            (watch.progress)(&progress(&report));
            if (watch.cancelled)() {
                report.cancelled = true;
                break;
            }
        }
        report.rows += 1;
        let result = cells.and_then(|cells| {
            let req = row_request(session, meta, object, &mapping, &cells, &opts.value_map)?;
            session.save_batched(&batch, &tx, req, &ctx)
        });
        match result {
            Ok(_) => report.imported += 1,
            // The machine or the file failed (a full disk): the import stops, nothing written.
            // A row's own problem is found before its first write, or by that write alone (a
            // duplicate id), which leaves nothing behind: no savepoint per row is needed.
            Err(e) if e.code == Code::Storage => return Err(e),
            Err(e) => {
                report.failed += 1;
                report.errors.push(RowError { line, code: e.code, field: e.field, message: e.message });
            }
        }
    }
    (watch.progress)(&progress(&report));
    let commit = !opts.dry_run
        && !report.cancelled
        && (report.failed == 0 || opts.mode == ImportMode::SkipInvalid)
        && report.imported > 0;
    if commit {
        batch.finish(session, &tx)?;
        tx.commit()?;
        report.committed = true;
    }
    Ok(report)
}

/// The save request one row makes.
fn row_request(
    session: &Session<'_>,
    meta: &ObjectMeta,
    object: &str,
    mapping: &[ColumnMapping],
    cells: &[String],
    value_map: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<SaveRequest> {
    let mut parts: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (m, cell) in mapping.iter().zip(cells) {
        if let Some(f) = m.field.as_deref() {
            parts.entry(f).or_default().push(cell);
        }
    }
    let texts = parts.into_iter().map(|(f, cells)| {
        let text = match cells.as_slice() {
            [one] => one.to_string(),
            // Columns joined into one text field: their non-blank cells, one space between.
            many => many.iter().map(|c| c.trim()).filter(|c| !c.is_empty()).collect::<Vec<_>>().join(" "),
        };
        (f, text)
    });
    let (mut id, mut owner) = (None, None);
    let mut values = Map::new();
    for (f, text) in texts {
        let text = match value_map.get(f).and_then(|m| m.get(text.trim())) {
            Some(mapped) => mapped.clone(),
            None => text,
        };
        match f {
            "id" => id = Some(text.trim().to_string()).filter(|s| !s.is_empty()),
            "owner" => owner = Some(text.trim().to_string()).filter(|s| !s.is_empty()),
            _ => {
                let v = resolve_lookup_name(session, meta, f, &text)?;
                values.insert(f.to_string(), v);
            }
        }
    }
    Ok(SaveRequest::Create { object: object.to_string(), values, id, owner })
}

/// Each column's field: from `mapping`, or by key or label. A column that maps to nothing
/// known, two columns on one field that is not text, or a field the user cannot read, is
/// refused before any row is read.
fn map_columns(
    session: &Session<'_>,
    meta: &ObjectMeta,
    headers: &[String],
    mapping: Option<&BTreeMap<String, String>>,
) -> Result<Vec<ColumnMapping>> {
    let mut out = Vec::new();
    let mut unmapped = Vec::new();
    for h in headers {
        let field = match mapping {
            Some(m) => match m.get(h) {
                Some(f) if f.is_empty() => None,
                Some(f) => Some(f.clone()),
                None => {
                    unmapped.push(h.to_string());
                    None
                }
            },
            None => {
                let h = h.trim();
                if h == "id" || h == "owner" {
                    Some(h.to_string())
                } else {
                    let found = meta
                        .fields()
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| session.field_level(meta, *i) >= FieldLevel::Read)
                        .find(|(_, f)| f.key == h || f.label.eq_ignore_ascii_case(h))
                        .map(|(_, f)| f.key.clone());
                    if found.is_none() {
                        unmapped.push(h.to_string());
                    }
                    found
                }
            }
        };
        out.push(ColumnMapping { column: h.to_string(), field });
    }
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for m in &out {
        let Some(f) = m.field.as_deref() else { continue };
        let textual =
            meta.field(f).is_some_and(|d| matches!(d.field_type, FieldType::Text | FieldType::LongText));
        if let Some(first) = seen.insert(f, &m.column) {
            if first == m.column {
                return Err(Error::new(
                    Code::InvalidCsv,
                    format!("the column `{first}` appears twice in the header row; remove one"),
                ));
            }
            if !textual || mapping.is_none() {
                return Err(Error::new(
                    Code::InvalidCsv,
                    format!(
                        "the columns `{first}` and `{}` both map to `{f}`; remove one (a mapping may join several columns into one text field)",
                        m.column
                    ),
                ));
            }
        }
    }
    if !unmapped.is_empty() {
        return Err(Error::new(
            Code::InvalidCsv,
            format!(
                "column(s) {} match no field of {} you can see; map or remove them",
                unmapped.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "),
                meta.def.label
            ),
        ));
    }
    for m in &out {
        if let Some(f) = &m.field {
            if f != "id" && f != "owner" {
                session.readable_field(meta, f)?;
            }
        }
    }
    Ok(out)
}

/// A lookup cell may name its record instead of giving its id.
fn resolve_lookup_name(session: &Session<'_>, meta: &ObjectMeta, field: &str, cell: &str) -> Result<Value> {
    let v = Value::String(cell.to_string());
    let Some(f) = meta.field(field) else { return Ok(v) };
    if f.field_type != FieldType::Lookup || cell.trim().is_empty() {
        return Ok(v);
    }
    let Ok((target, _)) = session.readable_object(f.target.as_deref().unwrap_or_default()) else {
        return Ok(v);
    };
    let conn = session.workspace().conn();
    if session.load_row(conn, target, cell.trim(), RowAccess::Read)?.is_some() {
        return Ok(v);
    }
    let mut params = vec![Scalar::Text(cell.trim().to_string())];
    let mut sql = format!(
        "SELECT t.id FROM {} t WHERE lower(t.{}) = lower(?)",
        target.table,
        column(&target.def.name_field)
    );
    if let Some(filter) = session.row_filter(target, "t", RowAccess::Read, &mut params) {
        sql.push_str(" AND ");
        sql.push_str(&filter);
    }
    sql.push_str(" LIMIT 2");
    let mut stmt = conn.prepare_cached(&sql)?;
    let ids: Vec<String> =
        stmt.query_map(params_from_iter(params.iter()), |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    match ids.as_slice() {
        [one] => Ok(Value::String(one.clone())),
        [] => Ok(v),
        _ => Err(Error::on_field(
            Code::InvalidValue,
            field,
            format!("`{}` matches several {}; give the record id", cell.trim(), target.def.plural_label),
        )),
    }
}
