//! Query specs: paths, sort, paging, typed errors, and — data-driven — that a filter selects
//! exactly the records for which the same condition tree holds in memory (the semantics of
//! validation rules).

use crate::common;

use common::*;
use countersign_kernel::metadata::condition::{Condition, Op, Operand};
use countersign_kernel::metadata::value::{coerce, Scalar};
use countersign_kernel::{Code, QuerySpec, Session};
use serde_json::{json, Value};

fn q(s: &Session<'_>, v: Value) -> countersign_kernel::Result<countersign_kernel::QueryResult> {
    s.query(&QuerySpec::from_json(&v)?)
}

fn ids(r: &countersign_kernel::QueryResult) -> Vec<String> {
    r.records.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn filter_sort_limit_with_parent_path() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let accounts = demo_rows("account");
    let name_of = |id: &str| accounts.iter().find(|a| a["id"] == id).unwrap()["name"].clone();
    let industry_of = |id: &str| accounts.iter().find(|a| a["id"] == id).unwrap()["industry"].clone();
    let mut expected: Vec<(f64, String)> = demo_rows("invoice")
        .into_iter()
        .filter(|r| {
            r["status"] != "void" && industry_of(&r["account"]) == "software" && !r["total"].is_empty()
        })
        .map(|r| (r["total"].parse().unwrap(), r["id"].clone()))
        .collect();
    expected.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap().then(a.1.cmp(&b.1)));
    let res = q(&ava, json!({
        "object": "invoice",
        "fields": ["number", "total", "account.name"],
        "filters": {"all": [{"field": "status", "op": "ne", "value": "void"}, {"field": "account.industry", "op": "eq", "value": "software"}]},
        "sort": [{"field": "total", "direction": "desc"}],
        "limit": 7
    }))
    .unwrap();
    assert_eq!(ids(&res), expected.iter().take(7).map(|e| e.1.clone()).collect::<Vec<_>>());
    assert!(res.has_more);
    for r in &res.records {
        let inv = demo_rows("invoice").into_iter().find(|i| i["id"] == r["id"]).unwrap();
        assert_eq!(r["account.name"], json!(name_of(&inv["account"])));
    }
    // Paging is stable and complete.
    let mut paged = Vec::new();
    for page in 0.. {
        let r = q(&ava, json!({"object": "invoice", "fields": ["status"], "sort": [{"field": "status"}], "limit": 70, "offset": page * 70})).unwrap();
        paged.extend(ids(&r));
        if !r.has_more {
            break;
        }
    }
    let mut all: Vec<String> = demo_rows("invoice").into_iter().map(|r| r["id"].clone()).collect();
    assert_eq!(paged.len(), all.len());
    paged.sort();
    all.sort();
    assert_eq!(paged, all);
}

#[test]
fn blanks_sort_last_in_both_directions() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    for dir in ["asc", "desc"] {
        let r = q(&ava, json!({"object": "invoice", "fields": ["paid_date"], "sort": [{"field": "paid_date", "direction": dir}], "limit": 300})).unwrap();
        let vals: Vec<&Value> = r.records.iter().map(|r| &r["paid_date"]).collect();
        let first_null = vals.iter().position(|v| v.is_null()).unwrap();
        assert!(vals[first_null..].iter().all(|v| v.is_null()), "{dir}");
        let set: Vec<&str> = vals[..first_null].iter().map(|v| v.as_str().unwrap()).collect();
        let mut sorted = set.clone();
        sorted.sort();
        if dir == "desc" {
            sorted.reverse();
        }
        assert_eq!(set, sorted);
    }
}

