//! Finding text through the trigram index of short text fields: a `contains` and a query's
//! `search` select exactly the rows a row-by-row check selects (case, short needles, quotes,
//! letters beyond ASCII, parents' names, per user), never by a field or parent the user may not
//! read; the plan reads the index, and the index follows saves, renames, deletes, a deploy that
//! moves the name field or adds a text field, and an import.

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

/// Every short text field `s` reads, and each readable lookup's parent name, as the list
/// would show them.
fn searchable_paths(s: &Session<'_>, object: &str) -> Vec<String> {
    use countersign_kernel::metadata::definition::FieldType;
    let mut paths = vec![];
    for f in s.readable_fields(object).unwrap() {
        match f.field_type {
            FieldType::Text | FieldType::Email | FieldType::Phone | FieldType::Url => {
                paths.push(f.key.clone())
            }
            FieldType::Lookup => paths.push(format!("{}.name", f.key)),
            _ => {}
        }
    }
    paths
}

fn searched(s: &Session<'_>, object: &str, text: &str) -> Vec<String> {
    let spec = QuerySpec::from_json(
        &json!({"object": object, "fields": ["id"], "search": text, "sort": [{"field": "id"}], "limit": 10000}),
    )
    .unwrap();
    let found: Vec<String> =
        s.query(&spec).unwrap().records.iter().map(|r| r["id"].as_str().unwrap().into()).collect();
    let counted = s.count_records(&spec, true).unwrap();
    assert_eq!(counted.n as usize, found.len(), "the count of a search is its rows ({object}, {text:?})");
    found
}

#[test]
fn a_search_finds_what_any_readable_text_field_or_parent_name_contains_row_by_row() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let acme = ava.create("account", map(json!({"name": "Ölwerke Süd GmbH"}))).unwrap();
    ava.create(
        "contact",
        map(json!({"first_name": "Zoë", "last_name": "O'Brien \"Q\"", "email": "zoe.obrien@example.org", "account": acme.id})),
    )
    .unwrap();
    for user in ["ava", "ben", "dan"] {
        let s = f.ws.session(user).unwrap();
        for object in ["contact", "opportunity"] {
            let paths = searchable_paths(&s, object);
            let spec = QuerySpec::from_json(
                &json!({"object": object, "fields": paths, "sort": [{"field": "id"}], "limit": 10000}),
            )
            .unwrap();
            let rows = s.query(&spec).unwrap().records;
            for needle in [
                "example.org",
                "EXAMPLE",
                "o",
                "ob",
                "werke süd",
                "\"Q\"",
                "'Bri",
                "zzzz",
                "Zoë",
                "+1",
                "Holdings",
            ] {
                let lower = needle.to_ascii_lowercase();
                let expected: Vec<String> = rows
                    .iter()
                    .filter(|r| {
                        paths
                            .iter()
                            .any(|p| r[p].as_str().is_some_and(|v| v.to_ascii_lowercase().contains(&lower)))
                    })
                    .map(|r| r["id"].as_str().unwrap().to_string())
                    .collect();
                assert_eq!(searched(&s, object, needle), expected, "{user} searches {object} for {needle:?}");
            }
        }
    }
    let spec = QuerySpec::from_json(
        &json!({"object": "contact", "search": "example", "sort": [{"field": "last_name"}]}),
    )
    .unwrap();
    let plan = ava.plan(&spec).unwrap();
    assert!(plan.contains("search_contact") && plan.contains("search_account"), "{plan}");
}

#[test]
fn a_search_never_finds_a_record_by_what_the_user_may_not_read() {
    let mut f = demo();
    let ava = f.ws.session("ava").unwrap();
    let made = ava
        .create("account", map(json!({"name": "Quillfeather Ltd", "tax_id": "TX-ZQ-99817", "description": "Makes marzipan lighthouses by hand."})))
        .unwrap();
    ava.create("contact", map(json!({"first_name": "Ines", "last_name": "Ortiz", "account": made.id})))
        .unwrap();
    assert_eq!(searched(&ava, "account", "zq-998"), vec![made.id.clone()]);
    // Long text: every word, the last one as typed so far; word forms match (the corpus stems).
    assert_eq!(searched(&ava, "account", "marzipan lighth"), vec![made.id.clone()]);
    assert_eq!(searched(&ava, "account", "lighthouse marzipan"), vec![made.id.clone()]);
    assert!(searched(&ava, "account", "marzipan submarine").is_empty());
    // Ben (a sales rep) does not read tax ids: he never finds an account by one.
    let ben = f.ws.session("ben").unwrap();
    assert!(searched(&ben, "account", "zq-998").is_empty());
    assert_eq!(searched(&ben, "account", "quillfeather"), vec![made.id.clone()]);
    drop((ava, ben));
    // Accounts made private: ben reads ava's contact but not its account, so he does not find
    // the contact by the account's name either; ava does.
    let mut def = demo_definition();
    def.objects.iter_mut().find(|o| o.key == "account").unwrap().sharing =
        countersign_kernel::metadata::types::Sharing::Private;
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let (ava, ben) = (f.ws.session("ava").unwrap(), f.ws.session("ben").unwrap());
    let ines = searched(&ava, "contact", "quillfeather");
    assert_eq!(ines.len(), 1);
    assert_eq!(searched(&ben, "contact", "ortiz"), ines, "ben reads the contact");
    assert!(searched(&ben, "contact", "quillfeather").is_empty());
    assert!(searched(&ben, "contact", "qu").iter().all(|id| id != &ines[0]), "nor with a short needle");
}

#[test]
fn the_index_takes_a_new_text_field_and_an_import_reaches_it() {
    let mut f = demo();
    let mut def = demo_definition();
    let invoice = def.objects.iter_mut().find(|o| o.key == "invoice").unwrap();
    let mut field = invoice.fields.iter().find(|x| x.key == "po_number").unwrap().clone();
    field.key = "carrier_ref".into();
    field.label = "Carrier Reference".into();
    invoice.fields.push(field);
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let ava = f.ws.session("ava").unwrap();
    let id = demo_rows("invoice")[0]["id"].clone();
    ava.update("invoice", &id, map(json!({"carrier_ref": "DHL-7731-XQ"})), None).unwrap();
    assert_eq!(searched(&ava, "invoice", "7731-x"), vec![id.clone()]);
    let csv = "number,account,status,issue_date,due_date,total,currency_code,carrier_ref\nINV-T-1,acc_0001,draft,2026-01-01,2026-02-01,10,USD,UPS-5150-KV\n";
    let report =
        countersign_kernel::records::import::import_csv(&ava, "invoice", csv.as_bytes(), &Default::default())
            .unwrap();
    assert_eq!(report.imported, 1, "{report:?}");
    assert_eq!(searched(&ava, "invoice", "5150-kv").len(), 1);
    let spec = QuerySpec::from_json(
        &json!({"object": "invoice", "search": "5150-kv", "sort": [{"field": "number"}]}),
    )
    .unwrap();
    assert!(ava.plan(&spec).unwrap().contains("search_invoice"));
}
