//! `eval`: the capabilities against cases with known answers. Each harness loops over its
//! cases, runs the capability, times it and prints a progress line per case on stderr; the
//! judging and the report are the kernel's (`countersign_kernel::eval`).

use crate::ai::{run_capability_on, runtime};
use crate::output::to_json;
use crate::workspace::{init, Origin, WorkspaceFile};
use clap::Subcommand;
use countersign_kernel::ai::ask::Ask;
use countersign_kernel::ai::extract::Extract;
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::summarize::{Summarize, SummaryAnswer};
use countersign_kernel::eval::ask::{self, AskCase, AskTally};
use countersign_kernel::eval::extract::{self, ExtractTally};
use countersign_kernel::eval::suites::{self, CaseResult, EvalRun, RunCandidate};
use countersign_kernel::eval::summarize::{SummarizeTally, SummaryCase};
use countersign_kernel::Session;
use countersign_kernel::{ingest, open, Result, Workspace, WorkspaceOptions};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Subcommand)]
pub enum EvalCommand {
    /// Ask cases (JSON lines: user, question, object, expected_ids, ordered, expect_refusal…):
    /// per-case pass/fail and the execution-match rate.
    Ask {
        #[arg(long)]
        cases: PathBuf,
        #[arg(long)]
        endpoint: Option<String>,
        /// Create the demo workspace at --workspace (or in a temporary directory) first.
        #[arg(long)]
        demo: bool,
        /// Only the cases whose id ends with one of these (comma-separated: 04,13).
        #[arg(long)]
        only: Option<String>,
    },
    /// Extract cases (a folder with expected.jsonl: file, object, user, expected, must_not_set,
    /// injected): per-field accuracy and whether injected instructions were followed.
    Extract {
        #[arg(long)]
        cases: PathBuf,
        #[arg(long)]
        endpoint: Option<String>,
        #[arg(long)]
        demo: bool,
    },
    /// Summaries of records: accepted after at most one repair, refused, problems in the first
    /// answers, accepted summaries re-checked for unverified claims, and with `--cases` the key
    /// facts each summary states.
    Summarize {
        /// Cases (JSON lines: object, id, user, facts), instead of --object/--ids/--user.
        #[arg(long, conflicts_with_all = ["object", "ids"])]
        cases: Option<PathBuf>,
        #[arg(long, required_unless_present = "cases")]
        object: Option<String>,
        #[arg(long, value_delimiter = ',')]
        ids: Vec<String>,
        #[arg(long, default_value = "ava")]
        user: String,
        #[arg(long)]
        endpoint: Option<String>,
        #[arg(long)]
        demo: bool,
    },
    /// The judge model against a person: a hand-labelled set (`{"rubric": [...], "cases":
    /// [{id, facts, answer, labels: [bool per criterion]}]}`) judged by the `judge` capability's
    /// model (or --endpoint); agreement and Cohen's kappa per criterion and overall, and every
    /// disagreement with the judge's reason.
    Judge {
        #[arg(long)]
        cases: PathBuf,
        #[arg(long)]
        endpoint: Option<String>,
        #[arg(long)]
        demo: bool,
        /// Who asks for the verdicts.
        #[arg(long, default_value = "ava")]
        user: String,
    },
    /// Run a stored eval suite (as --as, who needs ai.author or ai.manage) against a prompt
    /// version and a model pin (default: the capability's), on a scratch copy of its fixture;
    /// the run is stored, and the gate lets that pair through if it passed.
    Run {
        suite: String,
        #[arg(long)]
        prompt_version: Option<i64>,
        #[arg(long)]
        model: Option<String>,
    },
    /// The stored suites (latest versions) with their floors and cases.
    Suites,
    /// One version of a suite (default: the latest), cases included, as JSON — the form
    /// `eval publish --file` reads: edit it and publish the next version.
    Show {
        suite: String,
        #[arg(long)]
        version: Option<i64>,
    },
    /// Publish the next version of a suite (as --as, who needs ai.author) from a file in the
    /// form `eval show` prints (`capability`, `floor`, `cases`: id, user, input, expect, hard,
    /// and a judged assertion `judged`: rubric, floor),
    /// every case checked as a run will read it. --capability and --floor override the file's.
    Publish {
        suite: String,
        #[arg(long)]
        file: PathBuf,
        #[arg(long)]
        capability: Option<String>,
        #[arg(long)]
        floor: Option<f64>,
    },
    /// Stored suite runs, newest first.
    Runs {
        #[arg(long)]
        suite: Option<String>,
    },
    /// The model fitness check: every suite on --model beside the current model's latest runs.
    Fitness {
        #[arg(long)]
        model: String,
    },
    /// The gate's decisions (passed, or overridden with a reason).
    Gates,
}

