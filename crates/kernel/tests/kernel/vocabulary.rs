//! The business vocabulary: picklist categories and terms in the definition, checked at
//! deploy; part of the projection (and its hash) only where the user may read every field a
//! term filters on; offered to Ask as closed choices and expanded by the kernel; and the
//! evidence a plan needs — a term, a category, a value the question says — with the words of
//! a name the plan writes justifying nothing else.

use crate::ask::{ask_with, ids, plan, user_message};
use crate::common;

use common::fake_model::{fake, model};
use countersign_kernel::metadata::definition::WorkspaceDefinition;
use countersign_kernel::{Code, DeployOptions, QuerySpec};
use serde_json::{json, Value};

fn demo_doc(f: &common::Fixture) -> Value {
    serde_json::to_value(&f.ws.catalog().unwrap().definition).unwrap()
}

fn object_mut<'a>(doc: &'a mut Value, key: &str) -> &'a mut Value {
    doc["objects"].as_array_mut().unwrap().iter_mut().find(|o| o["key"] == key).unwrap()
}

#[test]
fn a_term_must_name_fields_and_categories_the_object_has() {
    let f = common::demo_ask_v3();
    let mut doc = demo_doc(&f);
    let opp = object_mut(&mut doc, "opportunity");
    // The demo's own terms come first.
    let n = opp["terms"].as_array().unwrap().len();
    opp["terms"].as_array_mut().unwrap().extend([
        json!({"key": "big", "label": "Big deal", "filter": {"field": "size", "op": "gt", "value": 5}}),
        json!({"key": "stalled", "label": "Stalled", "category": {"field": "stage", "is": "stalled"}}),
        json!({"key": "by_amount", "label": "By amount", "category": {"field": "amount", "is": "open"}}),
        json!({"key": "big", "label": "Twice", "filter": {"field": "amount", "op": "gt", "value": 5}}),
    ]);
    let e = WorkspaceDefinition::from_json(&doc).unwrap_err();
    assert_eq!(e.code, Code::InvalidDefinition);
    let problems: Vec<String> = e.details.iter().map(|d| format!("{} {}", d.path, d.message)).collect();
    let has = |path: &str, words: &str| problems.iter().any(|p| p.contains(path) && p.contains(words));
    assert!(has(&format!("/terms/{n}/filter"), "no field `size`"), "{problems:?}");
    assert!(has(&format!("/terms/{}/category", n + 1), "category `stalled`"), "{problems:?}");
    assert!(has(&format!("/terms/{}/category", n + 2), "not a picklist"), "{problems:?}");
    assert!(has(&format!("/terms/{}/key", n + 3), "used twice"), "{problems:?}");
    // Neither a filter nor a category: the schema says one of them.
    let mut doc = demo_doc(&f);
    object_mut(&mut doc, "opportunity")["terms"]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": "x", "label": "X"}));
    assert!(WorkspaceDefinition::from_json(&doc).is_err());
}

#[test]
fn a_category_term_expands_to_every_value_carrying_it_and_is_in_the_projection_and_its_hash() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let g = ava.grounding("anything", 100_000);
    let terms = g.projection.terms("opportunity");
    let (_, open, condition) = terms.iter().find(|(k, _, _)| k == "open_opportunity").unwrap();
    assert_eq!(open.label, "Open opportunity");
    // Retired values of the category are in the set: old records stay "open".
    assert_eq!(
        serde_json::to_value(condition).unwrap(),
        json!({"field": "stage", "op": "in", "value": ["prospecting", "qualification", "proposal", "negotiation", "perception_analysis"]})
    );
    assert!(g.text.contains("term open_opportunity: \"Open opportunity\" (also \"open\""), "{}", g.text);
    assert!(g.text.contains(
        "(open: prospecting, qualification, proposal, negotiation; won: closed_won; lost: closed_lost)"
    ));
    // A parent's term is offered through the lookup, its condition read through it.
    let contact_terms = g.projection.terms("contact");
    let (_, _, key_account) = contact_terms.iter().find(|(k, _, _)| k == "account.key_account").unwrap();
    assert!(key_account.fields().iter().all(|p| p.starts_with("account.")));
    // The expansion runs as a query: the same rows as the stages written out.
    let via_term = ava
        .query(&QuerySpec {
            search: None,
            object: "opportunity".into(),
            fields: vec!["name".into()],
            filters: Some(condition.clone()),
            sort: vec![],
            limit: Some(1000),
            offset: None,
            after: None,
        })
        .unwrap();
    let every = ava
        .query(&QuerySpec {
            search: None,
            object: "opportunity".into(),
            fields: vec!["name".into()],
            filters: None,
            sort: vec![],
            limit: Some(1000),
            offset: None,
            after: None,
        })
        .unwrap();
    assert!(!via_term.records.is_empty() && via_term.records.len() < every.records.len());
    // A synonym changed by a deploy changes the grounding hash.
    let before = g.hash.clone();
    let mut doc = demo_doc(&f);
    let opp = object_mut(&mut doc, "opportunity");
    opp["terms"][0]["synonyms"].as_array_mut().unwrap().push(json!("live deal"));
    let def = WorkspaceDefinition::from_json(&doc).unwrap();
    drop(ava);
    let mut ws = f.ws;
    ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let after = ws.session("ava").unwrap().grounding("anything", 100_000);
    assert_ne!(before, after.hash);
    assert!(after.text.contains("live deal"));
}

