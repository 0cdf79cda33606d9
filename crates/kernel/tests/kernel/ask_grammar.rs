//! Ask reads grammar, not lists of cases: negation, blank and not blank, superlatives, numbers
//! in words, what the language cannot say, and the trust contract (a word not placed makes the
//! answer a clarification, never a table). At the fixtures' fixed today, on the demo.

use crate::ask::{ask_with, ids};
use crate::common;
use crate::common::fake_model::{fake, model, Answer};
use countersign_kernel::ai::ask::reader::{Candidate, Reading};
use countersign_kernel::{Code, Session};
use serde_json::{json, Value};

fn read(session: &Session<'_>, question: &str) -> Reading {
    let p = session.whole_grounding().projection.clone();
    let objects: Vec<String> = p.objects.iter().map(|o| o.key.clone()).collect();
    session.read_question(question, &p, &objects).expect("the question is read")
}

fn conditions(r: &Reading) -> Vec<(String, Value)> {
    r.candidates
        .iter()
        .map(|c: &Candidate| (c.words.clone(), serde_json::to_value(&c.condition).unwrap()))
        .collect()
}

fn has(r: &Reading, words: &str, condition: Value) -> bool {
    conditions(r).iter().any(|(w, c)| w == words && *c == condition)
}

fn cmp(field: &str, op: &str, value: Value) -> Value {
    json!({"field": field, "op": op, "value": value})
}

fn presence(field: &str, op: &str) -> Value {
    json!({"field": field, "op": op})
}

/// Whether any reading of these words holds the positive condition.
fn positive(r: &Reading, words: &str, field: &str) -> bool {
    r.candidates.iter().any(|c| {
        c.words == words
            && !c.negated
            && matches!(serde_json::to_value(&c.condition).unwrap()["op"].as_str(), Some("eq" | "in"))
            && c.condition.fields().contains(&field)
    })
}

#[test]
fn a_negated_phrase_is_read_negated_and_never_as_its_positive() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let munich = cmp("billing_city", "ne", json!("Munich"));
    for q in [
        "accounts that are not in Munich",
        "accounts not located in Munich",
        "accounts other than those in Munich",
        "accounts excluding Munich",
        "Konten, die nicht in Munich sind",
        "comptes qui ne sont pas à Munich",
        "comptes sauf Munich",
        "cuentas que no están en Munich",
        "cuentas excepto Munich",
        "accounts outside Munich",
        "Konten außerhalb von Munich",
        "comptes en dehors de Munich",
        "cuentas fuera de Munich",
    ] {
        let r = read(&ava, q);
        assert!(has(&r, "Munich", munich.clone()), "{q}: {:#?}", conditions(&r));
        assert!(
            !positive(&r, "Munich", "billing_city"),
            "{q}: the positive is offered: {:#?}",
            conditions(&r)
        );
    }
    // "that aren't A or B": neither A nor B, each negated, in groups of their own (AND).
    let r = read(&ava, "opportunities that aren't in negotiation or proposal");
    assert!(has(&r, "negotiation", cmp("stage", "ne", json!("negotiation"))), "{:#?}", conditions(&r));
    assert!(has(&r, "proposal", cmp("stage", "ne", json!("proposal"))), "{:#?}", conditions(&r));
    let groups: Vec<&str> = r.candidates.iter().filter(|c| c.negated).map(|c| c.group.as_str()).collect();
    assert!(groups.len() >= 2 && groups[0] != groups[1], "{groups:?}");
    let r = read(&ava, "opportunities neither in negotiation nor in proposal");
    assert!(has(&r, "proposal", cmp("stage", "ne", json!("proposal"))), "{:#?}", conditions(&r));
    // The negation does not reach past its clause.
    let r = read(&ava, "opportunities not in negotiation, in proposal");
    assert!(has(&r, "proposal", cmp("stage", "eq", json!("proposal"))), "{:#?}", conditions(&r));
    // A comparison's own "no" / "not" is the comparison's.
    let r = read(&ava, "invoices with a total of no more than 5000");
    assert!(has(&r, "no more than 5000", cmp("total", "lte", json!(5000))), "{:#?}", conditions(&r));
    // Related records under "don't have": none.
    let r = read(&ava, "accounts that don't have notes");
    assert!(
        r.candidates.iter().any(|c| serde_json::to_value(&c.condition).unwrap()["related"]["has"] == "none"),
        "{:#?}",
        conditions(&r)
    );
}

#[test]
fn blank_and_not_blank_are_read_from_having_and_lacking() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    for (q, words, field, op) in [
        ("invoices with a PO number", "with a PO number", "po_number", "is_set"),
        ("invoices without a PO number", "a PO number", "po_number", "is_blank"),
        ("opportunities with no next step", "next step", "next_step", "is_blank"),
        ("contacts missing an email", "missing an email", "email", "is_blank"),
        ("contacts whose email is empty", "email is empty", "email", "is_blank"),
        ("Rechnungen ohne PO number", "PO number", "po_number", "is_blank"),
        ("factures sans PO number", "PO number", "po_number", "is_blank"),
        ("facturas sin PO number", "PO number", "po_number", "is_blank"),
        ("Which invoices have no account?", "account", "account", "is_blank"),
    ] {
        let r = read(&ava, q);
        assert!(has(&r, words, presence(field, op)), "{q}: {:#?}", conditions(&r));
    }
    // A field compared by another reading is not also "set".
    let r = read(&ava, "accounts with annual revenue over 10 million");
    assert!(!conditions(&r).iter().any(|(_, c)| c["op"] == "is_set"), "{:#?}", conditions(&r));
}