#[test]
fn malformed_specs_get_typed_errors() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let cases = [
        (
            json!({"object": "invoice", "filters": {"field": "total", "op": "contains", "value": "1"}}),
            Code::InvalidQuery,
        ),
        (
            json!({"object": "invoice", "filters": {"field": "status", "op": "eq", "value": "archived"}}),
            Code::InvalidQuery,
        ),
        (
            json!({"object": "invoice", "filters": {"field": "issue_date", "op": "gt", "value": "yesterday"}}),
            Code::InvalidQuery,
        ),
        (
            json!({"object": "invoice", "filters": {"field": "total", "op": "gt", "otherField": "issue_date"}}),
            Code::InvalidQuery,
        ),
        (
            json!({"object": "invoice", "filters": {"field": "status", "op": "lt", "value": "paid"}}),
            Code::InvalidQuery,
        ),
        (json!({"object": "invoice", "fields": ["account.name.city"]}), Code::UnknownField),
        (json!({"object": "invoice_line", "fields": ["invoice.account.owner.key"]}), Code::InvalidQuery),
        (json!({"object": "invoice", "fields": ["number.name"]}), Code::UnknownField),
        (json!({"object": "invoice", "limit": 0}), Code::InvalidQuery),
        (json!({"object": "invoice", "limit": 20000}), Code::InvalidQuery),
        (
            json!({"object": "invoice", "filters": {"field": "status", "op": "in", "value": []}}),
            Code::InvalidQuery,
        ),
        (
            json!({"object": "invoice", "filters": {"field": "status", "op": "is_set", "value": "x"}}),
            Code::InvalidQuery,
        ),
        (
            json!({"object": "invoice", "filters": {"field": "status", "op": "like", "value": "x"}}),
            Code::InvalidQuery,
        ),
        (json!({"object": "invoice", "colour": "red"}), Code::InvalidQuery),
        (json!({"object": "invoice", "sort": [{"field": "notes"}]}), Code::InvalidQuery),
        (json!({"object": "spaceship"}), Code::UnknownObject),
    ];
    for (spec, code) in cases {
        let e = q(&ava, spec.clone()).unwrap_err();
        assert_eq!(e.code, code, "{spec}: {}", e.message);
    }
    // Shape errors carry the JSON path.
    let e = QuerySpec::from_json(
        &json!({"object": "invoice", "sort": [{"field": "total", "direction": "down"}]}),
    )
    .unwrap_err();
    assert!(e.details.iter().any(|d| d.path == "/sort/0/direction"), "{e}");
}

#[test]
fn queries_are_parameterized() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let evil = "x' OR '1'='1";
    let r = q(&ava, json!({"object": "account", "filters": {"field": "name", "op": "eq", "value": evil}}))
        .unwrap();
    assert!(r.records.is_empty());
    let sql = ava
        .explain(
            &QuerySpec::from_json(
                &json!({"object": "account", "filters": {"field": "name", "op": "eq", "value": evil}}),
            )
            .unwrap(),
        )
        .unwrap();
    assert!(!sql.contains(evil), "{sql}");
}

/// Deterministic generator for the data-driven agreement test.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[(self.next() % v.len() as u64) as usize]
    }
}

fn random_condition(
    rng: &mut Rng,
    fields: &[(&str, &[&str])],
    data: &[serde_json::Map<String, Value>],
    depth: u32,
) -> Value {
    let roll = rng.next() % 10;
    if depth < 3 && roll < 3 {
        let n = 1 + rng.next() % 3;
        let kids: Vec<Value> = (0..n).map(|_| random_condition(rng, fields, data, depth + 1)).collect();
        return if roll == 0 {
            json!({"all": kids})
        } else if roll == 1 {
            json!({"any": kids})
        } else {
            json!({"not": kids[0]})
        };
    }
    let (field, ops) = *rng.pick(fields);
    let op = *rng.pick(ops);
    let sample = || data[(rng.next() % data.len() as u64) as usize][field].clone();
    let mut sample = sample;
    match op {
        "is_set" | "is_blank" => json!({"field": field, "op": op}),
        "in" => {
            let vals: Vec<Value> = (0..3).map(|_| sample()).filter(|v| !v.is_null()).collect();
            if vals.is_empty() {
                json!({"field": field, "op": "is_blank"})
            } else {
                json!({"field": field, "op": "in", "value": vals})
            }
        }
        "other" => {
            let partner = fields
                .iter()
                .find(|(f, _)| *f != field && f.starts_with(&field[..2]))
                .map(|(f, _)| *f)
                .unwrap_or(field);
            let op = *rng.pick(&["eq", "ne", "lt", "lte", "gt", "gte"]);
            json!({"field": field, "op": op, "otherField": partner})
        }
        "contains" => {
            let v = sample();
            let s = v.as_str().unwrap_or("an").to_string();
            let start = (rng.next() % (s.len().max(1) as u64)) as usize;
            let piece: String = s.chars().skip(start).take(3).collect();
            let piece = if piece.is_empty() {
                "e".to_string()
            } else if rng.next() % 2 == 0 {
                piece.to_uppercase()
            } else {
                piece
            };
            json!({"field": field, "op": "contains", "value": piece})
        }
        op => {
            let v = sample();
            if v.is_null() {
                json!({"field": field, "op": "is_set"})
            } else {
                json!({"field": field, "op": op, "value": v})
            }
        }
    }
}

