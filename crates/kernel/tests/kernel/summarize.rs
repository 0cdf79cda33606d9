//! Summarize (prompt version 2) against the fake endpoint: every number, date, listed value and name a sentence
//! states must be the value of a fact it cites, and every cited fact must be stated; one
//! repair, then a typed refusal; the grounding holds only what the reader may read.

use crate::common;

use common::fake_model::{fake, model, Answer};
use countersign_kernel::ai::pipeline::drive::drive;
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::summarize::{Fact, Summarize};
use countersign_kernel::{Code, Session};
use serde_json::{json, Value};

/// A run under prompt version 2 (`[Fn]` markers after values the model writes; version 3's
/// slots are `summary_slots.rs`).
fn run(
    s: &Session<'_>,
    answers: Vec<Value>,
) -> (countersign_kernel::Result<countersign_kernel::ai::summarize::SummaryAnswer>, Vec<Value>) {
    s.workspace().session("ava").unwrap().activate_prompt("summarize", 2).unwrap();
    let fake = fake(answers.into_iter().map(|a| Answer::Text(a.to_string())).collect());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut summarize = Summarize::new("account", "acc_0009");
    let out =
        rt.block_on(drive(s, &mut summarize, Some(model(&fake.url, 0.0)), &Cancel::default(), &mut |_| {}));
    (out, fake.chat_requests())
}

/// The last message of a request (the repair, or a tool's result).
fn last_user(req: &Value) -> String {
    req["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string()
}

fn fact<'a>(facts: &'a [Fact], object: &str, id: &str, field: &str) -> &'a Fact {
    facts.iter().find(|f| f.object == object && f.id == id && f.field == field).unwrap()
}

#[test]
fn a_summary_whose_claims_are_all_cited_is_accepted_with_its_citations() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.summary_facts("account", "acc_0009").unwrap();
    let (name, revenue, rating) = (
        fact(&facts, "account", "acc_0009", "name"),
        fact(&facts, "account", "acc_0009", "annual_revenue"),
        fact(&facts, "account", "acc_0009", "rating"),
    );
    assert_eq!(rating.display, "Cold");
    let answer = json!({"sentences": [
        format!("Monarch Holdings [{}] has an annual revenue of 40,650,000 [{}].", name.reference, revenue.reference),
        format!("Its rating is Cold [{}].", rating.reference),
        "It looks like a steady relationship."
    ]});
    let (out, reqs) = run(&ava, vec![answer]);
    let a = out.unwrap();
    assert_eq!((a.sentences.len(), a.attempts, reqs.len()), (3, 1, 1));
    assert_eq!(a.sentences[0].citations[1].fact.field, "annual_revenue");
    assert!(a.sentences[0].citations.iter().all(|c| c.by_model));
    // The facts went as untrusted user content, never in the system role.
    let system = reqs[0]["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("Monarch"));
}

#[test]
fn an_uncited_number_is_repaired_once_then_refused() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.summary_facts("account", "acc_0009").unwrap();
    let name = fact(&facts, "account", "acc_0009", "name").reference.clone();
    let bad = json!({"sentences": [format!("Monarch Holdings [{name}] employs 9,999 people.")]});
    let (out, reqs) = run(&ava, vec![bad.clone(), bad]);
    let e = out.unwrap_err();
    assert_eq!((e.code, reqs.len()), (Code::Contract, 2));
    // The repair carried the exact problem.
    let repair = last_user(&reqs[1]);
    assert!(repair.contains("9,999 is not the value of a fact it cites"), "{repair}");
    assert!(!repair.contains("\"sentences\""), "the rejected answer is not sent back whole");
}