#[test]
fn superlatives_and_top_n_become_the_kernels_order_and_count() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let order = |q: &str, object: &str| {
        let r = read(&ava, q);
        r.orders
            .iter()
            .find(|o| o.object == object)
            .map(|o| (o.field.clone(), format!("{:?}", o.direction).to_lowercase(), o.limit))
    };
    assert_eq!(order("the largest invoice", "invoice"), Some(("total".into(), "desc".into(), Some(1))));
    assert_eq!(
        order("the 5 biggest opportunities", "opportunity"),
        Some(("amount".into(), "desc".into(), Some(5)))
    );
    assert_eq!(order("the oldest invoices", "invoice"), Some(("issue_date".into(), "asc".into(), None)));
    assert_eq!(
        order("which account has the highest annual revenue?", "account"),
        Some(("annual_revenue".into(), "desc".into(), Some(1)))
    );
    assert_eq!(
        order("the account with the most employees", "account"),
        Some(("employees".into(), "desc".into(), Some(1)))
    );
    assert_eq!(
        order("the latest close date of an opportunity", "opportunity").map(|o| o.0),
        Some("close_date".into())
    );
    assert_eq!(
        order("die größte Rechnung", "invoice").map(|o| (o.0, o.1)),
        Some(("total".into(), "desc".into()))
    );
    assert_eq!(order("la facture la plus récente", "invoice").map(|o| o.1), Some("desc".into()));
    assert_eq!(order("la factura más antigua", "invoice").map(|o| o.1), Some("asc".into()));
    assert_eq!(order("invoices of Acme", "invoice"), None);
    // A superlative of other records is a count, not a field's order: none is read.
    assert_eq!(order("the account with the most contacts", "account"), None);
    assert_eq!(order("the account with the most invoices", "account"), None);
    // "at least", "at most" are comparisons, not superlatives.
    assert_eq!(order("invoices with a total of at least 5000", "invoice"), None);
    // "best" is a superlative, on the field the question names.
    assert_eq!(
        order("the deal with the best margin", "opportunity"),
        Some(("margin_pct".into(), "desc".into(), Some(1)))
    );
    // "bottom N" is the top N of the other end.
    assert_eq!(order("bottom 3 invoices by total", "invoice"), Some(("total".into(), "asc".into(), Some(3))));
}

#[test]
fn numbers_in_words_and_a_range_s_unit_are_read() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let r = read(&ava, "accounts with more than forty thousand employees");
    assert!(
        has(&r, "more than forty thousand", cmp("employees", "gt", json!(40000))),
        "{:#?}",
        conditions(&r)
    );
    let r = read(&ava, "invoice lines with a quantity over a dozen");
    assert!(has(&r, "over a dozen", cmp("quantity", "gt", json!(12))), "{:#?}", conditions(&r));
    let r = read(&ava, "opportunities between 10 and 50 million");
    assert!(
        has(
            &r,
            "between 10 and 50 million",
            json!({"all": [cmp("amount", "gte", json!(10_000_000)), cmp("amount", "lte", json!(50_000_000))]})
        ),
        "{:#?}",
        conditions(&r)
    );
    let r = read(&ava, "Konten mit mehr als zweitausend Mitarbeitern");
    assert!(conditions(&r).iter().any(|(_, c)| c["value"] == json!(2000)), "{:#?}", conditions(&r));
    let r = read(&ava, "comptes avec plus de deux mille employees");
    assert!(has(&r, "plus de deux mille", cmp("employees", "gt", json!(2000))), "{:#?}", conditions(&r));
    let r = read(&ava, "cuentas con más de tres mil employees");
    assert!(has(&r, "más de tres mil", cmp("employees", "gt", json!(3000))), "{:#?}", conditions(&r));
    // Digits as the question's language writes them, whatever the asker's locale (Ava's is
    // English): fifty thousand in German, two and a half in English.
    let r = read(&ava, "Rechnungen über 50.000");
    assert!(has(&r, "über 50.000", cmp("total", "gt", json!(50000))), "{:#?}", conditions(&r));
    let r = read(&ava, "invoices over 2.5");
    assert!(has(&r, "over 2.5", cmp("total", "gt", json!(2.5))), "{:#?}", conditions(&r));
    let r = read(&ava, "Invoices under $5,000.");
    assert!(has(&r, "under $ 5,000", cmp("total", "lt", json!(5000))), "{:#?}", conditions(&r));
    // A whole number with the noun it counts right after it is a count, never money: "units"
    // is a word of "Unit price", but a dozen units are a quantity.
    for (q, words) in [
        ("lines with more than a dozen units", "more than a dozen units"),
        ("invoice lines over 20 pieces", "over 20 pieces"),
        ("lignes de plus de 12 unités", "plus de 12 unités"),
    ] {
        let r = read(&ava, q);
        let on: Vec<Value> = r
            .candidates
            .iter()
            .filter(|c| c.words == words)
            .map(|c| serde_json::to_value(&c.condition).unwrap()["field"].clone())
            .collect();
        assert_eq!(on, vec![json!("quantity")], "{q}: {:#?}", conditions(&r));
    }
    // A sign names no field: "%" of "Probability (%)" does not put "margin above 50%" on it.
    let r = read(&ava, "deals with a margin above 50%");
    let on: Vec<Value> =
        r.candidates.iter().map(|c| serde_json::to_value(&c.condition).unwrap()["field"].clone()).collect();
    assert_eq!(on, vec![json!("margin_pct")], "{:#?}", conditions(&r));
    // "lacking a paid date": the term "paid" inside the blank reading's words is not offered.
    let r = read(&ava, "invoices lacking a paid date");
    assert!(has(&r, "lacking a paid date", presence("paid_date", "is_blank")), "{:#?}", conditions(&r));
    assert_eq!(r.candidates.len(), 1, "{:#?}", conditions(&r));
    // A number before a word that says which amount ("issued", "due") is no count.
    let r = read(&ava, "invoices over 5000 due in 2026");
    assert!(conditions(&r).iter().any(|(_, c)| c["field"] == "total"), "{:#?}", conditions(&r));
}

