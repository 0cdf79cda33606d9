//! The AI studio and Activity: prompt versions, bindings, eval suites, runs and model fitness;
//! traces, spend and their retention.

use super::*;

/// Activity: trace entries by filter (the reader's own; everyone's with ai.manage), spend by
/// day from `since`, budgets and the retention window.
#[tauri::command]
pub async fn activity(desk: State<'_, Desk>, filter: TraceFilter, since: String) -> Result<Activity> {
    desk.session(|s| s.activity(&filter, &since))
}

/// One trace entry with its prompt and raw output (values the reader cannot read hidden).
#[tauri::command]
pub async fn trace_detail(desk: State<'_, Desk>, id: String) -> Result<TraceEntry> {
    desk.session(|s| s.trace(&id))
}

/// Keep trace entries this many days (ai.manage); older ones are rolled up into the spend.
#[tauri::command]
pub async fn set_trace_days(desk: State<'_, Desk>, days: i64) -> Result<()> {
    desk.session(|s| s.set_trace_days(days))
}

/// The AI studio: capabilities with their bindings, prompt versions, suites and runs.
#[tauri::command]
pub async fn ai_studio(desk: State<'_, Desk>) -> Result<Studio> {
    desk.session(|s| s.studio())
}

#[tauri::command]
pub async fn prompt_diff(desk: State<'_, Desk>, prompt: String, a: i64, b: i64) -> Result<Vec<DiffPart>> {
    desk.session(|s| s.prompt_diff(&prompt, a, b))
}

/// Publish the next version of an eval suite as a change to its latest (ai.author).
#[tauri::command]
pub async fn revise_suite(desk: State<'_, Desk>, suite: String, revision: SuiteRevision) -> Result<i64> {
    desk.session(|s| s.revise_suite(&suite, &revision))
}

/// A new prompt version from `base` with new instructions (not activated).
#[tauri::command]
pub async fn publish_prompt(
    desk: State<'_, Desk>,
    prompt: String,
    base: i64,
    instructions: String,
) -> Result<i64> {
    desk.session(|s| s.publish_prompt_from(&prompt, base, &instructions))
}

/// Activate a prompt version through the eval gate (`overrideReason`: ai.manage's written reason).
#[tauri::command]
pub async fn activate_prompt(
    desk: State<'_, Desk>,
    prompt: String,
    version: i64,
    override_reason: Option<String>,
) -> Result<()> {
    desk.session(|s| s.activate_prompt_with(&prompt, version, override_reason.as_deref()))
}

/// Bind a model pin to a capability through the eval gate.
#[tauri::command]
pub async fn bind_model(
    desk: State<'_, Desk>,
    capability: String,
    model_pin: Option<String>,
    override_reason: Option<String>,
) -> Result<CapabilityBinding> {
    desk.session(|s| s.bind_model(&capability, model_pin.as_deref(), override_reason.as_deref()))
}

#[tauri::command]
pub async fn model_fitness(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    model_pin: String,
    progress: Channel<FitnessProgress>,
) -> Result<Vec<Fitness>> {
    let running = calls.begin(&call)?;
    let sessions = UserDesk::current(&desk)?;
    let mut report = |suite: &str, result: &CaseResult, done: usize, total: usize| {
        let _ = progress.send(FitnessProgress {
            suite: suite.to_string(),
            result: result.clone(),
            done: done as u32,
            total: total as u32,
        });
    };
    suites::fitness(&sessions, &model_pin, &running.cancel, &mut report).await
}

/// Save a capability's whole binding (model, autonomy, scope, timeouts, output cap, budgets,
/// limits) through the eval gate (ai.manage).
#[tauri::command]
pub async fn save_binding(
    desk: State<'_, Desk>,
    binding: CapabilityBinding,
    override_reason: Option<String>,
) -> Result<CapabilityBinding> {
    desk.session(|s| {
        s.bind_capability_with(&binding, override_reason.as_deref())?;
        s.capability(&binding.key)
    })
}

/// Run a capability's eval suite against a prompt version and a model; each judged case is
/// sent over `progress`; `cancel_model_call(call)` stops it.
#[tauri::command]
pub async fn run_eval_suite(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    suite: String,
    prompt_version: Option<i64>,
    model_pin: Option<String>,
    progress: Channel<SuiteProgress>,
) -> Result<EvalRun> {
    let running = calls.begin(&call)?;
    let candidate = RunCandidate { prompt_version, model_pin };
    let sessions = UserDesk::current(&desk)?;
    let mut report = |result: &CaseResult, done: usize, total: usize| {
        let _ =
            progress.send(SuiteProgress { result: result.clone(), done: done as u32, total: total as u32 });
    };
    suites::run_suite(&sessions, &suite, &candidate, &running.cancel, &mut report).await
}
