//! The question reader (Ask's prompt version 4): each kind of wording reaches its candidate
//! condition, at the fixtures' fixed today, on the asking user's projection only.

use crate::common;
use countersign_kernel::ai::ask::reader::{Candidate, Reading};
use countersign_kernel::Session;

fn read(session: &Session<'_>, question: &str) -> Reading {
    let p = session.whole_grounding().projection.clone();
    let objects: Vec<String> = p.objects.iter().map(|o| o.key.clone()).collect();
    session.read_question(question, &p, &objects).expect("the question is read")
}

fn lines(r: &Reading) -> Vec<String> {
    r.candidates
        .iter()
        .map(|c: &Candidate| {
            format!(
                "{} \"{}\" ({}): {} = {}",
                c.id,
                c.words,
                c.object.as_deref().unwrap_or("any"),
                c.meaning,
                serde_json::to_string(&c.condition).unwrap()
            )
        })
        .collect()
}

#[test]
#[ignore = "a dump of the readings of the eval sets' questions, for development"]
fn dump_readings() {
    let f = common::demo();
    for file in ["/../../../shared/eval/ask-dev.jsonl", "/../../eval/ask-extra.jsonl"] {
        let text = std::fs::read_to_string(format!("{}{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let case: serde_json::Value = serde_json::from_str(line).unwrap();
            let session = f.ws.session(case["user"].as_str().unwrap()).unwrap();
            let q = case["question"].as_str().unwrap();
            let r = read(&session, q);
            eprintln!("\n{} [{}] {q}  counts={:?}", case["id"], case["user"], r.counts);
            for l in lines(&r) {
                eprintln!("   {l}");
            }
        }
    }
}

/// The candidate reading these words on this object with this condition, if any.
fn find<'a>(
    r: &'a Reading,
    words: &str,
    object: Option<&str>,
    condition: serde_json::Value,
) -> Option<&'a Candidate> {
    r.candidates.iter().find(|c| {
        c.words == words
            && c.object.as_deref() == object
            && serde_json::to_value(&c.condition).unwrap() == condition
    })
}

fn must<'a>(
    r: &'a Reading,
    words: &str,
    object: Option<&str>,
    condition: serde_json::Value,
) -> &'a Candidate {
    find(r, words, object, condition.clone())
        .unwrap_or_else(|| panic!("no candidate {words:?} {condition}; read: {:#?}", lines(r)))
}

#[test]
fn inflected_forms_plurals_and_typos_reach_a_picklist_value() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let dep = |v: &str| serde_json::json!({"field": "department", "op": "eq", "value": v});
    must(&read(&ava, "Contacts who are engineers"), "engineers", Some("contact"), dep("engineering"));
    must(&read(&ava, "Contacts in engineerng"), "engineerng", Some("contact"), dep("engineering"));
    must(&read(&ava, "Contacts in Finance"), "Finance", Some("contact"), dep("finance"));
    let stage = serde_json::json!({"field": "stage", "op": "eq", "value": "negotiation"});
    must(&read(&ava, "opportunities negotiating"), "negotiating", Some("opportunity"), stage);
}

#[test]
fn stored_values_and_record_names_reach_their_field() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let r = read(&ava, "Show accounts billed in Austin");
    must(
        &r,
        "Austin",
        Some("account"),
        serde_json::json!({"field": "billing_city", "op": "eq", "value": "Austin"}),
    );
    let r = read(&ava, "List the contacts at Lacuna Group.");
    let c = must(
        &r,
        "Lacuna Group",
        Some("account"),
        serde_json::json!({"field": "name", "op": "eq", "value": "Lacuna Group"}),
    );
    let records = c.records.as_ref().expect("a name names records");
    assert_eq!(records.matches.len(), 1);
    // On a child, the parent's record is its lookup.
    let p = ava.whole_grounding().projection.clone();
    let on_contact = serde_json::to_value(c.on(&p, "contact").unwrap()).unwrap();
    assert_eq!(
        on_contact,
        serde_json::json!({"field": "account", "op": "in", "value": [records.matches[0].id]})
    );
    // A word only the data knows: a note's title, said in the plural.
    let r = read(&ava, "Notes about payment delays");
    must(
        &r,
        "payment delays",
        Some("note"),
        serde_json::json!({"field": "title", "op": "eq", "value": "Payment delay"}),
    );
}

