//! Summarize under prompt version 3: the kernel computes the facts worth saying (rollups over
//! related lists, each with a set citation, on the reader's session) and renders every value;
//! the model writes sentences whose values are slots naming facts.

use crate::common;

use common::fake_model::{fake, model, Answer};
use countersign_kernel::ai::pipeline::drive::drive;
use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::summarize::{recheck, Fact, Summarize, SummaryAnswer};
use countersign_kernel::{Code, QuerySpec, Session};
use serde_json::{json, Value};

fn run(
    s: &Session<'_>,
    id: &str,
    answers: Vec<Value>,
) -> (countersign_kernel::Result<SummaryAnswer>, Vec<Value>) {
    run_on(s, "account", id, answers)
}

fn run_on(
    s: &Session<'_>,
    object: &str,
    id: &str,
    answers: Vec<Value>,
) -> (countersign_kernel::Result<SummaryAnswer>, Vec<Value>) {
    let fake = fake(answers.into_iter().map(|a| Answer::Text(a.to_string())).collect());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut summarize = Summarize::new(object, id);
    let out =
        rt.block_on(drive(s, &mut summarize, Some(model(&fake.url, 0.0)), &Cancel::default(), &mut |_| {}));
    (out, fake.chat_requests())
}

fn by_label<'a>(facts: &'a [Fact], label: &str) -> &'a Fact {
    facts.iter().find(|f| f.label == label).unwrap_or_else(|| panic!("no fact {label}: {facts:#?}"))
}

#[test]
fn rollups_count_only_what_the_reader_can_read_and_a_set_citation_opens_exactly_its_rows() {
    let f = common::demo();
    let (ava, ben) = (f.ws.session("ava").unwrap(), f.ws.session("ben").unwrap());
    // An account where ben owns some of the open opportunities but not all.
    let mut seen = None;
    for n in 1..=60 {
        let id = format!("acc_{n:04}");
        let (a, _) = ava.fact_sheet("account", &id).unwrap();
        let (b, _) = ben.fact_sheet("account", &id).unwrap();
        let count = |facts: &[Fact]| {
            facts
                .iter()
                .find(|x| x.label == "number of open opportunities")
                .map(|x| x.value.as_u64().unwrap())
        };
        if let (Some(all), Some(his)) = (count(&a), count(&b)) {
            if his < all {
                seen = Some((id, all, his));
                break;
            }
        }
    }
    let (id, all, his) = seen.expect("an account with opportunities of several owners");
    assert!(his < all);
    let (facts, _) = ben.fact_sheet("account", &id).unwrap();
    let count = by_label(&facts, "number of open opportunities");
    // The set citation, run on ben's session, lists exactly the rows counted — his own.
    let set = count.set.as_ref().unwrap();
    let rows = ben
        .query(&QuerySpec {
            search: None,
            object: set.object.clone(),
            fields: vec!["amount".into(), "owner".into()],
            filters: Some(set.filter.clone()),
            sort: vec![],
            limit: Some(1000),
            offset: None,
            after: None,
        })
        .unwrap();
    assert_eq!(rows.records.len() as u64, his);
    assert!(rows.records.iter().all(|r| r["owner"] == "ben"));
    let total = facts.iter().find(|x| x.label.starts_with("total amount of open opportunities")).unwrap();
    let sum: f64 = rows.records.iter().map(|r| r["amount"].as_f64().unwrap()).sum();
    assert!((total.value.as_f64().unwrap() - sum).abs() < 0.005, "{} vs {sum}", total.value);
    // A field ben cannot read is neither a fact nor summed (his sheet holds no credit limit).
    assert!(facts.iter().all(|x| x.field != "credit_limit"));
    assert!(ava.fact_sheet("account", &id).unwrap().0.iter().any(|x| x.field == "credit_limit"));
}

