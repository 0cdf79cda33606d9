//! Calls in flight across processes: a capability's concurrency limit holds across every
//! process that opens the workspace (a running trace row with an unexpired lease is a slot), a
//! slot is freed when its call completes, is given up, or its lease runs out; and a call whose
//! process was killed is closed as `abandoned` on the next open — never one that may still be
//! running elsewhere. Two `Workspace` handles on one file stand for two processes.

use crate::common;

use countersign_kernel::ai::ask::{Ask, AskRun};
use countersign_kernel::ai::pipeline::drive::{step, Step};
use countersign_kernel::ai::pipeline::{lease_span, CapabilitySettings, ModelChoice, TraceOutcome};
use countersign_kernel::ai::provider::{ChatResponse, Usage};
use countersign_kernel::{Code, Error, IdSource, SequentialIds, Session, Workspace, WorkspaceOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn model() -> ModelChoice {
    // Nothing is sent in these tests: the calls are begun, advanced by hand, or abandoned.
    common::fake_model::model("http://127.0.0.1:9/v1", 0.0)
}

fn refused<T>(r: countersign_kernel::Result<T>) -> Error {
    match r {
        Ok(_) => panic!("expected a refusal"),
        Err(e) => e,
    }
}

fn begin(s: &Session<'_>) -> countersign_kernel::Result<AskRun> {
    s.ask_begin("Show all accounts.", model())
}

/// Concurrency 1, a generous per-minute allowance; the settings in force.
fn one_at_a_time(s: &Session<'_>) -> CapabilitySettings {
    let mut b = s.capability("ask").unwrap();
    b.settings.rate.concurrency = 1;
    b.settings.rate.per_minute = 1_000;
    s.bind_capability(&b).unwrap();
    b.settings
}

fn path(f: &common::Fixture) -> PathBuf {
    f.dir.path().join("ws.countersign")
}

/// Ids that do not collide with another handle's (each process makes its own ULIDs).
struct ProcessIds(u64, SequentialIds);

impl IdSource for ProcessIds {
    fn record_id(&self, object: &str) -> String {
        format!("p{}_{}", self.0, self.1.record_id(object))
    }
    fn correlation_id(&self) -> String {
        format!("p{}_{}", self.0, self.1.correlation_id())
    }
}

/// Another process opening the same file (same fake clock, its own ids).
fn another_process(f: &common::Fixture) -> Workspace {
    static PROCESSES: AtomicU64 = AtomicU64::new(1);
    let ids = ProcessIds(PROCESSES.fetch_add(1, Ordering::Relaxed), SequentialIds::default());
    let opts = WorkspaceOptions { clock: f.clock.clone(), ids: Arc::new(ids) };
    countersign_kernel::open::open(&path(f), opts).unwrap()
}

fn outcome(ws: &Workspace, id: &str) -> TraceOutcome {
    ws.session("ava").unwrap().trace(id).unwrap().outcome
}

fn assert_busy(r: countersign_kernel::Result<AskRun>) {
    let e = refused(r);
    assert_eq!((e.code, e.retriable), (Code::RateLimit, true), "{e}");
}

#[test]
fn the_concurrency_limit_holds_across_processes() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let settings = one_at_a_time(&ava);
    let other = another_process(&f);
    let ava_elsewhere = other.session("ava").unwrap();

    // A call in flight in one process takes the only slot for the other.
    let mut first = begin(&ava).unwrap();
    assert_busy(begin(&ava_elsewhere));
    // Completed (here: cancelled), it frees the slot.
    let request = first.request.clone();
    let e =
        refused(ava.receive(&mut first.invocation, &request, Err(Error::new(Code::Cancelled, "cancelled"))));
    assert_eq!(e.code, Code::Cancelled);
    drop(first);
    let second = begin(&ava_elsewhere).unwrap();
    assert_busy(begin(&ava));
    // Given up without being completed (the caller dropped it), it frees the slot too, and its
    // trace row says so.
    let second_id = second.invocation.trace_id.clone();
    drop(second);
    assert_eq!(outcome(&f.ws, &second_id), TraceOutcome::Abandoned);
    let third = begin(&ava).unwrap();
    assert_busy(begin(&ava_elsewhere));
    // A process killed mid-call completes nothing; its lease runs out and no longer counts.
    std::mem::forget(third);
    f.clock.advance(lease_span(&settings) - chrono::Duration::seconds(1));
    assert_busy(begin(&ava_elsewhere));
    f.clock.advance(chrono::Duration::seconds(2));
    let fourth = begin(&ava_elsewhere).unwrap();
    // Other users and other capabilities have their own slots.
    let cara = f.ws.session("cara").unwrap();
    let _cara_run = begin(&cara).unwrap();
    drop(fourth);
}

