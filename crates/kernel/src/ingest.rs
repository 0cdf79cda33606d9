//! Document ingestion (the input of Extract): a file's bytes → plain text, with a map from
//! text offsets back to the source (line, paragraph, page, e-mail header), so an extracted value
//! can show where it came from.
//!
//! Formats: plain text, Markdown, HTML, e-mail (`.eml`, multipart: the text parts, else the
//! HTML parts as text; attachments are listed, not read), PDF (the text layer, by page), DOCX
//! (`word/document.xml`, by paragraph).
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

/// Stack of the in-process reader thread: deep enough for any document a person writes. The
/// parsers' own guards (nesting, page trees, inflation, segments) hold here too; what they do
/// not foresee is contained only by the child process.
const READER_STACK: usize = 256 << 20;

/// Stack of the reader thread in the child process.
const CHILD_READER_STACK: usize = 32 << 20;

fn read_on_thread(name: &str, kind: DocumentKind, bytes: Vec<u8>, limits: &Limits) -> Result<Parsed> {
    let (tx, rx) = std::sync::mpsc::channel();
    let owned_name = name.to_string();
    let lim = limits.clone();
    let budget = Budget::new(limits);
    let stop = budget.stop.clone();
    let reader = std::thread::Builder::new()
        .name("countersign-ingest".into())
        .stack_size(READER_STACK)
        .spawn(move || {
            let _ = tx.send(parse_guarded(&owned_name, kind, &bytes, &lim, &budget));
        })
        .map_err(|e| Error::internal(format!("cannot start the document reader: {e}")))?;
    match rx.recv_timeout(limits.deadline + Duration::from_millis(500)) {
        // Joined, never detached: glibc (2.36) lets a thread that exits just as it is detached
        // unmap its stack — one this large bypasses glibc's stack cache — while
        // `pthread_detach` still reads the thread's descriptor at the top of that stack. The
        // fuzz run died of that SIGSEGV once.
        Ok(r) => {
            let _ = reader.join();
            r
        }
        Err(_) => {
            // The reader checks this flag as it goes and stops at its next check; a small thread
            // waits for it to end.
            stop.store(true, Ordering::Relaxed);
            let _ = std::thread::Builder::new().name("countersign-ingest-reaper".into()).spawn(move || {
                let _ = reader.join();
            });
            Err(timeout(name, limits))
        }
    }
}

fn parse_guarded(
    name: &str,
    kind: DocumentKind,
    bytes: &[u8],
    limits: &Limits,
    budget: &Budget,
) -> Result<Parsed> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse(name, kind, bytes, limits, budget)))
        .unwrap_or_else(|_| Err(invalid(name, "the file is malformed (the parser gave up)")))
}

/// The argument that starts this program as a document reader.
const READER_ARG: &str = "--countersign-document-reader";

static READER_PROGRAM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// Call first thing in `main` of a program that reads documents (the app, the CLI). If this
/// process was started as a document reader, it reads one document from stdin, writes the
/// result to stdout and returns the exit code to end with. Otherwise it registers this
/// executable as the reader program for [`ingest`] and returns `None`.
pub fn reader_entry_point() -> Option<i32> {
    if std::env::args_os().nth(1).is_some_and(|a| a == READER_ARG) {
        return Some(serve_one_document());
    }
    if let Ok(exe) = std::env::current_exe() {
        let _ = READER_PROGRAM.set(exe);
    }
    None
}

/// What the reader child receives on stdin before the document's bytes (one JSON line).
#[derive(Serialize, Deserialize)]
struct ReaderRequest {
    name: String,
    kind: DocumentKind,
    limits: Limits,
}

/// What it writes to stdout (one JSON value).
#[derive(Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum ReaderReply {
    Text { text: String, segments: Vec<Segment>, attachments: Vec<String> },
    Refused { code: Code, message: String },
}