#[test]
fn sums_are_per_currency_and_each_opens_its_own_rows() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    // acc_0004 has overdue invoices in two currencies.
    let (facts, _) = ava.fact_sheet("account", "acc_0004").unwrap();
    let sums: Vec<&Fact> =
        facts.iter().filter(|x| x.label.starts_with("total of overdue invoices in")).collect();
    assert_eq!(sums.len(), 2, "{facts:#?}");
    for s in sums {
        let set = s.set.as_ref().unwrap();
        let rows = ava
            .query(&QuerySpec {
                search: None,
                object: "invoice".into(),
                fields: vec!["total".into(), "status".into()],
                filters: Some(set.filter.clone()),
                sort: vec![],
                limit: Some(1000),
                offset: None,
                after: None,
            })
            .unwrap();
        assert_eq!(rows.records.len(), 1);
        assert_eq!(rows.records[0]["status"], "overdue");
        assert_eq!(rows.records[0]["total"].as_f64(), s.value.as_f64());
    }
}

#[test]
fn a_field_the_definition_calls_non_additive_is_never_summed() {
    let mut f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let summed = |facts: &[Fact], field: &str| {
        facts.iter().any(|x| {
            x.set.as_ref().is_some_and(|s| s.operation == "sum" && s.field.as_deref() == Some(field))
        })
    };
    // The demo's invoice lines: amounts add up to something, unit prices (`additive: false`) do not.
    let invoice = common::demo_rows("invoice_line")[0]["invoice"].clone();
    let (facts, _) = ava.fact_sheet("invoice", &invoice).unwrap();
    assert!(summed(&facts, "amount"), "{facts:#?}");
    assert!(!summed(&facts, "unit_price"), "{facts:#?}");
    // The same definition with the unit price additive sums it: the metadata decides, nothing else.
    drop(ava);
    let mut def = f.ws.catalog().unwrap().definition.clone();
    let line = def.objects.iter_mut().find(|o| o.key == "invoice_line").unwrap();
    line.fields.iter_mut().find(|x| x.key == "unit_price").unwrap().additive = true;
    f.ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let ava = f.ws.session("ava").unwrap();
    assert!(summed(&ava.fact_sheet("invoice", &invoice).unwrap().0, "unit_price"));
}

#[test]
fn an_amount_is_written_in_the_currency_its_record_states() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let gbp = common::demo_rows("invoice").into_iter().find(|r| r["currency_code"] == "GBP").unwrap();
    let (facts, _) = ava.fact_sheet("invoice", &gbp["id"]).unwrap();
    // The code is said by the amounts, not as a fact of its own.
    assert!(facts.iter().all(|x| x.field != "currency_code"), "{facts:#?}");
    let total = facts.iter().find(|x| x.field == "total").unwrap();
    let answer = json!({"sentences": [format!("{{number}} totals {{{}}}.", total.reference)]});
    let (out, _) = run_on(&ava, "invoice", &gbp["id"], vec![answer]);
    let a = out.unwrap();
    let amount: f64 = gbp["total"].parse().unwrap();
    let written = format!("{},{:03}.00 GBP", amount as u64 / 1000, amount as u64 % 1000);
    assert_eq!(a.sentences[0].text, format!("{} totals {written}.", gbp["number"]));
    assert_eq!(recheck(&ava, &a).unwrap(), 0);
    // Its lines have no currency of their own: their total is in the invoice's.
    let lines = common::demo_rows("invoice_line");
    let foreign = common::demo_rows("invoice")
        .into_iter()
        .find(|r| r["currency_code"] != "USD" && lines.iter().any(|l| l["invoice"] == r["id"]))
        .unwrap();
    let (facts, _) = ava.fact_sheet("invoice", &foreign["id"]).unwrap();
    let total = facts
        .iter()
        .find(|x| x.set.as_ref().is_some_and(|s| s.operation == "sum" && s.object == "invoice_line"))
        .unwrap_or_else(|| panic!("{facts:#?}"));
    assert!(total.display.ends_with(&format!(" {}", foreign["currency_code"])), "{total:#?}");
    // A workspace-currency invoice is written in the workspace's currency.
    let usd = common::demo_rows("invoice").into_iter().find(|r| r["currency_code"] == "USD").unwrap();
    let (facts, _) = ava.fact_sheet("invoice", &usd["id"]).unwrap();
    let answer = json!({"sentences": ["{number} totals {total}."]});
    assert!(facts.iter().any(|x| x.reference == "total"));
    let (out, _) = run_on(&ava, "invoice", &usd["id"], vec![answer]);
    assert!(out.unwrap().sentences[0].text.ends_with(" USD."));
}