#[test]
fn what_the_language_cannot_say_is_one_plain_sentence_before_any_call() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let endpoint = fake(vec![]);
    for (q, says) in [
        ("What is the average invoice total?", "average"),
        ("Durchschnitt der Rechnungen pro Konto", "average"),
        ("What is the total amount of open opportunities?", "sum"),
        ("Gesamtbetrag der offenen Verkaufschancen", "sum"),
        ("invoices whose due date is before the issue date", "Two fields"),
        ("and in March?", "no earlier question"),
        ("what about Globex Holdings?", "no earlier question"),
    ] {
        let e = ask_with(&ava, q, model(&endpoint.url, 0.0)).expect_err(q);
        assert_eq!(e.code, Code::GroundingInsufficient, "{q}: {}", e.message);
        assert!(e.message.contains(says), "{q}: {}", e.message);
        assert!(!e.message.contains("anyOf") && !e.message.contains("schema"), "{q}: {}", e.message);
    }
    assert!(endpoint.chat_requests().is_empty(), "no model was asked");
}

fn all_of(object: &str, fields: &[&str]) -> countersign_kernel::QuerySpec {
    countersign_kernel::QuerySpec::from_json(&json!({"object": object, "fields": fields, "limit": 1000}))
        .unwrap()
}

fn choice(object: &str, ids: &[&str]) -> Answer {
    Answer::Text(json!({"object": object, "conditions": ids, "sort": [], "limit": null}).to_string())
}

#[test]
fn a_word_not_placed_makes_a_clarification_whose_options_run() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let endpoint = fake(vec![choice("contact", &[])]);
    let a = ask_with(&ava, "Contacts in sales at Zorblaxco", model(&endpoint.url, 0.0)).unwrap();
    let c = a.clarification.as_ref().expect("a clarification");
    assert!(a.result.is_none(), "no table is the answer");
    assert_eq!(c.words, vec!["Zorblaxco".to_string()]);
    assert!(c.message.contains("Zorblaxco"));
    let leave = c.options.iter().find(|o| o.label.contains("Leave out")).expect("leave it out");
    let rows = ava.query(&leave.spec).unwrap();
    assert!(!rows.records.is_empty() && rows.records.iter().all(|r| r["department"] == "sales"));
    // An abbreviated picklist value is offered as the value it shortens.
    let endpoint = fake(vec![choice("opportunity", &[])]);
    let a = ask_with(&ava, "opportunities in neg", model(&endpoint.url, 0.0)).unwrap();
    let c = a.clarification.as_ref().expect("a clarification");
    let option = c.options.iter().find(|o| o.label == "Stage is Negotiation").expect("Stage is Negotiation");
    let rows = ava.query(&option.spec).unwrap();
    assert!(!rows.records.is_empty() && rows.records.iter().all(|r| r["stage"] == "negotiation"));
    // Never every row because nothing matched: no "leave out" without a condition.
    assert!(!c.options.iter().any(|o| o.spec.filters.is_none()), "{:#?}", c.options);
}

#[test]
fn a_not_question_answers_with_the_negation() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let q = "accounts that are not in Munich";
    let endpoint = fake(vec![choice("account", &[])]);
    let a = ask_with(&ava, q, model(&endpoint.url, 0.0)).unwrap();
    assert!(a.clarification.is_none(), "{:?}", a.unused);
    let got = ids(&a);
    let all = ava.query(&all_of("account", &["billing_city"])).unwrap();
    let munich: Vec<&serde_json::Map<String, Value>> =
        all.records.iter().filter(|r| r["billing_city"] == "Munich").collect();
    assert!(!munich.is_empty());
    assert_eq!(got.len(), all.records.len() - munich.len());
    assert!(a.read.iter().any(|r| r.chosen && r.meaning.contains("is not Munich")), "{:#?}", a.read);
}

#[test]
fn the_largest_one_is_one_row_sorted_by_the_kernel() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    // The model writes no order: the kernel's reading of "the largest invoice" sets it.
    let endpoint =
        fake(vec![Answer::Text(json!({"object": "invoice", "conditions": [], "sort": []}).to_string())]);
    let a = ask_with(&cara, "Which is the largest invoice?", model(&endpoint.url, 0.0)).unwrap();
    assert!(a.clarification.is_none(), "{:?}", a.unused);
    let rows = &a.result.as_ref().unwrap().records;
    assert_eq!(rows.len(), 1);
    let all = cara.query(&all_of("invoice", &["total"])).unwrap();
    let max = all.records.iter().map(|r| r["total"].as_f64().unwrap()).fold(f64::MIN, f64::max);
    assert_eq!(rows[0]["total"].as_f64().unwrap(), max);
}

