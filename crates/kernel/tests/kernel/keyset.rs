//! Keyset paging: page after page from each page's `next` gives exactly the rows offset paging
//! gives over the whole set — with ties, blanks, both directions, parent paths and a user who
//! sees only some rows — and a jump to a value starts at the first row reaching it.

use crate::common::*;
use countersign_kernel::{Code, QueryResult, QuerySpec, Session};
use serde_json::{json, Value};

fn run(s: &Session<'_>, v: Value) -> countersign_kernel::Result<QueryResult> {
    s.query(&QuerySpec::from_json(&v)?)
}

fn ids(r: &QueryResult) -> Vec<String> {
    r.records.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect()
}

/// Every row, one page of `size` at a time through `next`.
fn by_keyset(s: &Session<'_>, object: &str, sort: &Value, size: u32) -> Vec<String> {
    let mut out = Vec::new();
    let mut after = Value::Null;
    loop {
        let mut spec = json!({"object": object, "fields": ["id"], "sort": sort, "limit": size});
        if !after.is_null() {
            spec["after"] = after.clone();
        }
        let page = run(s, spec).unwrap();
        out.extend(ids(&page));
        match page.next {
            Some(c) => {
                assert!(page.has_more);
                after = serde_json::to_value(c).unwrap();
            }
            None => {
                assert!(!page.has_more);
                return out;
            }
        }
        assert!(out.len() < 100_000, "keyset paging never ended");
    }
}

/// Every row, one page at a time counted off with `offset` (one statement with ORDER BY).
fn by_offset(s: &Session<'_>, object: &str, sort: &Value, size: u32) -> Vec<String> {
    let mut out = Vec::new();
    for page in 0.. {
        let r = run(
            s,
            json!({"object": object, "fields": ["id"], "sort": sort, "limit": size, "offset": page * size}),
        )
        .unwrap();
        out.extend(ids(&r));
        if !r.has_more {
            return out;
        }
    }
    unreachable!()
}

#[test]
fn keyset_pages_are_offset_pages_with_ties_blanks_and_both_directions() {
    let f = demo();
    let sorts = [
        ("invoice", json!([{"field": "status"}])),
        ("invoice", json!([{"field": "status", "direction": "desc"}])),
        ("invoice", json!([{"field": "paid_date"}])),
        ("invoice", json!([{"field": "paid_date", "direction": "desc"}])),
        ("invoice", json!([{"field": "status"}, {"field": "paid_date", "direction": "desc"}])),
        (
            "invoice",
            json!([{"field": "paid_date", "direction": "desc"}, {"field": "status"}, {"field": "total"}]),
        ),
        ("invoice", json!([{"field": "account.industry", "direction": "desc"}, {"field": "total"}])),
        ("invoice", json!([])),
        ("account", json!([{"field": "industry"}, {"field": "annual_revenue", "direction": "desc"}])),
        ("contact", json!([{"field": "account.name"}, {"field": "title"}])),
    ];
    for user in ["ava", "ben"] {
        let s = f.ws.session(user).unwrap();
        for (object, sort) in &sorts {
            let reference = by_offset(&s, object, sort, 1000);
            assert!(reference.len() > 20, "{object} {sort}");
            for size in [1, 7, 50] {
                assert_eq!(
                    by_keyset(&s, object, sort, size),
                    reference,
                    "{user} {object} {sort} pages of {size}"
                );
            }
        }
    }
    // The sorts above do hold ties and blanks in the demo (else the test proves little).
    let s = f.ws.session("ava").unwrap();
    let unpaid = run(
        &s,
        json!({"object": "invoice", "filters": {"field": "paid_date", "op": "is_blank"}, "limit": 1}),
    )
    .unwrap();
    assert_eq!(unpaid.records.len(), 1);
}