fn serve_one_document() -> i32 {
    let mut stdin = std::io::stdin().lock();
    let mut header = String::new();
    if std::io::BufRead::read_line(&mut stdin, &mut header).is_err() {
        return 2;
    }
    let Ok(request) = serde_json::from_str::<ReaderRequest>(&header) else { return 2 };
    let limits = request.limits;
    sandbox::limit_self(&limits);
    let mut bytes = Vec::new();
    if (&mut stdin).take(limits.max_bytes as u64 + 1).read_to_end(&mut bytes).is_err() {
        return 2;
    }
    // On a thread of a known stack size (the main thread's is 1 MiB on Windows). Smaller than
    // the in-process reader's: a thread's stack counts against the heap limit here.
    let name = request.name.clone();
    let parsed = std::thread::Builder::new()
        .stack_size(CHILD_READER_STACK)
        .spawn(move || parse_guarded(&name, request.kind, &bytes, &limits, &Budget::new(&limits)))
        .map_err(|e| Error::internal(e.to_string()))
        .and_then(|t| t.join().unwrap_or_else(|_| Err(Error::internal("the reader thread stopped"))));
    let reply = match parsed {
        Ok((text, segments, attachments)) => ReaderReply::Text { text, segments, attachments },
        Err(e) => ReaderReply::Refused { code: e.code, message: e.message },
    };
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, &reply).is_ok() && std::io::Write::flush(&mut out).is_ok();
    if written {
        0
    } else {
        3
    }
}

fn read_in_child(
    program: &std::path::Path,
    name: &str,
    kind: DocumentKind,
    bytes: &[u8],
    limits: &Limits,
) -> Result<Parsed> {
    use std::process::{Command, Stdio};
    let cannot = |e: std::io::Error| Error::internal(format!("cannot start the document reader: {e}"));
    let header =
        serde_json::to_string(&ReaderRequest { name: name.to_string(), kind, limits: limits.clone() })
            .map_err(|e| Error::internal(e.to_string()))?;
    let mut child = Command::new(program)
        .arg(READER_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    let mut stdin = child.stdin.take().expect("piped");
    let input: Vec<u8> = [header.as_bytes(), b"\n", bytes].concat();
    // The child may stop reading early (a limit); a broken pipe is then expected.
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut stdin, &input);
    });
    // What a reply can hold: the text (escaped in JSON at worst 6 bytes a byte) and the map.
    let reply_cap = (limits.max_chars as u64) * 4 * 6 + (limits.max_segments as u64) * 96 + 4096;
    let stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.take(reply_cap + 1).read_to_end(&mut out);
        out
    });
    let stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stderr.take(64 << 10).read_to_end(&mut out);
        out
    });
    let deadline = std::time::Instant::now() + limits.deadline;
    let status = loop {
        let polled = child.try_wait().map_err(|e| {
            let _ = child.kill();
            let _ = child.wait();
            cannot(e)
        });
        match polled? {
            Some(status) => break status,
            None if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = writer.join();
                return Err(timeout(name, limits));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    if !status.success() {
        return Err(child_failure(name, &status, &err, limits));
    }
    if out.len() as u64 > reply_cap {
        return Err(too_large(name, "gives more text than a document may hold"));
    }
    match serde_json::from_slice::<ReaderReply>(&out) {
        Ok(ReaderReply::Text { text, segments, attachments }) => Ok((text, segments, attachments)),
        Ok(ReaderReply::Refused { code, message }) => Err(Error::new(code, message)),
        Err(_) => Err(Error::internal("the document reader gave an answer that does not parse")),
    }
}

/// Why the reader child ended without an answer, told from its exit status and the runtime's
/// last words on stderr (never shown: they may quote the file).
fn child_failure(name: &str, status: &std::process::ExitStatus, stderr: &str, limits: &Limits) -> Error {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(status);
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    if stderr.contains("memory allocation") || stderr.contains("capacity overflow") {
        return too_large(
            name,
            format_args!("needs more than {} MiB of memory to read", limits.max_memory >> 20),
        );
    }
    if stderr.contains("overflowed its stack") {
        return invalid(name, "its structure is nested too deeply");
    }
    if signal == Some(sandbox::CPU_LIMIT_SIGNAL) {
        return timeout(name, limits);
    }
    invalid(name, "the file is malformed (the reader stopped on it)")
}

#[cfg(unix)]
mod sandbox {
    use super::Limits;

    pub const CPU_LIMIT_SIGNAL: i32 = libc::SIGXCPU;

    /// Limits on the reader child, set by itself before it reads a byte of the document: its
    /// heap, its CPU time (one second past the deadline, so an orphan cannot run on), no core
    /// dumps, no files written.
    pub fn limit_self(limits: &Limits) {
        let set = |resource, value: u64| {
            let lim = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
            // SAFETY: setrlimit reads a valid rlimit struct; lowering our own limits is always allowed.
            unsafe { libc::setrlimit(resource, &lim) };
        };
        set(libc::RLIMIT_DATA, limits.max_memory);
        set(libc::RLIMIT_CPU, limits.deadline.as_secs() + 1);
        set(libc::RLIMIT_CORE, 0);
        set(libc::RLIMIT_FSIZE, 0);
    }
}

#[cfg(not(unix))]
mod sandbox {
    use super::Limits;

    pub const CPU_LIMIT_SIGNAL: i32 = -1;

    /// Elsewhere the child is isolated and killed at the deadline, without resource limits.
    pub fn limit_self(_limits: &Limits) {}
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

fn parse(name: &str, kind: DocumentKind, bytes: &[u8], limits: &Limits, budget: &Budget) -> Result<Parsed> {
    let mut b = Builder::new(name, limits, budget);
    match kind {
        DocumentKind::Text | DocumentKind::Markdown => b.lines(&decode_text(bytes))?,
        DocumentKind::Html => {
            html_walk(&decode_text(bytes), &mut |p| b.paragraph(&p), &mut || budget.tick(name, limits))?
        }
        DocumentKind::Email => email(&mut b, bytes)?,
        DocumentKind::Pdf => pdf(&mut b, bytes)?,
        DocumentKind::Docx => docx(&mut b, bytes)?,
    }
    b.finish()
}

/// UTF-8 (with or without BOM); otherwise Windows-1252, which maps every byte.
fn decode_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => encoding_rs::WINDOWS_1252.decode(bytes).0.into_owned(),
    }
}