#[test]
fn the_head_noun_decides_the_object_in_any_language() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    for (q, object) in [
        ("Who are our people at Globex Holdings?", "contact"),
        ("contacts at accounts in Lyon", "contact"),
        ("what did we note about Initech GmbH", "note"),
        ("deals for accounts in Germany", "opportunity"),
        ("lines on invoices of Globex Holdings", "invoice_line"),
        ("accounts with no notes", "account"),
        ("Rechnungen von Globex Holdings", "invoice"),
        ("les factures de Globex Holdings", "invoice"),
        ("las facturas de Globex Holdings", "invoice"),
        ("Kontakte bei Globex Holdings", "contact"),
        // The head of a German compound name says the object alone ("Verkaufschancen").
        ("Chancen ohne nächsten Schritt", "opportunity"),
    ] {
        let r = read(&ava, q);
        assert_eq!(r.objects, vec![object.to_string()], "{q}");
    }
}

#[test]
fn a_question_in_another_language_is_read_in_it_whatever_the_askers_locale() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    let status = |op: &str, v: &str| cmp("status", op, json!(v));
    for (q, words, condition) in [
        ("Rechnungen, die nicht bezahlt sind", "bezahlt", status("ne", "paid")),
        ("bezahlte Rechnungen", "bezahlte", status("eq", "paid")),
        ("les factures payées", "payées", status("eq", "paid")),
        ("factures qui ne sont pas payées", "payées", status("ne", "paid")),
        ("facturas pagadas", "pagadas", status("eq", "paid")),
        ("facturas que no están pagadas", "pagadas", status("ne", "paid")),
    ] {
        let r = read(&cara, q);
        assert!(has(&r, words, condition.clone()), "{q}: {:#?}", conditions(&r));
        assert_eq!(r.objects, vec!["invoice".to_string()], "{q}");
    }
    // Dates and numbers in the question's language, from an English asker.
    let r = read(&cara, "Rechnungen im März 2026");
    assert!(
        r.candidates
            .iter()
            .any(|c| c.date.as_ref().is_some_and(|d| d.start.as_deref() == Some("2026-03-01"))),
        "{:#?}",
        conditions(&r)
    );
    let r = read(&cara, "factures de plus de vingt mille euros");
    assert!(
        has(
            &r,
            "plus de vingt mille euros",
            json!({"all": [cmp("total", "gt", json!(20000)), cmp("currency_code", "eq", json!("EUR"))]})
        ),
        "{:#?}",
        conditions(&r)
    );
    // A field named in German.
    let r = read(&cara, "Rechnungen mit einem Rechnungsbetrag über 5000");
    assert!(has(&r, "über 5000", cmp("total", "gt", json!(5000))), "{:#?}", conditions(&r));
}

#[test]
fn a_condition_reaches_two_parents_up_under_their_row_access() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    let endpoint = fake(vec![choice("invoice_line", &[])]);
    let a =
        ask_with(&cara, "Invoice lines on invoices of Globex Holdings", model(&endpoint.url, 0.0)).unwrap();
    assert!(a.clarification.is_none(), "{:?}", a.unused);
    let filters = serde_json::to_value(a.spec.filters.as_ref().unwrap()).unwrap();
    assert_eq!(filters["field"], "invoice.account", "{filters}");
    let got = ids(&a);
    let globex = countersign_kernel::QuerySpec::from_json(&json!({"object": "invoice", "fields": [],
        "filters": {"field": "account.name", "op": "eq", "value": "Globex Holdings"}, "limit": 1000}))
    .unwrap();
    let invoices: Vec<Value> = cara.query(&globex).unwrap().records.iter().map(|r| r["id"].clone()).collect();
    let lines = cara.query(&all_of("invoice_line", &["invoice"])).unwrap();
    let mut expected: Vec<String> = lines
        .records
        .iter()
        .filter(|r| invoices.contains(&r["invoice"]))
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(got, expected);
    // The spec language itself: a parent's parent's field.
    let spec = countersign_kernel::QuerySpec::from_json(&json!({
        "object": "invoice_line", "fields": ["invoice.account.billing_city"],
        "filters": {"field": "invoice.account.billing_city", "op": "eq", "value": "Lyon"}, "limit": 1000
    }))
    .unwrap();
    let rows = cara.query(&spec).unwrap();
    assert!(!rows.records.is_empty());
    assert!(
        rows.records.iter().all(|r| r["invoice.account.billing_city"] == "Lyon"),
        "{:?}",
        rows.records[0]
    );
    let three = json!({"object": "invoice_line", "fields": [], "filters": {"field": "invoice.account.owner.key", "op": "eq", "value": "x"}});
    assert!(
        countersign_kernel::QuerySpec::from_json(&three).is_err()
            || cara.query(&countersign_kernel::QuerySpec::from_json(&three).unwrap()).is_err()
    );
}

#[test]
#[ignore = "prints the readings of the questions in $ASK_QUESTIONS (one a line), for development"]
fn dump() {
    let f = common::demo();
    let user = std::env::var("ASK_USER").unwrap_or_else(|_| "ava".into());
    let s = f.ws.session(&user).unwrap();
    for q in std::env::var("ASK_QUESTIONS").unwrap_or_default().lines().filter(|l| !l.trim().is_empty()) {
        let r = read(&s, q);
        eprintln!("\n{q}\n  objects {:?} counts {:?} orders {:?}", r.objects, r.counts, r.orders);
        for c in &r.candidates {
            eprintln!(
                "  {} {:?} \"{}\" ({:?}) {} = {}",
                c.id,
                c.kind,
                c.words,
                c.object,
                c.meaning,
                serde_json::to_string(&c.condition).unwrap()
            );
        }
    }
}

