//! CSV export of a query, and the one rule CSV cells are escaped and unescaped by (import
//! itself is `records::import`).
//!
//! Export neutralises spreadsheet formulas (CSV injection): a cell of a non-numeric column
//! whose text starts with `=`, `+`, `-`, `@`, a tab or a carriage return — after any leading
//! `'` — gets one more `'` in front, so a spreadsheet shows it as text instead of running it.
//! Numbers and currency amounts are written as they are (`-12.50` stays a number). Import
//! removes exactly that one `'` again, so an exported file imports back to the same values.

use crate::error::{Code, Error, Result};
use crate::records::access::Session;
use crate::records::query::QuerySpec;
use serde::Serialize;
use std::io::Write;
use ts_rs::TS;

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
    session.for_each_row(&q, |row| {
        let mut rec = vec![neutralise_cell(row.id)];
        rec.extend(q.columns.iter().zip(&row.values).map(|(c, v)| {
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
pub(crate) fn unescape_cell(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if formula_like(rest) => rest,
        _ => cell,
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