/// Text with its segments, built line by line under the limits. Blank lines get no segment,
/// and a run of them is kept as one, so a flood of empty lines or paragraphs costs nothing.
struct Builder<'a> {
    name: &'a str,
    limits: &'a Limits,
    budget: &'a Budget,
    text: String,
    chars: usize,
    segments: Vec<Segment>,
    attachments: Vec<String>,
    blank: bool,
    paragraphs: u32,
}

impl<'a> Builder<'a> {
    fn new(name: &'a str, limits: &'a Limits, budget: &'a Budget) -> Self {
        Builder {
            name,
            limits,
            budget,
            text: String::new(),
            chars: 0,
            segments: vec![],
            attachments: vec![],
            blank: false,
            paragraphs: 0,
        }
    }

    fn tick(&self) -> Result<()> {
        self.budget.tick(self.name, self.limits)
    }

    fn push(&mut self, line: &str, location: Location) -> Result<()> {
        self.tick()?;
        if line.trim().is_empty() {
            self.blank_line();
            return Ok(());
        }
        if self.segments.len() >= self.limits.max_segments {
            return Err(too_large(
                self.name,
                format_args!("has more than {} lines or paragraphs", self.limits.max_segments),
            ));
        }
        if !self.text.is_empty() {
            self.text.push_str(if self.blank { "\n\n" } else { "\n" });
            self.chars += 1 + usize::from(self.blank);
        }
        self.blank = false;
        self.chars += line.chars().count();
        if self.chars > self.limits.max_chars {
            return Err(too_much_text(self.name, self.limits));
        }
        let start = self.text.len();
        self.text.push_str(line);
        self.segments.push(Segment { start, end: self.text.len(), location });
        Ok(())
    }

    /// A break between blocks (kept as one empty line in the text, only between text).
    fn blank_line(&mut self) {
        self.blank = !self.text.is_empty();
    }

    /// The lines of a plain text, each located by its number (from 1).
    fn lines(&mut self, text: &str) -> Result<()> {
        for (i, line) in text.lines().enumerate() {
            self.push(line.trim_end_matches('\r'), Location::Line { n: i as u32 + 1 })?;
        }
        Ok(())
    }

