//! Document ingestion (the input of F-EXTRACT): a file's bytes → plain text, with a map from
//! text offsets back to the source (line, paragraph, page, e-mail header), so an extracted value
//! can show where it came from.
//!
//! Formats: plain text, Markdown, HTML, e-mail (`.eml`, multipart: the text parts, else the
//! HTML parts as text; attachments are listed, not read), PDF (the text layer, by page), DOCX
//! (`word/document.xml`, by paragraph). Limits: bytes in, characters out, bytes decompressed, and
//! a deadline. Every failure is typed (`document.unsupported`, `document.invalid`,
//! `document.encrypted`, `document.too_large`, `document.timeout`); a parser that panics or
//! runs past the deadline never takes the caller with it.

use crate::error::{Code, Error, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::time::Duration;
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKind {
    Text,
    Markdown,
    Html,
    Email,
    Pdf,
    Docx,
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
    /// E-mail attachments that were not read.
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

#[derive(Debug, Clone)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_chars: usize,
    /// Cap on what one compressed entry (DOCX) may inflate to.
    pub max_inflated: u64,
    pub deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 20 << 20,
            max_chars: 2_000_000,
            max_inflated: 64 << 20,
            deadline: Duration::from_secs(15),
        }
    }
}

fn invalid(name: &str, why: impl std::fmt::Display) -> Error {
    Error::new(Code::DocumentInvalid, format!("{name} cannot be read: {why}"))
}

/// Read a document. The parse runs on its own thread under `limits.deadline`; a panic inside a
/// parser is a `document.invalid`, never a crash.
pub fn ingest(name: &str, bytes: Vec<u8>, limits: &Limits) -> Result<Document> {
    if bytes.len() > limits.max_bytes {
        return Err(Error::new(
            Code::DocumentTooLarge,
            format!("{name} is {} bytes; documents may have at most {} bytes", bytes.len(), limits.max_bytes),
        ));
    }
    let kind = detect(name, &bytes)?;
    let sha256 = format!("sha256:{:x}", Sha256::digest(&bytes));
    let size = bytes.len();
    let (tx, rx) = std::sync::mpsc::channel();
    let owned_name = name.to_string();
    let lim = limits.clone();
    std::thread::Builder::new()
        .name("countersign-ingest".into())
        .spawn(move || {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                parse(&owned_name, kind, &bytes, &lim)
            }))
            .unwrap_or_else(|_| Err(invalid(&owned_name, "the file is malformed (the parser gave up)")));
            let _ = tx.send(out);
        })
        .map_err(|e| Error::internal(format!("cannot start the document reader: {e}")))?;
    let (text, segments, attachments) = match rx.recv_timeout(limits.deadline) {
        Ok(r) => r?,
        Err(_) => {
            return Err(Error::new(
                Code::DocumentTimeout,
                format!("{name} took longer than {} s to read; it was abandoned", limits.deadline.as_secs()),
            ))
        }
    };
    if text.chars().count() > limits.max_chars {
        return Err(Error::new(
            Code::DocumentTooLarge,
            format!("{name} holds more than {} characters of text", limits.max_chars),
        ));
    }
    Ok(Document { name: name.to_string(), kind, text, segments, sha256, bytes: size, attachments })
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
    Ok(match ext.as_str() {
        "txt" | "text" | "csv" | "log" => DocumentKind::Text,
        "md" | "markdown" => DocumentKind::Markdown,
        "html" | "htm" | "xhtml" => DocumentKind::Html,
        "eml" => DocumentKind::Email,
        "pdf" => return Err(invalid(name, "it does not start like a PDF")),
        "docx" => return Err(invalid(name, "it is not a DOCX (zip) file")),
        _ => {
            return Err(Error::new(
                Code::DocumentUnsupported,
                format!("{name}: only text, Markdown, HTML, e-mail (.eml), PDF and DOCX files can be read"),
            ))
        }
    })
}

type Parsed = (String, Vec<Segment>, Vec<String>);

fn parse(name: &str, kind: DocumentKind, bytes: &[u8], limits: &Limits) -> Result<Parsed> {
    match kind {
        DocumentKind::Text | DocumentKind::Markdown => {
            let mut b = Builder::default();
            b.lines(&decode_text(bytes), |n| Location::Line { n });
            Ok(b.finish())
        }
        DocumentKind::Html => {
            let mut b = Builder::default();
            b.paragraphs(&html_paragraphs(&decode_text(bytes)));
            Ok(b.finish())
        }
        DocumentKind::Email => email(name, bytes),
        DocumentKind::Pdf => pdf(name, bytes),
        DocumentKind::Docx => docx(name, bytes, limits),
    }
}