#[test]
fn a_call_that_comes_back_to_the_kernel_renews_its_claim() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let settings = one_at_a_time(&ava);
    let lease = lease_span(&settings);
    let mut run = begin(&ava).unwrap();
    let id = run.invocation.trace_id.clone();
    // The model answered nonsense near the end of the lease; the kernel asks for a repair and
    // the claim is renewed for the repair call.
    f.clock.advance(lease - chrono::Duration::seconds(5));
    let answer = ChatResponse {
        content: "not a plan".into(),
        usage: Usage::default(),
        finish_reason: Some("stop".into()),
        timings: None,
        first_token_ms: None,
        total_ms: 1.0,
    };
    let mut ask = Ask { question: "Show all accounts.".into() };
    match step(&ava, &mut ask, &mut run, Ok(answer)).unwrap() {
        Step::Call => {}
        Step::Done(_) => panic!("nonsense is not an answer"),
    }
    f.clock.advance(lease - chrono::Duration::seconds(5));
    // Long after the first lease would have run out, the call still holds its slot, and a
    // process opening the workspace leaves its row alone.
    let other = another_process(&f);
    assert_eq!(outcome(&other, &id), TraceOutcome::Running);
    assert_busy(begin(&other.session("ava").unwrap()));
    drop(run);
}

#[test]
fn a_killed_call_is_closed_as_abandoned_on_open_once_its_claim_runs_out() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let settings = one_at_a_time(&ava);
    let run = begin(&ava).unwrap();
    let id = run.invocation.trace_id.clone();
    std::mem::forget(run); // SIGKILL: nothing of the process runs any more.
                           // A row written by an older Countersign (no lease), long ago and just now.
    let conn = f.ws.raw_connection();
    for (old, started) in [("trace_old", "2026-11-29T07:00:00Z"), ("trace_new", common::START)] {
        conn.execute(
            "INSERT INTO ai_trace (id, correlation_id, capability, actor, prompt, prompt_version, model_id,
                model_version, grounding_hash, generation, input, prompt_text, estimated_cost, currency, outcome,
                started_at)
             VALUES (?1, 'c', 'ask', 'ava', 'ask', 1, 'm', 'v', '', 1, 'q', '', 0.5, 'USD', 'running', ?2)",
            [old, started],
        )
        .unwrap();
    }
    // While the call may still be running in its process, opening the workspace leaves it be.
    let other = another_process(&f);
    assert_eq!(outcome(&other, &id), TraceOutcome::Running);
    assert_eq!(outcome(&other, "trace_old"), TraceOutcome::Abandoned, "3 hours is past any claim");
    assert_eq!(outcome(&other, "trace_new"), TraceOutcome::Running);
    // Once its claim has run out, the next open closes it, charged at its estimate.
    f.clock.advance(lease_span(&settings) + chrono::Duration::seconds(1));
    let later = another_process(&f);
    let t = later.session("ava").unwrap().trace(&id).unwrap();
    assert_eq!(t.outcome, TraceOutcome::Abandoned);
    let now = countersign_kernel::clock::timestamp(countersign_kernel::Clock::now(&*f.clock));
    assert_eq!(t.finished_at.as_deref(), Some(now.as_str()));
    assert!(t.message.as_deref().unwrap_or_default().contains("stopped before it finished"), "{t:?}");
    assert_eq!(t.cost, t.estimated_cost);
    assert_eq!(outcome(&later, "trace_new"), TraceOutcome::Abandoned);
    // Nothing is closed twice; an abandoned call takes no slot.
    assert!(begin(&later.session("ava").unwrap()).is_ok());
}

#[test]
fn trace_outcomes_are_one_vocabulary() {
    let names: Vec<&str> = TraceOutcome::ALL.iter().map(|o| o.as_str()).collect();
    assert_eq!(names, ["running", "answered", "refused", "failed", "abandoned"]);
    for o in TraceOutcome::ALL {
        assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
    }
}