#[test]
fn a_workspace_user_named_in_the_question_is_an_owner() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let r = read(&ava, "Opportunities owned by Ben");
    must(&r, "Ben", None, serde_json::json!({"field": "owner", "op": "eq", "value": "ben"}));
    // "my" is the reader's own records, on whatever object is asked.
    let ben = f.ws.session("ben").unwrap();
    let r = read(&ben, "my opportunities");
    must(&r, "my", None, serde_json::json!({"field": "owner", "op": "eq", "value": "ben"}));
}

#[test]
fn quantities_keep_their_units_and_ranges_are_inclusive() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let amount = |op: &str, v: i64| serde_json::json!({"field": "amount", "op": op, "value": v});
    must(
        &read(&ava, "opportunities worth more than 2.5M"),
        "more than 2.5M",
        Some("opportunity"),
        amount("gt", 2_500_000),
    );
    must(&read(&ava, "opportunities above 40k"), "above 40k", Some("opportunity"), amount("gt", 40_000));
    must(
        &read(&ava, "opportunities of at least a quarter of a million"),
        "at least a quarter of a million",
        Some("opportunity"),
        amount("gte", 250_000),
    );
    must(
        &read(&ava, "opportunities between 100k and 200k"),
        "between 100k and 200k",
        Some("opportunity"),
        serde_json::json!({"all": [
            {"field": "amount", "op": "gte", "value": 100_000},
            {"field": "amount", "op": "lte", "value": 200_000}]}),
    );
    let total = serde_json::json!({"field": "total", "op": "lt", "value": 5_000});
    must(&read(&ava, "invoices with a total under $5,000"), "under $ 5,000", Some("invoice"), total);
    // A percentage never reaches a money field, and a number too large for a field is not
    // offered on it.
    let r = read(&ava, "opportunities with a probability above 40 percent");
    must(
        &r,
        "above 40 percent",
        Some("opportunity"),
        serde_json::json!({"field": "probability", "op": "gt", "value": 40}),
    );
    assert!(r.candidates.iter().all(|c| !c.condition.fields().contains(&"amount")), "{:#?}", lines(&r));
    let r = read(&ava, "opportunities over 200000");
    assert!(r.candidates.iter().all(|c| !c.condition.fields().contains(&"probability")), "{:#?}", lines(&r));
}

#[test]
fn currency_words_and_dates_reach_their_fields() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    let r = read(&cara, "Unpaid invoices in euros");
    must(
        &r,
        "euros",
        Some("invoice"),
        serde_json::json!({"field": "currency_code", "op": "eq", "value": "EUR"}),
    );
    let r = read(&cara, "Invoices issued in February 2025");
    must(
        &r,
        "February 2025",
        Some("invoice"),
        serde_json::json!({"all": [
            {"field": "issue_date", "op": "gte", "value": "2025-02-01"},
            {"field": "issue_date", "op": "lte", "value": "2025-02-28"}]}),
    );
    // Only the date field the words name ("issued"), not the due or paid date.
    assert!(r.candidates.iter().all(|c| !c.condition.fields().contains(&"due_date")), "{:#?}", lines(&r));
    // Relative phrases against today (the fixture's 2026-11-29).
    let r = read(&cara, "Invoices due last month");
    must(
        &r,
        "last month",
        Some("invoice"),
        serde_json::json!({"all": [
            {"field": "due_date", "op": "gte", "value": "2026-10-01"},
            {"field": "due_date", "op": "lte", "value": "2026-10-31"}]}),
    );
}