#[test]
fn readings_of_two_fields_joined_by_or_are_alternatives() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let q = "accounts in Lyon or in retail";
    let r = read(&ava, q);
    let group =
        |words: &str| r.candidates.iter().find(|c| c.words == words).map(|c| c.group.clone()).unwrap();
    assert_eq!(group("Lyon"), group("retail"), "{:#?}", conditions(&r));
    let endpoint = fake(vec![choice("account", &[])]);
    let a = ask_with(&ava, q, model(&endpoint.url, 0.0)).unwrap();
    let all = ava.query(&all_of("account", &["billing_city", "industry"])).unwrap();
    let mut expected: Vec<String> = all
        .records
        .iter()
        .filter(|x| x["billing_city"] == "Lyon" || x["industry"] == "retail")
        .map(|x| x["id"].as_str().unwrap().to_string())
        .collect();
    expected.sort();
    assert_eq!(ids(&a), expected);
    // Two words joined by "or" read in the field they share: "partners" is a lead source and
    // an account's type, "referrals" only a lead source — both are lead sources, one group.
    let r = read(&ava, "opportunities from partners or referrals");
    let groups: Vec<&String> = r.candidates.iter().map(|c| &c.group).collect();
    assert!(groups.iter().all(|g| *g == groups[0]), "{:#?}", conditions(&r));
    assert!(has(&r, "partners", cmp("lead_source", "eq", json!("partner"))), "{:#?}", conditions(&r));
    assert!(!r.candidates.iter().any(|c| c.condition.fields().contains(&"type")), "{:#?}", conditions(&r));
    // Without a field in common, every reading of either side stays, joined.
    let r = read(&ava, "opportunities from partners or in negotiation");
    assert!(r.candidates.iter().filter(|c| c.words == "partners").count() >= 2, "{:#?}", conditions(&r));
    // A negation keeps its own group: neither Lyon nor retail.
    let r = read(&ava, "accounts neither in Lyon nor in retail");
    let groups: Vec<&String> = r.candidates.iter().filter(|c| c.negated).map(|c| &c.group).collect();
    assert_eq!(groups.len(), 2);
    assert_ne!(groups[0], groups[1]);
}

#[test]
fn a_clarification_speaks_the_askers_language() {
    let f = common::demo();
    f.ws.session("ava").unwrap().set_own_locale(Some("de-DE")).unwrap();
    let ava = f.ws.session("ava").unwrap();
    let endpoint = fake(vec![choice("opportunity", &[])]);
    let a = ask_with(&ava, "Verkaufschancen in Verh bei Zorblaxco", model(&endpoint.url, 0.0)).unwrap();
    let c = a.clarification.as_ref().expect("a clarification");
    assert!(c.message.contains("konnte") && c.message.contains("Zorblaxco"), "{}", c.message);
    let labels: Vec<&str> = c.options.iter().map(|o| o.label.as_str()).collect();
    assert!(labels.contains(&"Phase ist Verhandlung"), "{labels:?}");
}

#[test]
fn a_field_named_but_not_compared_is_a_column_shown() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    let endpoint = fake(vec![choice("invoice", &[])]);
    let a = ask_with(
        &cara,
        "Show the PO numbers and due dates of the invoices of Globex Holdings",
        model(&endpoint.url, 0.0),
    )
    .unwrap();
    assert!(a.clarification.is_none(), "{:?}", a.unused);
    assert!(
        a.spec.fields.contains(&"po_number".to_string()) && a.spec.fields.contains(&"due_date".to_string()),
        "{:?}",
        a.spec.fields
    );
}

#[test]
fn a_stored_acronym_said_in_the_plural_is_read() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let r = read(&ava, "CFOs at accounts in Lyon");
    assert!(has(&r, "CFOs", cmp("title", "eq", json!("CFO"))), "{:#?}", conditions(&r));
}

#[test]
fn countries_in_other_languages_irregular_verbs_and_determiners_are_read() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    for (q, words) in [
        ("Welche Konten sind in Deutschland?", "Deutschland"),
        ("comptes en Allemagne", "Allemagne"),
        ("cuentas en Alemania", "Alemania"),
    ] {
        let r = read(&ava, q);
        assert!(has(&r, words, cmp("billing_country", "eq", json!("Germany"))), "{q}: {:#?}", conditions(&r));
    }
    let r = read(&ava, "Which opportunities did we lose last year?");
    assert!(
        has(&r, "lose", cmp("stage", "in", json!(["closed_lost"]))),
        "the term Lost: {:#?}",
        conditions(&r)
    );
    let r = read(&ava, "Accounts without any contacts");
    assert!(
        r.candidates.iter().any(|c| serde_json::to_value(&c.condition).unwrap()["related"]["has"] == "none"),
        "{:#?}",
        conditions(&r)
    );
}

#[test]
fn related_records_are_named_and_cued_in_four_languages() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let related = |q: &str| -> Vec<Value> {
        read(&ava, q)
            .candidates
            .iter()
            .map(|c| serde_json::to_value(&c.condition).unwrap())
            .filter(|c| c["related"]["object"] == "contact")
            .map(|c| json!([c["related"]["has"], c["related"]["count"]]))
            .collect()
    };
    for q in [
        "accounts without contacts",
        "Konten ohne Kontakte",
        "comptes sans contacts",
        "cuentas sin contactos",
    ] {
        assert_eq!(related(q), vec![json!(["none", null])], "{q}");
    }
    for q in [
        "accounts with at least 3 contacts",
        "Konten mit mindestens 3 Kontakten",
        "comptes avec au moins 3 contacts",
        "cuentas con al menos 3 contactos",
        "comptes avec plus de 2 contacts",
    ] {
        assert_eq!(related(q), vec![json!(["at_least", 3])], "{q}");
    }
    assert_eq!(related("Konten mit Kontakten"), vec![json!(["some", null])]);
    // The child's own readings after its name, or holding it, are its filter, and the words
    // are the related reading's alone (not also accounts in finance).
    let r = read(&ava, "accounts with no contacts in finance");
    assert_eq!(conditions(&r).len(), 1, "{:#?}", conditions(&r));
    assert_eq!(
        conditions(&r)[0].1["related"]["filter"],
        cmp("department", "eq", json!("finance")),
        "{:#?}",
        conditions(&r)
    );
    let r = read(&ava, "accounts that have lost deals");
    let lost = serde_json::to_value(&r.candidates[0].condition).unwrap();
    assert_eq!(
        (lost["related"]["object"].as_str(), lost["related"]["has"].as_str()),
        (Some("opportunity"), Some("some"))
    );
    assert_eq!(lost["related"]["filter"]["value"], json!(["closed_lost"]));
}

