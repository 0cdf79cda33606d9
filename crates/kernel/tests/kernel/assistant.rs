//! The assistant against the fake endpoint pinned as the workspace's model: its action schema
//! names only what the user may see and change; a turn asks (Ask runs as its own invocation),
//! the next points at "the largest" of the result set and proposes a change that writes
//! nothing; an action the kernel refuses twice is a `contract` failure; every invocation of a
//! turn shares its correlation; conversations are their user's own and deletable.

use crate::ask::plan;
use crate::common;
use common::fake_model::{fake, pin, provider, Answer};
use countersign_kernel::ai::assistant::{
    check_action_json, take_turn, ScreenContext, StepOutcome, TurnRequest,
};
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::{Code, Session};
use serde_json::{json, Value};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn action(v: Value) -> Answer {
    Answer::Text(v.to_string())
}

fn turn(s: &Session<'_>, conversation: Option<&str>, text: &str) -> countersign_kernel::ai::assistant::Turn {
    let request =
        TurnRequest { conversation: conversation.map(String::from), text: text.into(), ..Default::default() };
    rt().block_on(take_turn(s, request, &Cancel::default(), &mut |_| {})).unwrap()
}

const OVERDUE_OF_COGSWELL: &str = "Which invoices of Cogswell Systems are overdue?";

/// The model's answers for a first turn that asks `OVERDUE_OF_COGSWELL`: the assistant's ask,
/// then Ask's plan (its own invocation).
fn asks_overdue_of_cogswell() -> [Answer; 2] {
    [
        action(json!({"action": "ask", "question": OVERDUE_OF_COGSWELL, "then": "done"})),
        plan(json!({"object": "invoice", "terms": ["overdue_invoice"],
                    "filters": [{"field": "account", "op": "eq", "value": "Cogswell Systems"}]})),
    ]
}

/// "Void the largest one", pointed at (not copied).
fn voids_the_largest() -> Answer {
    action(
        json!({"action": "propose_update", "object": "invoice", "record": {"set": "R1", "pick": "largest", "by": "total"},
                  "changes": {"status": "void"}}),
    )
}

/// Cogswell Systems' overdue invoices in the demo: (total, id), largest first.
fn overdue_of_cogswell() -> Vec<(f64, String)> {
    let mut overdue: Vec<(f64, String)> = common::demo_rows("invoice")
        .into_iter()
        .filter(|r| r["account"] == "acc_0036" && r["status"] == "overdue")
        .map(|r| (r["total"].parse().unwrap(), r["id"].clone()))
        .collect();
    overdue.sort_by(|a, b| b.0.total_cmp(&a.0));
    assert!(overdue.len() > 1, "the demo has several to rank");
    overdue
}

#[test]
fn the_action_schema_refuses_an_unknown_action_and_a_hidden_field() {
    let f = common::demo_ask_v3();
    let ben = f.ws.session("ben").unwrap();
    let mine =
        common::demo_rows("opportunity").into_iter().find(|r| r["owner"] == "ben").unwrap()["id"].clone();
    let request = TurnRequest {
        text: "Move it to negotiation".into(),
        context: Some(ScreenContext { object: "opportunity".into(), id: Some(mine.clone()) }),
        ..Default::default()
    };
    let schema = ben.assistant_action_schema(&request).unwrap();
    let check = |v: Value| check_action_json(&schema, &v.to_string());
    let e = check(json!({"action": "delete_records", "object": "opportunity"})).unwrap_err();
    assert!(e.contains("there is no action `delete_records`"), "{e}");
    let update = |changes: Value| json!({"action": "propose_update", "object": "opportunity", "record": {"id": mine}, "changes": changes});
    // A field Ben may not read (his permission set hides the margin), a value the picklist
    // does not hold, a record not listed to him: refused by the schema itself.
    for bad in [
        update(json!({"margin_pct": 50})),
        update(json!({"stage": "won-ish"})),
        json!({"action": "propose_update", "object": "opportunity", "record": {"id": "opp_0002"}, "changes": {"stage": "proposal"}}),
    ] {
        assert!(check(bad.clone()).is_err(), "{bad} passed");
    }
    assert!(check(update(json!({"stage": "negotiation"}))).is_ok());
    assert!(!schema.to_string().contains("margin_pct"), "the hidden field is not even named");
    // Fields hidden from any AI are absent for an admin too.
    let ava = f.ws.session("ava").unwrap();
    let on_account = TurnRequest {
        text: "Update this account".into(),
        context: Some(ScreenContext { object: "account".into(), id: Some("acc_0009".into()) }),
        ..Default::default()
    };
    let schema = ava.assistant_action_schema(&on_account).unwrap().to_string();
    assert!(schema.contains("credit_limit") && !schema.contains("tax_id"), "{schema}");
}