    /// A paragraph, numbered among the non-empty ones (from 1); an empty one is a break.
    fn paragraph(&mut self, p: &str) -> Result<()> {
        if p.trim().is_empty() {
            self.tick()?;
            self.blank_line();
            return Ok(());
        }
        self.paragraphs += 1;
        self.push(p, Location::Paragraph { n: self.paragraphs })
    }

    fn finish(self) -> Result<Parsed> {
        if self.text.is_empty() {
            return Err(invalid(self.name, "it holds no text"));
        }
        Ok((self.text, self.segments, self.attachments))
    }
}

/// HTML → paragraphs of text: block elements and `<br>` end a paragraph; `script`, `style`,
/// `head` and comments are dropped; entities decoded; whitespace collapsed. Runs of empty
/// paragraphs are kept as one (they separate blocks).
pub fn html_paragraphs(html: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let _ = html_walk(
        html,
        &mut |p| {
            if !(p.is_empty() && out.last().is_none_or(String::is_empty)) {
                out.push(p);
            }
            Ok(())
        },
        &mut || Ok(()),
    );
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    out
}

/// The HTML walk behind [`html_paragraphs`]: each paragraph goes to `emit` as it ends, and
/// `tick` is called once per tag, so the caller bounds the time. Linear in the input: the end
/// of a `script`, `style` or `head` element is searched for once, from where it starts.
fn html_walk(
    html: &str,
    emit: &mut dyn FnMut(String) -> Result<()>,
    tick: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
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
    let mut cur = String::new();
    let mut rest = html;
    let mut flush = |cur: &mut String| {
        let t = cur.split_whitespace().collect::<Vec<_>>().join(" ");
        cur.clear();
        emit(t.trim_end_matches('|').trim().to_string())
    };
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<!--") {
            rest = r.find("-->").map_or("", |i| &r[i + 3..]);
            continue;
        }
        if rest.starts_with('<') {
            tick()?;
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
                .take(16)
                .collect::<String>()
                .to_ascii_lowercase();
            rest = &rest[end + 1..];
            if !closing && matches!(tname.as_str(), "script" | "style" | "head") {
                rest = match find_ascii_ci(rest, &format!("</{tname}")) {
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
                    flush(&mut cur)?;
                }
            }
            continue;
        }
        let next = rest.find('<').unwrap_or(rest.len());
        cur.push_str(&decode_entities(&rest[..next]));
        rest = &rest[next..];
    }
    flush(&mut cur)
}

/// Byte offset of the first match of the ASCII `needle` in `hay`, ignoring ASCII case.
fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    h.windows(n.len()).position(|w| w.eq_ignore_ascii_case(n))
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