#[test]
fn one_word_of_a_value_label_says_it_where_no_other_value_has_that_word() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    // "Comercio minorista", "Commerce de détail": retail's Spanish and French labels.
    let r = read(&ava, "cuentas del sector minorista");
    assert!(has(&r, "minorista", cmp("industry", "eq", json!("retail"))), "{:#?}", conditions(&r));
    let r = read(&ava, "comptes du secteur détail");
    assert!(has(&r, "détail", cmp("industry", "eq", json!("retail"))), "{:#?}", conditions(&r));
    // A word that names the field is not its value ("industries": Industry, not
    // "Industrie manufacturière").
    let r = read(&ava, "accounts in the software or finance industries");
    assert!(!has(&r, "industries", cmp("industry", "eq", json!("manufacturing"))), "{:#?}", conditions(&r));
    // A word two values share says neither alone ("Closed Won", "Closed Lost").
    let r = read(&ava, "closed opportunities");
    assert!(!has(&r, "closed", cmp("stage", "eq", json!("closed_won"))), "{:#?}", conditions(&r));
    assert!(!has(&r, "closed", cmp("stage", "eq", json!("closed_lost"))), "{:#?}", conditions(&r));
}

#[test]
fn a_word_that_only_strengthens_a_superlative_is_its_own() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let r = read(&ava, "What's our single largest opportunity?");
    let order = r.orders.iter().find(|o| o.object == "opportunity").expect("an order");
    assert_eq!((order.field.as_str(), order.limit), ("amount", Some(1)));
    let single = r.tokens.iter().position(|t| t.lower == "single").unwrap();
    assert!(order.span.contains(&single), "{order:?}");
}

#[test]
fn a_verbs_forms_share_a_stem_not_a_meaning() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let stage = |q: &str| read(&ava, q).candidates.iter().any(|c| c.condition.fields().contains(&"stage"));
    // "closing", "close": the close date; "closed": won or lost.
    assert!(!stage("opportunities closing in Q3 2026"));
    assert!(!stage("Which deal has the latest close date?"));
    assert!(stage("closed opportunities"));
}

#[test]
fn nothing_found_where_another_reading_finds_records_is_asked_back() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    // "over 10000" is a quantity, a unit price or an amount; the model chooses the quantity,
    // which no line has: the answer asks back with the readings that find lines.
    let q = "invoice lines for training days over 10000";
    let r = read(&cara, q);
    let id = |words: &str, meaning: &str| {
        r.candidates.iter().find(|c| c.words == words && c.meaning.starts_with(meaning)).unwrap().id.clone()
    };
    let (training, quantity) = (id("training days", "Description"), id("over 10000", "Quantity"));
    let endpoint = fake(vec![choice("invoice_line", &[&training, &quantity])]);
    let a = ask_with(&cara, q, model(&endpoint.url, 0.0)).unwrap();
    assert!(a.result.is_none(), "an empty table was shown as the answer");
    let c = a.clarification.expect("asked back");
    assert!(c.options.iter().any(|o| o.label.starts_with("Amount")), "{:?}", c.options);
    for o in &c.options {
        assert!(!cara.query(&o.spec).unwrap().records.is_empty(), "{} finds nothing", o.label);
    }
    // Where no reading finds anything, nothing found is the answer.
    let q = "invoice lines for training days over 10000000";
    let r = read(&cara, q);
    let over: Vec<&str> =
        r.candidates.iter().filter(|c| c.words.starts_with("over")).map(|c| c.id.as_str()).collect();
    assert!(over.len() > 1, "{:#?}", conditions(&r));
    let training = r.candidates.iter().find(|c| c.words == "training days").unwrap().id.as_str();
    let endpoint = fake(vec![choice("invoice_line", &[training, over[0]])]);
    let a = ask_with(&cara, q, model(&endpoint.url, 0.0)).unwrap();
    assert!(a.clarification.is_none() && a.result.is_some_and(|r| r.records.is_empty()));
}

