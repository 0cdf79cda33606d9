//! Structure-aware fuzzing of Countersign on stable Rust.
//!
//! Each target generates cases from a seed (the same seed gives the same cases on every
//! machine) and runs them against the kernel's real readers, parsers and checkers, on a real
//! SQLite workspace where there is one. Every case must end in a result or a typed error
//! whose fault is not the platform's; a panic that escapes, an untyped or platform error, a
//! write the kernel should have refused, a trace left `running`, or memory past the bound is a
//! **finding**, reported with the case number so `--case N` replays it alone.
//!
//! Targets: documents per format (`documents-text`, `-markdown`, `-html`, `-email`, `-pdf`,
//! `-docx`: mutations of real documents, DOCX re-zipped around a mutated `document.xml`),
//! `query-specs` (specs built from the demo's metadata as each demo user), `definitions`
//! (mutated demo definitions deployed), `csv-import` (demo rows with hostile cells, headers and
//! line ends, imported as each user), and the model output of `ask`, `extract` and
//! `summarize` (values generated from the very JSON Schema the kernel sends the model, then
//! cut, fenced or replaced by noise, and fed to the capability's checker through its
//! begin/advance API, with no model server).

pub mod gen;
mod targets;

use countersign_kernel::{Error, Fault};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

pub use targets::{make, TARGETS};

/// What one case did.
pub enum Outcome {
    /// A result that passed the target's checks.
    Passed,
    /// A typed error that the input deserved.
    Refused(Error),
    /// An invariant broke: `(kind, detail)`.
    Finding(&'static str, String),
}

/// A fuzz target: a generator of cases and the checks of their results.
pub trait Target {
    fn name(&self) -> &str;
    fn case(&mut self, rng: &mut gen::Rng, case: u64) -> Outcome;
}

/// Check an error's type: user, admin or document errors are expected answers to hostile
/// input; a platform fault is a finding.
pub fn typed(e: Error) -> Outcome {
    if e.fault == Fault::Platform {
        Outcome::Finding("platform_error", format!("{}: {}", e.code.as_str(), clip(&e.message)))
    } else {
        Outcome::Refused(e)
    }
}

pub fn clip(s: &str) -> String {
    let mut end = s.len().min(300);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[derive(Debug, Default)]
pub struct Report {
    pub target: String,
    pub seed: u64,
    pub cases: u64,
    pub passed: u64,
    pub refused: BTreeMap<String, u64>,
    /// The first message of each refusal code, to see what the cases run into.
    pub examples: BTreeMap<String, String>,
    /// Panics inside a reader that the kernel caught and turned into `document.invalid`.
    pub contained_panics: u64,
    pub findings: Vec<(u64, String, String)>,
    pub max_rss_mib: u64,
    /// The longest single case.
    pub slowest_ms: u64,
    pub slowest_case: u64,
    pub seconds: f64,
}

impl Report {
    pub fn to_json(&self) -> Value {
        json!({
            "target": self.target,
            "seed": self.seed,
            "cases": self.cases,
            "passed": self.passed,
            "refused": self.refused,
            "examples": self.examples,
            "contained_panics": self.contained_panics,
            "findings": self.findings.iter().map(|(c, k, d)| json!({"case": c, "kind": k, "detail": d})).collect::<Vec<_>>(),
            "max_rss_mib": self.max_rss_mib,
            "slowest_case_ms": self.slowest_ms,
            "slowest_case": self.slowest_case,
            "seconds": (self.seconds * 10.0).round() / 10.0,
        })
    }
}

/// Memory a run may reach before it is a finding.
pub const MAX_RSS_MIB: u64 = 1024;

static PANICS: Mutex<(u64, Option<String>)> = Mutex::new((0, None));

/// Count panics and keep the last message, without printing them (a caught one is expected).
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let mut p = PANICS.lock().unwrap_or_else(|e| e.into_inner());
        p.0 += 1;
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        p.1 = Some(format!("{}{at}", clip(&msg)));
        if std::env::var_os("COUNTERSIGN_FUZZ_BACKTRACE").is_some() {
            eprintln!("panic: {msg}{at}\n{}", std::backtrace::Backtrace::force_capture());
        }
    }));
}

fn panics() -> (u64, Option<String>) {
    PANICS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The seed of case `n` of a run seeded with `seed`: cases are independent, so one can be
/// replayed alone.
pub fn case_seed(seed: u64, n: u64) -> u64 {
    seed.wrapping_mul(0x0000_0100_0000_01B3) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

pub struct Run<'a> {
    pub cases: u64,
    pub seed: u64,
    /// Only this case (a replay).
    pub only: Option<u64>,
    /// Stop after this many seconds even if cases remain.
    pub seconds: Option<f64>,
    pub progress: &'a mut dyn FnMut(&Report),
}

/// Run one target. Call from a thread with a large stack: generated specs and definitions can
/// nest deeply, and a deep `serde_json::Value` is dropped recursively.
pub fn run(target: &mut dyn Target, opts: Run<'_>) -> Report {
    quiet_panics();
    let started = Instant::now();
    let mut report = Report { target: target.name().to_string(), seed: opts.seed, ..Default::default() };
    let range = match opts.only {
        Some(n) => n..n + 1,
        None => 0..opts.cases,
    };
    for n in range {
        if opts.seconds.is_some_and(|s| started.elapsed().as_secs_f64() >= s) {
            break;
        }
        let mut rng = gen::Rng::new(case_seed(opts.seed, n));
        let before = panics().0;
        let tcase = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.case(&mut rng, n)));
        let (after, message) = panics();
        let ms = tcase.elapsed().as_millis() as u64;
        if ms > report.slowest_ms {
            (report.slowest_ms, report.slowest_case) = (ms, n);
        }
        report.cases += 1;
        if outcome.is_ok() {
            report.contained_panics += after - before;
        }
        match outcome {
            Ok(Outcome::Passed) => report.passed += 1,
            Ok(Outcome::Refused(e)) => {
                *report.refused.entry(e.code.as_str().to_string()).or_default() += 1;
                report.examples.entry(e.code.as_str().to_string()).or_insert_with(|| clip(&e.message));
            }
            Ok(Outcome::Finding(kind, detail)) => report.findings.push((n, kind.into(), detail)),
            Err(_) => report.findings.push((n, "panic".into(), message.unwrap_or_default())),
        }
        let rss = rss_mib();
        report.max_rss_mib = report.max_rss_mib.max(rss);
        if rss > MAX_RSS_MIB {
            report.findings.push((n, "memory".into(), format!("{rss} MiB resident after the case")));
            break;
        }
        if n % 1000 == 999 {
            report.seconds = started.elapsed().as_secs_f64();
            (opts.progress)(&report);
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    report
}

/// Resident memory of this process, in MiB (Linux; 0 elsewhere).
pub fn rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map_or(0, |pages| pages * 4096 / (1 << 20))
}