fn check_agreement(object: &str, fields: &[(&str, &[&str])], seed: u64) {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let all = q(&ava, json!({"object": object, "limit": 10000})).unwrap();
    let (meta, _) = ava.readable_object(object).unwrap();
    let slots: Vec<Vec<Scalar>> = all
        .records
        .iter()
        .map(|r| meta.fields().iter().map(|fd| coerce(fd, &r[&fd.key]).unwrap()).collect())
        .collect();
    let mut rng = Rng(seed);
    let mut nonempty = 0;
    for _ in 0..250 {
        let cond_json = random_condition(&mut rng, fields, &all.records, 0);
        let cond: Condition = serde_json::from_value(cond_json.clone()).unwrap();
        let pred = cond
            .compile(&mut |p: &str| {
                let slot = meta.field_index(p).unwrap();
                Ok(Operand {
                    expr: String::new(),
                    slot,
                    def: Box::new(meta.fields()[slot].clone()),
                    row: None,
                    text_index: None,
                })
            })
            .unwrap();
        let mut expected: Vec<String> = all
            .records
            .iter()
            .zip(&slots)
            .filter(|(_, s)| pred.eval(s))
            .map(|(r, _)| r["id"].as_str().unwrap().to_string())
            .collect();
        expected.sort();
        let got = q(&ava, json!({"object": object, "fields": ["id"], "filters": cond_json, "limit": 10000, "sort": [{"field": "id"}]})).unwrap();
        assert_eq!(ids(&got), expected, "condition {cond_json}");
        if !expected.is_empty() && expected.len() < all.records.len() {
            nonempty += 1;
        }
    }
    assert!(nonempty > 50, "the generated conditions should discriminate ({nonempty})");
}

#[test]
fn sql_filters_agree_with_in_memory_rules_on_invoices() {
    let cmp: &[&str] = &["eq", "ne", "lt", "lte", "gt", "gte", "in", "is_set", "is_blank", "other"];
    let text: &[&str] = &["eq", "ne", "lt", "gt", "in", "contains", "is_set", "is_blank"];
    let pick: &[&str] = &["eq", "ne", "in", "is_set", "is_blank"];
    check_agreement(
        "invoice",
        &[
            ("status", pick),
            ("currency_code", pick),
            ("total", cmp),
            ("issue_date", cmp),
            ("due_date", cmp),
            ("paid_date", cmp),
            ("po_number", text),
            ("number", text),
            ("account", pick),
        ],
        0x5eed,
    );
}

#[test]
fn sql_filters_agree_with_in_memory_rules_on_contacts() {
    let text: &[&str] = &["eq", "ne", "lt", "gte", "in", "contains", "is_set", "is_blank", "other"];
    let boolean: &[&str] = &["eq", "ne", "is_set", "is_blank"];
    let date: &[&str] = &["eq", "lt", "gte", "is_blank", "in"];
    check_agreement(
        "contact",
        &[
            ("first_name", text),
            ("last_name", text),
            ("email", text),
            ("title", text),
            ("do_not_call", boolean),
            ("birthdate", date),
            ("department", &["eq", "ne", "in", "is_blank"]),
        ],
        0xfeed,
    );
}

