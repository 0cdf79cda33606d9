//! The AI pipeline and Ask against a fake OpenAI-compatible endpoint on 127.0.0.1 that replays
//! scripted model answers (the real model is `real_model.rs` and `eval ask`): each step's typed
//! failure, the projection, the per-request contract, the repair, budgets, limits and the trace.

use crate::common;

use common::fake_model::{fake, model, Answer};
use countersign_kernel::ai::ask;
use countersign_kernel::ai::pipeline::{drive::drive, ModelChoice};
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::records::names::ResolutionStatus;
use countersign_kernel::{Code, Session};
use serde_json::{json, Value};
use std::sync::Arc;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

pub(crate) fn ask_with(
    s: &Session<'_>,
    q: &str,
    m: ModelChoice,
) -> countersign_kernel::Result<ask::AskAnswer> {
    let mut ask = ask::Ask { question: q.to_string() };
    rt().block_on(drive(s, &mut ask, Some(m), &Cancel::default(), &mut |_| {}))
}

/// A model answer; a plan without `sort`/`limit` gets the contract's empty values.
pub(crate) fn plan(mut v: Value) -> Answer {
    if v.get("object").is_some() {
        let m = v.as_object_mut().unwrap();
        m.entry("terms").or_insert(json!([]));
        m.entry("sort").or_insert(json!([]));
        m.entry("limit").or_insert(Value::Null);
    }
    Answer::Text(v.to_string())
}

pub(crate) fn user_message(req: &Value) -> String {
    req["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string()
}

pub(crate) fn ids(a: &ask::AskAnswer) -> Vec<String> {
    let mut v = ask::ids(a.result.as_ref().expect("a result"));
    v.sort();
    v
}

#[test]
fn projection_for_ben_leaves_out_hidden_and_never_fields() {
    let f = common::demo_ask_v3();
    let ben = f.ws.session("ben").unwrap();
    let g = ben.grounding("anything", 10_000);
    let canon = g.projection.canonical_json();
    for hidden in ["margin_pct", "credit_limit", "tax_id", "birthdate"] {
        assert!(!canon.contains(hidden), "{hidden} in ben's projection");
        assert!(!g.text.contains(hidden), "{hidden} in ben's prompt text");
        let schema = ask::output_schema(
            &g.projection,
            &["opportunity".into(), "account".into()],
            true,
            None,
            None,
            &[],
            &[],
        )
        .to_string();
        assert!(!schema.contains(hidden), "{hidden} in ben's output contract");
    }
    // Retired picklist values are not offered, active ones are (a term's condition may still
    // name a retired value: "open" includes it, so old records stay in the set).
    assert!(!g.text.contains("perception_analysis") && g.text.contains("negotiation"));
    let stage = g.projection.field("opportunity", "stage").unwrap().1;
    assert!(stage.values.iter().all(|(v, _)| v != "perception_analysis"));
    let ava = f.ws.session("ava").unwrap();
    let ga = ava.grounding("anything", 10_000);
    assert!(ga.text.contains("margin_pct") && ga.text.contains("credit_limit"));
    assert!(!ga.text.contains("tax_id"), "aiVisibility: never is absent for everyone");
    assert_ne!(g.hash, ga.hash, "the grounding hash is per user");
    // Cached per (user, generation, scope): the same value comes back.
    assert!(Arc::ptr_eq(&g, &ben.grounding("anything else", 10_000)));
    // Over the token budget, the projection is scoped to the named objects plus one hop.
    let scoped = ben.grounding("Which invoices are overdue?", 50);
    let keys: Vec<&str> = scoped.projection.objects.iter().map(|o| o.key.as_str()).collect();
    assert!(keys.contains(&"invoice") && keys.contains(&"account") && keys.contains(&"invoice_line"));
    assert!(!keys.contains(&"contact") && !keys.contains(&"note"), "{keys:?}");
    assert!(scoped.tokens < g.tokens);
}

#[test]
fn ask_runs_the_spec_itself_and_resolves_partial_names() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![plan(json!({"object": "invoice", "terms": ["paid_invoice"], "filters": [
        {"field": "account", "op": "eq", "value": "monarch"}], "sort": [], "limit": null}))]);
    let cara = f.ws.session("cara").unwrap();
    let a = ask_with(&cara, "Show all paid invoices of Monarch.", model(&fake.url, 0.0)).unwrap();
    assert_eq!(ids(&a), ["inv_0016", "inv_0038", "inv_0097", "inv_0204", "inv_0231"]);
    let r = &a.resolutions[0];
    assert_eq!((r.status, r.matches[0].name.as_str()), (ResolutionStatus::Resolved, "Monarch Holdings"));
    // Columns come from the layout, not the model.
    assert!(
        a.spec.fields.contains(&"number".to_string()) && a.spec.fields.contains(&"account.name".to_string())
    );
    let req = &fake.chat_requests()[0];
    let system = req["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("Show all paid") && !system.contains("Monarch"), "data in the system role");
    assert!(user_message(req).contains("Show all paid invoices of Monarch."));
    let schema = req["response_format"]["json_schema"]["schema"].to_string();
    // Picklists as enums of their active values (`telecom` is retired)...
    assert!(
        schema.contains(
            r#""enum":["software","manufacturing","retail","healthcare","finance","education","logistics"]"#
        ),
        "{schema}"
    );
    // ...except the status the term the question says ("paid") sets: the term is the choice.
    assert!(schema.contains("paid_invoice") && !schema.contains(r#""field":{"const":"status"}"#));
}

#[test]
fn an_ambiguous_name_becomes_a_choice_not_a_guess() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![plan(json!({"object": "contact", "filters": [
        {"field": "account", "op": "eq", "value": "Systems"}]}))]);
    let ava = f.ws.session("ava").unwrap();
    let a = ask_with(&ava, "List the contacts at Systems.", model(&fake.url, 0.0)).unwrap();
    assert!(a.result.is_none(), "an ambiguous value must not run");
    assert_eq!(a.resolutions[0].status, ResolutionStatus::Ambiguous);
    assert!(a.resolutions[0].matches.len() > 1);
}