fn email(b: &mut Builder, bytes: &[u8]) -> Result<()> {
    let name = b.name;
    let msg = mail_parser::MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| invalid(name, "it is not an e-mail message"))?;
    let header = |b: &mut Builder, label: &str, value: Option<String>| -> Result<()> {
        match value.filter(|v| !v.is_empty()) {
            Some(v) => {
                b.push(&format!("{label}: {v}"), Location::Header { name: label.to_ascii_lowercase() })
            }
            None => Ok(()),
        }
    };
    let addr = |a: Option<&mail_parser::Address>| {
        a.map(|a| {
            a.iter()
                .take(100)
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
    header(b, "From", addr(msg.from()))?;
    header(b, "To", addr(msg.to()))?;
    header(b, "Date", msg.date().map(|d| d.to_rfc3339()))?;
    header(b, "Subject", msg.subject().map(String::from))?;
    let mut line = 0u32;
    let mut body = |b: &mut Builder, text: &str| -> Result<()> {
        b.blank_line();
        for l in text.lines() {
            line += 1;
            b.push(l.trim_end_matches('\r'), Location::Line { n: line })?;
        }
        Ok(())
    };
    if msg.text_body_count() > 0 {
        for i in 0..msg.text_body_count() {
            if let Some(t) = msg.body_text(i) {
                body(b, &t)?;
            }
        }
    } else {
        for i in 0..msg.html_body_count() {
            if let Some(h) = msg.body_html(i) {
                body(b, &html_paragraphs(&h).join("\n"))?;
            }
        }
    }
    b.attachments = msg
        .attachments()
        .take(1000)
        .map(|a| mail_parser::MimeHeaders::attachment_name(a).unwrap_or("(unnamed)").to_string())
        .collect();
    Ok(())
}

fn pdf(b: &mut Builder, bytes: &[u8]) -> Result<()> {
    let name = b.name;
    if bytes.windows(8).any(|w| w == b"/Encrypt") {
        return Err(Error::new(
            Code::DocumentEncrypted,
            format!("{name} is an encrypted PDF; save an unprotected copy to extract it"),
        ));
    }
    if let Some(depth) = pdf_nesting_over(bytes, MAX_PDF_NESTING) {
        return Err(invalid(
            name,
            format_args!("its objects nest {depth} deep; at most {MAX_PDF_NESTING} levels are read"),
        ));
    }
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| invalid(name, e))?;
    b.budget.check(name, b.limits)?;
    // The page tree is walked once for the checks (the text output walks it again itself).
    let pages = doc.get_pages();
    if let Some(why) = page_tree_problem(&doc, &pages) {
        return Err(invalid(name, why));
    }
    check_page_contents(&doc, &pages, b)?;
    if let Some(why) = form_cycle(&doc, &pages) {
        return Err(invalid(name, why));
    }
    let shared = PageSink::default();
    let mut writer = shared.clone();
    let mut pages = PdfPages::new(&mut writer, shared, b.budget, name, b.limits);
    let outcome = pdf_extract::output_doc(&doc, &mut pages);
    b.budget.check(name, b.limits)?;
    // As a reader would: the pages before one that cannot be read are still text.
    let texts = pages.finish();
    if outcome.is_err() && texts.iter().all(|t| t.trim().is_empty()) {
        return Err(invalid(name, outcome.err().map_or(String::new(), |e| e.to_string())));
    }
    for (p, page) in texts.iter().enumerate() {
        // The text layer spaces lines with blank ones; keep only lines with text.
        for (line, l) in page.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).enumerate() {
            b.push(l, Location::Page { n: p as u32 + 1, line: line as u32 + 1 })?;
        }
    }
    if b.text.is_empty() {
        return Err(invalid(name, "the PDF has no text layer (a scan?); run it through OCR first"));
    }
    Ok(())
}

/// A PDF's pages by number.
type Pages = std::collections::BTreeMap<u32, lopdf::ObjectId>;

/// Page trees deeper than this are refused (real ones have a few levels).
const MAX_PAGE_TREE_DEPTH: usize = 64;

/// A page whose chain of `/Parent`s loops or runs past [`MAX_PAGE_TREE_DEPTH`]: the text
/// output looks inherited attributes up that chain without end (a 1.5 KB file kept a core busy
/// until the deadline; found by the fuzzer).
fn page_tree_problem(doc: &lopdf::Document, pages: &Pages) -> Option<String> {
    for (&n, &id) in pages {
        let mut seen = std::collections::HashSet::new();
        let mut at = id;
        while let Ok(parent) =
            doc.get_dictionary(at).and_then(|d| d.get(b"Parent")).and_then(lopdf::Object::as_reference)
        {
            if !seen.insert(parent) {
                return Some(format!("page {n}'s parents loop"));
            }
            if seen.len() > MAX_PAGE_TREE_DEPTH {
                return Some(format!(
                    "page {n} is more than {MAX_PAGE_TREE_DEPTH} levels deep in the page tree"
                ));
            }
            at = parent;
        }
    }
    None
}