#[test]
fn slots_are_rendered_by_the_kernel_and_the_citation_is_the_slot() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.fact_sheet("account", "acc_0002").unwrap();
    let (name, pipeline, note) = (
        by_label(&facts, "Account Name"),
        facts.iter().find(|x| x.label.starts_with("total amount of open opportunities")).unwrap(),
        by_label(&facts, "newest note"),
    );
    let answer = json!({"sentences": [
        format!("{{{}}} has open opportunities worth {{{}}}.", name.reference, pipeline.reference),
        format!("The newest note is {{{}}}.", note.reference),
    ]});
    let (out, reqs) = run(&ava, "acc_0002", vec![answer]);
    let a = out.unwrap();
    assert_eq!(a.attempts, 1);
    assert_eq!(a.sentences[0].text, "Initech GmbH has open opportunities worth 628,000.00 USD.");
    assert_eq!(a.sentences[1].text, "The newest note is Renewal risk.");
    assert_eq!(a.sentences[0].citations.len(), 2);
    assert_eq!(a.sentences[0].citations[1].fact.set.as_ref().unwrap().operation, "sum");
    // The independent re-check finds every claim stated by what it cites.
    assert_eq!(recheck(&ava, &a).unwrap(), 0);
    // The sheet went as untrusted user content; the system role holds only instructions.
    let system = reqs[0]["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("Initech") && system.contains("{open_deals_count}"));
    // Slots are named by what they hold.
    assert_eq!(pipeline.reference, "open_opportunities_amount_usd");
    assert_eq!(note.reference, "newest_note");
    // The request holds each sentence to the sheet's slots at decode time.
    let pattern = reqs[0]["response_format"].to_string();
    assert!(
        pattern.contains("open_opportunities_amount_usd|")
            || pattern.contains("|open_opportunities_amount_usd"),
        "{pattern}"
    );
}

#[test]
fn a_literal_value_outside_a_slot_or_a_sentence_without_one_is_refused() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.fact_sheet("account", "acc_0002").unwrap();
    let pipeline = facts.iter().find(|x| x.label.starts_with("total amount of open opportunities")).unwrap();
    let count = by_label(&facts, "number of open opportunities");
    // "2" written by the model itself, and a sentence with no fact.
    let bad = json!({"sentences": [
        format!("It has 2 open opportunities worth {{{}}}.", pipeline.reference),
        "It is a good company."
    ]});
    let good = json!({"sentences": [
        format!("It has {{{}}} open opportunities worth {{{}}}.", count.reference, pipeline.reference)
    ]});
    let (out, reqs) = run(&ava, "acc_0002", vec![bad.clone(), good]);
    let a = out.unwrap();
    assert_eq!(a.attempts, 2);
    let repair =
        reqs[1]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(
        repair.contains(&format!("it writes “2” itself: write {{{}}} instead", count.reference)),
        "{repair}"
    );
    assert!(repair.contains("it uses no fact"), "{repair}");
    // Twice: what the model wrote itself is not shown; the value it pointed at is written by
    // the kernel beside its label.
    let (out, _) = run(&ava, "acc_0002", vec![bad.clone(), bad]);
    let a = out.unwrap();
    let shown: Vec<(&str, bool)> = a.sentences.iter().map(|s| (s.text.as_str(), s.clause)).collect();
    assert_eq!(shown, [("Total amount of open opportunities: 628,000.00 USD.", true)]);
    assert!(
        a.refused.iter().any(|r| r.contains("it writes “2” itself")),
        "what was not used, and why: {:?}",
        a.refused
    );
    assert_eq!(recheck(&ava, &a).unwrap(), 0);
    // Pointing at nothing twice: a typed refusal, nothing shown.
    let none = json!({"sentences": ["It is a good customer."]});
    let (out, _) = run(&ava, "acc_0002", vec![none.clone(), none]);
    assert_eq!(out.unwrap_err().code, Code::Contract);
}