#[test]
fn a_term_on_a_field_the_user_cannot_read_is_absent_like_the_field() {
    let f = common::demo_ask_v3();
    let mut doc = demo_doc(&f);
    object_mut(&mut doc, "opportunity")["terms"].as_array_mut().unwrap().push(json!({
        "key": "rich_margin", "label": "Rich margin", "synonyms": ["juicy deal"],
        "filter": {"field": "margin_pct", "op": "gte", "value": 40}
    }));
    let def = WorkspaceDefinition::from_json(&doc).unwrap();
    let mut ws = f.ws;
    ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let ava = ws.session("ava").unwrap().grounding("anything", 100_000);
    assert!(ava.text.contains("rich_margin"));
    // ben cannot read margin_pct: neither the term nor its words reach his prompt or contract.
    let ben_session = ws.session("ben").unwrap();
    let ben = ben_session.grounding("anything", 100_000);
    assert!(!ben.projection.canonical_json().contains("rich_margin"));
    assert!(!ben.text.contains("juicy deal"));
    let answer = json!({"object": "opportunity", "filters": []});
    let for_ava = fake(vec![plan(json!({"object": "opportunity", "terms": ["rich_margin"], "filters": []}))]);
    let a = ask_with(&ws.session("ava").unwrap(), "Which are the juicy deals?", model(&for_ava.url, 0.0))
        .unwrap();
    assert_eq!(a.terms[0].key, "rich_margin");
    let for_ben = fake(vec![plan(answer)]);
    let b = ask_with(&ben_session, "Which are the juicy deals?", model(&for_ben.url, 0.0)).unwrap();
    assert!(b.terms.is_empty());
    let req = for_ben.chat_requests()[0].to_string();
    assert!(!req.contains("rich_margin") && !req.contains("margin_pct"));
}