/// Inflate each page's content streams as the text output will (a stream drawn twice counts
/// twice) within `max_inflated` per page, and refuse nesting past [`MAX_PDF_NESTING`] in them, before
/// the text output inflates and parses them without bounds. Streams in filters other than
/// Flate are left to the reader process's limits.
fn check_page_contents(doc: &lopdf::Document, pages: &Pages, b: &Builder) -> Result<()> {
    let (name, limits) = (b.name, b.limits);
    for (&n, &page) in pages {
        b.budget.check(name, limits)?;
        // Per page: the text output holds one page's content at a time.
        let mut inflated: u64 = 0;
        let mut content = Vec::new();
        for id in doc.get_page_contents(page) {
            let Ok(lopdf::Object::Stream(stream)) = doc.get_object(id) else { continue };
            let filters = stream.filters().unwrap_or_default();
            let left = limits.max_inflated.saturating_sub(inflated);
            let before = content.len();
            match filters.as_slice() {
                [] => {
                    content.extend_from_slice(&stream.content[..stream.content.len().min(left as usize + 1)])
                }
                [f] if *f == b"FlateDecode" => {
                    let _ = flate2::read::ZlibDecoder::new(stream.content.as_slice())
                        .take(left + 1)
                        .read_to_end(&mut content);
                }
                _ => continue,
            }
            inflated += (content.len() - before) as u64;
            if inflated > limits.max_inflated {
                return Err(too_large(
                    name,
                    format_args!(
                        "draws page {n} from more than {} bytes of inflated content",
                        limits.max_inflated
                    ),
                ));
            }
        }
        if let Some(depth) = pdf_nesting_over(&content, MAX_PDF_NESTING) {
            return Err(invalid(
                name,
                format_args!(
                    "page {n}'s content nests {depth} deep; at most {MAX_PDF_NESTING} levels are read"
                ),
            ));
        }
    }
    Ok(())
}

/// Forms (`/Subtype /Form` XObjects) that draw themselves, directly or through other forms: the
/// text output follows `Do` into a form without a depth limit. A form's edges are the forms its
/// own resources name, or — when it has none and inherits them — the forms any page names.
/// Deeper than [`MAX_PAGE_TREE_DEPTH`] counts as a loop.
fn form_cycle(doc: &lopdf::Document, pages: &Pages) -> Option<String> {
    use lopdf::{Object, ObjectId};
    use std::collections::HashMap;
    let forms_in = |resources: Option<&lopdf::Dictionary>| -> Vec<ObjectId> {
        let xobjects = resources.and_then(|r| r.get(b"XObject").ok()).and_then(|x| match x {
            Object::Reference(id) => doc.get_dictionary(*id).ok(),
            Object::Dictionary(d) => Some(d),
            _ => None,
        });
        xobjects.map_or(vec![], |x| x.iter().filter_map(|(_, v)| v.as_reference().ok()).collect())
    };
    fn resources_of<'a>(doc: &'a lopdf::Document, d: &'a lopdf::Dictionary) -> Option<&'a lopdf::Dictionary> {
        match d.get(b"Resources").ok()? {
            lopdf::Object::Reference(id) => doc.get_dictionary(*id).ok(),
            lopdf::Object::Dictionary(r) => Some(r),
            _ => None,
        }
    }
    let is_form = |id: &ObjectId| matches!(doc.get_object(*id), Ok(Object::Stream(s)) if s.dict.get(b"Subtype").and_then(Object::as_name).is_ok_and(|n| n == b"Form"));
    let page_forms: Vec<ObjectId> = pages
        .values()
        .filter_map(|p| doc.get_dictionary(*p).ok())
        .flat_map(|p| forms_in(resources_of(doc, p)))
        .filter(is_form)
        .collect();
    let edges = |id: ObjectId| -> Vec<ObjectId> {
        let Ok(Object::Stream(s)) = doc.get_object(id) else { return vec![] };
        match resources_of(doc, &s.dict) {
            Some(r) => forms_in(Some(r)).into_iter().filter(is_form).collect(),
            None => page_forms.clone(),
        }
    };
    // Depth-first, iteratively: 1 = on the current path, 2 = done.
    let mut state: HashMap<ObjectId, u8> = HashMap::new();
    for &root in &page_forms {
        let mut stack: Vec<(ObjectId, Vec<ObjectId>)> = vec![];
        if state.contains_key(&root) {
            continue;
        }
        state.insert(root, 1);
        stack.push((root, edges(root)));
        while let Some((id, next)) = stack.last_mut() {
            match next.pop() {
                Some(child) => match state.get(&child) {
                    Some(1) => return Some(format!("a form (object {}) draws itself", child.0)),
                    Some(_) => {}
                    None if stack.len() >= MAX_PAGE_TREE_DEPTH => {
                        return Some(format!("forms draw forms more than {MAX_PAGE_TREE_DEPTH} deep"))
                    }
                    None => {
                        state.insert(child, 1);
                        let e = edges(child);
                        stack.push((child, e));
                    }
                },
                None => {
                    state.insert(*id, 2);
                    stack.pop();
                }
            }
        }
    }
    None
}