#[test]
fn a_hidden_field_in_the_answer_is_refused_even_if_the_endpoint_returns_it() {
    let f = common::demo_ask_v3();
    let bad =
        plan(json!({"object": "opportunity", "filters": [{"field": "margin_pct", "op": "gt", "value": 40}]}));
    let fake = fake(vec![bad.clone(), bad]);
    let ben = f.ws.session("ben").unwrap();
    let e = ask_with(&ben, "Which deals are the most profitable?", model(&fake.url, 0.0)).unwrap_err();
    assert_eq!((e.code, e.fault), (Code::Contract, countersign_kernel::Fault::Platform));
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2, "exactly one repair attempt");
    let repair = user_message(&reqs[1]);
    assert!(
        repair.contains("filters[0]: `margin_pct` is not a field of opportunity you may use"),
        "the repair carries the exact error: {repair}"
    );
    let t = ben.traces(1).unwrap().remove(0);
    assert_eq!((t.outcome.as_str(), t.code.as_deref(), t.attempts), ("refused", Some("contract"), 2));
}

#[test]
fn a_repair_that_fixes_the_answer_is_accepted() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![
        Answer::Text("{\"object\": \"account\", \"filters\": [".into()),
        plan(
            json!({"object": "account", "filters": [{"field": "industry", "op": "eq", "value": "healthcare"}]}),
        ),
    ]);
    let ava = f.ws.session("ava").unwrap();
    let a = ask_with(&ava, "Which accounts are in the healthcare industry?", model(&fake.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 2);
    assert_eq!(ids(&a).len(), 6);
    assert!(user_message(&fake.chat_requests()[1]).contains("the answer is not valid JSON"));
}

#[test]
fn a_question_about_a_hidden_field_is_refused_before_any_call() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![plan(
        json!({"object": "opportunity", "filters": [{"field": "probability", "op": "gt", "value": 40}]}),
    )]);
    let ben = f.ws.session("ben").unwrap();
    let e = ask_with(&ben, "Which opportunities have a margin above 40 percent?", model(&fake.url, 0.0))
        .unwrap_err();
    assert_eq!(e.code, Code::GroundingInsufficient, "{e}");
    assert!(e.message.contains("margin"));
    // Same question for a user who can read the field goes to the model.
    let ava = f.ws.session("ava").unwrap();
    assert!(
        ask_with(&ava, "Which opportunities have a margin above 40 percent?", model(&fake.url, 0.0)).is_ok()
    );
    assert_eq!(fake.chat_requests().len(), 1);
    // Others like it: ben's hidden credit limit, in any wording.
    for q in ["Accounts with a credit limit above 100000", "Which customers have the most credit?"] {
        let e = ask_with(&ben, q, model(&fake.url, 0.0)).unwrap_err();
        assert_eq!(e.code, Code::GroundingInsufficient, "{q}");
    }
    assert_eq!(fake.chat_requests().len(), 1);
    // Fields nobody may give the model (aiVisibility: never), and their words, are refused too.
    let e =
        ask_with(&ava, "Which accounts have a tax ID starting with 12?", model(&fake.url, 0.0)).unwrap_err();
    assert_eq!(e.code, Code::GroundingInsufficient);
}

