//! Eval suites and the gate, against the fake endpoint pinned as a real provider: a suite run
//! is stored with its cases' verdicts and touches no record; a prompt version whose run fails
//! is refused activation with the failing cases listed; a model is bound only after a passing
//! run; an override needs `ai.manage` and a reason, and is recorded.

use crate::ask::plan;
use crate::common;

use common::fake_model::{fake, pin, provider, Answer};
use countersign_kernel::ai::provider::{Cancel, ProviderKind};
use countersign_kernel::eval::suites::{run_suite, EvalRun, Judged, RunCandidate, SuiteCase, SuiteRevision};
use countersign_kernel::records::query::QuerySpec;
use countersign_kernel::{Code, Session, Workspace};
use serde_json::{json, Value};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// A small Ask suite: every account (ava sees them all), and a refusal (dan may not ask).
fn publish_suite(ava: &Session<'_>) {
    let all: Vec<Value> = ava
        .query(&QuerySpec {
            search: None,
            object: "account".into(),
            fields: vec![],
            filters: None,
            sort: vec![],
            limit: None,
            offset: None,
            after: None,
        })
        .unwrap()
        .records
        .into_iter()
        .map(|r| r["id"].clone())
        .collect();
    let cases = vec![
        SuiteCase {
            id: "all-accounts".into(),
            user: "ava".into(),
            input: json!({"question": "List every account"}),
            expect: json!({"object": "account", "expected_ids": all}),
            hard: false,
        },
        SuiteCase {
            id: "dan-may-not-ask".into(),
            user: "dan".into(),
            input: json!({"question": "List every account"}),
            expect: json!({"object": "account", "expect_refusal": "permission"}),
            hard: true,
        },
    ];
    assert_eq!(ava.publish_suite("ask-mini", "ask", 1.0, &cases).unwrap(), 1);
}

fn run(ws: &Workspace, candidate: RunCandidate) -> EvalRun {
    let ava = ws.session("ava").unwrap();
    rt().block_on(run_suite(&ava, "ask-mini", &candidate, &Cancel::default(), &mut |_, _, _| {})).unwrap()
}

fn good() -> Answer {
    plan(json!({"object": "account", "filters": []}))
}

fn broken() -> Answer {
    Answer::Text(json!({"refusal": {"reason": "no idea"}}).to_string())
}

#[test]
fn a_prompt_version_that_breaks_the_suite_is_refused_and_an_override_is_recorded() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let answers_well = fake(vec![good()]);
    provider(&ava, "local", &answers_well);
    pin(&ava, "small", "local");
    publish_suite(&ava);
    let history = common::history_rows(&f.ws);
    // A new version of Ask's prompt; the current one is the shipped latest.
    let current = ava.prompt_versions("ask").unwrap().into_iter().find(|v| v.active).unwrap();
    let new = ava
        .publish_prompt("ask", "Answer every question with a refusal.", None, &current.output_contract)
        .unwrap();

    // Not run yet: refused, saying what to do.
    let e = ava.activate_prompt("ask", new).unwrap_err();
    assert_eq!(e.code, Code::EvalGate);
    assert!(e.message.contains("no run") && e.message.contains("ask-mini"), "{}", e.message);

    // The current version passes on this model; the new one (the model refuses) fails.
    let passing = run(&f.ws, RunCandidate::default());
    assert_eq!((passing.outcome.as_str(), passing.passed, passing.total), ("passed", 2, 2));
    assert_eq!(passing.prompt_version, current.version);
    let answers_badly = fake(vec![broken()]);
    provider(&ava, "local", &answers_badly);
    let failing = run(&f.ws, RunCandidate { prompt_version: Some(new), model_pin: None });
    assert_eq!((failing.outcome.as_str(), failing.passed), ("failed", 1));
    assert_eq!(failing.cases[0].id, "all-accounts");
    assert!(!failing.cases[0].pass && failing.cases[1].pass);
    // The runs ran on a scratch fixture: not one record of the workspace moved.
    assert_eq!(common::history_rows(&f.ws), history);

    // Refused, the failing case listed; the pointer did not move.
    let e = ava.activate_prompt("ask", new).unwrap_err();
    assert_eq!(e.code, Code::EvalGate);
    assert_eq!(e.details.iter().map(|d| d.path.as_str()).collect::<Vec<_>>(), ["all-accounts"]);
    assert!(e.message.contains("1/2 passed"), "{}", e.message);
    assert!(ava.prompt_versions("ask").unwrap().iter().any(|v| v.active && v.version == current.version));

    // An override needs a reason and ai.manage (cara authors prompts? she may not manage).
    assert_eq!(ava.activate_prompt_with("ask", new, Some("  ")).unwrap_err().code, Code::EvalGate);
    let cara = f.ws.session("cara").unwrap();
    let by_cara = cara.activate_prompt_with("ask", new, Some("I know better"));
    assert!(matches!(by_cara.unwrap_err().code, Code::Permission));
    ava.activate_prompt_with("ask", new, Some("trying the refusal prompt on purpose")).unwrap();
    let decisions = ava.gate_decisions().unwrap();
    assert_eq!(decisions.len(), 1);
    let d = &decisions[0];
    assert!(d.overridden && d.reason.as_deref() == Some("trying the refusal prompt on purpose"));
    assert_eq!((d.run_id.as_deref(), d.decided_by.as_str()), (Some(failing.id.as_str()), "ava"));

    // Back to the version that passed: let through by its run, recorded as such.
    ava.activate_prompt("ask", current.version).unwrap();
    let back = &ava.gate_decisions().unwrap()[0];
    assert!(!back.overridden && back.run_id.as_deref() == Some(passing.id.as_str()));
}

