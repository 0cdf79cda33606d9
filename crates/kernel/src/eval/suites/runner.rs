//! Running a suite: the plan (candidate, binding, user), the scratch fixture it runs on, each
//! case's verdict, and the run stored with its figures; the fitness check runs every suite on a
//! candidate model.

use super::*;

/// A scratch workspace for one run, removed when the run ends.
pub(super) struct Scratch(pub(super) std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The run's copy of its fixture (its file removed with it), lending each case's user a
/// session the way the app lends the workspace's: one step at a time.
pub(super) struct Fixture {
    pub(super) ws: std::sync::Mutex<Workspace>,
    pub(super) _dir: Scratch,
}

pub(super) struct AsUser<'a> {
    pub(super) fixture: &'a Fixture,
    pub(super) user: &'a str,
}

impl crate::ai::pipeline::drive::Sessions for AsUser<'_> {
    fn with<T>(&self, step: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        let ws =
            self.fixture.ws.lock().map_err(|_| Error::internal("a suite run's fixture lock was poisoned"))?;
        step(&ws.session(self.user)?)
    }
}

/// What a run needs from the workspace, read before it starts.
pub(super) struct Plan {
    pub(super) suite: Suite<SuiteCase>,
    pub(super) binding: crate::ai::pipeline::CapabilityBinding,
    pub(super) version: crate::ai::pipeline::PromptVersion,
    pub(super) model: ModelChoice,
    pub(super) user: String,
    pub(super) clock: std::sync::Arc<dyn crate::clock::Clock>,
    pub(super) run_id: String,
    pub(super) started_at: String,
    /// The judge, when the suite has a judged assertion: its model and prompt version.
    pub(super) judge: Option<(ModelChoice, crate::ai::pipeline::PromptVersion)>,
}

pub(super) fn plan(s: &Session<'_>, suite: &str, candidate: &RunCandidate) -> Result<Plan> {
    let suite = s.suite(suite, None)?;
    let binding = s.capability(&suite.capability)?;
    let versions = s.prompt_versions(&binding.prompt)?;
    let version = match candidate.prompt_version {
        Some(n) => versions.iter().find(|v| v.version == n),
        None => versions.iter().find(|v| v.active),
    }
    .cloned()
    .ok_or_else(|| Error::new(Code::NotFound, format!("prompt `{}` has no such version", binding.prompt)))?;
    let pin = match &candidate.model_pin {
        Some(key) => s.model_pin(key)?,
        None => s.effective_pin(&binding)?.ok_or_else(|| {
            Error::new(
                Code::IntegrationUnreachable,
                format!(
                    "no model to run `{}` on: name a pin, or bind one to {}",
                    suite.key, suite.capability
                ),
            )
        })?,
    };
    if let Some(d) = &pin.drift {
        return Err(Error::new(Code::ModelDrift, format!("model pin `{}` drifted: {d}", pin.key)));
    }
    if suite.fixture != FIXTURE_DEMO {
        return Err(Error::new(
            Code::InvalidValue,
            format!("suite `{}` runs on an unknown fixture", suite.key),
        ));
    }
    let judge = match &suite.judged {
        None => None,
        Some(_) => {
            let binding = s.capability(crate::ai::judge::CAPABILITY)?;
            let pin = s.effective_pin(&binding)?.ok_or_else(|| {
                Error::new(
                    Code::IntegrationUnreachable,
                    format!(
                        "`{}` has a judged assertion and no model judges: bind one to `judge`",
                        suite.key
                    ),
                )
            })?;
            if let Some(d) = &pin.drift {
                return Err(Error::new(
                    Code::ModelDrift,
                    format!("the judge's model pin `{}` drifted: {d}", pin.key),
                ));
            }
            let version = s
                .prompt_versions(&binding.prompt)?
                .into_iter()
                .find(|v| v.active)
                .ok_or_else(|| Error::internal("the judge's prompt has no active version"))?;
            Some((ModelChoice { endpoint: s.endpoint(&pin.provider)?, pin, stored: true }, version))
        }
    };
    let ws = s.workspace();
    Ok(Plan {
        judge,
        model: ModelChoice { endpoint: s.endpoint(&pin.provider)?, pin, stored: true },
        suite,
        binding,
        version,
        user: s.user().key.clone(),
        clock: ws.clock.clone(),
        run_id: ws.ids.record_id("evalrun"),
        started_at: timestamp(ws.clock.now()),
    })
}