#[test]
fn the_models_refusal_is_a_typed_grounding_refusal() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![plan(json!({"refusal": {"reason": "no field for weather"}}))]);
    let ava = f.ws.session("ava").unwrap();
    let e = ask_with(&ava, "Which accounts had good weather?", model(&fake.url, 0.0)).unwrap_err();
    assert_eq!((e.code, e.fault), (Code::GroundingInsufficient, countersign_kernel::Fault::User));
}

#[test]
fn a_user_without_ai_use_is_refused_and_traced() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![]);
    let dan = f.ws.session("dan").unwrap();
    let e = ask_with(&dan, "Show all accounts.", model(&fake.url, 0.0)).unwrap_err();
    assert_eq!(e.code, Code::Permission);
    assert!(fake.chat_requests().is_empty());
    let t = dan.traces(5).unwrap();
    assert_eq!((t[0].outcome.as_str(), t[0].code.as_deref()), ("refused", Some("permission")));
}

pub fn set_settings(
    s: &Session<'_>,
    edit: impl FnOnce(&mut countersign_kernel::ai::pipeline::CapabilitySettings),
) {
    let mut b = s.capability("ask").unwrap();
    edit(&mut b.settings);
    s.bind_capability(&b).unwrap();
}

#[test]
fn budgets_stop_a_call_before_any_request_is_sent() {
    let f = common::demo_ask_v3();
    let answer =
        plan(json!({"object": "account", "filters": [{"field": "rating", "op": "eq", "value": "hot"}]}));
    let fake = fake(vec![answer]);
    let ava = f.ws.session("ava").unwrap();
    // Per call: 1,000 $/Mtok × (prompt estimate + 200 output tokens) is well over 0.01.
    set_settings(&ava, |s| s.budget.per_invocation = Some(0.01));
    let e = ask_with(&ava, "Which accounts are hot?", model(&fake.url, 1000.0)).unwrap_err();
    assert_eq!(
        (e.code, e.fault),
        (Code::AiBudget, countersign_kernel::Fault::Admin),
        "an admin sets budgets"
    );
    assert!(fake.chat_requests().is_empty(), "nothing may be sent over budget");
    // Per user per day: a first call records its actual cost C (1,040 tokens at 10 $/Mtok) and
    // its estimate E; with a ceiling of C + 1.1 E the next call fits (with a warning, being
    // over 80 %), the one after does not, and is refused before anything is sent.
    set_settings(&ava, |s| s.budget.per_invocation = None);
    ask_with(&ava, "Which accounts are hot?", model(&fake.url, 10.0)).unwrap();
    let t = ava.traces(1).unwrap().remove(0);
    assert!((t.cost - 0.0104).abs() < 1e-9, "actual cost from usage: {}", t.cost);
    assert!(t.estimated_cost > 0.0);
    set_settings(&ava, |s| s.budget.per_user_per_day = Some(t.cost + 1.1 * t.estimated_cost));
    let a = ask_with(&ava, "Which accounts are hot?", model(&fake.url, 10.0)).unwrap();
    assert!(a.warning.is_some(), "near the ceiling, the answer warns");
    let e = ask_with(&ava, "Which accounts are hot?", model(&fake.url, 10.0)).unwrap_err();
    assert_eq!(e.code, Code::AiBudget);
    assert_eq!(fake.chat_requests().len(), 2);
    // The next day the user's budget is fresh.
    f.clock.advance(chrono::Duration::days(1));
    assert!(ask_with(&ava, "Which accounts are hot?", model(&fake.url, 10.0)).is_ok());
    // Prices in another currency than the workspace's cannot be budgeted.
    let mut eur = model(&fake.url, 10.0);
    eur.pin.currency = "EUR".into();
    let e = ask_with(&ava, "Which accounts are hot?", eur).unwrap_err();
    assert_eq!((e.code, e.fault), (Code::AiBudget, countersign_kernel::Fault::Admin));
    let spend = ava.spend("2026-01-01").unwrap();
    assert!(spend.iter().any(|r| r.capability == "ask" && r.actor == "ava" && r.cost > 0.0));
}