#[test]
fn a_different_model_is_bound_only_after_a_passing_run_and_a_cancelled_run_never_counts() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let first = fake(vec![good()]);
    provider(&ava, "one", &first);
    pin(&ava, "small", "one");
    publish_suite(&ava);
    let second = fake(vec![good()]);
    provider(&ava, "two", &second);
    pin(&ava, "large", "two");
    let mut binding = ava.capability("ask").unwrap();
    binding.model_pin = Some("large".into());
    let e = ava.bind_capability(&binding).unwrap_err();
    assert_eq!(e.code, Code::EvalGate);
    // A cancelled run stores as cancelled and lets nothing through.
    let cancel = Cancel::default();
    cancel.cancel();
    let candidate = RunCandidate { prompt_version: None, model_pin: Some("large".into()) };
    let stopped = rt().block_on(run_suite(&ava, "ask-mini", &candidate, &cancel, &mut |_, _, _| {})).unwrap();
    assert_eq!((stopped.outcome.as_str(), stopped.total), ("cancelled", 2));
    assert_eq!(ava.bind_capability(&binding).unwrap_err().code, Code::EvalGate);
    // The fitness of the new model: a passing run, and then the binding goes through.
    let ok = run(&f.ws, candidate);
    assert_eq!(ok.outcome, "passed");
    ava.bind_capability(&binding).unwrap();
    assert_eq!(ava.capability("ask").unwrap().model_pin.as_deref(), Some("large"));
    // A binding may name the suite that gates it, but only one that exists for it.
    let mut named = ava.capability("ask").unwrap();
    named.settings.eval_suite = Some("ask-typo".into());
    let e = ava.bind_capability(&named).unwrap_err();
    assert_eq!((e.code, e.field.as_deref()), (Code::InvalidValue, Some("evalSuite")));
    named.settings.eval_suite = Some("ask-mini".into());
    ava.bind_capability(&named).unwrap();
    // Only ai.author or ai.manage see suites and runs.
    let ben = f.ws.session("ben").unwrap();
    assert_eq!(ben.eval_runs(None).unwrap_err().code, Code::Permission);
}

#[test]
fn a_suite_is_revised_into_its_next_version_and_a_case_a_run_could_not_read_is_refused() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    publish_suite(&ava);
    let extra = SuiteCase {
        id: "ben-asks".into(),
        user: "ben".into(),
        input: json!({"question": "List my opportunities"}),
        expect: json!({"object": "opportunity", "expect_refusal_or_empty": true}),
        hard: false,
    };
    // A lower floor, dan's case no longer hard, one case added: version 2; version 1 is kept.
    let revision = SuiteRevision {
        floor: Some(0.5),
        hard: Some(vec![]),
        remove: vec![],
        add: vec![extra.clone()],
        judged: None,
    };
    assert_eq!(ava.revise_suite("ask-mini", &revision).unwrap(), 2);
    let v2 = ava.suite("ask-mini", None).unwrap();
    assert_eq!((v2.version, v2.floor, v2.cases.len()), (2, 0.5, 3));
    assert!(v2.cases.iter().all(|c| !c.hard));
    assert_eq!(v2.cases[2], extra);
    let v1 = ava.suite("ask-mini", Some(1)).unwrap();
    assert_eq!((v1.floor, v1.cases.len()), (1.0, 2));
    assert!(v1.cases[1].hard);
    // Removing a case.
    let remove = SuiteRevision { remove: vec!["all-accounts".into()], ..Default::default() };
    assert_eq!(ava.revise_suite("ask-mini", &remove).unwrap(), 3);
    assert_eq!(ava.suite("ask-mini", None).unwrap().cases.len(), 2);

    // Refused, nothing published: an unknown case, a change to nothing, a case of another
    // capability's form, a user the fixture lacks, two cases of one id, a floor over 1.
    let refused = |r: SuiteRevision| ava.revise_suite("ask-mini", &r).unwrap_err();
    let e = refused(SuiteRevision { remove: vec!["nope".into()], ..Default::default() });
    assert_eq!(e.code, Code::NotFound);
    assert_eq!(refused(SuiteRevision::default()).code, Code::InvalidValue);
    let summarize_form =
        SuiteCase { id: "s".into(), input: json!({"object": "account", "id": "acc_0001"}), ..extra.clone() };
    let e = refused(SuiteRevision { add: vec![summarize_form], ..Default::default() });
    assert!(e.message.contains("case s:") && e.message.contains("question"), "{}", e.message);
    let stranger = SuiteCase { id: "z".into(), user: "zed".into(), ..extra.clone() };
    let e = refused(SuiteRevision { add: vec![stranger], ..Default::default() });
    assert!(e.message.contains("no user `zed`"), "{}", e.message);
    assert_eq!(
        refused(SuiteRevision { add: vec![extra.clone()], ..Default::default() }).code,
        Code::InvalidValue
    );
    assert_eq!(refused(SuiteRevision { floor: Some(1.5), ..Default::default() }).code, Code::InvalidValue);
    assert_eq!(ava.suite("ask-mini", None).unwrap().version, 3);
    // Only an author revises.
    let ben = f.ws.session("ben").unwrap();
    let by_ben = ben.revise_suite("ask-mini", &SuiteRevision { floor: Some(0.1), ..Default::default() });
    assert_eq!(by_ben.unwrap_err().code, Code::Permission);
}