/// The fixture with the candidate's prompt version and the capability's settings.
pub(super) fn fixture(plan: &Plan) -> Result<Fixture> {
    // Run ids come from the workspace's id source (fixed in tests): the process id keeps two
    // processes apart.
    let dir = std::env::temp_dir().join(format!("countersign-{}-{}", std::process::id(), plan.run_id));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let dir = Scratch(dir);
    let options = WorkspaceOptions { clock: plan.clock.clone(), ..Default::default() };
    // Made here, not through `open`: a scratch copy needs the demo and the capabilities, not
    // the suites, backups or retention an opened workspace gets.
    let mut ws = Workspace::create(&dir.0.join("suite.countersign"), options)?;
    crate::records::demo::init_demo(&mut ws)?;
    crate::ai::capabilities::register(&ws);
    {
        let admin = ws.session(&scratch_admin(&ws)?)?;
        let prompt = &plan.binding.prompt;
        let v = &plan.version;
        let n = admin.publish_prompt(prompt, &v.instructions, Some(&v.examples), &v.output_contract)?;
        admin.activate_prompt(prompt, n)?;
        admin.bind_capability(&crate::ai::pipeline::CapabilityBinding {
            model_pin: None,
            ..plan.binding.clone()
        })?;
        // The judge's prompt version, as the workspace has it active.
        if let Some((_, v)) = &plan.judge {
            let n = admin.publish_prompt_with(
                &v.prompt,
                &v.instructions,
                Some(&v.examples),
                &v.output_contract,
                Some(&v.variants),
            )?;
            admin.activate_prompt(&v.prompt, n)?;
        }
    }
    Ok(Fixture { ws: std::sync::Mutex::new(ws), _dir: dir })
}