#[test]
fn rate_and_concurrency_limits_are_per_user_and_capability() {
    let f = common::demo_ask_v3();
    let answer = plan(json!({"object": "account", "filters": []}));
    let fake = fake(vec![answer]);
    let ava = f.ws.session("ava").unwrap();
    set_settings(&ava, |s| {
        s.rate.per_minute = 2;
        s.rate.concurrency = 1;
    });
    // Concurrency: a second call while one is running.
    let running = ava.ask_begin("Show all accounts.", model(&fake.url, 0.0)).unwrap();
    let e = ava.ask_begin("Show all accounts.", model(&fake.url, 0.0)).unwrap_err();
    assert_eq!((e.code, e.retriable), (Code::RateLimit, true));
    // The rate counts calls that asked a model: the one dropped before its call does not.
    drop(running);
    ask_with(&ava, "Show all accounts.", model(&fake.url, 0.0)).unwrap();
    ask_with(&ava, "Show all accounts.", model(&fake.url, 0.0)).unwrap();
    let e = ask_with(&ava, "Show all accounts.", model(&fake.url, 0.0)).unwrap_err();
    assert_eq!(e.code, Code::RateLimit, "two model calls within the minute");
    // Another user has their own allowance.
    let cara = f.ws.session("cara").unwrap();
    assert!(ask_with(&cara, "Show all accounts.", model(&fake.url, 0.0)).is_ok());
    f.clock.advance(chrono::Duration::seconds(61));
    assert!(ask_with(&ava, "Show all accounts.", model(&fake.url, 0.0)).is_ok());
}

#[test]
fn endpoint_failures_are_typed_integration_errors() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![Answer::Status(503)]);
    let ava = f.ws.session("ava").unwrap();
    let e = ask_with(&ava, "Show all accounts.", model(&fake.url, 0.0)).unwrap_err();
    assert_eq!((e.code, e.retriable), (Code::IntegrationServer, true));
    assert_eq!(fake.chat_requests().len(), 3, "transient failures are retried");
    let e = ask_with(&ava, "Show all accounts.", model("http://127.0.0.1:9/v1", 0.0)).unwrap_err();
    assert_eq!((e.code, e.fault), (Code::IntegrationUnreachable, countersign_kernel::Fault::Admin));
    let t = ava.traces(1).unwrap().remove(0);
    assert_eq!((t.outcome.as_str(), t.code.as_deref()), ("failed", Some("integration.unreachable")));
}

