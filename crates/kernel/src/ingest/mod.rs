//! Document ingestion (the input of Extract): a file's bytes → plain text, with a map from
//! text offsets back to the source (line, paragraph, page, e-mail header), so an extracted value
//! can show where it came from.
//!
//! Formats: plain text, Markdown, HTML, e-mail (`.eml`, multipart: the text parts, or the HTML
//! parts when the text is a stub beside them; then its attachments in these formats, each under
//! an `Attachment:` line, and the others listed with why they were not read), PDF (the text
//! layer, by page, laid out by the glyphs' positions: reading order, columns, turned pages; a
//! page without one by OCR), DOCX (`word/document.xml`, by paragraph; a table one line per row,
//! its cells between `|`), and pictures (PNG, JPEG, TIFF) by OCR ([`ocr`]).
//!
//! A document is hostile until read. [`Limits`] bounds bytes in (checked before reading a path),
//! characters and source-map segments out, bytes inflated, heap, and wall time; every failure
//! is typed (`document.unsupported`, `document.invalid`, `document.encrypted`,
//! `document.too_large`, `document.timeout`) and says which limit. The parse runs in a child
//! process of the app or CLI ([`reader_entry_point`]) with a heap and CPU limit and is killed
//! at the deadline, so a parser that recurses without bound (PDF nesting), inflates a bomb or
//! loops never takes the caller with it; the parsers also check the deadline themselves.

use crate::error::{Code, Error, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use ts_rs::TS;

mod docx;
mod email;
mod html;
mod ocr;
mod pdf;
mod pdf_layout;
mod reader;
mod text;

use docx::*;
use email::*;
pub use html::html_paragraphs;
use html::*;
use ocr::*;
use pdf::*;
use pdf_layout::*;
pub use reader::reader_entry_point;
use reader::*;
use text::*;

/// A sentence in the document addressed to an AI (a prompt injection), shown to the reviewer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Injection {
    pub text: String,
    #[ts(type = "number")]
    pub start: usize,
    #[ts(type = "number")]
    pub end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    Text,
    Markdown,
    Html,
    Email,
    Pdf,
    Docx,
    /// A picture (PNG, JPEG, TIFF): read by OCR.
    Image,
}

/// Where a piece of the text came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Location {
    /// Line `n` (from 1) of a text, Markdown or e-mail body.
    Line { n: u32 },
    /// Paragraph `n` (from 1) of an HTML or DOCX document.
    Paragraph { n: u32 },
    /// Page `n` (from 1) of a PDF, line `line` of that page's text.
    Page { n: u32, line: u32 },
    /// Page `n` (from 1) of a scan or a picture, line `line` of what OCR read on it: a value
    /// from here was read by OCR, and the review says so.
    Scan { n: u32, line: u32 },
    /// An e-mail header (`subject`, `from`, `to`, `date`).
    Header { name: String },
}

/// A run of the text (`start..end`, byte offsets on char boundaries) and its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Segment {
    #[ts(type = "number")]
    pub start: usize,
    #[ts(type = "number")]
    pub end: usize,
    pub location: Location,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct Document {
    pub name: String,
    pub kind: DocumentKind,
    pub text: String,
    pub segments: Vec<Segment>,
    /// `sha256:<hex>` of the bytes as received.
    pub sha256: String,
    #[ts(type = "number")]
    pub bytes: usize,
    /// E-mail attachments that were not read, each with why ("inv.xlsx (not read: …)").
    pub attachments: Vec<String>,
}

impl Document {
    /// The source of the text at byte `offset`.
    pub fn locate(&self, offset: usize) -> Option<&Location> {
        self.segments
            .iter()
            .find(|s| s.start <= offset && offset < s.end.max(s.start + 1))
            .map(|s| &s.location)
    }

    /// Byte offsets of the first occurrence of `needle` in the text.
    pub fn find(&self, needle: &str) -> Option<(usize, usize)> {
        self.text.find(needle).map(|i| (i, i + needle.len()))
    }
}