#[test]
fn a_turn_asks_the_next_points_at_the_largest_and_proposes_without_writing() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let cara = f.ws.session("cara").unwrap();
    // Turn 1 asks; turn 2 voids the largest; turn 3 names a hidden field, twice: refused.
    let mut answers = Vec::from(asks_overdue_of_cogswell());
    answers.push(voids_the_largest());
    answers.push(action(
        json!({"action": "propose_update", "object": "invoice", "record": {"focus": true}, "changes": {"secret": 1}}),
    ));
    let model = fake(answers);
    // The fake endpoint as the workspace's only pin (every capability uses it).
    provider(&ava, "fake", &model);
    pin(&ava, "fake", "fake");

    let first = turn(&cara, None, OVERDUE_OF_COGSWELL);
    let StepOutcome::Table { set, rows } = &first.steps[0].outcome else { panic!("{:?}", first.steps) };
    let overdue = overdue_of_cogswell();
    let (mut got, mut want) = (set.ids.clone(), overdue.iter().map(|(_, id)| id.clone()).collect::<Vec<_>>());
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert!(rows.is_some() && set.name == "R1");

    // A set is ranked by the kind of field a pick means: the largest by an amount, the oldest
    // by a date — never the smallest by a date.
    let schema = cara
        .assistant_action_schema(&TurnRequest {
            conversation: Some(first.conversation.clone()),
            text: "Summarize it".into(),
            ..Default::default()
        })
        .unwrap();
    let pointing = |pick: &str, by: &str| {
        check_action_json(
            &schema,
            &json!({"action": "summarize", "record": {"set": "R1", "pick": pick, "by": by}}).to_string(),
        )
    };
    assert!(pointing("largest", "total").is_ok() && pointing("oldest", "issue_date").is_ok());
    assert!(pointing("smallest", "issue_date").is_err() && pointing("newest", "total").is_err());

    let second = turn(&cara, Some(&first.conversation), "Void the largest one");
    let StepOutcome::Proposal { proposal, record, changes, .. } = &second.steps[0].outcome else {
        panic!("{:?}", second.steps)
    };
    let largest = &overdue[0].1;
    assert_eq!(&record.as_ref().unwrap().id, largest);
    assert_eq!(changes[0].after, "void");
    assert_eq!(cara.get("invoice", largest).unwrap().fields["status"], "overdue", "nothing written");
    assert_eq!(cara.proposal(proposal).unwrap().capability, "assistant");

    let third = turn(&cara, Some(&first.conversation), "Set its secret to 1");
    let StepOutcome::Failed { error, .. } = &third.steps[0].outcome else { panic!("{:?}", third.steps) };
    assert_eq!(error.code, Code::Contract, "{error:?}");

    // One correlation per turn: the step's choice and the Ask it ran.
    let traces = ava.traces(100).unwrap();
    let of_first: Vec<&str> = traces
        .iter()
        .filter(|t| t.correlation_id == first.correlation_id)
        .map(|t| t.capability.as_str())
        .collect();
    assert!(of_first.contains(&"assistant") && of_first.contains(&"ask"), "{of_first:?}");

    // The conversation is Cara's: listed and shown to her (the table read again), absent for
    // Ava, and deletable.
    assert_eq!(cara.conversations().unwrap().len(), 1);
    let shown = cara.conversation(&first.conversation).unwrap();
    assert_eq!(shown.messages.len(), 6);
    assert!(matches!(&shown.messages[1].steps[0].outcome, StepOutcome::Table { rows: Some(_), .. }));
    assert_eq!(ava.conversation(&first.conversation).unwrap_err().code, Code::NotFound);
    cara.delete_conversation(&first.conversation).unwrap();
    assert!(cara.conversations().unwrap().is_empty());
}

#[test]
fn a_record_whose_summary_was_refused_is_still_what_it_means() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // Turn 2 points at the largest and its summary is refused twice (a value written outside
    // a slot); turn 3's "it" is that record all the same (its first answer, the message
    // written back as a reply, is refused).
    let summarize =
        action(json!({"action": "summarize", "record": {"set": "R1", "pick": "largest", "by": "total"}}));
    let unchecked = action(json!({"sentences": ["It is worth 12 dollars."]}));
    let voids_it = action(
        json!({"action": "propose_update", "object": "invoice", "record": {"focus": true}, "changes": {"status": "void"}}),
    );
    let mut answers = Vec::from(asks_overdue_of_cogswell());
    let echo = action(json!({"action": "reply", "text": "Void it."}));
    answers.extend([summarize, unchecked.clone(), unchecked, echo, voids_it]);
    let model = fake(answers);
    provider(&ava, "fake", &model);
    pin(&ava, "fake", "fake");

    let first = turn(&ava, None, OVERDUE_OF_COGSWELL);
    let second = turn(&ava, Some(&first.conversation), "Summarize the largest one");
    let largest = &overdue_of_cogswell()[0].1;
    let StepOutcome::Failed { record: Some(record), .. } = &second.steps[0].outcome else {
        panic!("{:?}", second.steps)
    };
    assert_eq!(&record.id, largest);
    let third = turn(&ava, Some(&first.conversation), "Void it");
    let StepOutcome::Proposal { record, .. } = &third.steps[0].outcome else { panic!("{:?}", third.steps) };
    assert_eq!(&record.as_ref().unwrap().id, largest);
}

