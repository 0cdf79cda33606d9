//! CSV import (through the save path, row by row, with per-row errors) and export of a query.
//!
//! An import is one transaction; each row is saved inside a savepoint, so a failing row leaves
//! nothing behind. `AllOrNothing` (the default) commits only if every row passed;
//! `SkipInvalid` commits the rows that passed. `dry_run` always rolls back: it is the mapping
//! preview. Lookup cells may hold a record id or the exact name of a record the user can read;
//! a name that matches several records is an error on that row, never a guess.
//!
//! Export neutralises spreadsheet formulas (CSV injection): a cell of a non-numeric column
//! whose text starts with `=`, `+`, `-`, `@`, a tab or a carriage return — after any leading
//! `'` — gets one more `'` in front, so a spreadsheet shows it as text instead of running it.
//! Numbers and currency amounts are written as they are (`-12.50` stays a number). Import
//! removes exactly that one `'` again, so an exported file imports back to the same values.

use crate::error::{Code, Error, Result};
use crate::metadata::catalog::{column, ObjectMeta};
use crate::metadata::definition::{FieldLevel, FieldType};
use crate::metadata::value::Scalar;
use crate::records::access::{RowAccess, Session};
use crate::records::query::QuerySpec;
use crate::records::save::{SaveContext, SaveRequest};
use crate::store;
use rusqlite::params_from_iter;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::rc::Rc;
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ImportMode {
    #[default]
    AllOrNothing,
    SkipInvalid,
}