/// The suite commands, done as the `--as` user.
pub fn on_session(session: &Session<'_>, command: EvalCommand) -> Result<Value> {
    let rt = runtime()?;
    let cancel = Cancel::default();
    let line = |suite: &str, r: &CaseResult, done: usize, total: usize| {
        eprintln!(
            "{} {suite} {done}/{total} {:>6.1}s {}{}",
            if r.pass {
                "PASS"
            } else if r.hard {
                "FAIL (hard)"
            } else {
                "FAIL"
            },
            r.wall_ms / 1000.0,
            r.id,
            if r.reason.is_empty() { String::new() } else { format!("  {}", r.reason) }
        )
    };
    match command {
        EvalCommand::Run { suite, prompt_version, model } => {
            let candidate = RunCandidate { prompt_version, model_pin: model };
            let run =
                rt.block_on(suites::run_suite(session, &suite, &candidate, &cancel, &mut |r, d, t| {
                    line(&suite, r, d, t)
                }))?;
            to_json(&run)
        }
        EvalCommand::Suites => {
            let list: Vec<Value> = session
                .suites()?
                .into_iter()
                .map(|s| {
                    json!({"key": s.key, "version": s.version, "capability": s.capability, "fixture": s.fixture,
                        "floor": s.floor, "cases": s.cases.len(), "hard": s.cases.iter().filter(|c| c.hard).count(),
                        "publishedBy": s.published_by})
                })
                .collect();
            Ok(json!({ "suites": list }))
        }
        EvalCommand::Show { suite, version } => to_json(&session.suite(&suite, version)?),
        EvalCommand::Publish { suite, file, capability, floor } => {
            let draft = read_suite_file(&file)?;
            let capability = capability.or(draft.capability).ok_or_else(|| {
                countersign_kernel::Error::new(
                    countersign_kernel::Code::Required,
                    "the suite's capability: --capability, or `capability` in the file",
                )
            })?;
            let floor = floor.or(draft.floor).ok_or_else(|| {
                countersign_kernel::Error::new(
                    countersign_kernel::Code::Required,
                    "the suite's floor: --floor, or `floor` in the file",
                )
            })?;
            let version = session.publish_judged_suite(
                &suite,
                &capability,
                floor,
                &draft.cases,
                draft.judged.as_ref(),
            )?;
            Ok(json!({"key": suite, "version": version, "capability": capability, "floor": floor,
                "cases": draft.cases.len(), "judged": draft.judged}))
        }
        EvalCommand::Runs { suite } => Ok(json!({ "runs": to_json(&session.eval_runs(suite.as_deref())?)? })),
        EvalCommand::Fitness { model } => {
            let rows =
                rt.block_on(suites::fitness(session, &model, &cancel, &mut |s, r, d, t| line(s, r, d, t)))?;
            let table: Vec<Value> = rows
                .iter()
                .map(|f| {
                    let figures = |r: &EvalRun| {
                        json!({"model": r.model_pin, "outcome": r.outcome, "passed": r.passed, "total": r.total,
                            "passRate": r.pass_rate(), "p50Ms": r.p50_ms, "run": r.id})
                    };
                    json!({"capability": f.capability, "suite": f.suite, "candidate": figures(&f.candidate),
                        "current": f.current.as_ref().map(figures)})
                })
                .collect();
            Ok(json!({ "fitness": table }))
        }
        EvalCommand::Gates => Ok(json!({ "decisions": to_json(&session.gate_decisions()?)? })),
        other => Err(countersign_kernel::Error::internal(format!("not a suite command: {}", other.name()))),
    }
}

impl EvalCommand {
    /// Whether the command works on stored suites as a user (the others are harnesses over
    /// case files that open the workspace their own way).
    pub fn on_stored_suites(&self) -> bool {
        matches!(
            self,
            EvalCommand::Run { .. }
                | EvalCommand::Suites
                | EvalCommand::Show { .. }
                | EvalCommand::Publish { .. }
                | EvalCommand::Runs { .. }
                | EvalCommand::Fitness { .. }
                | EvalCommand::Gates
        )
    }

    fn name(&self) -> &'static str {
        match self {
            EvalCommand::Ask { .. } => "ask",
            EvalCommand::Extract { .. } => "extract",
            EvalCommand::Summarize { .. } => "summarize",
            EvalCommand::Judge { .. } => "judge",
            EvalCommand::Run { .. } => "run",
            EvalCommand::Suites => "suites",
            EvalCommand::Show { .. } => "show",
            EvalCommand::Publish { .. } => "publish",
            EvalCommand::Runs { .. } => "runs",
            EvalCommand::Fitness { .. } => "fitness",
            EvalCommand::Gates => "gates",
        }
    }

    fn demo(&self) -> bool {
        match self {
            EvalCommand::Ask { demo, .. }
            | EvalCommand::Extract { demo, .. }
            | EvalCommand::Summarize { demo, .. }
            | EvalCommand::Judge { demo, .. } => *demo,
            _ => false,
        }
    }
}

