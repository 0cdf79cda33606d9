//! A file read as a table: its header row and its rows of text cells, each row with the line
//! (CSV), the spreadsheet row (`.xlsx`) or the card's first line (`.vcf`) it came from, so an
//! error names the place a person finds in the file.

use crate::error::{Code, Error, Result};
use crate::records::csvio::unescape_cell;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::Read;
use std::rc::Rc;

/// The kinds of file an import reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Csv,
    Xlsx,
    Vcard,
}

impl FileFormat {
    /// The format a file name says (`.csv`, `.xlsx`, `.vcf`), case-insensitively.
    pub fn of_name(name: &str) -> Result<FileFormat> {
        let lower = name.to_ascii_lowercase();
        let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
        match ext {
            "csv" | "txt" => Ok(FileFormat::Csv),
            "xlsx" | "xlsm" | "xls" | "ods" => Ok(FileFormat::Xlsx),
            "vcf" | "vcard" => Ok(FileFormat::Vcard),
            _ => Err(Error::new(
                Code::InvalidCsv,
                format!("`{name}` is not a file Countersign imports: use a .csv, .xlsx or .vcf file"),
            )),
        }
    }
}

/// One row: where it is in the file, and its cells (as many as the header has), or why it
/// cannot be read (that row fails; the others go on).
pub type Row = (u64, Result<Vec<String>>);

pub struct Table<'a> {
    pub headers: Vec<String>,
    /// How many rows there are, or about how many (a CSV's line count): for progress.
    pub total: u64,
    rows: Box<dyn Iterator<Item = Row> + 'a>,
}

impl<'a> Table<'a> {
    /// Read `bytes` as a file of `format`. A CSV is read as it goes; a spreadsheet or a vCard
    /// file is read whole first (their libraries do).
    pub fn read(format: FileFormat, bytes: &'a [u8]) -> Result<Table<'a>> {
        match format {
            FileFormat::Csv => csv_table(bytes),
            FileFormat::Xlsx => super::xlsx::read(bytes),
            FileFormat::Vcard => super::vcard::read(bytes),
        }
    }

    pub fn of_rows(headers: Vec<String>, rows: Vec<(u64, Vec<String>)>) -> Table<'a> {
        let total = rows.len() as u64;
        Table { headers, total, rows: Box::new(rows.into_iter().map(|(line, cells)| (line, Ok(cells)))) }
    }
}

impl Iterator for Table<'_> {
    type Item = Row;
    fn next(&mut self) -> Option<Row> {
        self.rows.next()
    }
}

fn csv_table(bytes: &[u8]) -> Result<Table<'_>> {
    let total = bytes.iter().filter(|b| **b == b'\n').count().saturating_sub(1) as u64;
    let lines = Rc::new(RefCell::new(LineCounter::default()));
    let input = Tracked { inner: bytes, lines: lines.clone() };
    let mut reader = csv::ReaderBuilder::new().flexible(false).from_reader(input);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| Error::new(Code::InvalidCsv, format!("cannot read the header row: {e}")))?
        .iter()
        .map(String::from)
        .collect();
    if headers.is_empty() || headers.iter().all(|h| h.trim().is_empty()) {
        return Err(Error::new(Code::InvalidCsv, "the file has no header row"));
    }
    let mut n = 0u64;
    let rows = reader.into_records().map(move |rec| {
        n += 1;
        let line = match &rec {
            Ok(r) => r.position(),
            Err(e) => e.position(),
        }
        .map(|p| lines.borrow_mut().line_at(p.byte()))
        .unwrap_or(n + 1);
        let cells = rec
            .map(|r| r.iter().map(|c| unescape_cell(c).to_string()).collect())
            .map_err(|e| Error::new(Code::InvalidCsv, format!("unreadable row: {e}")));
        (line, cells)
    });
    Ok(Table { headers, total, rows: Box::new(rows) })
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
