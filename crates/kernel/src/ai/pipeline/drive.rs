//! The one model-call loop. Every capability is two session-bound steps around the model —
//! `begin` (authorize, budget, ground, build the request; the trace row opens) and `advance`
//! (constrain the answer; answer, or ask for another call: the repair, a tool's result) — and
//! [`drive`] runs them for every caller: the CLI, the app, the evals and the tests.
//!
//! Between the steps the model is awaited with no session held, so a caller that keeps its
//! workspace behind a lock (the app) lends it for each step only ([`Sessions`]).

use crate::ai::pipeline::{Invocation, ModelChoice};
use crate::ai::provider::{chat_with_retry, provider, Cancel, ChatRequest, ChatResponse, RetryPolicy};
use crate::error::Result;
use crate::records::access::Session;

/// What `advance` decided: the answer, or one more model call.
pub enum Step<Answer> {
    Done(Answer),
    /// Send the run's request (a repair, or a tool's result) and advance again.
    Call,
}

/// A run between model calls, whatever the capability: the invocation its calls are
/// accounted on, the request the next call sends, and the capability's own state.
#[derive(Debug)]
pub struct Run<State> {
    pub invocation: Invocation,
    pub request: ChatRequest,
    pub state: State,
}

/// A capability as the driver runs it.
pub trait Capability {
    /// The capability's key: its binding, its prompt, its trace rows.
    const KEY: &'static str;
    /// What one invocation keeps between model calls, besides its invocation and request.
    type State: Send + Sync;
    type Answer;

    /// Checks made before a model is chosen (a refusal here is traced); none by default.
    fn authorize(&mut self, _session: &Session<'_>) -> Result<()> {
        Ok(())
    }
    /// The steps before the first model call; the invocation's trace row opens here (a
    /// failure after it opened ends it here too).
    fn begin(&mut self, session: &Session<'_>, model: ModelChoice) -> Result<Run<Self::State>>;
    /// The first answer, when the kernel can write it itself because the request leaves a
    /// model nothing to choose (Ask's reading with one object and one reading of each word):
    /// it is checked by `advance` as a model's would be, and no model is called for it. None
    /// by default.
    fn decided(&mut self, _run: &mut Run<Self::State>) -> Option<String> {
        None
    }
    /// The text streamed so far as the user may see it (the model's own by default; a
    /// capability whose values are slots renders them). What it returns for a longer text
    /// must begin with what it returned for a shorter one.
    fn draft<'r>(_run: &Run<Self::State>, raw: &'r str) -> std::borrow::Cow<'r, str> {
        std::borrow::Cow::Borrowed(raw)
    }
    /// The steps after a model call, with its response (accounted on the invocation; a failed
    /// call never reaches here). `Step::Call` sends `run.request` again. A failure returned
    /// here ends the invocation ([`step`] fails it), unless the step finished it first.
    fn advance(
        &mut self,
        session: &Session<'_>,
        run: &mut Run<Self::State>,
        response: ChatResponse,
    ) -> Result<Step<Self::Answer>>;
}

/// What the driver does with a model call's outcome, in one session step: account it on the
/// invocation (a failed call ends the invocation), then `advance`; a failure there ends the
/// invocation too. The one place an invocation's failures after `begin` are recorded; callers
/// that script the model (the benchmarks, the fuzzer) take the same step.
pub fn step<C: Capability>(
    session: &Session<'_>,
    capability: &mut C,
    run: &mut Run<C::State>,
    response: Result<ChatResponse>,
) -> Result<Step<C::Answer>> {
    let response = session.receive(&mut run.invocation, &run.request, response)?;
    capability.advance(session, run, response).map_err(|e| session.fail_invocation(&run.invocation, e))
}

/// `step` for an answer the kernel wrote itself (`Capability::decided`): recorded on the
/// invocation as the kernel's, with no model call, then `advance`.
pub fn step_decided<C: Capability>(
    session: &Session<'_>,
    capability: &mut C,
    run: &mut Run<C::State>,
    content: String,
) -> Result<Step<C::Answer>> {
    run.invocation.record_decided(&content);
    let response = ChatResponse {
        content,
        usage: Default::default(),
        finish_reason: None,
        timings: None,
        first_token_ms: None,
        total_ms: 0.0,
    };
    capability.advance(session, run, response).map_err(|e| session.fail_invocation(&run.invocation, e))
}

/// Where the driver gets the user's session for each step (they live with sessions, in the
/// records layer).
pub use crate::records::access::{Correlated, Sessions};

/// What the caller hears while the model works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress<'a> {
    /// A model call starts: the first, or a repair or tool round (`attempt` counts them).
    Thinking { attempt: u32 },
    /// Text the model wrote, as it streams.
    Text(&'a str),
}

/// Run `capability` to its answer or its typed refusal. `model` is the model for this run
/// (`None`: the capability's pinned model). A model whose pinned version is no longer what
/// the endpoint serves is refused as `model.drift` on the trace, before any model call.
pub async fn drive<C: Capability>(
    sessions: &impl Sessions,
    capability: &mut C,
    model: Option<ModelChoice>,
    cancel: &Cancel,
    progress: &mut (dyn FnMut(Progress<'_>) + Send),
) -> Result<C::Answer> {
    sessions.with(|s| capability.authorize(s))?;
    let model = match model {
        Some(model) => model,
        None => sessions.with(|s| s.model_for(&s.capability(C::KEY)?))?,
    };
    let endpoint = provider(model.endpoint.clone())?;
    let mut drift = Some(model.check().await);
    let mut run = sessions.with(|s| capability.begin(s, model))?;
    let mut decided = capability.decided(&mut run);
    loop {
        if let (Some(content), None | Some(Ok(_))) = (decided.take(), &drift) {
            drift = None;
            match sessions.with(|s| step_decided(s, capability, &mut run, content))? {
                Step::Done(answer) => return Ok(answer),
                Step::Call => continue,
            }
        }
        let response = match drift.take() {
            Some(Err(e)) => Err(e),
            _ => {
                progress(Progress::Thinking { attempt: run.invocation.attempts + 1 });
                let (mut raw, mut shown) = (String::new(), 0);
                let mut text = |delta: &str| {
                    raw.push_str(delta);
                    let draft = C::draft(&run, &raw);
                    if draft.len() > shown && draft.is_char_boundary(shown) {
                        progress(Progress::Text(&draft[shown..]));
                        shown = draft.len();
                    }
                };
                chat_with_retry(&*endpoint, &run.request, &RetryPolicy::default(), cancel, &mut text).await
            }
        };
        match sessions.with(|s| step(s, capability, &mut run, response))? {
            Step::Done(answer) => return Ok(answer),
            Step::Call => {}
        }
    }
}