#[test]
fn blank_semantics_match_rules() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let n_blank = demo_rows("invoice").iter().filter(|r| r["paid_date"].is_empty()).count();
    let total = demo_rows("invoice").len();
    let count = |v: Value| {
        q(&ava, json!({"object": "invoice", "fields": ["id"], "limit": 10000, "filters": v}))
            .unwrap()
            .records
            .len()
    };
    assert_eq!(count(json!({"field": "paid_date", "op": "is_blank"})), n_blank);
    // A comparison with a blank side is false, and `not` of it is true.
    let after = count(json!({"field": "paid_date", "op": "gt", "value": "2000-01-01"}));
    assert_eq!(after, total - n_blank);
    assert_eq!(count(json!({"not": {"field": "paid_date", "op": "gt", "value": "2000-01-01"}})), n_blank);
    assert_eq!(count(json!({"field": "paid_date", "op": "ne", "value": "2000-01-01"})), total);
}

#[test]
fn ops_cover_every_listed_operator() {
    // Guard: the generator above and the schema list the same ten operators (and `matches`,
    // full text, which rules cannot use: see the test below).
    let ops = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "contains", "matches", "is_set", "is_blank"];
    for op in ops {
        let parsed: Op = serde_json::from_value(json!(op)).unwrap();
        assert_eq!(parsed.as_str(), op);
    }
}

/// The ids a spec finds, sorted.
fn found(s: &Session<'_>, spec: Value) -> Vec<String> {
    let spec = QuerySpec::from_json(&spec).unwrap();
    let mut ids: Vec<String> =
        s.query(&spec).unwrap().records.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    ids.sort();
    ids
}

#[test]
fn related_records_some_none_and_at_least_count_only_the_children_the_user_can_read() {
    let f = demo();
    let accounts = demo_rows("account");
    let opportunities = demo_rows("opportunity");
    // What each user may read of the opportunities (private: ben his own, ava all).
    let expected = |user: &str, wanted: &dyn Fn(usize) -> bool| -> Vec<String> {
        let mut ids: Vec<String> = accounts
            .iter()
            .filter(|a| {
                let n = opportunities
                    .iter()
                    .filter(|o| o["account"] == a["id"] && (user == "ava" || o["owner"] == user))
                    .count();
                wanted(n)
            })
            .map(|a| a["id"].clone())
            .collect();
        ids.sort();
        ids
    };
    let spec = |has: &str, count: Option<u32>| {
        let mut related = json!({"object": "opportunity", "via": "account", "has": has});
        if let Some(n) = count {
            related["count"] = json!(n);
        }
        json!({"object": "account", "filters": {"related": related}, "limit": 1000})
    };
    for user in ["ava", "ben"] {
        let s = f.ws.session(user).unwrap();
        assert_eq!(found(&s, spec("none", None)), expected(user, &|n| n == 0), "{user}: none");
        assert_eq!(found(&s, spec("some", None)), expected(user, &|n| n > 0), "{user}: some");
        assert_eq!(found(&s, spec("at_least", Some(3))), expected(user, &|n| n >= 3), "{user}: at least 3");
    }
    // ben reads fewer opportunities, so more of his accounts have none.
    let ben = found(&f.ws.session("ben").unwrap(), spec("none", None));
    let ava = found(&f.ws.session("ava").unwrap(), spec("none", None));
    assert!(ben.len() > ava.len());
}