#[test]
fn a_change_said_in_full_of_the_record_in_focus_is_read_by_the_kernel() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // The model answers the first two turns only: the third is read by the kernel.
    let summarize =
        action(json!({"action": "summarize", "record": {"set": "R1", "pick": "largest", "by": "total"}}));
    let unchecked = action(json!({"sentences": ["It is worth 12 dollars."]}));
    let mut answers = Vec::from(asks_overdue_of_cogswell());
    answers.extend([summarize, unchecked.clone(), unchecked]);
    let model = fake(answers);
    provider(&ava, "fake", &model);
    pin(&ava, "fake", "fake");
    let first = turn(&ava, None, OVERDUE_OF_COGSWELL);
    turn(&ava, Some(&first.conversation), "Summarize the largest one");
    let calls = model.chat_requests().len();
    // German, from an English user: the value's German label.
    let third = turn(&ava, Some(&first.conversation), "Setze es auf bezahlt");
    let StepOutcome::Proposal { record, changes, .. } = &third.steps[0].outcome else {
        panic!("{:?}", third.steps)
    };
    assert_eq!(&record.as_ref().unwrap().id, &overdue_of_cogswell()[0].1);
    assert_eq!((changes[0].field.as_str(), &changes[0].after), ("status", &json!("paid")));
    assert_eq!(model.chat_requests().len(), calls, "no model was asked");
    // A term of one value says it too ("paid": the paid category of statuses).
    let fourth = turn(&ava, Some(&first.conversation), "Mark it as settled");
    let StepOutcome::Proposal { changes, .. } = &fourth.steps[0].outcome else {
        panic!("{:?}", fourth.steps)
    };
    assert_eq!((changes[0].field.as_str(), &changes[0].after), ("status", &json!("paid")));
    assert_eq!(model.chat_requests().len(), calls, "no model was asked");
}

#[test]
fn a_revised_result_set_is_what_the_conversation_points_at() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let cara = f.ws.session("cara").unwrap();
    let mut answers = Vec::from(asks_overdue_of_cogswell());
    answers.push(voids_the_largest());
    let model = fake(answers);
    provider(&ava, "fake", &model);
    pin(&ava, "fake", "fake");

    let first = turn(&cara, None, OVERDUE_OF_COGSWELL);
    let StepOutcome::Table { set, .. } = &first.steps[0].outcome else { panic!("{:?}", first.steps) };
    // The set keeps how Ask read the question, so its chips read as Ask's do.
    assert_eq!(set.terms.iter().map(|t| t.key.as_str()).collect::<Vec<_>>(), ["overdue_invoice"]);
    assert!(
        set.resolutions.iter().any(|r| r.matches.iter().any(|m| m.id == "acc_0036")),
        "{:?}",
        set.resolutions
    );
    assert!(set.trace_id.is_some() && !set.revised);
    let overdue = overdue_of_cogswell();

    // Cara narrows the table to the invoices under the largest one's total.
    let mut spec = serde_json::to_value(&set.spec).unwrap();
    spec["filters"] =
        json!({"all": [spec["filters"].clone(), {"field": "total", "op": "lt", "value": overdue[0].0}]});
    let spec: countersign_kernel::QuerySpec = serde_json::from_value(spec).unwrap();
    let before = cara.conversation(&first.conversation).unwrap();
    // Refused, and nothing changes: another object, a set the conversation lacks, another
    // person's conversation.
    let mut other = spec.clone();
    other.object = "account".into();
    other.filters = None;
    assert_eq!(
        cara.revise_result_set(&first.conversation, "R1", &other).unwrap_err().code,
        Code::InvalidValue
    );
    assert_eq!(cara.revise_result_set(&first.conversation, "R9", &spec).unwrap_err().code, Code::NotFound);
    assert_eq!(ava.revise_result_set(&first.conversation, "R1", &spec).unwrap_err().code, Code::NotFound);
    assert_eq!(cara.conversation(&first.conversation).unwrap(), before);

    let revised = cara.revise_result_set(&first.conversation, "R1", &spec).unwrap();
    let StepOutcome::Table { set, rows } = &revised.messages[1].steps[0].outcome else { panic!() };
    let mut ids = set.ids.clone();
    ids.sort();
    let mut rest: Vec<String> = overdue[1..].iter().map(|(_, id)| id.clone()).collect();
    rest.sort();
    assert_eq!(ids, rest);
    assert!(set.revised && rows.as_ref().unwrap().records.len() == rest.len());

    // "The largest one" is now the largest of what Cara sees.
    let second = turn(&cara, Some(&first.conversation), "Void the largest one");
    let StepOutcome::Proposal { record, .. } = &second.steps[0].outcome else { panic!("{:?}", second.steps) };
    assert_eq!(record.as_ref().unwrap().id, overdue[1].1);
}
