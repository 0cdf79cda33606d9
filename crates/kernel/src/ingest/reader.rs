//! The reader: where a parse runs. In a child process of the app or CLI ([`reader_entry_point`])
//! with a heap and CPU limit, killed at the deadline; else on a thread of its own with a large
//! stack that checks the deadline as it goes.

use super::*;

/// Stack of the in-process reader thread: deep enough for any document a person writes. The
/// parsers' own guards (nesting, page trees, inflation, segments) hold here too; what they do
/// not foresee is contained only by the child process.
pub(super) const READER_STACK: usize = 256 << 20;

/// Stack of the reader thread in the child process.
pub(super) const CHILD_READER_STACK: usize = 32 << 20;

pub(super) fn read_on_thread(
    name: &str,
    kind: DocumentKind,
    bytes: Vec<u8>,
    limits: &Limits,
) -> Result<Parsed> {
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

pub(super) fn parse_guarded(
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
pub(super) const READER_ARG: &str = "--countersign-document-reader";

pub(super) static READER_PROGRAM: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

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
pub(super) struct ReaderRequest {
    pub(super) name: String,
    pub(super) kind: DocumentKind,
    pub(super) limits: Limits,
}

/// What it writes to stdout (one JSON value).
#[derive(Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub(super) enum ReaderReply {
    Text { text: String, segments: Vec<Segment>, attachments: Vec<String> },
    Refused { code: Code, message: String },
}

pub(super) fn serve_one_document() -> i32 {
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

pub(super) fn read_in_child(
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
    let child = Command::new(program)
        .arg(READER_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(cannot)?;
    let input: Vec<u8> = [header.as_bytes(), b"\n", bytes].concat();
    // What a reply can hold: the text (escaped in JSON at worst 6 bytes a byte) and the map.
    let reply_cap = (limits.max_chars as u64) * 4 * 6 + (limits.max_segments as u64) * 96 + 4096;
    let deadline = std::time::Instant::now() + limits.deadline;
    let Exchanged { status, out, err } = exchange(
        child,
        input,
        Caps { out: reply_cap, err: 64 << 10 },
        Duration::from_millis(5),
        || if std::time::Instant::now() >= deadline { Err(timeout(name, limits)) } else { Ok(()) },
        cannot,
    )?;
    let err = String::from_utf8_lossy(&err).into_owned();
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

/// What a child process printed, and how it ended.
pub(super) struct Exchanged {
    pub status: std::process::ExitStatus,
    /// At most `Caps::out + 1` bytes: one more than the cap tells the caller it was exceeded.
    pub out: Vec<u8>,
    pub err: Vec<u8>,
}

/// How much of a child's stdout and stderr is kept.
pub(super) struct Caps {
    pub out: u64,
    pub err: u64,
}

/// Feed `input` to a spawned child's stdin and read its stdout and stderr (those it was given
/// pipes for), each on a thread of its own so that neither side blocks the other, until it ends.
/// Every `poll`, `go_on` is asked whether to keep waiting; its error kills the child and is
/// returned. The one loop both the document reader child and the OCR tools run in.
pub(super) fn exchange(
    mut child: std::process::Child,
    input: Vec<u8>,
    caps: Caps,
    poll: Duration,
    mut go_on: impl FnMut() -> Result<()>,
    wait_failed: impl Fn(std::io::Error) -> Error,
) -> Result<Exchanged> {
    let stdin = child.stdin.take();
    // The child may stop reading early (a limit, or all it needed); a broken pipe is expected.
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = std::io::Write::write_all(&mut stdin, &input);
        }
    });
    fn drain(pipe: Option<impl Read + Send + 'static>, cap: u64) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(cap).read_to_end(&mut out);
            }
            out
        })
    }
    let reader = drain(child.stdout.take(), caps.out + 1);
    let err_reader = drain(child.stderr.take(), caps.err);
    let status = loop {
        let stop = match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => go_on().err(),
            Err(e) => Some(wait_failed(e)),
        };
        if let Some(error) = stop {
            let _ = child.kill();
            let _ = child.wait();
            let _ = writer.join();
            return Err(error);
        }
        std::thread::sleep(poll);
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    Ok(Exchanged { status, out, err })
}

/// Why the reader child ended without an answer, told from its exit status and the runtime's
/// last words on stderr (never shown: they may quote the file).
pub(super) fn child_failure(
    name: &str,
    status: &std::process::ExitStatus,
    stderr: &str,
    limits: &Limits,
) -> Error {
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