#[test]
fn a_related_filter_reads_the_childs_own_readable_fields_only() {
    let f = demo();
    let invoices = demo_rows("invoice");
    let mut expected: Vec<String> = demo_rows("account")
        .iter()
        .filter(|a| invoices.iter().any(|i| i["account"] == a["id"] && i["status"] == "overdue"))
        .map(|a| a["id"].clone())
        .collect();
    expected.sort();
    let cara = f.ws.session("cara").unwrap();
    let overdue = json!({"object": "account", "limit": 1000, "filters": {"related": {
        "object": "invoice", "via": "account", "has": "some",
        "filter": {"field": "status", "op": "eq", "value": "overdue"}}}});
    assert_eq!(found(&cara, overdue), expected);
    // A field the user may not read is absent there too; a parent path is not the child's own.
    let ben = f.ws.session("ben").unwrap();
    let margin = json!({"object": "account", "filters": {"related": {
        "object": "opportunity", "via": "account", "has": "some",
        "filter": {"field": "margin_pct", "op": "gt", "value": 10}}}});
    assert!(ben.query(&QuerySpec::from_json(&margin).unwrap()).is_err());
    let parent = json!({"object": "account", "filters": {"related": {
        "object": "opportunity", "via": "account", "has": "some",
        "filter": {"field": "account.name", "op": "eq", "value": "x"}}}});
    assert_eq!(ben.query(&QuerySpec::from_json(&parent).unwrap()).unwrap_err().code, Code::InvalidQuery);
    // `via` must be the child's lookup to the queried object; `count` goes with at_least only.
    let wrong = json!({"object": "account", "filters": {"related": {"object": "invoice_line", "via": "invoice", "has": "none"}}});
    assert_eq!(cara.query(&QuerySpec::from_json(&wrong).unwrap()).unwrap_err().code, Code::InvalidQuery);
    let counted = json!({"object": "account", "filters": {"related": {"object": "note", "via": "account", "has": "none", "count": 2}}});
    assert_eq!(cara.query(&QuerySpec::from_json(&counted).unwrap()).unwrap_err().code, Code::InvalidQuery);
}

#[test]
fn an_amount_comes_with_the_path_of_its_records_currency() {
    let f = demo();
    let cara = f.ws.session("cara").unwrap();
    // An invoice's total: its own currency picklist, selected even when not a column.
    let spec = json!({"object": "invoice", "fields": ["number", "total"], "limit": 5});
    let r = cara.query(&QuerySpec::from_json(&spec).unwrap()).unwrap();
    assert_eq!(r.currency_of.get("total").map(String::as_str), Some("currency_code"));
    assert_eq!(r.fields, vec!["number", "total"], "the currency is no column of the answer");
    let invoices = demo_rows("invoice");
    for rec in &r.records {
        let row = invoices.iter().find(|i| i["id"] == rec["id"]).unwrap();
        assert_eq!(rec["currency_code"], row["currency_code"]);
    }
    // An invoice line's amount: its invoice's.
    let spec = json!({"object": "invoice_line", "fields": ["description", "amount"], "limit": 3});
    let r = cara.query(&QuerySpec::from_json(&spec).unwrap()).unwrap();
    assert_eq!(r.currency_of.get("amount").map(String::as_str), Some("invoice.currency_code"));
    assert!(r.records.iter().all(|x| x["invoice.currency_code"].is_string()));
    // An opportunity's amount states none: the workspace's currency.
    let spec = json!({"object": "opportunity", "fields": ["name", "amount"], "limit": 3});
    assert!(cara.query(&QuerySpec::from_json(&spec).unwrap()).unwrap().currency_of.is_empty());
}