#[test]
fn a_value_only_another_user_can_see_is_never_a_candidate() {
    let f = common::demo();
    // opp_0001 is ava's private opportunity; ben cannot read it, nor the credit limit.
    let question = "Show Nakatomi Ltd - Pilot 1 and accounts with a credit limit above 100k";
    let names = |r: &Reading| -> Vec<String> {
        r.candidates
            .iter()
            .filter_map(|c| c.records.as_ref())
            .flat_map(|r| r.matches.iter().map(|m| m.id.clone()))
            .collect()
    };
    let as_ava = read(&f.ws.session("ava").unwrap(), question);
    assert!(names(&as_ava).contains(&"opp_0001".to_string()), "{:#?}", lines(&as_ava));
    assert!(as_ava.candidates.iter().any(|c| c.condition.fields().contains(&"credit_limit")));
    let as_ben = read(&f.ws.session("ben").unwrap(), question);
    assert!(!names(&as_ben).contains(&"opp_0001".to_string()), "{:#?}", lines(&as_ben));
    assert!(as_ben.candidates.iter().all(|c| !c.condition.fields().contains(&"credit_limit")));
}

#[test]
fn words_to_find_in_text_are_a_full_text_reading_never_a_literal_phrase() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let text = |q: &str| -> Vec<(String, serde_json::Value)> {
        read(&ava, q)
            .candidates
            .iter()
            .filter(|c| c.kind == countersign_kernel::ai::ask::reader::Kind::Text)
            .map(|c| (c.object.clone().unwrap_or_default(), serde_json::to_value(&c.condition).unwrap()))
            .collect()
    };
    let matches =
        |field: &str, value: &str| serde_json::json!({"field": field, "op": "matches", "value": value});
    assert_eq!(
        text("Notes that mention budget freezes"),
        vec![("note".to_string(), matches("body", "budget freezes"))]
    );
    // Quoted, before a date phrase the date reading claims.
    assert_eq!(
        text("notes with “two outages” written last month"),
        vec![("note".to_string(), matches("body", "two outages"))]
    );
    // The phrase stops at a word another reading claims (an account's name).
    let found = text("notes about procurement for Lacuna Industries");
    assert_eq!(found, vec![("note".to_string(), matches("body", "procurement"))], "{found:?}");
    // "about" before a number is an approximation, not text.
    assert!(text("opportunities worth about 50k").is_empty());
}

mod choosing {
    //! Versions 4 and 5 end to end against a fake endpoint: the model's output is ids; the kernel
    //! composes, refuses what it cannot say, and lists the words it did not use.
    use super::*;
    use crate::ask::{ask_with, ids, user_message};
    use crate::common::fake_model::{fake, model, Answer};
    use countersign_kernel::Code;
    use serde_json::json;

    fn id_of(r: &Reading, words: &str, meaning: &str) -> String {
        r.candidates
            .iter()
            .find(|c| c.words == words && c.meaning.contains(meaning))
            .unwrap_or_else(|| panic!("no {words:?} {meaning:?} in {:#?}", lines(r)))
            .id
            .clone()
    }

    fn choice(object: &str, ids: &[&str]) -> Answer {
        Answer::Text(json!({"object": object, "conditions": ids, "sort": [], "limit": null}).to_string())
    }

