//! `countersign-fuzz TARGET… --cases N --seed S`: run fuzz targets and print one JSON report
//! per target (cases, refusals by code, findings with their case numbers, peak memory, time).
//! Exits 1 when any target has a finding. `--case N` replays one case of a seed.

use clap::Parser;
use countersign_fuzz::{make, run, Run, TARGETS};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "countersign-fuzz",
    about = "Structure-aware fuzzing of Countersign's readers, parsers and checkers"
)]
struct Args {
    /// Targets to run (`all` for every one): documents-text, documents-markdown, documents-html,
    /// documents-email, documents-pdf, documents-docx, query-specs, definitions, csv-import, ask,
    /// extract, summarize.
    #[arg(required = true)]
    targets: Vec<String>,
    /// Cases per target.
    #[arg(long, default_value_t = 1000)]
    cases: u64,
    /// The seed; the same seed runs the same cases.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Replay only case N of the seed.
    #[arg(long)]
    case: Option<u64>,
    /// Stop each target after this many seconds.
    #[arg(long)]
    seconds: Option<f64>,
}

fn main() -> ExitCode {
    // Documents are read as the product reads them when this program is the reader; the
    // fuzzer reads them in process, so a crash is seen rather than contained.
    let args = Args::parse();
    let names: Vec<String> = if args.targets.iter().any(|t| t == "all") {
        TARGETS.iter().map(|t| t.to_string()).collect()
    } else {
        args.targets.clone()
    };
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("countersign-fuzz: no temporary directory: {e}");
            return ExitCode::from(2);
        }
    };
    let mut findings = 0;
    for name in names {
        let dir_path = dir.path().to_path_buf();
        let (cases, seed, only, seconds) = (args.cases, args.seed, args.case, args.seconds);
        // Generated specs and definitions nest deeply; a deep JSON value drops recursively.
        let worker = std::thread::Builder::new().stack_size(1 << 30).spawn(move || {
            let mut target = make(&name, &dir_path)?;
            let mut progress = |r: &countersign_fuzz::Report| {
                eprintln!(
                    "{}: {} cases, {} findings, {:.0} s, {} MiB",
                    r.target,
                    r.cases,
                    r.findings.len(),
                    r.seconds,
                    r.max_rss_mib
                )
            };
            Ok::<_, countersign_kernel::Error>(run(
                target.as_mut(),
                Run { cases, seed, only, seconds, progress: &mut progress },
            ))
        });
        match worker.map(|w| w.join()) {
            Ok(Ok(Ok(report))) => {
                findings += report.findings.len();
                println!("{}", report.to_json());
            }
            Ok(Ok(Err(e))) => {
                eprintln!("countersign-fuzz: {e}");
                return ExitCode::from(2);
            }
            _ => {
                eprintln!("countersign-fuzz: the run itself crashed");
                return ExitCode::from(2);
            }
        }
    }
    if findings > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