/// Arrays and dictionaries nested deeper than this are refused before the PDF parser (which
/// recurses once per level) sees them. Real documents nest a handful of levels.
const MAX_PDF_NESTING: usize = 100;

/// The first nesting depth of `[` / `<<` past `max` in PDF syntax (strings, comments and stream
/// data skipped), if any: of the file itself, and of each page's inflated content.
fn pdf_nesting_over(bytes: &[u8], max: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
            }
            b'(' => {
                // A literal string: balanced parentheses, backslash escapes.
                let mut open = 0usize;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 1,
                        b'(' => open += 1,
                        b')' => {
                            open -= 1;
                            if open == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'<' if bytes.get(i + 1) == Some(&b'<') => {
                depth += 1;
                i += 1;
            }
            b'<' => {
                while i < bytes.len() && bytes[i] != b'>' {
                    i += 1;
                }
            }
            b'>' if bytes.get(i + 1) == Some(&b'>') => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            // Inline image data (`BI … ID <binary> EI` in content) is not syntax.
            b'I' if bytes[i..].starts_with(b"ID")
                && i > 0
                && bytes[i - 1].is_ascii_whitespace()
                && bytes.get(i + 2).is_some_and(u8::is_ascii_whitespace) =>
            {
                let rest = &bytes[i + 2..];
                let end = rest.windows(4).position(|w| {
                    w[0].is_ascii_whitespace() && &w[1..3] == b"EI" && w[3].is_ascii_whitespace()
                });
                match end {
                    Some(end) => i += 2 + end + 3,
                    None => return None,
                }
            }
            b's' if bytes[i..].starts_with(b"stream") && !bytes[..i].ends_with(b"end") => {
                let rest = &bytes[i + 6..];
                match rest.windows(9).position(|w| w == b"endstream") {
                    Some(end) => i += 6 + end + 8,
                    None => return None,
                }
            }
            _ => {}
        }
        if depth > max {
            return Some(depth);
        }
        i += 1;
    }
    None
}

/// pdf-extract's plain-text output split by page, checking the deadline and the size of the
/// text as it goes (an error ends the walk; what was read so far is kept).
struct PdfPages<'a> {
    inner: pdf_extract::PlainTextOutput<&'a mut dyn std::io::Write>,
    sink: PageSink,
    starts: Vec<usize>,
    budget: &'a Budget,
    name: &'a str,
    limits: &'a Limits,
}

/// Where the text output writes: a buffer shared with [`PdfPages`], which reads its length at
/// each page start.
#[derive(Clone, Default)]
struct PageSink(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl std::io::Write for PageSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> PdfPages<'a> {
    fn new(
        writer: &'a mut dyn std::io::Write,
        sink: PageSink,
        budget: &'a Budget,
        name: &'a str,
        limits: &'a Limits,
    ) -> Self {
        PdfPages {
            inner: pdf_extract::PlainTextOutput::new(writer),
            sink,
            starts: vec![],
            budget,
            name,
            limits,
        }
    }

    fn guard(&self) -> std::result::Result<(), pdf_extract::OutputError> {
        let stop = |why: &str| Err(pdf_extract::OutputError::IoError(std::io::Error::other(why.to_string())));
        if self.budget.tick(self.name, self.limits).is_err() {
            return stop("deadline");
        }
        if self.sink.0.borrow().len() > self.limits.max_chars.saturating_mul(4) {
            return stop("too much text");
        }
        Ok(())
    }

    fn finish(self) -> Vec<String> {
        let all = String::from_utf8_lossy(&self.sink.0.borrow()).into_owned();
        let mut ends: Vec<usize> = self.starts.iter().skip(1).copied().collect();
        ends.push(all.len());
        self.starts.iter().zip(ends).map(|(&s, e)| all.get(s..e).unwrap_or_default().to_string()).collect()
    }
}