    #[test]
    fn the_chosen_readings_are_composed_and_the_words_not_used_are_listed() {
        let f = common::demo();
        let ava = f.ws.session("ava").unwrap();
        // "partners" reads as a lead source and as the account's type: the model chooses.
        let q = "Opportunities of Zorblax from partners in negotiation or proposal";
        let r = read(&ava, q);
        let (a, b) = (id_of(&r, "negotiation", "Stage"), id_of(&r, "proposal", "Stage"));
        let endpoint = fake(vec![choice("opportunity", &[&a, &b])]);
        let answer = ask_with(&ava, q, model(&endpoint.url, 0.0)).unwrap();
        assert_eq!(
            serde_json::to_value(answer.spec.filters.as_ref().unwrap()).unwrap(),
            json!({"field": "stage", "op": "in", "value": ["negotiation", "proposal"]}),
            "values of one field are joined with OR, as one chip"
        );
        assert_eq!(
            answer.unused,
            vec!["Zorblax".to_string(), "partners".to_string()],
            "the answer says what it did not use"
        );
        assert!(answer.read.iter().filter(|c| c.chosen).count() == 2);
        // The model was offered ids, never fields, operators or values to write.
        let request = endpoint.chat_requests()[0].to_string();
        assert!(!request.contains("\"filters\"") && request.contains(&format!("\\\"{a}\\\"")), "{request}");
    }

    #[test]
    fn a_reading_the_model_drops_is_kept_when_it_is_the_only_one_of_its_words() {
        let f = common::demo();
        let cara = f.ws.session("cara").unwrap();
        let q = "Unpaid invoices in euros with a total over 10k";
        let endpoint = fake(vec![choice("invoice", &[])]);
        let answer = ask_with(&cara, q, model(&endpoint.url, 0.0)).unwrap();
        let rows = &answer.result.as_ref().unwrap().records;
        assert!(!rows.is_empty());
        assert!(rows.iter().all(|r| r["currency_code"] == "EUR"), "the currency said in words is used");
        assert!(rows.iter().all(|r| r["total"].as_f64().unwrap() > 10_000.0));
        assert!(answer.unused.is_empty(), "the field a quantity names is used too: {:?}", answer.unused);
    }

    #[test]
    fn a_chosen_text_reading_finds_the_records_whose_text_says_it() {
        let f = common::demo();
        let ava = f.ws.session("ava").unwrap();
        let q = "Notes that mention announcing a budget freeze";
        let r = read(&ava, q);
        let endpoint =
            fake(vec![choice("note", &[&id_of(&r, "mention announcing a budget freeze", "mentions")])]);
        let answer = ask_with(&ava, q, model(&endpoint.url, 0.0)).unwrap();
        let mut got: Vec<String> = answer
            .result
            .as_ref()
            .unwrap()
            .records
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect();
        got.sort();
        let mut expected: Vec<String> = common::demo_rows("note")
            .iter()
            .filter(|n| n["body"].contains("Budget freeze announced"))
            .map(|n| n["id"].clone())
            .collect();
        expected.sort();
        assert_eq!(got, expected);
        assert!(answer.unused.is_empty(), "{:?}", answer.unused);
    }