#[test]
fn compounds_prohibitions_bare_numbers_and_years_are_read_by_their_grammar() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    // A German compound of a value and a field is read by its parts; a compound label is
    // named by its head.
    let r = read(&ava, "Konten in der Logistikbranche");
    assert!(has(&r, "Logistik", cmp("industry", "eq", json!("logistics"))), "{:#?}", conditions(&r));
    let r = read(&ava, "Rechnungen aus dem Jahr 2025 mit einem Betrag über 10.000");
    assert!(has(&r, "über 10.000", cmp("total", "gt", json!(10000))), "{:#?}", conditions(&r));
    assert!(
        has(
            &r,
            "Jahr 2025",
            json!({"all": [cmp("issue_date", "gte", json!("2025-01-01")), cmp("issue_date", "lte", json!("2025-12-31"))]})
        ),
        "{:#?}",
        conditions(&r)
    );
    // A label that forbids ("Do Not Call") is said by a negation and its verb in any form; its
    // permission is the opposite, and never the same reading.
    let yes = cmp("do_not_call", "eq", json!(true));
    let no = cmp("do_not_call", "eq", json!(false));
    for (q, words) in [
        ("engineers who may not be called", "not be called"),
        ("contacts who don't want to be called", "don t want to be called"),
        ("Kontakte, die nicht angerufen werden dürfen", "nicht angerufen"),
        ("contactos sin permiso de llamada", "sin permiso de llamada"),
        ("contacts with do not call", "do not call"),
    ] {
        let r = read(&ava, q);
        assert!(has(&r, words, yes.clone()), "{q}: {:#?}", conditions(&r));
        assert!(!conditions(&r).iter().any(|(_, c)| *c == no), "{q}: {:#?}", conditions(&r));
    }
    for q in ["contacts we can call", "contacts that can be called"] {
        let r = read(&ava, q);
        assert!(conditions(&r).iter().any(|(_, c)| *c == no), "{q}: {:#?}", conditions(&r));
        assert!(!conditions(&r).iter().any(|(_, c)| *c == yes), "{q}: {:#?}", conditions(&r));
    }
    // A number beside a number field's name is its value, not a count of rows.
    for (q, words, field, n) in [
        ("opportunities with zero probability", "zero", "probability", 0),
        ("opportunities with a probability of 0", "0", "probability", 0),
        ("accounts with 250 employees", "250 employees", "employees", 250),
    ] {
        let r = read(&ava, q);
        assert!(has(&r, words, cmp(field, "eq", json!(n))), "{q}: {:#?}", conditions(&r));
        assert!(r.counts.is_empty(), "{q}: {:?}", r.counts);
    }
    // A record named of a parent and a value said of its child list the child.
    let r = read(&ava, "who works in sales at Stark Group?");
    assert_eq!(r.objects, ["contact"]);
}

#[test]
fn a_country_beside_a_currency_word_says_whose_currency_it_is() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    // "US dollars" is one currency, not a country and a currency: negated whole.
    let r = read(&cara, "invoices that are not in US dollars");
    assert!(has(&r, "US dollars", cmp("currency_code", "ne", json!("USD"))), "{:#?}", conditions(&r));
    assert!(
        !r.candidates.iter().any(|c| c.condition.fields().iter().any(|f| f.contains("country"))),
        "{:#?}",
        conditions(&r)
    );
    // Another country's dollars are not US dollars.
    let r = read(&cara, "invoices in Canadian dollars");
    assert!(!positive(&r, "dollars", "currency_code"), "{:#?}", conditions(&r));
    // A currency's words in a row are one ("livres sterling"); in capitals, "IN" is no country.
    let r = read(&cara, "factures en livres sterling");
    assert!(has(&r, "livres sterling", cmp("currency_code", "eq", json!("GBP"))), "{:#?}", conditions(&r));
    let r = read(&cara, "OVERDUE INVOICES IN POUNDS");
    assert!(has(&r, "POUNDS", cmp("currency_code", "eq", json!("GBP"))), "{:#?}", conditions(&r));
}

#[test]
fn a_pronoun_for_the_object_the_question_names_is_no_follow_up() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let endpoint = fake(vec![choice("opportunity", &[])]);
    let a = ask_with(&ava, "opportunités sauf celles en négociation", model(&endpoint.url, 0.0)).unwrap();
    assert!(a.clarification.is_none(), "{:?}", a.clarification);
    assert_eq!(serde_json::to_value(&a.spec.filters).unwrap(), cmp("stage", "ne", json!("negotiation")));
    // With no object of its own, the same pronoun continues a question Ask does not have.
    let endpoint = fake(vec![choice("account", &[])]);
    let e = ask_with(&ava, "and the ones in Berlin?", model(&endpoint.url, 0.0)).unwrap_err();
    assert_eq!(e.code, Code::GroundingInsufficient, "{e:?}");
}

#[test]
fn a_count_cut_through_equal_values_shows_every_record_that_ties() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    let all = ava.query(&all_of("account", &["credit_limit"])).unwrap();
    let mut limits: Vec<f64> = all.records.iter().map(|r| r["credit_limit"].as_f64().unwrap()).collect();
    limits.sort_by(f64::total_cmp);
    // The demo's fourth-lowest limit is shared with the fifth: no record is "the 4th" alone.
    assert_eq!(limits[3], limits[4], "the fixture has a tie at the cut");
    let through = limits.iter().filter(|l| **l <= limits[3]).count();
    let endpoint = fake(vec![Answer::Text(
        json!({"object": "account", "conditions": [], "sort": [], "limit": 4}).to_string(),
    )]);
    let a = ask_with(&ava, "the 4 accounts with the lowest credit limit", model(&endpoint.url, 0.0)).unwrap();
    let result = a.result.as_ref().unwrap_or_else(|| panic!("a table: {:?}", a.clarification));
    assert_eq!(result.records.len(), through, "{:?}", a.spec);
    assert!(through > 4);
    // The spec says the cut it shows instead of the count: "Credit limit at most <that value>".
    let cut = serde_json::to_value(&a.spec.filters).unwrap();
    assert_eq!((cut["field"].as_str(), cut["op"].as_str()), (Some("credit_limit"), Some("lte")), "{cut}");
    let value = cut["value"].as_f64().or_else(|| cut["value"].as_str().and_then(|s| s.parse().ok()));
    assert_eq!(value, Some(limits[3]), "{cut}");
    assert!(
        a.warning
            .as_deref()
            .is_some_and(|w| w.contains("You asked for 4") && w.contains(&through.to_string())),
        "{:?}",
        a.warning
    );
    // Without a tie the count stands.
    let endpoint = fake(vec![Answer::Text(
        json!({"object": "account", "conditions": [], "sort": [], "limit": 3}).to_string(),
    )]);
    let a = ask_with(&ava, "the 3 accounts with the most employees", model(&endpoint.url, 0.0)).unwrap();
    assert_eq!(a.result.as_ref().unwrap().records.len(), 3);
    assert_eq!(a.spec.limit, Some(3));
}

