//! Learning from corrections: a corrected answer is kept with who and when, offered as a
//! worked example to a later similar question (after the shared prompt prefix), never to a
//! user who cannot read its fields or the records it names, and deletable.

use crate::ask::{ask_with, plan, user_message};
use crate::common;

use common::fake_model::{fake, model};
use countersign_kernel::{Code, QuerySpec};
use serde_json::json;

const LEARNED: &str = "questions answered in this workspace before";

fn with_filters(spec: &QuerySpec, filters: serde_json::Value) -> QuerySpec {
    let mut doc = serde_json::to_value(spec).unwrap();
    doc["filters"] = filters;
    serde_json::from_value(doc).unwrap()
}

#[test]
fn a_corrected_answer_is_kept_and_offered_to_a_similar_question() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let first = fake(vec![plan(json!({"object": "account",
        "filters": [{"field": "industry", "op": "eq", "value": "healthcare"}]}))]);
    let a = ask_with(&ava, "Hot accounts in healthcare", model(&first.url, 0.0)).unwrap();
    assert!(!user_message(&first.chat_requests()[0]).contains(LEARNED), "nothing learned yet");
    // Running the answer unchanged teaches nothing.
    assert!(ava.ask_learn(&a.trace_id, &a.spec).unwrap().is_none());
    // The user adds the dropped condition and runs it: kept, with who and when.
    let corrected = with_filters(
        &a.spec,
        json!({"all": [{"field": "industry", "op": "eq", "value": "healthcare"},
                       {"field": "rating", "op": "eq", "value": "hot"}]}),
    );
    let kept = ava.ask_learn(&a.trace_id, &corrected).unwrap().unwrap();
    assert_eq!((kept.question.as_str(), kept.created_by.as_str()), ("Hot accounts in healthcare", "ava"));
    assert_eq!(kept.created_at, common::START);
    // A second correction of the same answer replaces the first.
    let again = ava.ask_learn(&a.trace_id, &corrected).unwrap().unwrap();
    let listed = ava.learned_examples().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, again.id);
    // A similar question gets it as a worked example after the schema, in the plan's form.
    let second = fake(vec![plan(json!({"object": "account", "filters": [
        {"field": "industry", "op": "eq", "value": "finance"}, {"field": "rating", "op": "eq", "value": "hot"}]}))]);
    let b = ask_with(&ava, "Hot accounts in finance", model(&second.url, 0.0)).unwrap();
    let message = user_message(&second.chat_requests()[0]);
    let at = message.find(LEARNED).expect("the learned example is in the prompt");
    assert!(message.find("schema").unwrap() < at, "after the shared prefix");
    assert!(message.contains(r#"{"field":"rating","op":"eq","value":"hot"}"#), "{message}");
    assert_eq!(b.learned.len(), 1);
    assert_eq!(b.learned[0].question, "Hot accounts in healthcare");
    let t = ava.trace(&b.trace_id).unwrap();
    assert_eq!(t.result.unwrap()["learned"], json!([again.id]));
    // A question about something else does not get it.
    let third = fake(vec![plan(json!({"object": "invoice", "filters": []}))]);
    let c = ask_with(&ava, "Show all invoices", model(&third.url, 0.0)).unwrap();
    assert!(c.learned.is_empty());
    // Deleted: no longer offered.
    ava.forget_example(&again.id).unwrap();
    assert!(ava.learned_examples().unwrap().is_empty());
    let fourth = fake(vec![plan(json!({"object": "account", "filters": []}))]);
    let d = ask_with(&ava, "Hot accounts in retail", model(&fourth.url, 0.0)).unwrap();
    assert!(d.learned.is_empty());
}

#[test]
fn a_learned_example_is_never_offered_to_a_user_who_cannot_read_its_fields() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let first = fake(vec![plan(json!({"object": "opportunity",
        "filters": [{"field": "amount", "op": "gt", "value": 100000}]}))]);
    let a = ask_with(&ava, "Opportunities over 100000 with a high margin", model(&first.url, 0.0)).unwrap();
    let corrected = with_filters(
        &a.spec,
        json!({"all": [{"field": "amount", "op": "gt", "value": 100000},
                       {"field": "margin_pct", "op": "gte", "value": 40}]}),
    );
    let kept = ava.ask_learn(&a.trace_id, &corrected).unwrap().unwrap();
    // ben cannot read margin_pct: the example is neither listed nor offered to him.
    let ben = f.ws.session("ben").unwrap();
    assert!(ben.learned_examples().unwrap().is_empty());
    let second = fake(vec![plan(json!({"object": "opportunity",
        "filters": [{"field": "amount", "op": "gt", "value": 50000}]}))]);
    let b = ask_with(&ben, "Opportunities over 50000", model(&second.url, 0.0)).unwrap();
    assert!(b.learned.is_empty());
    let message = user_message(&second.chat_requests()[0]);
    assert!(!message.contains(LEARNED) && !message.contains("margin"), "{message}");
    // cara can read it, but may not delete another user's example.
    let cara = f.ws.session("cara").unwrap();
    assert_eq!(cara.learned_examples().unwrap().len(), 1);
    assert!(!cara.learned_examples().unwrap()[0].can_delete);
    assert_eq!(cara.forget_example(&kept.id).unwrap_err().code, Code::Permission);
    // Nor may anyone correct an answer that is not theirs.
    assert_eq!(cara.ask_learn(&a.trace_id, &corrected).unwrap_err().code, Code::NotFound);
}

#[test]
fn a_learned_example_names_records_only_a_user_who_can_read_them_sees() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // An opportunity ben does not own (opportunities are private to their owner).
    let theirs = ava
        .query(
            &serde_json::from_value(
                json!({"object": "opportunity", "fields": ["name", "owner"], "limit": 1000}),
            )
            .unwrap(),
        )
        .unwrap()
        .records
        .into_iter()
        .find(|r| r["owner"] != "ben")
        .unwrap();
    let name = theirs["name"].as_str().unwrap().to_string();
    let first = fake(vec![plan(json!({"object": "opportunity", "filters": []}))]);
    let question = format!("Opportunities named {name}");
    let a = ask_with(&ava, &question, model(&first.url, 0.0)).unwrap();
    let corrected = with_filters(&a.spec, json!({"field": "name", "op": "eq", "value": name}));
    ava.ask_learn(&a.trace_id, &corrected).unwrap().unwrap();
    assert_eq!(ava.learned_examples().unwrap().len(), 1);
    let ben = f.ws.session("ben").unwrap();
    assert!(ben.learned_examples().unwrap().is_empty(), "the name of a record ben cannot read");
}