/// Run `suite` (its latest version) as the user `sessions` lends, against `candidate`, on a
/// scratch copy of the suite's fixture; store and return the run. `progress` hears each case
/// as it is judged (`(result, done, total)`); `cancel` stops the case in flight (the run is
/// stored as `cancelled`, which never lets a change through).
pub async fn run_suite(
    sessions: &impl crate::ai::pipeline::drive::Sessions,
    suite: &str,
    candidate: &RunCandidate,
    cancel: &Cancel,
    progress: &mut (dyn FnMut(&CaseResult, usize, usize) + Send),
) -> Result<EvalRun> {
    let plan = sessions.with(|s| plan(s, suite, candidate))?;
    let fixture = fixture(&plan)?;
    let total = plan.suite.cases.len();
    let mut results: Vec<CaseResult> = vec![];
    let mut cancelled = false;
    for case in &plan.suite.cases {
        if cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let started = Instant::now();
        let verdict = run_case(&fixture, &plan.suite.capability, case, &plan.model, cancel).await;
        let (pass, reason, judged_input) = match verdict {
            Ok(v) => v,
            Err(e) if e.code == Code::Cancelled => {
                cancelled = true;
                break;
            }
            Err(e) => (false, e.message, None),
        };
        let wall_ms = (started.elapsed().as_secs_f64() * 1000.0).round();
        let judged = match (&plan.suite.judged, &plan.judge) {
            (Some(j), Some((model, _))) => {
                match judge_case(&fixture, case, &j.rubric, judged_input, model, cancel).await {
                    Err(e) if e.code == Code::Cancelled => {
                        cancelled = true;
                        break;
                    }
                    other => Some(other.unwrap_or_else(|e| CaseJudgment {
                        score: 0.0,
                        verdicts: vec![],
                        unjudged: Some(format!("the judge gave no verdicts: {}", e.message)),
                    })),
                }
            }
            _ => None,
        };
        results.push(CaseResult { id: case.id.clone(), pass, hard: case.hard, reason, wall_ms, judged });
        progress(results.last().expect("just pushed"), results.len(), total);
    }
    let (prompt_tokens, completion_tokens, cost): (i64, i64, f64) = {
        let ws = fixture.ws.lock().map_err(|_| Error::internal("a suite run's fixture lock was poisoned"))?;
        ws.conn().query_row(
            "SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(cost), 0) FROM ai_trace",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?
    };
    drop(fixture);
    let passed = results.iter().filter(|r| r.pass).count() as u32;
    let hard_failures = results.iter().filter(|r| r.hard && !r.pass).count() as u32;
    let rate = crate::eval::share(passed, total as u32);
    let judged = match (&plan.suite.judged, &plan.judge) {
        (Some(j), Some((model, version))) => {
            let scores: Vec<f64> =
                results.iter().filter_map(|r| r.judged.as_ref().map(|c| c.score)).collect();
            Some(RunJudgment {
                score: if scores.is_empty() { 0.0 } else { scores.iter().sum::<f64>() / scores.len() as f64 },
                floor: j.floor,
                judge_pin: model.pin.key.clone(),
                judge_model_version: model.pin.digest.clone(),
                judge_prompt_version: version.version,
            })
        }
        _ => None,
    };
    let judged_ok = judged.as_ref().is_none_or(|j| j.score + 1e-9 >= j.floor);
    let outcome = if cancelled {
        "cancelled"
    } else if hard_failures == 0 && rate + 1e-9 >= plan.suite.floor && judged_ok {
        "passed"
    } else {
        "failed"
    };
    let walls: Vec<f64> = results.iter().map(|r| r.wall_ms).collect();
    let run = EvalRun {
        id: plan.run_id,
        suite: plan.suite.key.clone(),
        suite_version: plan.suite.version,
        capability: plan.suite.capability.clone(),
        prompt: plan.binding.prompt.clone(),
        prompt_version: plan.version.version,
        model_pin: plan.model.pin.key.clone(),
        model_version: plan.model.pin.digest.clone(),
        started_by: plan.user,
        started_at: plan.started_at,
        finished_at: timestamp(plan.clock.now()),
        outcome: outcome.to_string(),
        passed,
        total: total as u32,
        hard_failures,
        floor: plan.suite.floor,
        p50_ms: Spread::of(&walls).rounded().p50,
        prompt_tokens: prompt_tokens as u64,
        completion_tokens: completion_tokens as u64,
        cost,
        cases: results,
        judged,
    };
    sessions.with(|s| s.store_run(&run))?;
    tracing::info!(suite = %run.suite, outcome = %run.outcome, passed = run.passed, total = run.total, "eval suite run");
    Ok(run)
}

/// A user of the fixture who may publish and activate prompts and bind capabilities.
pub(super) fn scratch_admin(scratch: &Workspace) -> Result<String> {
    let catalog = scratch.catalog()?;
    catalog
        .user_keys()
        .find(|k| {
            catalog
                .user(k)
                .is_ok_and(|u| u.has_system_permission(AI_AUTHOR) && u.has_system_permission(AI_MANAGE))
        })
        .map(String::from)
        .ok_or_else(|| Error::internal("the fixture has no user who may author prompts"))
}

/// Run one case and judge it: `(pass, what the check saw, what a judge model would read —
/// the facts and the answer — if the case has an answer to judge)`.
pub(super) async fn run_case(
    fixture: &Fixture,
    capability: &str,
    case: &SuiteCase,
    model: &ModelChoice,
    cancel: &Cancel,
) -> Result<(bool, String, Option<(String, String)>)> {
    use crate::ai::pipeline::drive::Sessions;
    let sessions = AsUser { fixture, user: &case.user };
    let mut quiet = |_: crate::ai::pipeline::drive::Progress<'_>| {};
    match capability {
        "ask" => {
            let c = ask_case(case)?;
            let mut cap = crate::ai::ask::Ask { question: c.question.clone() };
            let outcome = drive(&sessions, &mut cap, Some(model.clone()), cancel, &mut quiet).await;
            cancelled(&outcome)?;
            let mut tally = ask::AskTally::default();
            let row = tally.record(&c, outcome, 0.0);
            Ok((row.pass, row.reason.clone(), None))
        }
        "extract" => {
            let (c, bytes) = extract_case(case)?;
            let document = crate::ingest::ingest(&c.file, bytes, &Default::default())?;
            let mut cap = crate::ai::extract::Extract { document, object: c.object.clone(), record: None };
            let outcome = drive(&sessions, &mut cap, Some(model.clone()), cancel, &mut quiet).await;
            cancelled(&outcome)?;
            let mut tally = extract::ExtractTally::default();
            let row = tally.record(&c, outcome, 0.0);
            Ok(match &row.outcome {
                Err(e) => (false, e.message.clone(), None),
                Ok(j) => {
                    let v = &j.verdict;
                    let mut why = vec![];
                    if v.wrong().next().is_some() {
                        why.push(format!("wrong fields: {}", row.problems()));
                    }
                    if !v.must_not_set_present.is_empty() {
                        why.push(format!("sets what it must not: {}", v.must_not_set_present.join(", ")));
                    }
                    if !v.lines.wrong.is_empty() {
                        why.push(format!("{} of {} lines right", v.lines.correct, v.lines.expected));
                    }
                    (why.is_empty(), why.join("; "), None)
                }
            })
        }
        "summarize" => {
            let (object, id) = summarize_case(case)?;
            let mut cap = crate::ai::summarize::Summarize::new(object, id);
            let outcome = drive(&sessions, &mut cap, Some(model.clone()), cancel, &mut quiet).await;
            cancelled(&outcome)?;
            let judged = match &outcome {
                Ok(answer) if answer.insufficient.is_none() => {
                    let text = answer.sentences.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join(" ");
                    Some((sessions.with(|s| s.fact_lines(object, id))?, text))
                }
                _ => None,
            };
            let mut tally = summarize::SummarizeTally::default();
            let first = cap.first.take().unwrap_or_default();
            sessions.with(|s| tally.record(s, id, first, outcome, 0.0).map(|_| ()))?;
            Ok(match row_outcome(&tally.finish()) {
                Some(why) => (false, why, judged),
                None => (true, String::new(), judged),
            })
        }
        other => Err(Error::new(Code::InvalidValue, format!("no suite runner for capability `{other}`"))),
    }
}

/// The judge model's verdicts on one case's answer, as the case's user asks for them; a case
/// with no answer to judge scores 0.
pub(super) async fn judge_case(
    fixture: &Fixture,
    case: &SuiteCase,
    rubric: &[String],
    input: Option<(String, String)>,
    model: &ModelChoice,
    cancel: &Cancel,
) -> Result<CaseJudgment> {
    let Some((facts, answer)) = input else {
        return Ok(CaseJudgment {
            score: 0.0,
            verdicts: vec![],
            unjudged: Some("no answer to judge".into()),
        });
    };
    let sessions = AsUser { fixture, user: &case.user };
    let verdicts =
        crate::ai::judge::judge(&sessions, rubric, &facts, &answer, Some(model.clone()), cancel).await?;
    let met = verdicts.iter().filter(|v| v.pass).count();
    Ok(CaseJudgment { score: met as f64 / verdicts.len().max(1) as f64, verdicts, unjudged: None })
}

/// A suite case in the Ask eval's own form: its expectation with who asks what.
pub(super) fn ask_case(case: &SuiteCase) -> Result<ask::AskCase> {
    if !case.input["question"].is_string() {
        return Err(case_error(case, "an Ask case's input is `{\"question\": …}`"));
    }
    serde_json::from_value({
        let mut e = case.expect.clone();
        e["id"] = json!(case.id);
        e["user"] = json!(case.user);
        e["question"] = case.input["question"].clone();
        e
    })
    .map_err(|e| case_error(case, &format!("its expectation does not read as an Ask case: {e}")))
}

/// A suite case in the Extract eval's own form, and its document's bytes.
pub(super) fn extract_case(case: &SuiteCase) -> Result<(extract::ExtractCase, Vec<u8>)> {
    let (Some(_), Some(_), Some(document)) =
        (case.input["file"].as_str(), case.input["object"].as_str(), case.input["document"].as_str())
    else {
        return Err(case_error(
            case,
            "an Extract case's input is `{\"file\": …, \"object\": …, \"document\": base64}`",
        ));
    };
    if !case.expect["expected"].is_object() {
        return Err(case_error(case, "an Extract case expects `{\"expected\": {field: value, …}}`"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(document)
        .map_err(|e| case_error(case, &format!("the document is not base64 ({e})")))?;
    let c = extract::ExtractCase::from_json(&json!({
        "file": case.input["file"], "object": case.input["object"], "user": case.user,
        "expected": case.expect["expected"], "must_not_set": case.expect["must_not_set"],
        "injected": case.expect["injected"], "lines": case.expect["lines"]
    }));
    Ok((c, bytes))
}

/// The record a Summarize case summarizes.
pub(super) fn summarize_case(case: &SuiteCase) -> Result<(&str, &str)> {
    match (case.input["object"].as_str(), case.input["id"].as_str()) {
        (Some(object), Some(id)) if !object.is_empty() && !id.is_empty() => Ok((object, id)),
        _ => Err(case_error(case, "a Summarize case's input is `{\"object\": …, \"id\": …}`")),
    }
}

pub(super) fn case_error(case: &SuiteCase, why: &str) -> Error {
    Error::new(Code::InvalidValue, format!("case {}: {why}", case.id))
}

/// Whether a case reads as a case of `capability`, as a run will read it.
pub(super) fn check_case(capability: &str, case: &SuiteCase) -> Result<()> {
    if case.id.trim().is_empty() || case.user.trim().is_empty() {
        return Err(case_error(case, "a case needs an id and a user"));
    }
    match capability {
        "ask" => ask_case(case).map(|_| ()),
        "extract" => extract_case(case).map(|_| ()),
        "summarize" => summarize_case(case).map(|_| ()),
        other => Err(Error::new(Code::InvalidValue, format!("no suite runner for capability `{other}`"))),
    }
}

/// A cancelled call ends the run; anything else is the case's verdict.
pub(super) fn cancelled<T>(outcome: &Result<T>) -> Result<()> {
    match outcome {
        Err(e) if e.code == Code::Cancelled => Err(e.clone()),
        _ => Ok(()),
    }
}

/// Why a one-record Summarize report is not a verified summary (`None`: it is).
pub(super) fn row_outcome(report: &summarize::SummarizeReport) -> Option<String> {
    if report.accepted_after_at_most_one_repair == 0 {
        Some(if report.insufficient > 0 {
            "the model said the facts were not enough".into()
        } else {
            "refused: the summary did not pass the checks".into()
        })
    } else if report.unverified_claims_in_accepted_summaries > 0 {
        Some("the summary states a claim the kernel could not verify".into())
    } else {
        None
    }
}

/// One capability in a model fitness check: the candidate's run beside the latest run of the
/// model the capability uses now (with the same prompt version), if there is one.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Fitness {
    pub capability: String,
    pub suite: String,
    pub candidate: EvalRun,
    #[ts(optional)]
    pub current: Option<EvalRun>,
}

/// The model fitness check: every suite run on `model_pin` with each capability's active
/// prompt version, each shown next to the current model's latest run of that suite.
pub async fn fitness(
    sessions: &impl crate::ai::pipeline::drive::Sessions,
    model_pin: &str,
    cancel: &Cancel,
    progress: &mut (dyn FnMut(&str, &CaseResult, usize, usize) + Send),
) -> Result<Vec<Fitness>> {
    let suites = sessions.with(|s| {
        s.model_pin(model_pin)?;
        s.suites()
    })?;
    let mut out = vec![];
    for suite in suites {
        if cancel.is_cancelled() {
            break;
        }
        let candidate = RunCandidate { prompt_version: None, model_pin: Some(model_pin.to_string()) };
        let key = suite.key.clone();
        let run = run_suite(sessions, &suite.key, &candidate, cancel, &mut |r, done, total| {
            progress(&key, r, done, total)
        })
        .await?;
        let current = sessions.with(|s| {
            let binding = s.capability(&suite.capability)?;
            let current_pin = s.effective_pin(&binding)?.map(|p| p.key);
            Ok(s.eval_runs(Some(&suite.key))?.into_iter().find(|r| {
                Some(&r.model_pin) == current_pin.as_ref()
                    && r.model_pin != model_pin
                    && r.prompt_version == run.prompt_version
                    && r.outcome != "cancelled"
            }))
        })?;
        out.push(Fitness {
            capability: suite.capability.clone(),
            suite: suite.key.clone(),
            candidate: run,
            current,
        });
    }
    Ok(out)
}