/// A suite file for `eval publish`: what `eval show` prints (its other keys are ignored).
#[derive(serde::Deserialize)]
struct SuiteFile {
    capability: Option<String>,
    floor: Option<f64>,
    cases: Vec<suites::SuiteCase>,
    /// A judged assertion: `{"rubric": [criteria…], "floor": share}`.
    judged: Option<suites::Judged>,
}

fn read_suite_file(path: &Path) -> Result<SuiteFile> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        countersign_kernel::Error::new(
            countersign_kernel::Code::NotFound,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        countersign_kernel::Error::new(
            countersign_kernel::Code::InvalidValue,
            format!("{} is not a suite file (`eval show` prints one): {e}", path.display()),
        )
    })
}

/// Run an eval on `file`; with `--demo`, on the demo workspace at `--workspace` (created if
/// missing) or, without `--workspace`, in a scratch directory removed afterwards.
pub fn run(file: WorkspaceFile, command: EvalCommand) -> Result<Value> {
    let demo = command.demo();
    let scratch = match (file.origin, demo) {
        (Origin::Flag, _) | (_, false) => None,
        (_, true) => Some(Scratch::new()?),
    };
    let path = scratch.as_ref().map(|s| s.0.join("eval.countersign")).unwrap_or(file.path);
    if demo && !path.exists() {
        init(&path, true, None)?;
    }
    let ws = open::open(&path, WorkspaceOptions::default())?;
    match command {
        EvalCommand::Ask { cases, endpoint, only, .. } => {
            eval_ask(&ws, &cases, endpoint.as_deref(), only.as_deref())
        }
        EvalCommand::Extract { cases, endpoint, .. } => eval_extract(&ws, &cases, endpoint.as_deref()),
        EvalCommand::Summarize { cases: Some(cases), endpoint, .. } => {
            eval_summarize_cases(&ws, &cases, endpoint.as_deref())
        }
        EvalCommand::Summarize { object, ids, user, endpoint, .. } => {
            let object = object.unwrap_or_default();
            eval_summarize(&ws, &object, &ids, &user, endpoint.as_deref())
        }
        EvalCommand::Judge { cases, endpoint, user, .. } => {
            eval_judge(&ws, &cases, &user, endpoint.as_deref())
        }
        other => Err(countersign_kernel::Error::internal(format!("`eval {}` runs as a user", other.name()))),
    }
}

/// A scratch directory for the eval's demo workspace, removed when the eval ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        let dir = std::env::temp_dir().join(format!("countersign-eval-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Milliseconds since `started`.
fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

fn eval_ask(ws: &Workspace, cases: &Path, endpoint: Option<&str>, only: Option<&str>) -> Result<Value> {
    let cases = ask::read_cases(&std::fs::read_to_string(cases)?)?;
    let rt = runtime()?;
    let mut tally = AskTally::default();
    for case in cases.iter().filter(|c| picked(c, only)) {
        let session = ws.session(&case.user)?;
        let started = Instant::now();
        let outcome =
            run_capability_on(&rt, &session, &mut Ask { question: case.question.clone() }, endpoint);
        let wall_ms = ms_since(started);
        let row = tally.record(case, outcome, wall_ms);
        eprintln!(
            "{} {:>4} {:>6.1}s  {}  {}",
            if row.pass { "PASS" } else { "FAIL" },
            row.id,
            wall_ms / 1000.0,
            row.question,
            row.reason
        );
    }
    to_json(&tally.finish(ws))
}

/// `--only 04,13`: the cases whose id ends with one of these (every case without `--only`).
fn picked(case: &AskCase, only: Option<&str>) -> bool {
    only.is_none_or(|o| o.split(',').any(|o| case.id.ends_with(o)))
}

fn eval_extract(ws: &Workspace, dir: &Path, endpoint: Option<&str>) -> Result<Value> {
    let cases = extract::read_cases(&std::fs::read_to_string(dir.join("expected.jsonl"))?)?;
    let rt = runtime()?;
    let mut tally = ExtractTally::default();
    for case in &cases {
        let session = ws.session(&case.user)?;
        let started = Instant::now();
        let outcome = ingest::read_file(&dir.join(&case.file), &Default::default()).and_then(|document| {
            let mut extract = Extract { document, object: case.object.clone(), record: None };
            run_capability_on(&rt, &session, &mut extract, endpoint)
        });
        let wall_ms = ms_since(started);
        let row = tally.record(case, outcome, wall_ms);
        eprintln!("{:>6.1}s {} {}", wall_ms / 1000.0, row.file, row.problems());
    }
    to_json(&tally.finish())
}