#[test]
fn a_capability_scope_refuses_objects_outside_it() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![plan(json!({"object": "invoice", "filters": []}))]);
    let ava = f.ws.session("ava").unwrap();
    set_settings(&ava, |s| s.objects = Some(vec!["invoice".into()]));
    let e = ask_with(&ava, "List the contacts at Lacuna Group.", model(&fake.url, 0.0)).unwrap_err();
    assert_eq!(e.code, Code::Scope);
    assert!(fake.chat_requests().is_empty());
    // Inside the scope, the contract only offers the scoped object.
    ask_with(&ava, "Show all invoices.", model(&fake.url, 0.0)).unwrap();
    let schema = fake.chat_requests()[0]["response_format"]["json_schema"]["schema"].to_string();
    assert!(schema.contains(r#""const":"invoice""#) && !schema.contains(r#""const":"contact""#));
}

#[test]
fn trace_rows_are_complete_and_hide_values_the_reader_cannot_read() {
    let f = common::demo_ask_v3();
    let fake = fake(vec![plan(json!({"object": "opportunity", "filters": [
        {"field": "margin_pct", "op": "gt", "value": 41.5}]}))]);
    let ava = f.ws.session("ava").unwrap();
    let a = ask_with(&ava, "Which opportunities have a margin above 41.5 percent?", model(&fake.url, 2.0))
        .unwrap();
    let t = ava.trace(&a.trace_id).unwrap();
    assert_eq!(t.correlation_id, a.correlation_id);
    assert_eq!((t.capability.as_str(), t.prompt.as_str(), t.prompt_version), ("ask", "ask", 3));
    assert_eq!((t.model_id.as_str(), t.model_version.as_str()), ("fake-model", "sha256:fake"));
    assert_eq!(t.grounding_hash, a.grounding_hash);
    assert!(t.grounding_hash.starts_with("sha256:"));
    assert_eq!(t.generation, f.ws.generation());
    assert_eq!((t.prompt_tokens, t.completion_tokens, t.attempts), (1000, 40, 1));
    assert!((t.cost - 1040.0 * 2.0 / 1e6).abs() < 1e-12 && t.estimated_cost > 0.0);
    assert!(t.latency_ms > 0.0 && t.finished_at.is_some());
    assert_eq!((t.outcome.as_str(), t.code), ("answered", None));
    assert!(t.prompt_text.contains("[system]") && t.prompt_text.contains("margin above 41.5"));
    assert!(t.output_text.contains("41.5"));
    // Give ben ai.manage (to read every trace) without margin access: the value is hidden.
    let mut def = f.ws.catalog().unwrap().definition.clone();
    let mut doc = serde_json::to_value(&def).unwrap();
    for set in doc["permissionSets"].as_array_mut().unwrap() {
        if set["key"] == "sales_rep" {
            set["system"].as_array_mut().unwrap().push(json!("ai.manage"));
        }
    }
    def = serde_json::from_value(doc).unwrap();
    drop(ava);
    let mut ws = f.ws;
    ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let ben = ws.session("ben").unwrap();
    let seen = ben.trace(&a.trace_id).unwrap();
    assert!(seen.hidden_values > 0);
    for text in [&seen.input, &seen.prompt_text, &seen.output_text, &seen.result.unwrap().to_string()] {
        assert!(!text.contains("41.5"), "a hidden value leaked: {text}");
    }
    // Without ai.manage, a user reads only their own entries.
    let cara = ws.session("cara").unwrap();
    assert_eq!(cara.trace(&a.trace_id).unwrap_err().code, Code::NotFound);
}

#[test]
fn prompt_versions_are_frozen_and_only_the_pointer_changes_behaviour() {
    let f = common::demo_ask_v3();
    let answer = plan(json!({"object": "account", "filters": []}));
    let fake = fake(vec![answer]);
    let ben = f.ws.session("ben").unwrap();
    assert_eq!(ben.publish_prompt("ask", "x", None, "c").unwrap_err().code, Code::Permission);
    let ava = f.ws.session("ava").unwrap();
    let shipped = ava.active_prompt("ask").unwrap();
    let published = ava.prompt_versions("ask").unwrap().len() as i64;
    let mine = ava.publish_prompt("ask", "MY VERSION instructions", None, &shipped.output_contract).unwrap();
    assert_eq!(mine, published + 1, "a published version is appended");
    assert_eq!(ava.active_prompt("ask").unwrap().version, shipped.version, "publishing does not activate");
    let edit =
        f.ws.raw_connection()
            .execute("UPDATE ai_prompt_version SET instructions = 'x' WHERE version = 1", []);
    assert!(edit.is_err(), "a published version cannot be edited");
    ava.activate_prompt("ask", mine).unwrap();
    let a = ask_with(&ava, "Show all accounts.", model(&fake.url, 0.0)).unwrap();
    assert_eq!(fake.chat_requests()[0]["messages"][0]["content"], "MY VERSION instructions");
    assert_eq!(ava.trace(&a.trace_id).unwrap().prompt_version, mine);
}

#[test]
fn names_resolve_through_case_punctuation_suffixes_and_partial_words_against_readable_records() {
    let f = common::demo_ask_v3();
    let cara = f.ws.session("cara").unwrap();
    for written in ["Acme Industries", "ACME industries, Inc.", "acme industries", "Acme Ind."] {
        let r = cara.resolve_name("account", "account", written).unwrap();
        assert_eq!(r.status, ResolutionStatus::Resolved, "{written}: {r:?}");
        assert_eq!(r.matches[0].name, "Acme Industries", "{written}");
    }
    assert_eq!(
        cara.resolve_name("account", "account", "Nonexistent Widgets").unwrap().status,
        ResolutionStatus::Unmatched
    );
    // "acme" alone names three accounts (Acme Labs, Acme Industries, Acme GmbH): a choice.
    let r = cara.resolve_name("account", "account", "acme").unwrap();
    assert_eq!(r.status, ResolutionStatus::Ambiguous);
    let mut names: Vec<&str> = r.matches.iter().map(|m| m.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["Acme GmbH", "Acme Industries", "Acme Labs"]);
    // Abbreviations expand: "Summit Sys" is Summit Systems.
    assert_eq!(
        cara.resolve_name("account", "account", "Summit Sys").unwrap().matches[0].name,
        "Summit Systems"
    );
    // Only records the user can read are candidates: ben sees only his own opportunities.
    let ben = f.ws.session("ben").unwrap();
    let ava = f.ws.session("ava").unwrap();
    let others: Vec<String> = common::demo_rows("opportunity")
        .into_iter()
        .filter(|r| r["owner"] != "ben")
        .map(|r| r["name"].clone())
        .take(3)
        .collect();
    for name in others {
        assert_eq!(
            ava.resolve_name("opportunity", "name", &name).unwrap().status,
            ResolutionStatus::Resolved
        );
        let r = ben.resolve_name("opportunity", "name", &name).unwrap();
        assert!(r.matches.iter().all(|m| m.name != name), "ben resolved someone else's opportunity {name}");
    }
}

/// The ids a plain query finds, sorted (what an Ask answer must equal).
fn query_ids(s: &Session<'_>, spec: Value) -> Vec<String> {
    let spec: countersign_kernel::QuerySpec = serde_json::from_value(spec).unwrap();
    let mut v = ask::ids(&s.query(&spec).unwrap());
    v.sort();
    v
}

#[test]
fn a_date_phrase_is_read_by_the_kernel_offered_as_a_choice_and_expanded_to_its_range() {
    // Today is 2026-11-29 (the fixtures' fixed clock).
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let fake = fake(vec![plan(json!({"object": "invoice", "filters": [
        {"field": "due_date", "op": "during", "value": "March 2026"}]}))]);
    let a = ask_with(&ava, "Invoices due in March 2026.", model(&fake.url, 0.0)).unwrap();
    let req = &fake.chat_requests()[0];
    // The model is told the days, and may only pick the phrase.
    assert!(user_message(req).contains("\"March 2026\": 2026-03-01 to 2026-03-31"), "{}", user_message(req));
    let schema = req["response_format"]["json_schema"]["schema"].to_string();
    assert!(schema.contains(r#"{"const":"due_date"}"#) && schema.contains(r#"{"enum":["March 2026"]}"#));
    assert!(schema.contains(r#""op":{"enum":["during"]}"#), "{schema}");
    let spec = serde_json::to_value(&a.spec).unwrap();
    assert_eq!(
        spec["filters"],
        json!({"all": [{"field": "due_date", "op": "gte", "value": "2026-03-01"}, {"field": "due_date", "op": "lte", "value": "2026-03-31"}]})
    );
    let want = query_ids(&ava, json!({"object": "invoice", "filters": spec["filters"], "limit": 1000}));
    assert_eq!(ids(&a), want);
    assert!(!want.is_empty());
    // The answer names the phrase for the chip.
    assert_eq!(
        serde_json::to_value(&a.dates).unwrap(),
        json!([{"field": "due_date", "phrase": "March 2026", "start": "2026-03-01", "end": "2026-03-31"}])
    );
}

#[test]
fn a_date_time_field_takes_whole_days_and_relative_phrases_are_read_against_today() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let fake = fake(vec![plan(json!({"object": "note", "filters": [
        {"field": "written_at", "op": "during", "value": "last month"}]}))]);
    let a = ask_with(&ava, "Notes written last month.", model(&fake.url, 0.0)).unwrap();
    let spec = serde_json::to_value(&a.spec).unwrap();
    assert_eq!(
        spec["filters"],
        json!({"all": [{"field": "written_at", "op": "gte", "value": "2026-10-01T00:00:00Z"}, {"field": "written_at", "op": "lt", "value": "2026-11-01T00:00:00Z"}]})
    );
    assert_eq!(
        ids(&a),
        query_ids(&ava, json!({"object": "note", "filters": spec["filters"], "limit": 1000}))
    );
}

#[test]
fn dates_are_read_against_today_and_days_in_the_workspace_time_zone() {
    let f = common::demo_ask_v3();
    // 2026-11-29T10:00Z; plus 18 hours is 04:00Z on Nov 30 — still Nov 29 in Los Angeles.
    f.clock.advance(chrono::Duration::hours(18));
    let mut def = f.ws.catalog().unwrap().definition.clone();
    def.time_zone = Some("America/Los_Angeles".into());
    let mut ws = f.ws;
    ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let ava = ws.session("ava").unwrap();
    let fake = fake(vec![plan(json!({"object": "note", "filters": [
        {"field": "written_at", "op": "during", "value": "yesterday"}]}))]);
    let a = ask_with(&ava, "Notes written yesterday.", model(&fake.url, 0.0)).unwrap();
    assert!(user_message(&fake.chat_requests()[0]).contains("Today is 2026-11-29."));
    assert_eq!(a.dates[0].start.as_deref(), Some("2026-11-28"));
    // A local day, from its midnight to the next, in UTC (Pacific standard time: UTC-8).
    let spec = serde_json::to_value(&a.spec).unwrap();
    assert_eq!(
        spec["filters"],
        json!({"all": [{"field": "written_at", "op": "gte", "value": "2026-11-28T08:00:00Z"}, {"field": "written_at", "op": "lt", "value": "2026-11-29T08:00:00Z"}]})
    );
    // A name no time zone database knows is refused with its pointer.
    def.time_zone = Some("Mars/Olympus_Mons".into());
    let e = ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap_err();
    assert!(e.details.iter().any(|d| d.path == "/timeZone"), "{:?}", e.details);
}

#[test]
fn without_a_date_in_the_question_the_model_cannot_invent_one() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // A date the question never names (today's), twice: refused, nothing run.
    let invented = plan(json!({"object": "note", "filters": [
        {"field": "written_at", "op": "gte", "value": "2026-11-29"}]}));
    let endpoint = fake(vec![invented.clone(), invented]);
    let e = ask_with(&ava, "Show the notes about renewal risk.", model(&endpoint.url, 0.0)).unwrap_err();
    assert_eq!(e.code, Code::Contract);
    let schema = endpoint.chat_requests()[0]["response_format"]["json_schema"]["schema"].to_string();
    assert!(!schema.contains(r#"{"const":"written_at"}"#), "no date filter is offered: {schema}");
    // And a phrase the question does not name is not a choice either.
    let other = plan(json!({"object": "invoice", "filters": [
        {"field": "due_date", "op": "during", "value": "April 2026"}]}));
    let endpoint = fake(vec![other.clone(), other]);
    let e = ask_with(&ava, "Invoices due in March 2026.", model(&endpoint.url, 0.0)).unwrap_err();
    assert_eq!(e.code, Code::Contract);
}

#[test]
fn a_workspace_on_prompt_version_one_keeps_its_contract() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    ava.activate_prompt("ask", 1).unwrap();
    let fake = fake(vec![Answer::Text(
        json!({"object": "invoice", "filters": [
        {"field": "due_date", "op": "gte", "value": "2026-03-01"},
        {"field": "due_date", "op": "lte", "value": "2026-03-31"}], "sort": [], "limit": null})
        .to_string(),
    )]);
    let a = ask_with(&ava, "Invoices due in March 2026.", model(&fake.url, 0.0)).unwrap();
    let req = &fake.chat_requests()[0];
    assert!(!user_message(req).contains("2026-03-01 to"), "version 1 gets no dates part");
    assert!(!req["response_format"].to_string().contains("during"));
    let spec = serde_json::to_value(&a.spec).unwrap();
    assert_eq!(
        ids(&a),
        query_ids(&ava, json!({"object": "invoice", "filters": spec["filters"], "limit": 1000}))
    );
}

#[test]
fn an_empty_result_gets_one_repair_with_what_the_data_holds() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // "Germany" written as the account's name: no account has it, accounts' countries do.
    let endpoint = fake(vec![
        plan(json!({"object": "contact", "filters": [{"field": "account", "op": "eq", "value": "Germany"}]})),
        plan(
            json!({"object": "contact", "filters": [{"field": "account.billing_country", "op": "eq", "value": "Germany"}]}),
        ),
    ]);
    let a = ask_with(&ava, "Contacts at accounts in Germany.", model(&endpoint.url, 0.0)).unwrap();
    let reqs = endpoint.chat_requests();
    assert_eq!(reqs.len(), 2);
    let repair = user_message(&reqs[1]);
    assert!(repair.contains("no account is named “Germany”"), "{repair}");
    assert!(repair.contains("account.billing_country"), "{repair}");
    assert!(
        repair.contains(r#"write {"field":"account.billing_country","op":"eq","value":"Germany"} instead"#),
        "{repair}"
    );
    let want = query_ids(
        &ava,
        json!({"object": "contact", "filters": {"field": "account.billing_country", "op": "eq", "value": "Germany"}, "limit": 1000}),
    );
    assert_eq!(ids(&a), want);
    assert!(!want.is_empty());

    // A text value near the stored ones: the stored values are offered, the model picks.
    let endpoint = fake(vec![
        plan(
            json!({"object": "note", "filters": [{"field": "title", "op": "contains", "value": "payment delays"}]}),
        ),
        plan(
            json!({"object": "note", "filters": [{"field": "title", "op": "contains", "value": "Payment delay"}]}),
        ),
    ]);
    let a = ask_with(&ava, "Notes about payment delays.", model(&endpoint.url, 0.0)).unwrap();
    let repair = user_message(&endpoint.chat_requests()[1]);
    assert!(repair.contains("title holds “Payment delay”"), "{repair}");
    assert!(!ids(&a).is_empty());
}

#[test]
fn a_second_empty_answer_is_shown_as_it_is_and_hidden_fields_are_never_hinted() {
    // cara may not read accounts' billing city; ava may. "Munich" written as an account's name:
    // only the billing city holds it.
    let f = common::demo_with_a_trace_reader_who_cannot_read("account.billing_city");
    common::ask_on_version(&f.ws, 3);
    let wrong =
        plan(json!({"object": "account", "filters": [{"field": "name", "op": "eq", "value": "Munich"}]}));
    let ava = f.ws.session("ava").unwrap();
    let seen_by_ava = fake(vec![wrong.clone(), wrong.clone()]);
    let a = ask_with(&ava, "Accounts named Munich.", model(&seen_by_ava.url, 0.0)).unwrap();
    assert_eq!(seen_by_ava.chat_requests().len(), 2, "one repair, then the answer as it is");
    assert!(user_message(&seen_by_ava.chat_requests()[1]).contains("billing_city"));
    assert!(ids(&a).is_empty());
    let cara = f.ws.session("cara").unwrap();
    let seen_by_cara = fake(vec![wrong.clone(), wrong]);
    let a = ask_with(&cara, "Accounts named Munich.", model(&seen_by_cara.url, 0.0)).unwrap();
    let requests = seen_by_cara.chat_requests();
    assert!(requests.iter().all(|r| !r.to_string().contains("billing_city")), "cara never hears of it");
    // What she may read does hold it: the descriptions mention the city.
    let repair = user_message(&requests[1]);
    assert!(repair.contains("“Munich” is in description"), "{repair}");
    assert!(ids(&a).is_empty());
}

#[test]
fn records_that_all_bear_the_name_written_are_one_answer_not_a_choice() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let notes = fake(vec![plan(json!({"object": "note", "filters": [
        {"field": "title", "op": "eq", "value": "Expansion interest"}]}))]);
    let a = ask_with(&ava, "Notes titled Expansion interest.", model(&notes.url, 0.0)).unwrap();
    let want = query_ids(
        &ava,
        json!({"object": "note", "filters": {"field": "title", "op": "eq", "value": "Expansion interest"}, "limit": 1000}),
    );
    assert!(want.len() > 1, "several notes share the title");
    assert_eq!(ids(&a), want);
    // Different names that both match are still a choice for the user.
    let accounts = fake(vec![plan(json!({"object": "account", "filters": [
        {"field": "name", "op": "eq", "value": "Acme"}]}))]);
    let a = ask_with(&ava, "The account Acme.", model(&accounts.url, 0.0)).unwrap();
    assert!(a.result.is_none() && a.resolutions.iter().any(|r| r.status == ResolutionStatus::Ambiguous));
}
