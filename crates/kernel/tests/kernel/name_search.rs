//! Searching by name through the trigram index: the rows are exactly those `contains` selects
//! row by row (case, short needles, quotes, letters beyond ASCII), the plan reads the index,
//! and the index follows saves, renames, deletes and a deploy that moves the name field.

use crate::common::*;
use countersign_kernel::records::demo::demo_definition;
use countersign_kernel::{DeployOptions, QuerySpec, Session};
use serde_json::{json, Value};

fn names(s: &Session<'_>, needle: &str) -> Vec<String> {
    let spec = QuerySpec::from_json(&json!({"object": "account", "fields": ["name"], "filters": {"field": "name", "op": "contains", "value": needle}, "sort": [{"field": "name"}], "limit": 10000})).unwrap();
    s.query(&spec).unwrap().records.iter().map(|r| r["name"].as_str().unwrap().to_string()).collect()
}

fn all_names(s: &Session<'_>) -> Vec<String> {
    let spec = QuerySpec::from_json(
        &json!({"object": "account", "fields": ["name"], "sort": [{"field": "name"}], "limit": 10000}),
    )
    .unwrap();
    s.query(&spec).unwrap().records.iter().map(|r| r["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_name_search_finds_what_contains_finds_row_by_row() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    for name in ["Ölwerke Süd GmbH", "O'Brien \"Quoted\" & Co", "ÉCOLE Lumière"] {
        ava.create("account", map(json!({"name": name}))).unwrap();
    }
    let every = all_names(&ava);
    for needle in
        ["hold", "HOLD", "ol", "o", "werke süd", "\"Quoted\"", "'Bri", "umi", "zzzz", "école", "Lumière"]
    {
        let expected: Vec<String> = every
            .iter()
            .filter(|n| n.to_ascii_lowercase().contains(&needle.to_ascii_lowercase()))
            .cloned()
            .collect();
        assert_eq!(names(&ava, needle), expected, "contains {needle:?}");
    }
    let spec = QuerySpec::from_json(&json!({"object": "account", "filters": {"field": "name", "op": "contains", "value": "hold"}, "sort": [{"field": "name"}]})).unwrap();
    assert!(ava.plan(&spec).unwrap().contains("search_account"), "{}", ava.plan(&spec).unwrap());
}

#[test]
fn the_index_follows_renames_deletes_and_a_new_name_field() {
    let mut f = demo();
    let ava = f.ws.session("ava").unwrap();
    let made = ava.create("account", map(json!({"name": "Zebracorn Labs"}))).unwrap();
    assert_eq!(names(&ava, "zebracorn"), vec!["Zebracorn Labs"]);
    ava.update("account", &made.id, map(json!({"name": "Unicornia Labs"})), None).unwrap();
    assert!(names(&ava, "zebracorn").is_empty());
    assert_eq!(names(&ava, "unicornia"), vec!["Unicornia Labs"]);
    ava.delete("account", &made.id, None).unwrap();
    assert!(names(&ava, "unicornia").is_empty());
    drop(ava);
    // The name field moves to the billing city: the index is made again from the rows.
    let mut def = demo_definition();
    let account = def.objects.iter_mut().find(|o| o.key == "account").unwrap();
    account.name_field = "billing_city".into();
    let city = account.fields.iter_mut().find(|x| x.key == "billing_city").unwrap();
    city.required = false;
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let ava = f.ws.session("ava").unwrap();
    let spec = QuerySpec::from_json(&json!({"object": "account", "fields": ["billing_city"], "filters": {"field": "billing_city", "op": "contains", "value": "unic"}, "limit": 1000})).unwrap();
    assert!(ava.plan(&spec).unwrap().contains("search_account"));
    let found: Vec<Value> =
        ava.query(&spec).unwrap().records.iter().map(|r| r["billing_city"].clone()).collect();
    let expected =
        demo_rows("account").iter().filter(|r| r["billing_city"].to_lowercase().contains("unic")).count();
    assert!(expected > 0, "the demo has accounts in Munich");
    assert_eq!(found.len(), expected);
}