/// "Use this server" on the first-run offer: the server found is added, its model pinned and
/// bound to every capability without a model — through the gate, which passes untouched for
/// the workspace's only pin and holds a capability back (with its reason) where it would not.
#[test]
fn a_found_server_is_put_to_use_and_bound_only_where_the_gate_lets_it() {
    use countersign_kernel::ai::pipeline::use_found_server;
    let kind = ProviderKind::OpenaiCompatible;

    // First run: no provider, no pin.
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let found = fake(vec![good()]);
    let ben = f.ws.session("ben").unwrap();
    assert_eq!(
        rt().block_on(use_found_server(&ben, kind, &found.url, "fake-model")).unwrap_err().code,
        Code::Permission
    );
    let e = rt().block_on(use_found_server(&ava, kind, &found.url, "another-model")).unwrap_err();
    assert_eq!((e.code, e.field.as_deref()), (Code::InvalidValue, Some("model")));
    assert!(ava.providers().unwrap().is_empty(), "a refusal adds nothing");
    let in_use = rt().block_on(use_found_server(&ava, kind, &found.url, "fake-model")).unwrap();
    // The fake answers like llama.cpp (its models carry `n_params`).
    assert_eq!((in_use.pin.key.as_str(), in_use.pin.provider.as_str()), ("llama-cpp", "llama-cpp"));
    for capability in ["ask", "summarize", "extract"] {
        assert!(in_use.bound.iter().any(|b| b == capability), "{capability}: {in_use:?}");
        assert_eq!(ava.capability(capability).unwrap().model_pin.as_deref(), Some("llama-cpp"));
    }
    assert!(in_use.not_bound.is_empty());

    // A workspace with a pin already (the demo's suites gate Summarize and Extract; one more
    // gates Ask): the second model is pinned but bound nowhere — no run of it has passed, and no
    // override is written for the person — and each capability says why.
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let first = fake(vec![good()]);
    provider(&ava, "llama-cpp", &first);
    pin(&ava, "small", "llama-cpp");
    publish_suite(&ava);
    let second = fake(vec![good()]);
    let in_use = rt().block_on(use_found_server(&ava, kind, &second.url, "fake-model")).unwrap();
    assert_eq!(in_use.pin.key, "llama-cpp-2", "the key taken by another address is not reused");
    assert_eq!(
        ava.provider_config("llama-cpp").unwrap().base_url,
        first.url,
        "the first provider is untouched"
    );
    for capability in ["ask", "summarize", "extract"] {
        assert!(!in_use.bound.iter().any(|b| b == capability), "{in_use:?}");
        let held = in_use.not_bound.iter().find(|n| n.capability == capability).expect(capability);
        assert!(held.reason.contains("has no run against"), "{}", held.reason);
        assert_eq!(ava.capability(capability).unwrap().model_pin, None);
    }
    assert!(ava.gate_decisions().unwrap().iter().all(|d| !d.overridden));
}

/// A summary the kernel verifies (it names the account by its slot).
fn summary(text: &str) -> Answer {
    Answer::Text(json!({ "sentences": [text] }).to_string())
}

/// The judge's verdict on one criterion (each is a call of its own).
fn verdict(pass: bool, quote: &str) -> Answer {
    Answer::Text(json!({"quote": quote, "pass": pass}).to_string())
}