    /// Each request's schema narrows `schemas/ask-choice.schema.json`; version 5 leaves out the
    /// keys whose only value is fixed, version 4 writes them, and both take the same choice.
    #[test]
    fn each_versions_choice_schema_narrows_the_general_contract() {
        let general: serde_json::Value =
            serde_json::from_str(include_str!("../../../../schemas/ask-choice.schema.json")).unwrap();
        let general = jsonschema::validator_for(&general).unwrap();
        let f = common::demo();
        let ava = f.ws.session("ava").unwrap();
        // (Each leaves the model a choice: "partners" is also a lead source of opportunities.)
        let plain = "Which accounts in the healthcare industry are partners?";
        let ordered = "The three invoices with the highest totals";
        let keys = |q: &str, answer: serde_json::Value| {
            let endpoint = fake(vec![Answer::Text(answer.to_string())]);
            ask_with(&ava, q, model(&endpoint.url, 0.0)).unwrap();
            assert!(general.is_valid(&answer), "{answer}");
            let schema = endpoint.chat_requests()[0]["response_format"]["json_schema"]["schema"].clone();
            let narrowed = jsonschema::validator_for(&schema).unwrap();
            assert!(narrowed.is_valid(&answer), "{answer} against {schema}");
            let object = schema["anyOf"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["properties"]["object"]["const"] == answer["object"])
                .unwrap()
                .clone();
            let mut keys: Vec<String> = object["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_string())
                .collect();
            keys.sort();
            keys
        };
        let r = read(&ava, plain);
        let healthcare = id_of(&r, "healthcare", "Industry");
        let sort = json!([{"field": "total", "direction": "desc"}]);
        // Version 5, a new workspace's: only what the question asks for is written.
        assert_eq!(
            keys(plain, json!({"object": "account", "conditions": [healthcare]})),
            ["conditions", "object"]
        );
        // An order asked for offers `sort` and a count said offers `limit`; the kernel reads a
        // superlative itself, so neither is required.
        assert_eq!(
            keys(ordered, json!({"object": "invoice", "conditions": [], "sort": sort, "limit": 3})),
            ["conditions", "object"]
        );
        // Version 4 writes `sort` and `limit` always.
        common::ask_on_version(&f.ws, 4);
        assert_eq!(
            keys(plain, json!({"object": "account", "conditions": [healthcare], "sort": [], "limit": null})),
            ["conditions", "limit", "object", "sort"]
        );
    }

    #[test]
    fn a_reading_that_leaves_nothing_to_choose_is_answered_without_the_model() {
        let f = common::demo();
        let ava = f.ws.session("ava").unwrap();
        // One object, one reading of each word: the kernel's own choice, no model call.
        let endpoint = fake(vec![]);
        let answer =
            ask_with(&ava, "Which accounts are in the healthcare industry?", model(&endpoint.url, 0.0))
                .unwrap();
        let mut got = ids(&answer);
        let mut want: Vec<String> = common::demo_rows("account")
            .into_iter()
            .filter(|a| a["industry"] == "healthcare")
            .map(|a| a["id"].clone())
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert!(endpoint.chat_requests().is_empty(), "no model was asked");
        let trace = ava.traces(1).unwrap().remove(0);
        assert!(trace.output_text.starts_with("[decided by the kernel"), "{}", trace.output_text);
        assert_eq!((trace.prompt_tokens, trace.completion_tokens), (0, 0));
        // It asks no model, so the per-minute limit on model calls does not count it.
        crate::ask::set_settings(&ava, |s| s.rate.per_minute = 1);
        for _ in 0..3 {
            ask_with(&ava, "Which accounts are in the healthcare industry?", model(&endpoint.url, 0.0))
                .unwrap();
        }
        // A word with two readings ("partners": a lead source, an account's type) is the
        // model's to choose.
        let q = "Opportunities from partners in negotiation";
        let r = read(&ava, q);
        let endpoint = fake(vec![choice("opportunity", &[&id_of(&r, "negotiation", "Stage")])]);
        ask_with(&ava, q, model(&endpoint.url, 0.0)).unwrap();
        assert_eq!(endpoint.chat_requests().len(), 1);
    }

    #[test]
    fn an_invented_filter_cannot_be_written() {
        let f = common::demo();
        let ava = f.ws.session("ava").unwrap();
        let invented = Answer::Text(
            json!({"object": "account", "conditions": [], "filters": [{"field": "type", "op": "eq", "value": "customer"}],
                "sort": [], "limit": null})
            .to_string(),
        );
        let endpoint = fake(vec![invented.clone(), choice("account", &["c77"])]);
        let e = ask_with(
            &ava,
            "Which accounts in the healthcare industry are partners?",
            model(&endpoint.url, 0.0),
        )
        .unwrap_err();
        assert_eq!(e.code, Code::Contract, "{e:?}");
        assert!(user_message(&endpoint.chat_requests()[1]).contains("rejected"));
    }

    #[test]
    fn a_question_the_language_cannot_say_is_refused_with_what_is_missing() {
        let f = common::demo();
        let ava = f.ws.session("ava").unwrap();
        let endpoint = fake(vec![choice("account", &[])]);
        let e = ask_with(&ava, "Which notes are without a contact?", model(&endpoint.url, 0.0)).unwrap_err();
        assert_eq!(e.code, Code::GroundingInsufficient);
        assert!(e.message.contains("without a contact"), "{}", e.message);
        assert!(endpoint.chat_requests().is_empty(), "refused before any model call");
    }

    #[test]
    fn a_learned_correction_is_offered_as_its_choice_and_its_left_out_reading_stays_out() {
        let f = common::demo();
        let ava = f.ws.session("ava").unwrap();
        let q = "Which accounts are in the healthcare industry?";
        let r = read(&ava, q);
        let healthcare = id_of(&r, "healthcare", "Industry");
        let first = fake(vec![choice("account", &[&healthcare])]);
        let answer = ask_with(&ava, q, model(&first.url, 0.0)).unwrap();
        let all = ids(&answer).len();
        // The user removes the chip: every account.
        let corrected = countersign_kernel::QuerySpec { filters: None, ..answer.spec.clone() };
        ava.ask_learn(&answer.trace_id, &corrected).unwrap().expect("kept");
        let second = fake(vec![choice("account", &[])]);
        let again = ask_with(&ava, q, model(&second.url, 0.0)).unwrap();
        assert_eq!(again.learned.len(), 1);
        assert_eq!(
            again.learned[0].question, q,
            "the question the user wrote, not hidden from its own author"
        );
        let prompt = user_message(&second.chat_requests()[0]);
        assert!(prompt.contains("as corrected by their users") && prompt.contains("chosen:"), "{prompt}");
        assert!(
            ids(&again).len() > all,
            "the reading the correction left out is not added back: {:?} {prompt}",
            again.spec
        );
    }
}

#[test]
fn related_records_are_read_as_some_none_and_at_least_with_the_childs_own_words() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let related = |object: &str, has: &str, count: Option<u32>, filter: Option<serde_json::Value>| {
        let mut r = serde_json::json!({"object": object, "via": "account", "has": has});
        if let Some(n) = count {
            r["count"] = serde_json::json!(n);
        }
        if let Some(f) = filter {
            r["filter"] = f;
        }
        serde_json::json!({"related": r})
    };
    must(
        &read(&ava, "Which accounts have no notes?"),
        "have no notes",
        Some("account"),
        related("note", "none", None, None),
    );
    must(
        &read(&ava, "Customers without contacts"),
        "without contacts",
        Some("account"),
        related("contact", "none", None, None),
    );
    let r = read(&ava, "Accounts with at least 5 contacts");
    must(&r, "at least 5 contacts", Some("account"), related("contact", "at_least", Some(5), None));
    assert!(
        r.candidates.iter().all(|c| c.kind != countersign_kernel::ai::ask::reader::Kind::Quantity),
        "{:#?}",
        lines(&r)
    );
    must(
        &read(&ava, "Accounts with more than 2 opportunities"),
        "more than 2 opportunities",
        Some("account"),
        related("opportunity", "at_least", Some(3), None),
    );
    let cara = f.ws.session("cara").unwrap();
    must(
        &read(&cara, "Accounts that have overdue invoices"),
        "have overdue invoices",
        Some("account"),
        related(
            "invoice",
            "some",
            None,
            Some(serde_json::json!({"field": "status", "op": "eq", "value": "overdue"})),
        ),
    );
}

#[test]
fn a_country_said_by_nationality_or_code_reaches_the_stored_country() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let country = |v: &str| serde_json::json!({"field": "billing_country", "op": "eq", "value": v});
    must(&read(&ava, "German accounts"), "German", Some("account"), country("Germany"));
    must(&read(&ava, "Which French customers do we have?"), "French", Some("account"), country("France"));
    must(&read(&ava, "Spanish accounts in retail"), "Spanish", Some("account"), country("Spain"));
    must(&read(&ava, "Accounts in the US"), "US", Some("account"), country("United States"));
}
