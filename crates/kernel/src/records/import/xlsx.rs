//! Spreadsheets (`.xlsx`, `.xlsm`, `.xls`, `.ods`) through calamine: the first sheet, its first
//! non-empty row as the header. Cells become text the save path coerces like a CSV's: whole
//! numbers without `.0`, dates as ISO dates (date-times as ISO date-times), booleans as
//! `true`/`false`; an error cell (`#DIV/0!`) fails its row.

use super::table::Table;
use crate::error::{Code, Error, Result};
use calamine::{open_workbook_auto_from_rs, Data, Reader};

pub(super) fn read(bytes: &[u8]) -> Result<Table<'static>> {
    let bad = |e: String| Error::new(Code::InvalidCsv, format!("cannot read the spreadsheet: {e}"));
    let mut book = open_workbook_auto_from_rs(std::io::Cursor::new(bytes)).map_err(|e| bad(e.to_string()))?;
    let range = book
        .worksheet_range_at(0)
        .ok_or_else(|| bad("it has no sheet".into()))?
        .map_err(|e| bad(e.to_string()))?;
    // Spreadsheet row numbers as the program shows them (1-based, from the range's start).
    let first_row = range.start().map_or(0, |(r, _)| r as u64) + 1;
    let mut rows = range.rows().enumerate().map(|(i, r)| (first_row + i as u64, r));
    let (_, header) = rows
        .by_ref()
        .find(|(_, r)| r.iter().any(|c| !matches!(c, Data::Empty)))
        .ok_or_else(|| Error::new(Code::InvalidCsv, "the first sheet is empty"))?;
    let width = header.iter().rposition(|c| !matches!(c, Data::Empty)).map_or(0, |i| i + 1);
    let headers: Vec<String> = header[..width].iter().map(text).collect::<Result<_>>()?;
    let mut out = Vec::new();
    for (line, r) in rows {
        if r.iter().all(|c| matches!(c, Data::Empty)) {
            continue;
        }
        let mut cells = Vec::with_capacity(width);
        for i in 0..width {
            let cell = r.get(i).unwrap_or(&Data::Empty);
            cells.push(
                text(cell).map_err(|e| Error::new(Code::InvalidCsv, format!("row {line}: {}", e.message)))?,
            );
        }
        out.push((line, cells));
    }
    Ok(Table::of_rows(headers, out))
}

/// A cell as the text a CSV of the same sheet would hold.
fn text(cell: &Data) -> Result<String> {
    Ok(match cell {
        Data::Empty => String::new(),
        Data::String(s) => s.clone(),
        Data::Int(i) => i.to_string(),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        Data::Float(f) => f.to_string(),
        Data::Bool(b) => b.to_string(),
        Data::DateTime(d) => match d.as_datetime() {
            Some(dt) if dt.time() == chrono::NaiveTime::MIN => dt.date().to_string(),
            Some(dt) => dt.format("%Y-%m-%dT%H:%M:%S").to_string(),
            None => d.as_f64().to_string(),
        },
        Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::Error(e) => return Err(Error::new(Code::InvalidCsv, format!("a cell holds the error {e}"))),
    })
}