#[test]
fn a_judged_assertion_fails_a_run_the_judge_marks_down_and_the_gate_says_why() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let cases: Vec<SuiteCase> = ["acc_0016", "acc_0002"]
        .into_iter()
        .map(|id| SuiteCase {
            id: id.into(),
            user: "ava".into(),
            input: json!({"object": "account", "id": id}),
            expect: json!({}),
            hard: false,
        })
        .collect();
    let rubric = vec!["It states the open pipeline.".to_string(), "It reads as fluent English.".to_string()];
    let judged = Judged { rubric: rubric.clone(), floor: 0.75 };
    // Only Summarize's answers are judged so far.
    let e = ava.publish_judged_suite("ask-judged", "ask", 1.0, &[], Some(&judged)).unwrap_err();
    assert!(e.message.contains("Summarize"), "{}", e.message);
    let blank = Judged { rubric: vec![" ".into()], floor: 0.5 };
    assert!(ava.publish_judged_suite("summarize-judged", "summarize", 1.0, &cases, Some(&blank)).is_err());
    ava.publish_judged_suite("summarize-judged", "summarize", 1.0, &cases, Some(&judged)).unwrap();
    assert_eq!(ava.suite("summarize-judged", None).unwrap().judged, Some(judged));

    // The current version: each summary verified, each judged on both criteria.
    let well = fake(vec![
        summary("{name} has {open_opportunities_count} open opportunities."),
        verdict(true, "2 open opportunities"),
        verdict(true, "has 2 open opportunities"),
        summary("{name} has {open_opportunities_count} open opportunities."),
        verdict(true, "2 open opportunities"),
        verdict(true, "has 2 open opportunities"),
    ]);
    provider(&ava, "local", &well);
    pin(&ava, "small", "local");
    let run = |candidate: RunCandidate| {
        rt().block_on(run_suite(&ava, "summarize-judged", &candidate, &Cancel::default(), &mut |_, _, _| {}))
            .unwrap()
    };
    let current = ava.prompt_versions("summarize").unwrap().into_iter().find(|v| v.active).unwrap();
    let passing = run(RunCandidate::default());
    assert_eq!((passing.outcome.as_str(), passing.passed), ("passed", 2), "{:?}", passing.cases);
    let j = passing.judged.as_ref().expect("a judged score");
    assert_eq!((j.score, j.floor, j.judge_pin.as_str()), (1.0, 0.75, "small"));
    // The judge read the answer and its facts as data: its system role holds its instructions only.
    let requests = well.chat_requests();
    let judge_request = &requests[1];
    let system = judge_request["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You check one answer"), "{system}");
    assert!(!system.contains("Aperture Holdings"), "no record value in the system role");
    assert!(judge_request.to_string().contains("Aperture Holdings has"), "the answer is in the request");

    // A new version whose every summary the checks verify but the judge marks down on criterion 1.
    let bland = ava
        .publish_prompt(
            "summarize",
            "Say only the account's name, in one sentence.",
            None,
            &current.output_contract,
        )
        .unwrap();
    let badly = fake(vec![
        summary("{name} is an account."),
        verdict(false, "none"),
        verdict(true, "is an account"),
        summary("{name} is an account."),
        verdict(false, "none"),
        verdict(true, "is an account"),
    ]);
    provider(&ava, "local", &badly);
    let failing = run(RunCandidate { prompt_version: Some(bland), model_pin: None });
    assert_eq!(
        (failing.outcome.as_str(), failing.passed, failing.total),
        ("failed", 2, 2),
        "every hard check passed"
    );
    assert_eq!(failing.judged.as_ref().unwrap().score, 0.5);
    let verdict = &failing.cases[0].judged.as_ref().unwrap().verdicts[0];
    assert_eq!((verdict.criterion.as_str(), verdict.pass), ("It states the open pipeline.", false));
    assert_eq!(verdict.reason, "none", "the words the verdict rests on");
    // Stored as run, read back the same.
    let stored = ava.eval_runs(Some("summarize-judged")).unwrap();
    assert_eq!(stored[0].judged, failing.judged);
    assert_eq!(stored[0].cases[0].judged, failing.cases[0].judged);

    // Activation is refused, saying the judged score and each criterion not met.
    let e = ava.activate_prompt("summarize", bland).unwrap_err();
    assert_eq!(e.code, Code::EvalGate);
    assert!(e.message.contains("judged 50 % against its floor of 75 %"), "{}", e.message);
    assert!(
        e.details.iter().any(|d| d.path == "acc_0016"
            && d.message.contains("It states the open pipeline")
            && d.message.contains("the judge quoted: “none”")),
        "{:?}",
        e.details
    );
    // The current version went through on its passing run.
    ava.activate_prompt("summarize", current.version).unwrap();
}