#[test]
fn a_mis_cited_value_is_refused_and_a_repair_can_fix_it() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.summary_facts("account", "acc_0009").unwrap();
    let employees = fact(&facts, "account", "acc_0009", "employees");
    // Cites the employee count but states another number.
    let wrong = json!({"sentences": [format!("The account has 6000 employees [{}].", employees.reference)]});
    let right = json!({"sentences": [format!("The account has 5,328 employees [{}].", employees.reference)]});
    let (out, reqs) = run(&ava, vec![wrong, right]);
    let a = out.unwrap();
    assert_eq!((a.attempts, reqs.len()), (2, 2));
    let repair = last_user(&reqs[1]);
    assert!(
        repair.contains("6000 is not the value") && repair.contains("does not state that value"),
        "{repair}"
    );
}

#[test]
fn an_uncited_value_gets_the_one_fact_stating_it_and_an_ambiguous_one_is_refused() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.summary_facts("account", "acc_0009").unwrap();
    let rating = fact(&facts, "account", "acc_0009", "rating").reference.clone();
    // A related record's name written without a marker: exactly one fact states it, so the
    // kernel attaches it (marked as the kernel's, not the model's).
    let other = facts.iter().find(|f| f.id != "acc_0009" && f.display == f.record_name).unwrap();
    let (out, _) = run(
        &ava,
        vec![
            json!({"sentences": [format!("{} belongs to an account rated Cold [{rating}].", other.record_name)]}),
        ],
    );
    let a = out.unwrap();
    let c = &a.sentences[0].citations;
    assert_eq!(c.len(), 2, "{c:?}");
    assert!(c.iter().any(|c| c.fact.reference == other.reference && !c.by_model));
    assert!(c.iter().any(|c| c.fact.reference == rating && c.by_model));
    // A listed value two records share, written with nothing to tell them apart: the kernel
    // does not guess, the sentence is refused and the repair names both facts.
    let shared = facts
        .iter()
        .find(|f| {
            f.field_type == "picklist"
                && facts.iter().filter(|g| g.field_type == "picklist" && g.display == f.display).count() > 1
        })
        .expect("the demo account has two related records sharing a listed value");
    let ids: Vec<String> =
        facts.iter().filter(|g| g.display == shared.display).map(|g| g.reference.clone()).take(3).collect();
    let (out, reqs) = run(
        &ava,
        vec![
            json!({"sentences": [format!("Two of them are {}.", shared.display)]}),
            json!({"insufficient": "cannot say"}),
        ],
    );
    let repair = last_user(&reqs[1]);
    assert!(
        repair.contains(&format!(
            "“{}” is written but no cited fact states it ({}",
            shared.display,
            ids.join(", ")
        )),
        "{repair}"
    );
    assert_eq!(
        out.unwrap().insufficient.as_deref(),
        Some("cannot say"),
        "the repair may say the facts are not enough"
    );
}

#[test]
fn ben_never_gets_a_hidden_field_in_the_grounding_or_the_citations() {
    let f = common::demo();
    let ben = f.ws.session("ben").unwrap();
    let (facts, _) = ben.summary_facts("account", "acc_0009").unwrap();
    assert!(facts.iter().all(|f| f.field != "credit_limit" && f.field != "tax_id"), "{facts:?}");
    let name = fact(&facts, "account", "acc_0009", "name").reference.clone();
    let (out, reqs) =
        run(&ben, vec![json!({"sentences": [format!("Monarch Holdings [{name}] is an account.")]})]);
    out.unwrap();
    let sent = reqs[0].to_string();
    assert!(!sent.contains("310000") && !sent.contains("DE517197826"), "hidden values were sent");
    // A hidden field has no fact id; citing an id that is not a fact is refused.
    let bogus = format!("F{}", facts.len() + 1);
    let (out, reqs) = run(
        &ben,
        vec![
            json!({"sentences": [format!("Monarch Holdings [{name}] has a limit [{bogus}].")]}),
            json!({"sentences": [format!("Monarch Holdings [{name}] has a limit [{bogus}].")]}),
        ],
    );
    assert_eq!(out.unwrap_err().code, Code::Contract);
    let repair = last_user(&reqs[1]);
    assert!(repair.contains(&format!("cites {bogus}, which is not a fact id")), "{repair}");
    // The ava's facts do include them.
    let (all, _) = f.ws.session("ava").unwrap().summary_facts("account", "acc_0009").unwrap();
    assert!(all.iter().any(|f| f.field == "credit_limit"));
    // Contact details are not facts for a summary (they are on the page).
    assert!(all.iter().all(|f| !matches!(f.field_type.as_str(), "phone" | "email" | "url")), "{all:?}");
    assert!(all.iter().all(|f| f.field != "website" && f.field != "email"));
}