/// UTF-8 (with or without BOM); otherwise Windows-1252, which maps every byte.
fn decode_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => encoding_rs::WINDOWS_1252.decode(bytes).0.into_owned(),
    }
}

/// Text with its segments, built line by line.
#[derive(Default)]
struct Builder {
    text: String,
    segments: Vec<Segment>,
    attachments: Vec<String>,
}

impl Builder {
    fn push(&mut self, line: &str, location: Location) {
        let start = self.text.len();
        self.text.push_str(line);
        self.segments.push(Segment { start, end: self.text.len(), location });
        self.text.push('\n');
    }

    fn lines(&mut self, text: &str, at: impl Fn(u32) -> Location) {
        for (i, line) in text.lines().enumerate() {
            self.push(line.trim_end_matches('\r'), at(i as u32 + 1));
        }
    }

    fn paragraphs(&mut self, paragraphs: &[String]) {
        for (i, p) in paragraphs.iter().enumerate() {
            self.push(p, Location::Paragraph { n: i as u32 + 1 });
        }
    }

    fn finish(mut self) -> Parsed {
        while self.text.ends_with('\n') {
            self.text.pop();
        }
        (self.text, self.segments, self.attachments)
    }
}

/// HTML → paragraphs of text: block elements and `<br>` end a paragraph; `script`, `style`,
/// `head` and comments are dropped; entities decoded; whitespace collapsed.
pub fn html_paragraphs(html: &str) -> Vec<String> {
    const BLOCK: &[&str] = &[
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "hr",
        "title",
        "td",
        "th",
    ];
    let mut out: Vec<String> = vec![];
    let mut cur = String::new();
    let mut rest = html;
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        let t = cur.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(t);
        cur.clear();
    };
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<!--") {
            rest = r.find("-->").map_or("", |i| &r[i + 3..]);
            continue;
        }
        if rest.starts_with('<') {
            let Some(end) = rest.find('>') else {
                cur.push_str(rest);
                break;
            };
            let tag = &rest[1..end];
            let closing = tag.starts_with('/');
            let tname: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            rest = &rest[end + 1..];
            if !closing && matches!(tname.as_str(), "script" | "style" | "head") {
                let close = format!("</{tname}");
                let lower = rest.to_ascii_lowercase();
                rest = match lower.find(&close) {
                    Some(i) => rest[i..].find('>').map_or("", |j| &rest[i + j + 1..]),
                    None => "",
                };
                continue;
            }
            if BLOCK.contains(&tname.as_str()) {
                if tname == "td" || tname == "th" {
                    if closing {
                        cur.push_str(" | ");
                    }
                } else {
                    flush(&mut cur, &mut out);
                }
            }
            continue;
        }
        let next = rest.find('<').unwrap_or(rest.len());
        cur.push_str(&decode_entities(&rest[..next]));
        rest = &rest[next..];
    }
    flush(&mut cur, &mut out);
    // Collapse runs of empty paragraphs to one (they separate blocks), trim the ends.
    let mut cleaned: Vec<String> = vec![];
    for p in out {
        let p = p.trim().trim_end_matches('|').trim().to_string();
        if p.is_empty() && cleaned.last().is_none_or(|l: &String| l.is_empty()) {
            continue;
        }
        cleaned.push(p);
    }
    while cleaned.last().is_some_and(|l| l.is_empty()) {
        cleaned.pop();
    }
    cleaned
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest[..rest.len().min(12)].find(';') else {
            out.push('&');
            rest = &rest[1..];
            continue;
        };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" | "#39" => Some('\''),
            "nbsp" => Some(' '),
            "euro" => Some('€'),
            "pound" => Some('£'),
            e if e.starts_with("#x") || e.starts_with("#X") => {
                u32::from_str_radix(&e[2..], 16).ok().and_then(char::from_u32)
            }
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn email(name: &str, bytes: &[u8]) -> Result<Parsed> {
    let msg = mail_parser::MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| invalid(name, "it is not an e-mail message"))?;
    let mut b = Builder::default();
    let header = |b: &mut Builder, label: &str, value: Option<String>| {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            b.push(&format!("{label}: {v}"), Location::Header { name: label.to_ascii_lowercase() });
        }
    };
    let addr = |a: Option<&mail_parser::Address>| {
        a.map(|a| {
            a.iter()
                .map(|x| match (x.name(), x.address()) {
                    (Some(n), Some(e)) => format!("{n} <{e}>"),
                    (None, Some(e)) => e.to_string(),
                    (Some(n), None) => n.to_string(),
                    (None, None) => String::new(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    header(&mut b, "From", addr(msg.from()));
    header(&mut b, "To", addr(msg.to()));
    header(&mut b, "Date", msg.date().map(|d| d.to_rfc3339()));
    header(&mut b, "Subject", msg.subject().map(String::from));
    let mut line = 0u32;
    let mut body = |b: &mut Builder, text: &str| {
        b.text.push('\n');
        for l in text.lines() {
            line += 1;
            b.push(l.trim_end_matches('\r'), Location::Line { n: line });
        }
    };
    if msg.text_body_count() > 0 {
        for i in 0..msg.text_body_count() {
            if let Some(t) = msg.body_text(i) {
                body(&mut b, &t);
            }
        }
    } else {
        for i in 0..msg.html_body_count() {
            if let Some(h) = msg.body_html(i) {
                body(&mut b, &html_paragraphs(&h).join("\n"));
            }
        }
    }
    b.attachments = msg
        .attachments()
        .map(|a| mail_parser::MimeHeaders::attachment_name(a).unwrap_or("(unnamed)").to_string())
        .collect();
    Ok(b.finish())
}

fn pdf(name: &str, bytes: &[u8]) -> Result<Parsed> {
    if bytes.windows(8).any(|w| w == b"/Encrypt") {
        return Err(Error::new(
            Code::DocumentEncrypted,
            format!("{name} is an encrypted PDF; save an unprotected copy to extract it"),
        ));
    }
    let pages = pdf_extract::extract_text_from_mem_by_pages(bytes).map_err(|e| invalid(name, e))?;
    let mut b = Builder::default();
    for (p, page) in pages.iter().enumerate() {
        // The text layer spaces lines with blank ones; keep only lines with text.
        for (line, l) in page.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).enumerate() {
            b.push(l, Location::Page { n: p as u32 + 1, line: line as u32 + 1 });
        }
    }
    if b.text.trim().is_empty() {
        return Err(invalid(name, "the PDF has no text layer (a scan?); run it through OCR first"));
    }
    Ok(b.finish())
}

fn docx(name: &str, bytes: &[u8], limits: &Limits) -> Result<Parsed> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| invalid(name, e))?;
    let mut entry = zip
        .by_name("word/document.xml")
        .map_err(|_| invalid(name, "it has no word/document.xml (not a Word document)"))?;
    if entry.size() > limits.max_inflated {
        return Err(Error::new(
            Code::DocumentTooLarge,
            format!("{name} inflates to more than {} bytes", limits.max_inflated),
        ));
    }
    let mut xml = Vec::new();
    (&mut entry).take(limits.max_inflated + 1).read_to_end(&mut xml).map_err(|e| invalid(name, e))?;
    if xml.len() as u64 > limits.max_inflated {
        return Err(Error::new(
            Code::DocumentTooLarge,
            format!("{name} inflates to more than {} bytes", limits.max_inflated),
        ));
    }
    let mut reader = quick_xml::Reader::from_reader(xml.as_slice());
    let mut paragraphs: Vec<String> = vec![];
    let mut cur = String::new();
    let mut in_text = false;
    let mut buf = Vec::new();
    loop {
        use quick_xml::events::Event;
        match reader.read_event_into(&mut buf).map_err(|e| invalid(name, e))? {
            Event::Start(e) if e.name().0 == "w:t" => in_text = true,
            Event::End(e) if e.name().0 == "w:t" => in_text = false,
            Event::End(e) if e.name().0 == "w:p" => paragraphs.push(std::mem::take(&mut cur)),
            Event::Empty(e) if e.name().0 == "w:p" => paragraphs.push(String::new()),
            Event::Empty(e) if e.name().0 == "w:tab" => cur.push('\t'),
            Event::Empty(e) if e.name().0 == "w:br" => cur.push(' '),
            Event::Text(t) if in_text => {
                let raw: &str = t.as_ref();
                cur.push_str(&decode_entities(raw));
            }
            Event::GeneralRef(r) if in_text => {
                let raw: &str = r.as_ref();
                cur.push_str(&decode_entities(&format!("&{raw};")));
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !cur.is_empty() {
        paragraphs.push(cur);
    }
    let mut b = Builder::default();
    b.paragraphs(&paragraphs);
    Ok(b.finish())
}