/// What one read may cost. Every limit, when hit, is a typed error naming it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Limits {
    /// Bytes of the file as received (checked before it is read, when it comes from a path).
    pub max_bytes: usize,
    /// Characters of text out.
    pub max_chars: usize,
    /// Lines, paragraphs or headers in the source map.
    pub max_segments: usize,
    /// Bytes the file may inflate to (DOCX entries; PDF streams are bounded by `max_memory`).
    pub max_inflated: u64,
    /// Heap the reader process may use (on Unix; see [`reader_entry_point`]).
    pub max_memory: u64,
    /// Wall time of one read.
    pub deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 20 << 20,
            max_chars: 2_000_000,
            max_segments: 200_000,
            max_inflated: 64 << 20,
            max_memory: 384 << 20,
            deadline: Duration::from_secs(15),
        }
    }
}

fn invalid(name: &str, why: impl std::fmt::Display) -> Error {
    Error::new(Code::DocumentInvalid, format!("{name} cannot be read: {why}"))
}

fn too_large(name: &str, why: impl std::fmt::Display) -> Error {
    Error::new(Code::DocumentTooLarge, format!("{name} {why}"))
}

fn too_much_text(name: &str, limits: &Limits) -> Error {
    too_large(name, format_args!("holds more than {} characters of text", limits.max_chars))
}

fn timeout(name: &str, limits: &Limits) -> Error {
    Error::new(
        Code::DocumentTimeout,
        format!("{name} took longer than {} s to read; the reader was stopped", limits.deadline.as_secs()),
    )
}

/// Read a document from a path: its size is checked before anything is read, and at most
/// `max_bytes + 1` bytes are ever read (a file that grows meanwhile is still refused).
pub fn read_file(path: &std::path::Path, limits: &Limits) -> Result<Document> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let file = std::fs::File::open(path)
        .map_err(|e| Error::new(Code::DocumentInvalid, format!("{name} cannot be opened: {e}")))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > limits.max_bytes as u64 {
        return Err(size_error(&name, size, limits));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(limits.max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::new(Code::DocumentInvalid, format!("{name} cannot be read: {e}")))?;
    ingest(&name, bytes, limits)
}

fn size_error(name: &str, size: u64, limits: &Limits) -> Error {
    too_large(name, format_args!("is {size} bytes; documents may have at most {} bytes", limits.max_bytes))
}

/// Read a document. Where the program registered itself as the reader ([`reader_entry_point`],
/// as the app and the CLI do), the parse runs in a child process with a memory and CPU limit
/// that is killed at the deadline, so no file can crash, exhaust or hang the caller. Otherwise
/// (a library caller, the kernel's tests) it runs on a thread of its own with a large stack
/// that checks the deadline as it goes; a panic inside a parser is a `document.invalid`.
pub fn ingest(name: &str, bytes: Vec<u8>, limits: &Limits) -> Result<Document> {
    if bytes.len() > limits.max_bytes {
        return Err(size_error(name, bytes.len() as u64, limits));
    }
    let kind = detect(name, &bytes)?;
    let sha256 = format!("sha256:{:x}", Sha256::digest(&bytes));
    let size = bytes.len();
    let started = std::time::Instant::now();
    let program = READER_PROGRAM.get();
    let in_child = program.is_some();
    let parsed = match program {
        Some(program) => read_in_child(program, name, kind, &bytes, limits),
        None => read_on_thread(name, kind, bytes, limits),
    };
    let ms = crate::logging::ms_since(started);
    let (text, segments, attachments) = parsed.inspect_err(|e| {
        tracing::info!(kind = ?kind, bytes = size, in_child, code = e.code.as_str(), ms, "document refused")
    })?;
    tracing::info!(
        kind = ?kind,
        bytes = size,
        text_bytes = text.len(),
        segments = segments.len(),
        in_child,
        ms,
        "document read"
    );
    Ok(Document { name: name.to_string(), kind, text, segments, sha256, bytes: size, attachments })
}