#[test]
fn ask_offers_terms_as_closed_choices_and_the_kernel_expands_them() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let fake = fake(vec![plan(json!({"object": "opportunity", "terms": ["open_opportunity"],
        "filters": [{"field": "account", "op": "eq", "value": "Acme Industries"}]}))]);
    let a =
        ask_with(&ava, "Which opportunities of Acme Industries are still in play?", model(&fake.url, 0.0))
            .unwrap();
    let req = &fake.chat_requests()[0];
    let contract = req["response_format"].to_string();
    // Only the terms the question says are offered: "still in play" is open_opportunity.
    assert!(contract.contains("open_opportunity") && !contract.contains("won_opportunity"));
    assert!(!contract.contains("account.key_account"));
    // The stage is the term's: no filter of its own; an object where no term is said takes none.
    assert!(!contract.contains(r#""field":{"const":"stage"}"#), "{contract}");
    assert!(contract.contains(r#""terms":{"const":[]}"#));
    let message = user_message(req);
    assert!(message.contains("term open_opportunity: \"Open opportunity\""), "the schema lists every term");
    assert!(message.contains("\"still in play\": term open_opportunity of opportunity"), "{message}");
    assert_eq!(a.terms.len(), 1);
    assert_eq!(
        (a.terms[0].key.as_str(), a.terms[0].label.as_str()),
        ("open_opportunity", "Open opportunity")
    );
    // The spec holds the expansion as one condition, and its field is a column.
    let spec = serde_json::to_value(&a.spec).unwrap();
    let all = spec["filters"]["all"].as_array().unwrap();
    assert!(all.contains(&serde_json::to_value(&a.terms[0].condition).unwrap()));
    assert!(a.spec.fields.contains(&"stage".to_string()));
    // The same rows as the stages written out by hand.
    let acme = a.resolutions[0].matches[0].id.clone();
    let by_hand = ava
        .query(
            &serde_json::from_value(json!({"object": "opportunity", "fields": ["name"], "limit": 1000,
            "filters": {"all": [{"field": "account", "op": "eq", "value": acme},
                {"not": {"field": "stage", "op": "in", "value": ["closed_won", "closed_lost"]}}]}}))
            .unwrap(),
        )
        .unwrap();
    let mut expected = countersign_kernel::ai::ask::ids(&by_hand);
    expected.sort();
    assert_eq!(ids(&a), expected);
    // The trace says which terms were used.
    let t = ava.trace(&a.trace_id).unwrap();
    assert_eq!(t.result.unwrap()["terms"], json!(["open_opportunity"]));
}

#[test]
fn a_picklist_value_is_justified_by_a_term_or_category_the_question_says_and_refused_otherwise() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // "past due" is a synonym of the term whose filter is status = overdue: the term is the
    // choice, and the status is left to it.
    let fake1 = fake(vec![plan(json!({"object": "invoice", "terms": ["overdue_invoice"], "filters": []}))]);
    let a = ask_with(&ava, "Which invoices are past due?", model(&fake1.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 1);
    let contract = fake1.chat_requests()[0]["response_format"].to_string();
    assert!(contract.contains("overdue_invoice") && !contract.contains(r#""field":{"const":"status"}"#));
    // Without the invoice terms, "unpaid" is still a category of sent and overdue: writing them
    // out is justified...
    drop(ava);
    let mut ws = f.ws;
    ws.deploy_terms("ava", "invoice", vec![]).unwrap();
    let ava = ws.session("ava").unwrap();
    let fake2 = fake(vec![plan(json!({"object": "invoice",
        "filters": [{"field": "status", "op": "in", "value": ["sent", "overdue"]}]}))]);
    let a = ask_with(&ava, "Show the unpaid invoices.", model(&fake2.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 1);
    // ...but `void` is not (the word "paid" inside "unpaid" is no evidence either).
    let fake3 = fake(vec![
        plan(json!({"object": "invoice", "filters": [{"field": "status", "op": "eq", "value": "void"}]})),
        plan(
            json!({"object": "invoice", "filters": [{"field": "status", "op": "in", "value": ["sent", "overdue"]}]}),
        ),
    ]);
    let a = ask_with(&ava, "Show the unpaid invoices.", model(&fake3.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 2);
    let repair = user_message(&fake3.chat_requests()[1]);
    assert!(repair.contains("neither \"void\""), "{repair}");
    assert!(a.terms.is_empty());
}

#[test]
fn the_words_of_a_name_justify_nothing_else() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // "Partners" is part of the account's name, not its type.
    let first = fake(vec![
        plan(json!({"object": "contact", "filters": [
            {"field": "account", "op": "eq", "value": "Bluth Partners"},
            {"field": "account.type", "op": "eq", "value": "partner"}]})),
        plan(
            json!({"object": "contact", "filters": [{"field": "account", "op": "eq", "value": "Bluth Partners"}]}),
        ),
    ]);
    let a = ask_with(&ava, "List the contacts at Bluth Partners.", model(&first.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 2);
    assert!(user_message(&first.chat_requests()[1]).contains("account.type"));
    assert!(!a.result.unwrap().records.is_empty());
    // And the name's words do not ask for an unused picklist value either: one attempt.
    let fake = fake(vec![plan(
        json!({"object": "contact", "filters": [{"field": "account", "op": "eq", "value": "Bluth Partners"}]}),
    )]);
    let a = ask_with(&ava, "List the contacts at Bluth Partners.", model(&fake.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 1);
}

#[test]
fn a_term_the_question_says_but_the_plan_drops_gets_the_repair() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    let first = fake(vec![
        plan(json!({"object": "opportunity", "filters": []})),
        plan(json!({"object": "opportunity", "terms": ["open_opportunity"], "filters": []})),
    ]);
    let a = ask_with(&ava, "Which opportunities are still in play?", model(&first.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 2);
    let repair = user_message(&first.chat_requests()[1]);
    assert!(repair.contains("\"still in play\", the term open_opportunity"), "{repair}");
    // A term the question does not say is refused.
    let fake = fake(vec![
        plan(json!({"object": "opportunity", "terms": ["won_opportunity"], "filters": []})),
        plan(
            json!({"object": "opportunity", "filters": [{"field": "stage", "op": "eq", "value": "negotiation"}]}),
        ),
    ]);
    let a = ask_with(&ava, "Which opportunities are in negotiation?", model(&fake.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 2);
    assert!(a.terms.is_empty());
}

#[test]
fn an_admin_edits_an_objects_terms_by_a_deploy_and_others_may_not() {
    let f = common::demo_ask_v3();
    let mut ws = f.ws;
    let vocab = ws.session("ava").unwrap().vocabulary().unwrap();
    let opp = vocab.iter().find(|v| v.object == "opportunity").unwrap();
    assert!(opp.can_edit);
    let stage = opp.categories.iter().find(|c| c.field == "stage").unwrap();
    assert_eq!(stage.categories[1], ("won".to_string(), vec!["Closed Won".to_string()]));
    let generation = ws.catalog().unwrap().generation;
    let mut terms = opp.terms.clone();
    terms.push(
        serde_json::from_value(json!({"key": "big_deal", "label": "Big deal", "synonyms": ["whale"],
        "filter": {"field": "amount", "op": "gte", "value": 250000}}))
        .unwrap(),
    );
    ws.deploy_terms("ava", "opportunity", terms.clone()).unwrap();
    assert_eq!(ws.catalog().unwrap().generation, generation + 1);
    let g = ws.session("ben").unwrap().grounding("anything", 100_000);
    assert!(g.text.contains("term big_deal: \"Big deal\" (also \"whale\")"));
    // A broken term is refused with its pointer, and nothing changes.
    let mut broken = terms.clone();
    let odd = broken.len();
    broken.push(
        serde_json::from_value(
            json!({"key": "odd", "label": "Odd", "category": {"field": "stage", "is": "odd"}}),
        )
        .unwrap(),
    );
    let e = ws.deploy_terms("ava", "opportunity", broken).unwrap_err();
    assert_eq!(e.code, Code::InvalidDefinition);
    assert!(e.details.iter().any(|d| d.path.ends_with(&format!("/terms/{odd}/category"))), "{:?}", e.details);
    assert_eq!(ws.catalog().unwrap().generation, generation + 1);
    // ben may read the vocabulary but not change it.
    let bens = ws.session("ben").unwrap().vocabulary().unwrap();
    assert!(bens.iter().all(|v| !v.can_edit));
    assert_eq!(ws.deploy_terms("ben", "opportunity", vec![]).unwrap_err().code, Code::Permission);
}

/// The evidence checks never refuse a right answer: each case of `eval/ask-extra.jsonl` carries
/// a right plan (written by hand; its expected ids are computed from the fixture by
/// `eval/make_ask_extra.py`), and the kernel must accept it at the first attempt and find
/// exactly those records.
#[test]
fn the_kernel_accepts_every_reference_plan_at_once() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../eval/ask-extra.jsonl")).unwrap();
    let f = common::demo_ask_v3();
    let mut refused = vec![];
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let session = f.ws.session(case["user"].as_str().unwrap()).unwrap();
        let endpoint = fake(vec![plan(case["plan"].clone())]);
        let question = case["question"].as_str().unwrap();
        match ask_with(&session, question, model(&endpoint.url, 0.0)) {
            Ok(a) if a.timings.attempts == 1 => {
                let expected: Vec<String> = case["expected_ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect();
                assert_eq!(ids(&a), expected, "{question}");
            }
            other => {
                let why = endpoint.chat_requests().get(1).map(user_message).unwrap_or_default();
                let why = why.lines().rev().find(|l| l.contains("rejected")).unwrap_or_default().to_string();
                refused.push(format!("{question}: {:?} {why}", other.map(|a| a.timings.attempts)))
            }
        }
    }
    assert!(refused.is_empty(), "right answers refused: {refused:#?}");
}

#[test]
fn the_words_of_a_term_the_plan_uses_justify_no_other_filter() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // "still in play" is the term; as a next step's text it is not asked for.
    let first = fake(vec![
        plan(json!({"object": "opportunity", "terms": ["open_opportunity"], "filters": [
            {"field": "account", "op": "eq", "value": "Acme Industries"},
            {"field": "next_step", "op": "eq", "value": "still in play"}]})),
        plan(json!({"object": "opportunity", "terms": ["open_opportunity"], "filters": [
            {"field": "account", "op": "eq", "value": "Acme Industries"}]})),
    ]);
    let a =
        ask_with(&ava, "Which opportunities of Acme Industries are still in play?", model(&first.url, 0.0))
            .unwrap();
    assert_eq!(a.timings.attempts, 2);
    assert!(user_message(&first.chat_requests()[1]).contains("next_step"));
    // A blank test needs the question to name the field: "past due" is the term, not the due date.
    let second = fake(vec![
        plan(
            json!({"object": "invoice", "terms": ["overdue_invoice"], "filters": [{"field": "due_date", "op": "is_blank"}]}),
        ),
        plan(json!({"object": "invoice", "terms": ["overdue_invoice"], "filters": []})),
    ]);
    let b = ask_with(&ava, "Which invoices are past due?", model(&second.url, 0.0)).unwrap();
    assert_eq!(b.timings.attempts, 2);
    let third =
        fake(vec![plan(json!({"object": "invoice", "filters": [{"field": "po_number", "op": "is_blank"}]}))]);
    let c = ask_with(&ava, "Invoices without a PO number", model(&third.url, 0.0)).unwrap();
    assert_eq!(c.timings.attempts, 1);
}

#[test]
fn saving_terms_keeps_the_terms_the_editor_cannot_see() {
    let f = common::demo_ask_v3();
    let mut doc = demo_doc(&f);
    object_mut(&mut doc, "opportunity")["terms"].as_array_mut().unwrap().push(json!({
        "key": "rich_margin", "label": "Rich margin", "filter": {"field": "margin_pct", "op": "gte", "value": 40}
    }));
    // ben may deploy, but cannot read margins.
    for set in doc["permissionSets"].as_array_mut().unwrap() {
        if set["key"] == "sales_rep" {
            set["system"].as_array_mut().unwrap().push(json!("metadata.deploy"));
        }
    }
    let mut ws = f.ws;
    ws.deploy(&WorkspaceDefinition::from_json(&doc).unwrap(), &DeployOptions::by("ava")).unwrap();
    let bens = ws.session("ben").unwrap().vocabulary().unwrap();
    let visible = bens.into_iter().find(|v| v.object == "opportunity").unwrap().terms;
    assert!(visible.iter().all(|t| t.key != "rich_margin"));
    ws.deploy_terms("ben", "opportunity", visible[..1].to_vec()).unwrap();
    let kept: Vec<String> = ws
        .catalog()
        .unwrap()
        .definition
        .objects
        .iter()
        .find(|o| o.key == "opportunity")
        .unwrap()
        .terms
        .iter()
        .map(|t| t.key.clone())
        .collect();
    assert_eq!(kept, ["open_opportunity", "rich_margin"]);
}

#[test]
fn a_record_the_question_does_not_name_cannot_be_named_again_in_the_repair() {
    let f = common::demo_ask_v3();
    let ben = f.ws.session("ben").unwrap();
    let endpoint = fake(vec![
        plan(json!({"object": "opportunity", "terms": ["open_opportunity"],
            "filters": [{"field": "account", "op": "eq", "value": "<account name>"}]})),
        plan(json!({"object": "opportunity", "terms": ["open_opportunity"], "filters": []})),
    ]);
    let a = ask_with(&ben, "Which of my opportunities are still open?", model(&endpoint.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 2);
    let first = endpoint.chat_requests()[0]["response_format"].to_string();
    let repair = endpoint.chat_requests()[1]["response_format"].to_string();
    assert!(first.contains(r#""field":{"const":"account"}"#));
    assert!(
        !repair.contains(r#""field":{"const":"account"}"#),
        "the repair's contract has no account filter"
    );
}

#[test]
fn a_name_written_over_a_term_is_no_name_of_the_question() {
    let f = common::demo_ask_v3();
    let ben = f.ws.session("ben").unwrap();
    let endpoint = fake(vec![
        plan(json!({"object": "account", "terms": ["customer"], "filters": [
            {"field": "billing_country", "op": "eq", "value": "Canada"},
            {"field": "name", "op": "eq", "value": "Customer"}]})),
        plan(json!({"object": "account", "terms": ["customer"], "filters": [
            {"field": "billing_country", "op": "eq", "value": "Canada"}]})),
    ]);
    let a = ask_with(&ben, "Which accounts in Canada are customers?", model(&endpoint.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 2);
    let repair = user_message(&endpoint.chat_requests()[1]);
    assert!(repair.contains("name eq \"Customer\""), "the name is what is refused, not the term: {repair}");
    let contract = endpoint.chat_requests()[1]["response_format"].to_string();
    assert!(!contract.contains(r#""field":{"const":"name"}"#));
    assert_eq!(a.terms[0].key, "customer");
}

#[test]
fn values_the_question_lists_beside_a_term_stay_offered() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // "unpaid" is a term, but the question spells out the statuses: both stay choices.
    let endpoint = fake(vec![plan(json!({"object": "invoice", "filters": [
        {"field": "total", "op": "gt", "value": 50000},
        {"field": "status", "op": "in", "value": ["sent", "overdue"]}]}))]);
    let q = "Invoices with a total above 50000 that are still unpaid (sent or overdue).";
    let a = ask_with(&ava, q, model(&endpoint.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 1);
    let contract = endpoint.chat_requests()[0]["response_format"].to_string();
    assert!(contract.contains(r#""field":{"const":"status"}"#) && contract.contains("unpaid_invoice"));
    // "overdue" there is one of the listed values, not the term.
    assert!(!contract.contains("overdue_invoice"), "{contract}");
}

#[test]
fn my_records_are_the_readers_own_through_the_term_every_object_has() {
    let f = common::demo_ask_v3();
    let ava = f.ws.session("ava").unwrap();
    // ava sees every opportunity; "my" is hers only.
    let endpoint = fake(vec![plan(
        json!({"object": "opportunity", "terms": ["mine", "open_opportunity"], "filters": []}),
    )]);
    let a = ask_with(&ava, "Which of my opportunities are still open?", model(&endpoint.url, 0.0)).unwrap();
    assert_eq!(a.timings.attempts, 1);
    assert_eq!(a.terms[0].label, "Mine");
    // "my" is the object's own records: a parent's `mine` is not offered beside it.
    let contract = endpoint.chat_requests()[0]["response_format"].to_string();
    assert!(contract.contains(r#""mine""#) && !contract.contains("account.mine"), "{contract}");
    let mine = ava
        .query(
            &serde_json::from_value(json!({"object": "opportunity", "fields": ["name"], "limit": 1000,
            "filters": {"all": [{"field": "owner", "op": "eq", "value": "ava"},
                {"not": {"field": "stage", "op": "in", "value": ["closed_won", "closed_lost"]}}]}}))
            .unwrap(),
        )
        .unwrap();
    let mut expected = countersign_kernel::ai::ask::ids(&mine);
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(ids(&a), expected);
    // The key is the kernel's: a definition may not take it.
    let mut doc = demo_doc(&f);
    object_mut(&mut doc, "account")["terms"].as_array_mut().unwrap().push(json!({
        "key": "mine", "label": "Ours", "filter": {"field": "type", "op": "eq", "value": "customer"}}));
    let e = WorkspaceDefinition::from_json(&doc).unwrap_err();
    assert!(e.details.iter().any(|d| d.message.contains("the kernel's")), "{:?}", e.details);
}