#[test]
fn a_slot_naming_a_fact_the_reader_does_not_have_is_refused() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let ben = f.ws.session("ben").unwrap();
    let (theirs, _) = ava.fact_sheet("account", "acc_0002").unwrap();
    let (his, _) = ben.fact_sheet("account", "acc_0002").unwrap();
    // ava's sheet has the credit limit; ben, who cannot read it, has no such slot.
    let credit = theirs.iter().find(|x| x.field == "credit_limit").unwrap();
    assert_eq!(credit.reference, "credit_limit");
    assert!(his.iter().all(|x| x.field != "credit_limit"));
    let answer = json!({"sentences": ["Its credit limit is {credit_limit}."]});
    let (out, reqs) = run(&ben, "acc_0002", vec![answer.clone(), answer]);
    let e = out.unwrap_err();
    assert_eq!(e.code, Code::Contract);
    assert!(e.message.contains("{credit_limit} is not a slot of the facts"), "{}", e.message);
    assert!(reqs.iter().all(|r| !r.to_string().contains("390000") && !r.to_string().contains("390,000")));
}

#[test]
fn the_draft_streams_with_its_slots_rendered() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.fact_sheet("account", "acc_0002").unwrap();
    let name = by_label(&facts, "Account Name");
    let answer = json!({"sentences": [format!("{{{}}} is a partner account.", name.reference)]}).to_string();
    let fake = fake(vec![Answer::Text(answer)]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut summarize = Summarize::new("account", "acc_0002");
    let mut streamed = String::new();
    let _ =
        rt.block_on(drive(&ava, &mut summarize, Some(model(&fake.url, 0.0)), &Cancel::default(), &mut |p| {
            if let countersign_kernel::ai::pipeline::drive::Progress::Text(t) = p {
                streamed.push_str(t)
            }
        }));
    assert!(streamed.contains("Initech GmbH is a partner account."), "{streamed}");
    assert!(!streamed.contains("{F"), "{streamed}");
}

#[test]
fn a_tool_call_brings_more_facts_as_slots() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let (facts, _) = ava.fact_sheet("account", "acc_0002").unwrap();
    let next = format!("F{}", facts.len() + 1);
    let (out, reqs) = run(
        &ava,
        "acc_0002",
        vec![
            json!({"tool": "search_corpus", "text": "Initech renewal"}),
            json!({"sentences": [format!("A note about it reads: {{{next}}}")]}),
        ],
    );
    let a = out.unwrap();
    assert_eq!(reqs.len(), 2);
    let more =
        reqs[1]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(more.contains(&format!("{{{next}}} = ")), "{more}");
    // The second request holds the sentences to the sheet's slots and the new one.
    assert!(reqs[1]["response_format"].to_string().contains(&format!("|{next}")));
    assert_eq!(a.sentences[0].citations[0].fact.reference, next);
}

#[test]
fn every_object_gets_a_sheet_from_its_metadata() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    // An invoice: its lines are its related list, summed by their amount.
    let (facts, _) = cara.fact_sheet("invoice", "inv_0001").unwrap();
    let lines = by_label(&facts, "number of invoice lines");
    assert!(lines.value.as_u64().unwrap() > 0);
    assert!(facts.iter().any(|x| x.label.starts_with("total amount of invoice lines")), "{facts:#?}");
    assert!(facts.iter().any(|x| x.reference == "number"), "the invoice's own values come first");
    // An opportunity has no related list in the demo: its own values only.
    let (facts, _) = cara.fact_sheet("opportunity", "opp_0001").unwrap();
    assert!(!facts.is_empty() && facts.iter().all(|x| x.set.is_none()));
}

#[test]
fn a_refused_sentences_values_are_written_as_clauses_that_hold_on_a_fresh_reading() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    // inv_0001 is paid: "Paid Date" names a field, not the status Paid.
    let answer = json!({"sentences": [
        "{number} was settled with {paid_date} and {total}.",
        "It is {status}."
    ]});
    let (out, reqs) = run_on(&cara, "invoice", "inv_0001", vec![answer]);
    let a = out.unwrap();
    assert_eq!(reqs.len(), 1, "a sentence stood: no repair");
    let shown: Vec<(&str, bool)> = a.sentences.iter().map(|s| (s.text.as_str(), s.clause)).collect();
    assert_eq!(shown, [("Paid Date: 21 December 2025; Total: 16,800.00 EUR.", true), ("It is Paid.", false)]);
    assert!(
        a.refused.iter().any(|r| r.contains("nothing in it says what {paid_date} is")),
        "{:?}",
        a.refused
    );
    assert_eq!(
        recheck(&cara, &a).unwrap(),
        0,
        "the clause's values are its citations'; its labels claim nothing"
    );
}