#[test]
fn a_workspace_from_before_claims_keeps_its_trace_and_closes_calls_left_running() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v6.countersign");
    {
        // A file as the last Countersign without claims left it (store version 6): its
        // `ai_trace` as migration 3 made it.
        let ws = Workspace::create(&file, WorkspaceOptions::default()).unwrap();
        let conn = ws.raw_connection();
        let m3 = countersign_kernel::store::MIGRATIONS[2];
        let start = m3.find("CREATE TABLE ai_trace (").unwrap();
        let ddl = &m3[start..start + m3[start..].find(");").unwrap() + 2];
        conn.execute_batch(&format!(
            "DROP TABLE ai_trace; DROP TABLE ask_example; DROP TABLE ask_example_text;
             ALTER TABLE proposal DROP COLUMN children;
             DROP TABLE eval_suite; DROP TABLE eval_run; DROP TABLE ai_gate_decision; DROP TABLE spend_rollup;
             DROP TABLE assistant_message; DROP TABLE assistant_conversation;
             DROP TABLE value_probe; DROP TABLE value_index; DROP TABLE record_count; DROP TABLE index_use; DROP TABLE use_index;
             DROP TABLE tool_version; DROP TABLE tool; DROP TABLE tool_call; DROP TABLE mcp_server;
             DROP TABLE user_preference; ALTER TABLE ai_prompt_version DROP COLUMN variants; {ddl}
             CREATE INDEX ai_trace_by_actor ON ai_trace (actor, started_at);
             CREATE INDEX ai_trace_by_time ON ai_trace (started_at);
             PRAGMA user_version = 6;"
        ))
        .unwrap();
        for (id, outcome, started) in [
            ("trace_done", "answered", "2026-11-28T09:00:00Z"),
            ("trace_stuck", "running", "2026-11-28T09:00:00Z"),
            ("trace_live", "running", common::START),
        ] {
            conn.execute(
                "INSERT INTO ai_trace (id, correlation_id, capability, actor, prompt, prompt_version, model_id,
                    model_version, grounding_hash, generation, input, prompt_text, estimated_cost, cost, currency,
                    outcome, started_at)
                 VALUES (?1, 'c', 'ask', 'ava', 'ask', 1, 'm', 'v', '', 1, 'q', '', 0.5, 0.25, 'USD', ?2, ?3)",
                [id, outcome, started],
            )
            .unwrap();
        }
        let old_check = conn.execute("UPDATE ai_trace SET outcome = 'abandoned' WHERE id = 'trace_done'", []);
        assert!(old_check.is_err(), "version 6 knows no `abandoned`");
    }
    let clock = Arc::new(countersign_kernel::FixedClock::at(common::START));
    let ws = countersign_kernel::open::open(&file, common::options(&clock)).unwrap();
    let conn = ws.raw_connection();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, countersign_kernel::store::schema_version());
    let row = |id: &str| -> (String, f64, Option<String>) {
        conn.query_row("SELECT outcome, cost, finished_at FROM ai_trace WHERE id = ?1", [id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap()
    };
    assert_eq!(row("trace_done"), ("answered".into(), 0.25, None));
    assert_eq!(row("trace_stuck"), ("abandoned".into(), 0.5, Some(common::START.into())));
    assert_eq!(row("trace_live").0, "running", "a call started just now may still be running");
}

#[test]
fn a_call_refused_before_it_begins_is_traced_too() {
    use countersign_kernel::ai::pipeline::Autonomy;
    let f = common::demo();
    let (ava, cara, dan) =
        (f.ws.session("ava").unwrap(), f.ws.session("cara").unwrap(), f.ws.session("dan").unwrap());
    let count = || ava.traces(100).unwrap().len();
    // No permission: dan (a viewer) summarizes.
    let before = count();
    let id = cara
        .query(&countersign_kernel::QuerySpec::parse(r#"{"object": "account", "limit": 1}"#).unwrap())
        .unwrap()
        .records[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(refused(dan.summarize_begin("account", &id, model())).code, Code::Permission);
    // A read-only capability: cara extracts.
    let mut binding = ava.capability("extract").unwrap();
    binding.autonomy = Autonomy::ReadOnly;
    ava.bind_capability(&binding).unwrap();
    let doc =
        countersign_kernel::ingest::ingest("inv.txt", b"Invoice 7".to_vec(), &Default::default()).unwrap();
    assert_eq!(refused(cara.extract_begin(doc, "invoice", None, model())).code, Code::Permission);
    // No model pinned (the demo pins none).
    let e = refused(cara.model_for(&cara.capability("ask").unwrap()));
    assert_eq!(e.code, Code::ModelNotSetUp);
    assert!(e.message.contains("Ava Admin can turn on the built-in model"), "{e}");
    assert!(e.message.starts_with("no model is set up for answering questions:"), "in words, not a key: {e}");
    let traces = ava.traces(100).unwrap();
    assert_eq!(traces.len(), before + 3, "each refusal is one finished trace row");
    let newest: Vec<_> =
        traces.iter().take(3).map(|t| (t.capability.as_str(), t.actor.as_str(), t.outcome)).collect();
    for expected in [
        ("summarize", "dan", TraceOutcome::Refused),
        ("extract", "cara", TraceOutcome::Refused),
        ("ask", "cara", TraceOutcome::Failed),
    ] {
        assert!(newest.contains(&expected), "{expected:?} not in {newest:?}");
    }
}

#[test]
fn a_claim_whose_process_is_gone_holds_no_slot_and_is_closed_on_open() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    one_at_a_time(&ava);
    // A call whose process was killed (Ctrl-C on the CLI): its row says so by its holder, a
    // process that has exited, while its lease is still minutes from running out.
    let killed = begin(&ava).unwrap();
    let id = killed.invocation.trace_id.clone();
    std::mem::forget(killed);
    let mut exited = std::process::Command::new("true").spawn().unwrap();
    let dead = exited.id();
    exited.wait().unwrap();
    f.ws.raw_connection()
        .execute("UPDATE ai_trace SET holder = ?2 WHERE id = ?1", [id.as_str(), &format!("pid {dead}")])
        .unwrap();
    // The slot is free at once, without waiting for the lease.
    let next = begin(&ava).unwrap();
    assert_busy(begin(&ava));
    // The next open closes the dead call's row; the live one is left alone.
    let other = another_process(&f);
    assert_eq!(outcome(&other, &id), TraceOutcome::Abandoned);
    assert_eq!(outcome(&other, &next.invocation.trace_id), TraceOutcome::Running);
    drop(next);
}

#[test]
fn a_huge_timeout_caps_the_lease_instead_of_overflowing_the_clock() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let mut b = ava.capability("ask").unwrap();
    b.settings.timeout_ms = u64::MAX;
    ava.bind_capability(&b).unwrap();
    let span = lease_span(&b.settings);
    assert!(span <= chrono::Duration::days(1) + chrono::Duration::minutes(1), "{span}");
    let run = begin(&ava).unwrap();
    drop(run);
}

#[test]
fn a_served_call_holds_a_slot_of_its_capability_until_it_finishes() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let mut mcp = ava.capability("mcp").unwrap();
    mcp.settings.rate.concurrency = 2;
    mcp.settings.rate.per_minute = 1_000;
    ava.bind_capability(&mcp).unwrap();
    let other = another_process(&f);
    let ava_elsewhere = other.session("ava").unwrap();

    let first = ava.begin_served_call(&mcp, "{}").unwrap();
    let second = ava_elsewhere.begin_served_call(&mcp, "{}").unwrap();
    // A third, in either process, is refused and traced as refused.
    let e = refused(ava.begin_served_call(&mcp, r#"{"tool": "query_records"}"#));
    assert_eq!((e.code, e.retriable), (Code::RateLimit, true), "{e}");
    let refusal = ava.traces(1).unwrap().remove(0);
    assert_eq!((refusal.capability.as_str(), refusal.outcome), ("mcp", TraceOutcome::Refused));
    // Finishing one frees its slot; other users have their own.
    ava.finish_served_call(&first, Ok(&serde_json::json!({"records": 0}))).unwrap();
    let third = ava.begin_served_call(&mcp, "{}").unwrap();
    assert!(refused(ava_elsewhere.begin_served_call(&mcp, "{}")).code == Code::RateLimit);
    let cara = f.ws.session("cara").unwrap();
    cara.begin_served_call(&cara.capability("mcp").unwrap(), "{}").unwrap();
    ava_elsewhere.finish_served_call(&second, Err(&Error::new(Code::Cancelled, "cancelled"))).unwrap();
    ava.finish_served_call(&third, Ok(&serde_json::json!({}))).unwrap();
}