#[test]
fn the_model_may_call_a_tool_a_failure_goes_back_typed_and_the_run_continues() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.summary_facts("account", "acc_0009").unwrap();
    // The first new hit for "budget freeze" (a note) becomes the next fact.
    let next = format!("F{}", facts.len() + 1);
    let (out, reqs) = run(
        &ava,
        vec![
            json!({"tool": "read_record", "object": "account", "id": "acc_0009", "fields": "all"}),
            json!({"tool": "search_corpus", "text": "budget freeze"}),
            json!({"sentences": [format!("A note says a budget freeze may delay a renewal [{next}].")]}),
        ],
    );
    let a = out.unwrap();
    assert_eq!(reqs.len(), 3);
    // A closed input: an unknown property is a typed failure sent back, and the run went on.
    let second = last_user(&reqs[1]);
    assert!(
        second.contains("<untrusted source=\"tool failure invalid_input\">") && second.contains("fields"),
        "{second}"
    );
    // The tool's values came back as more facts, as untrusted content; the model cited one.
    let third = last_user(&reqs[2]);
    assert!(
        third.contains("more facts from search_corpus") && third.contains(&format!("{next} note")),
        "{third}"
    );
    assert!(third.contains("Write the summary now."));
    let c = &a.sentences[0].citations[0];
    assert_eq!((c.fact.object.as_str(), c.fact.reference.as_str()), ("note", next.as_str()));
    // With the tool calls used up, the answer's schema no longer offers them.
    let schema = reqs[2]["response_format"]["json_schema"]["schema"].to_string();
    assert!(!schema.contains("search_corpus"), "{schema}");
    assert!(reqs[0]["response_format"]["json_schema"]["schema"].to_string().contains("search_corpus"));
    // No repair was spent: a wrong answer now still gets one.
    assert_eq!(a.attempts, 3);
}

#[test]
fn a_trace_reader_who_cannot_read_a_fact_sees_it_hidden_whatever_the_outcome() {
    // cara manages AI but may not read credit limits; ava's summaries state them.
    let f = common::demo_with_a_trace_reader_who_cannot_read("account.credit_limit");
    let ava = f.ws.session("ava").unwrap();
    let limit = ava.get("account", "acc_0009").unwrap().fields["credit_limit"].clone();
    let limit = limit.as_str().map(String::from).unwrap_or_else(|| limit.to_string());
    assert!(limit.len() >= 4, "acc_0009 has a credit limit: {limit}");
    // One answered (the facts were not enough), one refused twice over (not JSON).
    assert!(run(&ava, vec![json!({"insufficient": "nothing to say"})]).0.is_ok());
    assert!(run(&ava, vec![json!("nonsense"), json!("nonsense")]).0.is_err());
    let cara = f.ws.session("cara").unwrap();
    let seen: Vec<_> = cara.traces(10).unwrap().into_iter().filter(|t| t.capability == "summarize").collect();
    assert_eq!(seen.len(), 2);
    for t in &seen {
        assert!(!t.prompt_text.contains(&limit), "{:?}: the credit limit is in cara's view", t.outcome);
        assert!(t.prompt_text.contains("[hidden]") && t.hidden_values > 0, "{:?}", t.outcome);
    }
    let ava_view = ava.traces(10).unwrap();
    assert!(ava_view.iter().filter(|t| t.capability == "summarize").all(|t| t.prompt_text.contains(&limit)));
}