#[test]
fn amounts_in_a_currency_exact_numbers_acronyms_and_gaps_between_dates_are_read() {
    let f = common::demo();
    let cara = f.ws.session("cara").unwrap();
    // An amount said in a currency is an amount in that currency: both conditions, as one.
    let r = read(&cara, "factures de moins de mille euros");
    assert!(
        has(
            &r,
            "moins de mille euros",
            json!({"all": [cmp("total", "lt", json!(1000)), cmp("currency_code", "eq", json!("EUR"))]})
        ),
        "{:#?}",
        conditions(&r)
    );
    let r = read(&cara, "invoices of exactly 16800");
    assert!(has(&r, "exactly 16800", cmp("total", "eq", json!(16800))), "{:#?}", conditions(&r));
    // An acronym in a label is said by its words, or alone: "PO Number".
    for (q, words) in [
        ("which invoices have no purchase order?", "purchase order"),
        ("invoices without a PO", "a PO"),
        ("invoices lacking a purchase order number", "lacking a purchase order number"),
    ] {
        let r = read(&cara, q);
        assert!(has(&r, words, presence("po_number", "is_blank")), "{q}: {:#?}", conditions(&r));
    }
    // Words another reading holds spell no acronym: "paid ones" is not a PO.
    let r = read(&cara, "invoices except paid ones");
    assert!(!conditions(&r).iter().any(|(_, c)| c["field"] == "po_number"), "{:#?}", conditions(&r));
    // "anything but X" is "not X".
    let r = read(&cara, "opportunities in anything but prospecting");
    assert!(has(&r, "prospecting", cmp("stage", "ne", json!("prospecting"))), "{:#?}", conditions(&r));
    assert!(!positive(&r, "prospecting", "stage"), "{:#?}", conditions(&r));
    // The object's own name does not name a field in another language: "fällig" is the due date.
    let r = read(&cara, "Rechnungen, die im Mai 2026 fällig waren");
    let on: Vec<Value> = r
        .candidates
        .iter()
        .filter(|c| c.kind == countersign_kernel::ai::ask::reader::Kind::Date)
        .map(|c| serde_json::to_value(&c.condition).unwrap()["all"][0]["field"].clone())
        .collect();
    assert_eq!(on, vec![json!("due_date")], "{:#?}", conditions(&r));
    // A gap between two dates of one record is asked about in words, not read as an age.
    let endpoint = fake(vec![choice("invoice", &[])]);
    let e = ask_with(&cara, "invoices paid more than 30 days late", model(&endpoint.url, 0.0)).unwrap_err();
    assert_eq!(e.code, Code::GroundingInsufficient, "{e:?}");
    assert!(e.message.contains("cannot be asked yet"), "{}", e.message);
}

#[test]
fn comparisons_after_a_number_days_of_a_month_and_an_asking_which_are_read() {
    let f = common::demo();
    let ava = f.ws.session("ava").unwrap();
    for (q, words, field, op, n) in [
        ("lines with 20 units or more", "20 units or more", "quantity", "gte", 20),
        ("accounts with 10,000 employees or less", "10,000 employees or less", "employees", "lte", 10000),
        (
            "deals worth a quarter of a million or more",
            "a quarter of a million or more",
            "amount",
            "gte",
            250000,
        ),
        ("Verkaufschancen mit 100000 oder mehr", "100000 oder mehr", "amount", "gte", 100000),
    ] {
        let r = read(&ava, q);
        assert!(has(&r, words, cmp(field, op, json!(n))), "{q}: {:#?}", conditions(&r));
    }
    // "no next step set": the word that says "set" is the reading's own.
    let r = read(&ava, "any deals with no next step set?");
    assert!(has(&r, "next step set", presence("next_step", "is_blank")), "{:#?}", conditions(&r));
    // A day of a month.
    let r = read(&ava, "invoices issued on 9 January 2025");
    assert!(
        r.candidates.iter().any(|c| c.date.as_ref().is_some_and(|d| {
            d.start.as_deref() == Some("2025-01-09") && d.end.as_deref() == Some("2025-01-09")
        })),
        "{:#?}",
        conditions(&r)
    );
    // "which account has the most notes?": the account is asked for ("which" asks, it does
    // not relate), and a count of notes is no field's order: no order is read.
    let r = read(&ava, "which account has the most notes?");
    assert_eq!(r.objects, ["account"]);
    assert!(r.orders.iter().all(|o| o.object != "account"), "{:?}", r.orders);
    // A word naming an object is no value it only resembles: "negocio" is a deal, not the
    // stage Negotiation.
    let r = read(&ava, "el negocio más grande de Initech GmbH");
    assert_eq!(r.objects, ["opportunity"]);
    assert!(!conditions(&r).iter().any(|(_, c)| c["field"] == "stage"), "{:#?}", conditions(&r));
}