impl pdf_extract::OutputDev for PdfPages<'_> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &pdf_extract::MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> std::result::Result<(), pdf_extract::OutputError> {
        self.budget
            .check(self.name, self.limits)
            .map_err(|e| pdf_extract::OutputError::IoError(std::io::Error::other(e.message)))?;
        self.starts.push(self.sink.0.borrow().len());
        self.inner.begin_page(page_num, media_box, art_box)
    }
    fn end_page(&mut self) -> std::result::Result<(), pdf_extract::OutputError> {
        self.inner.end_page()
    }
    fn output_character(
        &mut self,
        trm: &pdf_extract::Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> std::result::Result<(), pdf_extract::OutputError> {
        self.guard()?;
        self.inner.output_character(trm, width, spacing, font_size, char)
    }
    fn begin_word(&mut self) -> std::result::Result<(), pdf_extract::OutputError> {
        self.inner.begin_word()
    }
    fn end_word(&mut self) -> std::result::Result<(), pdf_extract::OutputError> {
        self.inner.end_word()
    }
    fn end_line(&mut self) -> std::result::Result<(), pdf_extract::OutputError> {
        self.inner.end_line()
    }
}

fn docx(b: &mut Builder, bytes: &[u8]) -> Result<()> {
    let (name, limits) = (b.name, b.limits);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| invalid(name, e))?;
    let mut entry = zip
        .by_name("word/document.xml")
        .map_err(|_| invalid(name, "it has no word/document.xml (not a Word document)"))?;
    let inflates = || too_large(name, format_args!("inflates to more than {} bytes", limits.max_inflated));
    if entry.size() > limits.max_inflated {
        return Err(inflates());
    }
    let mut xml = Vec::new();
    (&mut entry).take(limits.max_inflated + 1).read_to_end(&mut xml).map_err(|e| invalid(name, e))?;
    if xml.len() as u64 > limits.max_inflated {
        return Err(inflates());
    }
    let mut reader = quick_xml::Reader::from_reader(xml.as_slice());
    let mut cur = String::new();
    let mut in_text = false;
    let mut buf = Vec::new();
    loop {
        use quick_xml::events::Event;
        b.tick()?;
        match reader.read_event_into(&mut buf).map_err(|e| invalid(name, e))? {
            Event::Start(e) if e.name().0 == "w:t" => in_text = true,
            Event::End(e) if e.name().0 == "w:t" => in_text = false,
            Event::End(e) if e.name().0 == "w:p" => b.paragraph(&std::mem::take(&mut cur))?,
            Event::Empty(e) if e.name().0 == "w:p" => b.paragraph("")?,
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
        if cur.len() > limits.max_chars.saturating_mul(4) {
            return Err(too_much_text(name, limits));
        }
        buf.clear();
    }
    b.paragraph(&cur)
}

#[cfg(test)]
mod tests {
    use super::pdf_nesting_over;

    #[test]
    fn pdf_nesting_counts_arrays_and_dictionaries_not_strings_comments_or_streams() {
        assert_eq!(pdf_nesting_over(b"<< /A [ [ << /B 1 >> ] ] >>", 3), Some(4));
        assert_eq!(pdf_nesting_over(b"<< /A [ [ << /B 1 >> ] ] >>", 4), None);
        assert_eq!(pdf_nesting_over(b"[ ] [ ] [ ] [ ] [ ]", 1), None, "siblings are not nesting");
        let hidden =
            b"<< /T (x ([[[[) \\) y) /H <5B5B5B> >> % [[[[[[\n<< /Length 4 >>\nstream\n[[[[\nendstream [";
        assert_eq!(pdf_nesting_over(hidden, 1), None, "strings, hex strings, comments and stream data");
        assert_eq!(pdf_nesting_over(hidden, 0), Some(1), "and the scan goes on after them");
        assert_eq!(pdf_nesting_over(&b"[".repeat(101), 100), Some(101));
        let image = [b"BT ET BI /W 8 /H 8 ID ".as_slice(), &[b'['; 500], b" EI Q"].concat();
        assert_eq!(pdf_nesting_over(&image, 1), None, "inline image data");
    }
}