/// The reader's deadline and stop flag, checked as it goes.
struct Budget {
    deadline: std::time::Instant,
    stop: Arc<AtomicBool>,
    ticks: std::cell::Cell<u32>,
}

impl Budget {
    fn new(limits: &Limits) -> Self {
        Budget {
            deadline: std::time::Instant::now() + limits.deadline,
            stop: Arc::default(),
            ticks: Default::default(),
        }
    }

    fn check(&self, name: &str, limits: &Limits) -> Result<()> {
        if self.stop.load(Ordering::Relaxed) || std::time::Instant::now() >= self.deadline {
            return Err(timeout(name, limits));
        }
        Ok(())
    }

    /// [`Budget::check`] once every 1,024 calls, for loops over small steps.
    fn tick(&self, name: &str, limits: &Limits) -> Result<()> {
        let t = self.ticks.get().wrapping_add(1);
        self.ticks.set(t);
        if t % 1024 == 0 {
            self.check(name, limits)?;
        }
        Ok(())
    }
}

fn detect(name: &str, bytes: &[u8]) -> Result<DocumentKind> {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    if bytes.starts_with(b"%PDF-") {
        return Ok(DocumentKind::Pdf);
    }
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) && matches!(ext.as_str(), "docx" | "doc") {
        return Err(Error::new(
            Code::DocumentEncrypted,
            format!("{name} is a password-protected or legacy Word file; save it as an unprotected .docx"),
        ));
    }
    if bytes.starts_with(b"PK\x03\x04") && ext == "docx" {
        return Ok(DocumentKind::Docx);
    }
    let picture = [b"\x89PNG\r\n\x1a\n".as_slice(), b"\xFF\xD8\xFF", b"II*\x00", b"MM\x00*"];
    if picture.iter().any(|magic| bytes.starts_with(magic)) {
        return Ok(DocumentKind::Image);
    }
    Ok(match ext.as_str() {
        "txt" | "text" | "csv" | "log" => DocumentKind::Text,
        "md" | "markdown" => DocumentKind::Markdown,
        "html" | "htm" | "xhtml" => DocumentKind::Html,
        "eml" => DocumentKind::Email,
        "pdf" => return Err(invalid(name, "it does not start like a PDF")),
        "docx" => return Err(invalid(name, "it is not a DOCX (zip) file")),
        "png" | "jpg" | "jpeg" | "tif" | "tiff" => {
            return Err(invalid(name, "it does not start like a PNG, JPEG or TIFF picture"))
        }
        _ => {
            return Err(Error::new(
                Code::DocumentUnsupported,
                format!(
                    "{name}: only text, Markdown, HTML, e-mail (.eml), PDF, DOCX and pictures (PNG, JPEG, TIFF) can be read"
                ),
            ))
        }
    })
}

type Parsed = (String, Vec<Segment>, Vec<String>);

fn parse(name: &str, kind: DocumentKind, bytes: &[u8], limits: &Limits, budget: &Budget) -> Result<Parsed> {
    let mut b = Builder::new(name, limits, budget);
    read_into(&mut b, kind, bytes)?;
    b.finish()
}

/// Read `bytes` of `kind` into `b` (a document, or an e-mail's attachment after its body).
fn read_into(b: &mut Builder, kind: DocumentKind, bytes: &[u8]) -> Result<()> {
    match kind {
        DocumentKind::Text | DocumentKind::Markdown => b.lines(&decode_text(bytes)),
        DocumentKind::Html => {
            let (name, limits, budget) = (b.name, b.limits, b.budget);
            html_walk(&decode_text(bytes), &mut |p| b.paragraph(&p), &mut || budget.tick(name, limits))
        }
        DocumentKind::Email => email(b, bytes),
        DocumentKind::Pdf => pdf(b, bytes),
        DocumentKind::Docx => docx(b, bytes),
        DocumentKind::Image => image(b, bytes),
    }
}