#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub mode: ImportMode,
    pub dry_run: bool,
    /// Column header → field key (`id`, `owner` allowed; empty string ignores the column).
    /// Without it, columns map to fields by key or, case-insensitively, by label.
    pub mapping: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct ColumnMapping {
    pub column: String,
    /// `None`: the column is ignored.
    pub field: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct RowError {
    /// 1-based line of the row in the file (the header is line 1).
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
    pub errors: Vec<RowError>,
    pub correlation_id: String,
}

/// Read a CSV into `object` as this session's user.
pub fn import_csv(
    session: &Session<'_>,
    object: &str,
    input: impl Read,
    opts: &ImportOptions,
) -> Result<ImportReport> {
    let started = std::time::Instant::now();
    let report = read_rows(session, object, input, opts);
    let ms = crate::logging::ms_since(started);
    match &report {
        Ok(r) => tracing::info!(
            object,
            user = %session.user().key,
            rows = r.rows,
            imported = r.imported,
            failed = r.failed,
            committed = r.committed,
            dry_run = r.dry_run,
            ms,
            "CSV imported"
        ),
        Err(e) => tracing::info!(object, code = e.code.as_str(), ms, "CSV import refused"),
    }
    report
}

fn read_rows(
    session: &Session<'_>,
    object: &str,
    input: impl Read,
    opts: &ImportOptions,
) -> Result<ImportReport> {
    let (meta, _) = session.readable_object(object)?;
    let lines = Rc::new(RefCell::new(LineCounter::default()));
    let input = Tracked { inner: input, lines: lines.clone() };
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(input);
    let headers = reader
        .headers()
        .map_err(|e| Error::new(Code::InvalidCsv, format!("cannot read the header row: {e}")))?
        .clone();
    if headers.is_empty() {
        return Err(Error::new(Code::InvalidCsv, "the file has no header row"));
    }
    let mut mapping = Vec::new();
    let mut unmapped = Vec::new();
    for h in headers.iter() {
        let field = match &opts.mapping {
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
        mapping.push(ColumnMapping { column: h.to_string(), field });
    }
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for m in &mapping {
        let Some(f) = m.field.as_deref() else { continue };
        if let Some(first) = seen.insert(f, &m.column) {
            let message = if first == m.column {
                format!("the column `{first}` appears twice in the header row; remove one")
            } else {
                format!("the columns `{first}` and `{}` both map to `{f}`; remove one", m.column)
            };
            return Err(Error::new(Code::InvalidCsv, message));
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
    for m in &mapping {
        if let Some(f) = &m.field {
            if f != "id" && f != "owner" {
                session.readable_field(meta, f)?;
            }
        }
    }

    let tx = session.begin_write()?;
    let correlation_id = session.workspace().ids.correlation_id();
    let ctx = SaveContext { proposed_by: None, correlation_id: Some(correlation_id.clone()) };
    let mut report = ImportReport {
        object: object.to_string(),
        mode: opts.mode,
        dry_run: opts.dry_run,
        mapping: mapping.clone(),
        rows: 0,
        imported: 0,
        failed: 0,
        committed: false,
        errors: Vec::new(),
        correlation_id,
    };
    for rec in reader.records() {
        report.rows += 1;
        let line = match &rec {
            Ok(r) => r.position(),
            Err(e) => e.position(),
        }
        .map(|p| lines.borrow_mut().line_at(p.byte()))
        .unwrap_or(report.rows + 1);
        let result =
            rec.map_err(|e| Error::new(Code::InvalidCsv, format!("unreadable row: {e}"))).and_then(|rec| {
                let mut values = Map::new();
                let (mut id, mut owner) = (None, None);
                for (m, cell) in mapping.iter().zip(rec.iter()) {
                    let cell = unescape_cell(cell);
                    match m.field.as_deref() {
                        None => {}
                        Some("id") => id = Some(cell.trim().to_string()).filter(|s| !s.is_empty()),
                        Some("owner") => owner = Some(cell.trim().to_string()).filter(|s| !s.is_empty()),
                        Some(f) => {
                            let v = resolve_lookup_name(session, meta, f, cell)?;
                            values.insert(f.to_string(), v);
                        }
                    }
                }
                let req = SaveRequest::Create { object: object.to_string(), values, id, owner };
                store::savepoint(&tx, || session.save_within(&tx, req, &ctx))
            });
        match result {
            Ok(_) => report.imported += 1,
            Err(e) => {
                report.failed += 1;
                report.errors.push(RowError { line, code: e.code, field: e.field, message: e.message });
            }
        }
    }
    let commit =
        !opts.dry_run && (report.failed == 0 || opts.mode == ImportMode::SkipInvalid) && report.imported > 0;
    if commit {
        tx.commit()?;
        report.committed = true;
    }
    Ok(report)
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

/// Where an export went.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportResult {
    pub path: String,
    #[ts(type = "number")]
    pub records: u64,
}

/// Write the result of a query spec as CSV (header: `id` and the selected paths). Without a
/// `limit` in the spec every matching record is written. Returns the number of records.
pub fn export_csv(session: &Session<'_>, spec: &QuerySpec, out: impl Write) -> Result<u64> {
    let q = session.compile_query(spec, true)?;
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec!["id".to_string()];
    header.extend(q.columns.iter().map(|c| c.path.clone()));
    let csv_err = |e: csv::Error| Error::new(Code::Storage, format!("cannot write the CSV: {e}"));
    w.write_record(&header).map_err(csv_err)?;
    let mut n = 0u64;
    session.for_each_row(&q, |id, values| {
        let mut rec = vec![neutralise_cell(id)];
        rec.extend(q.columns.iter().zip(&values).map(|(c, v)| {
            let text = v.to_text(Some(&c.def));
            if c.def.field_type.is_numeric() {
                text
            } else {
                neutralise_cell(text)
            }
        }));
        w.write_record(&rec).map_err(csv_err)?;
        n += 1;
        Ok(true)
    })?;
    w.flush()?;
    Ok(n)
}

/// What a spreadsheet may read as the start of a formula (OWASP: CSV injection).
const FORMULA_START: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Whether a cell, after its leading `'`s, starts like a formula.
fn formula_like(cell: &str) -> bool {
    cell.trim_start_matches('\'').starts_with(FORMULA_START)
}

/// Export: one `'` in front of a text cell that starts like a formula (after any `'` it
/// already starts with, so that import can take exactly that one off again).
fn neutralise_cell(text: String) -> String {
    if formula_like(&text) {
        format!("'{text}")
    } else {
        text
    }
}

/// Import: the `'` [`neutralise_cell`] added comes off; every other cell is as written.
fn unescape_cell(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if formula_like(rest) => rest,
        _ => cell,
    }
}

/// The input as csv reads it, with every byte also handed to a [`LineCounter`].
struct Tracked<R> {
    inner: R,
    lines: Rc<RefCell<LineCounter>>,
}

impl<R: Read> Read for Tracked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.lines.borrow_mut().pending.extend(&buf[..n]);
        Ok(n)
    }
}

/// Line numbers as an editor shows them. csv's own position of a record is where it started
/// reading, right after the previous record's terminator: a line early in a CRLF file (the
/// LF is still ahead) and before any blank line it skips. This counts line breaks (LF, CRLF
/// or a lone CR, inside quoted cells too) up to the record's first byte. It keeps only the
/// bytes csv has read past the last record asked about.
#[derive(Default)]
struct LineCounter {
    pending: VecDeque<u8>,
    /// Byte offset of `pending[0]`.
    offset: u64,
    /// Line breaks before `offset`.
    breaks: u64,
    after_cr: bool,
}

impl LineCounter {
    /// The 1-based line of the record csv reports at byte `start`.
    fn line_at(&mut self, start: u64) -> u64 {
        while self.offset < start {
            let Some(b) = self.pending.pop_front() else { break };
            self.advance(b);
        }
        // csv skips line breaks before a record; the record starts after them.
        while let Some(&b) = self.pending.front().filter(|b| matches!(b, b'\r' | b'\n')) {
            self.pending.pop_front();
            self.advance(b);
        }
        self.breaks + 1
    }

    fn advance(&mut self, b: u8) {
        self.offset += 1;
        if b == b'\r' || (b == b'\n' && !self.after_cr) {
            self.breaks += 1;
        }
        self.after_cr = b == b'\r';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_escaping_round_trips_through_import() {
        for v in ["=1+1", "+1", "-x", "@SUM(A1)", "\tX", "\r\nX", "'=1", "''+2", "'", "'a", "a=1", "", "x"] {
            let out = neutralise_cell(v.to_string());
            assert_eq!(unescape_cell(&out), v, "{v:?} → {out:?}");
            assert!(!out.starts_with(FORMULA_START), "{v:?} → {out:?}");
        }
    }
}