/// Rows a full-text condition selects come best match first (bm25) unless the spec sorts.
#[test]
fn matches_ranks_the_best_match_first_unless_the_spec_sorts() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let mut ids = vec![];
    for (title, body) in [
        ("a", "One zeppelin among many other words about a quarterly review and its figures."),
        ("b", "Zeppelin. Zeppelins, zeppelin."),
        ("c", "A zeppelin and another zeppelin in a longer sentence of plain words."),
    ] {
        let fields = json!({"account": "acc_0001", "title": title, "body": body, "written_at": "2026-01-05T10:00:00Z"});
        ids.push(ava.create("note", fields.as_object().unwrap().clone()).unwrap().id);
    }
    let run = |spec: Value| -> Vec<String> {
        let spec = QuerySpec::from_json(&spec).unwrap();
        ava.query(&spec).unwrap().records.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
    };
    let matches = json!({"field": "body", "op": "matches", "value": "zeppelin"});
    let ranked = run(json!({"object": "note", "filters": matches}));
    assert_eq!(ranked, vec![ids[1].clone(), ids[2].clone(), ids[0].clone()], "densest first");
    // Inside an `all` too; a sort of the spec's own wins.
    let within = run(
        json!({"object": "note", "filters": {"all": [matches, {"field": "account", "op": "eq", "value": "acc_0001"}]}}),
    );
    assert_eq!(within, ranked);
    let by_title =
        run(json!({"object": "note", "filters": matches, "sort": [{"field": "title", "direction": "desc"}]}));
    assert_eq!(by_title, vec![ids[2].clone(), ids[1].clone(), ids[0].clone()]);
}

#[test]
fn matches_finds_long_texts_by_their_stemmed_words_in_readable_rows_only() {
    let mut f = demo();
    let notes = demo_rows("note");
    let expected = |user: &str, says: &str| -> Vec<String> {
        let mut ids: Vec<String> = notes
            .iter()
            .filter(|n| n["body"].contains(says) && (user == "ava" || n["owner"] == user))
            .map(|n| n["id"].clone())
            .collect();
        ids.sort();
        ids
    };
    let spec = |op: &str, value: &str| json!({"object": "note", "filters": {"field": "body", "op": op, "value": value}, "limit": 1000});
    let ava = f.ws.session("ava").unwrap();
    // Every word, in any form and order: "announcing budget freezes" finds "Budget freeze
    // announced", which the literal phrase does not.
    let budget = expected("ava", "Budget freeze announced");
    assert!(budget.len() > 5, "{budget:?}");
    assert_eq!(found(&ava, spec("matches", "announcing budget freezes")), budget);
    assert!(found(&ava, spec("contains", "announcing budget freezes")).is_empty());
    assert!(found(&ava, spec("matches", "budget outages")).is_empty(), "all words are required");
    // Query syntax in the value is words.
    assert!(found(&ava, spec("matches", "\"NEAR(* OR budget")).is_empty());
    // A value without a word, a short text field, a rule: refused.
    for bad in [
        spec("matches", " - "),
        json!({"object": "note", "filters": {"field": "title", "op": "matches", "value": "risk"}}),
    ] {
        assert_eq!(ava.query(&QuerySpec::from_json(&bad).unwrap()).unwrap_err().code, Code::InvalidQuery);
    }
    let rule: Condition =
        serde_json::from_value(json!({"field": "body", "op": "matches", "value": "credit"})).unwrap();
    let catalog = f.ws.catalog().unwrap().clone();
    let meta = catalog.object_meta("note").unwrap();
    let in_memory = rule.compile(&mut |p: &str| {
        let slot = meta.field_index(p).unwrap();
        Ok(Operand {
            expr: String::new(),
            slot,
            def: Box::new(meta.fields()[slot].clone()),
            row: None,
            text_index: None,
        })
    });
    assert!(in_memory.is_err(), "a rule is evaluated on one record, not the corpus");
    drop(ava);
    // Notes made private: ben finds only his own.
    let mut def: Value = serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    for o in def["objects"].as_array_mut().unwrap() {
        if o["key"] == "note" {
            o["sharing"] = json!("private");
        }
    }
    let def = countersign_kernel::WorkspaceDefinition::from_json(&def).unwrap();
    f.ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let ben = f.ws.session("ben").unwrap();
    let outages = expected("ben", "Two outages");
    assert!(!outages.is_empty() && outages.len() < expected("ava", "Two outages").len());
    assert_eq!(found(&ben, spec("matches", "outage credit")), outages);
}