fn eval_summarize(
    ws: &Workspace,
    object: &str,
    ids: &[String],
    user: &str,
    endpoint: Option<&str>,
) -> Result<Value> {
    let rt = runtime()?;
    let session = ws.session(user)?;
    let mut tally = SummarizeTally::default();
    for id in ids {
        summarize_one(&rt, &session, object, id, endpoint, &mut tally)?;
    }
    to_json(&tally.finish())
}

/// One record summarized on `session`, counted in `tally`, its progress lines printed.
fn summarize_one(
    rt: &tokio::runtime::Runtime,
    session: &countersign_kernel::Session<'_>,
    object: &str,
    id: &str,
    endpoint: Option<&str>,
    tally: &mut SummarizeTally,
) -> Result<()> {
    let started = Instant::now();
    let mut summarize = Summarize::new(object, id);
    let outcome = run_capability_on(rt, session, &mut summarize, endpoint);
    let wall = started.elapsed().as_secs_f64();
    let first = summarize.first.unwrap_or_default();
    for p in &first.problems {
        eprintln!("      first answer: {p}");
    }
    let case = tally.record(session, id, first, outcome, wall * 1000.0)?;
    print_summary_case(case, wall);
    Ok(())
}

/// The Summarize eval over cases: each record summarized as its case's user, and the key
/// facts its summary states counted.
fn eval_summarize_cases(ws: &Workspace, cases: &Path, endpoint: Option<&str>) -> Result<Value> {
    let cases = countersign_kernel::eval::summarize::read_cases(&std::fs::read_to_string(cases)?)?;
    let rt = runtime()?;
    let mut tally = SummarizeTally::default();
    for c in &cases {
        let session = ws.session(&c.user)?;
        summarize_one(&rt, &session, &c.object, &c.id, endpoint, &mut tally)?;
        let stated = tally.key_facts(&c.facts);
        let keys: Vec<&str> = c.facts.iter().map(|f| f.key.as_str()).collect();
        eprintln!("      key facts stated: {stated:?} of {keys:?} (as {})", c.user);
    }
    to_json(&tally.finish())
}

fn eval_judge(ws: &Workspace, cases: &Path, user: &str, endpoint: Option<&str>) -> Result<Value> {
    use countersign_kernel::eval::judge::{CalibrationTally, LabelledSet};
    let set = LabelledSet::read(&std::fs::read_to_string(cases)?)?;
    let rt = runtime()?;
    let session = ws.session(user)?;
    let mut tally = CalibrationTally::default();
    for c in &set.cases {
        let started = Instant::now();
        let verdicts = rt.block_on(async {
            let model = match endpoint {
                Some(url) => Some(countersign_kernel::ai::pipeline::ModelChoice::ad_hoc(url).await?),
                None => None,
            };
            countersign_kernel::ai::judge::judge(
                &session,
                &set.rubric,
                &c.facts,
                &c.answer,
                model,
                &Default::default(),
            )
            .await
        });
        let said: String = match &verdicts {
            Ok(v) => v.iter().map(|v| if v.pass { '✓' } else { '✗' }).collect(),
            Err(e) => format!("no verdicts: {}", e.message),
        };
        let person: String = c.labels.iter().map(|l| if *l { '✓' } else { '✗' }).collect();
        eprintln!("  {:>5.1}s {:<14} person {person}  judge {said}", ms_since(started) / 1000.0, c.id);
        tally.record(c, verdicts);
    }
    to_json(&tally.finish(&set.rubric))
}

/// A record's progress lines: accepted with each sentence and the facts it cites (`*`: attached
/// by the kernel), or refused with the reason.
fn print_summary_case(case: &SummaryCase, wall: f64) {
    let id = &case.id;
    match &case.outcome {
        Ok(a) => {
            eprintln!("  ACCEPTED {wall:5.1}s {id} attempts={} sentences={}", a.attempts, a.sentences.len());
            print_sentences(a);
        }
        Err(e) => eprintln!("  REFUSED  {wall:5.1}s {id} {}: {}", e.code.as_str(), e.message),
    }
}

fn print_sentences(answer: &SummaryAnswer) {
    for s in &answer.sentences {
        let cites: Vec<String> = s
            .citations
            .iter()
            .map(|c| format!("{}{}", c.fact.field, if c.by_model { "" } else { "*" }))
            .collect();
        eprintln!("      {} {cites:?}", s.text);
    }
}