#[test]
fn a_jump_to_a_value_starts_at_the_first_row_reaching_it() {
    let f = demo();
    let s = f.ws.session("ava").unwrap();
    let cases = [
        (json!([{"field": "status"}]), json!(["paid"])),
        (json!([{"field": "status", "direction": "desc"}]), json!(["overdue"])),
        (json!([{"field": "total"}]), json!([1000])),
        (json!([{"field": "paid_date", "direction": "desc"}, {"field": "number"}]), json!(["2025-03-01"])),
        (json!([{"field": "paid_date"}]), json!([null])),
        (json!([{"field": "status"}, {"field": "total", "direction": "desc"}]), json!(["paid", 5000])),
    ];
    for (sort, values) in cases {
        let all = run(&s, json!({"object": "invoice", "fields": ["status", "total", "paid_date", "number"], "sort": sort, "limit": 10000, "offset": 0})).unwrap();
        let page = run(&s, json!({"object": "invoice", "fields": ["id"], "sort": sort, "limit": 10000, "after": {"values": values}})).unwrap();
        // The first row reaching the values: the rows before it are exactly those that sort
        // before the values on the leading keys.
        let keys: Vec<(String, bool)> = sort
            .as_array()
            .unwrap()
            .iter()
            .map(|k| (k["field"].as_str().unwrap().to_string(), k["direction"] == "desc"))
            .collect();
        let before = |r: &serde_json::Map<String, Value>| -> bool {
            for ((field, desc), v) in keys.iter().zip(values.as_array().unwrap()) {
                match compare(&r[field], v, *desc) {
                    std::cmp::Ordering::Less => return true,
                    std::cmp::Ordering::Greater => return false,
                    std::cmp::Ordering::Equal => continue,
                }
            }
            false
        };
        let skipped = all.records.iter().take_while(|r| before(r)).count();
        assert!(all.records.iter().skip(skipped).all(|r| !before(r)), "{sort}: the order is not the sort's");
        let expected: Vec<String> = ids(&all).into_iter().skip(skipped).collect();
        assert_eq!(ids(&page), expected, "{sort} from {values}");
    }
}

/// How two JSON values sort under a key: blanks last in both directions.
fn compare(a: &Value, b: &Value, desc: bool) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (a.is_null(), b.is_null()) {
        (true, true) => Equal,
        (true, false) => Greater,
        (false, true) => Less,
        (false, false) => {
            let o = match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x.partial_cmp(&y).unwrap(),
                _ => a.as_str().unwrap().cmp(b.as_str().unwrap()),
            };
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

#[test]
fn a_cursor_that_does_not_fit_the_sort_is_a_typed_error() {
    let f = demo();
    let s = f.ws.session("ava").unwrap();
    let sort = json!([{"field": "total"}]);
    for (after, offset) in [
        (json!({"values": [1, 2]}), None),
        (json!({"values": [], "row": 3}), None),
        (json!({"values": ["lots"], "row": 3}), None),
        (json!({"values": [5]}), Some(10)),
    ] {
        let mut spec = json!({"object": "invoice", "sort": sort, "after": after});
        if let Some(o) = offset {
            spec["offset"] = json!(o);
        }
        let e = run(&s, spec).unwrap_err();
        assert_eq!(e.code, Code::InvalidQuery, "{after}: {e:?}");
    }
    let e = run(&s, json!({"object": "invoice", "after": {"values": [], "row": "x"}})).unwrap_err();
    assert_eq!(e.code, Code::InvalidQuery);
}

#[test]
fn a_scroll_position_and_a_jump_find_the_rows_offset_paging_finds() {
    let f = demo();
    for user in ["ava", "ben"] {
        let s = f.ws.session(user).unwrap();
        for sort in [
            json!([{"field": "paid_date", "direction": "desc"}, {"field": "status"}]),
            json!([{"field": "status"}, {"field": "total", "direction": "desc"}]),
            json!([{"field": "paid_date"}]),
        ] {
            let base = json!({"object": "invoice", "fields": ["id"], "sort": sort});
            let spec = QuerySpec::from_json(&base).unwrap();
            let all = by_offset(&s, "invoice", &sort, 1000);
            for position in [
                0,
                1,
                2,
                17,
                all.len() as u64 / 2,
                all.len() as u64 - 1,
                all.len() as u64,
                all.len() as u64 + 5,
            ] {
                let mut page = base.clone();
                page["limit"] = json!(5);
                if let Some(c) = s.cursor_at(&spec, position).unwrap() {
                    page["after"] = serde_json::to_value(c).unwrap();
                } else if position > 0 {
                    assert!(
                        position >= all.len() as u64,
                        "{user} {sort} {position}: no cursor inside the list"
                    );
                    continue;
                }
                let expected: Vec<String> = all.iter().skip(position as usize).take(5).cloned().collect();
                assert_eq!(ids(&run(&s, page).unwrap()), expected, "{user} {sort} at {position}");
            }
        }
        // A jump to a value lands where the first row reaching it is.
        let sort = json!([{"field": "status"}, {"field": "total", "direction": "desc"}]);
        let spec = QuerySpec::from_json(&json!({"object": "invoice", "sort": sort})).unwrap();
        let all = run(
            &s,
            json!({"object": "invoice", "fields": ["status"], "sort": sort, "limit": 10000, "offset": 0}),
        )
        .unwrap();
        let first_paid = all.records.iter().position(|r| r["status"] == "paid").unwrap() as u64;
        assert_eq!(s.position_of(&spec, &[json!("paid")]).unwrap(), first_paid);
        assert_eq!(s.position_of(&spec, &[]).unwrap(), 0);
    }
}
