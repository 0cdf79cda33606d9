//! Access: sharing and owner decide rows, field levels decide columns; absent, not forbidden.

use crate::common;

use common::*;
use countersign_kernel::{Code, QuerySpec};
use serde_json::json;

fn spec(v: serde_json::Value) -> QuerySpec {
    QuerySpec::from_json(&v).expect("spec parses")
}

#[test]
fn ben_cannot_see_restricted_fields() {
    let f = demo();
    let ben = f.ws.session("ben").unwrap();
    let acc = ben.get("account", "acc_0001").unwrap();
    assert!(acc.fields.contains_key("name"));
    for hidden in ["credit_limit", "tax_id"] {
        assert!(!acc.fields.contains_key(hidden), "{hidden} must be absent for ben");
    }
    let ava = f.ws.session("ava").unwrap();
    let acc = ava.get("account", "acc_0001").unwrap();
    assert_eq!(acc.fields["credit_limit"], json!(310000));
    assert_eq!(acc.fields["tax_id"], json!("DE256001020"));

    let all = ben.query(&spec(json!({"object": "opportunity", "limit": 5}))).unwrap();
    assert!(!all.fields.contains(&"margin_pct".to_string()));
    assert!(all.records.iter().all(|r| !r.contains_key("margin_pct")));
}

#[test]
fn queries_naming_hidden_fields_fail_typed() {
    let f = demo();
    let ben = f.ws.session("ben").unwrap();
    let cases = [
        (json!({"object": "opportunity", "fields": ["name", "margin_pct"]}), "margin_pct"),
        (json!({"object": "account", "fields": ["credit_limit"]}), "credit_limit"),
        (
            json!({"object": "account", "fields": ["name"], "filters": {"field": "tax_id", "op": "is_set"}}),
            "tax_id",
        ),
        (
            json!({"object": "opportunity", "filters": {"field": "margin_pct", "op": "gt", "value": 40}}),
            "margin_pct",
        ),
        (json!({"object": "opportunity", "sort": [{"field": "margin_pct"}]}), "margin_pct"),
        (json!({"object": "opportunity", "fields": ["account.credit_limit"]}), "account.credit_limit"),
        (
            json!({"object": "invoice", "filters": {"field": "total", "op": "gt", "otherField": "account.credit_limit"}}),
            "account.credit_limit",
        ),
    ];
    for (s, field) in cases {
        let e = ben.query(&spec(s.clone())).unwrap_err();
        assert_eq!(e.code, Code::UnknownField, "{s}");
        assert_eq!(e.field.as_deref(), Some(field), "{s}");
        // Unreadable and non-existent are the same answer.
        assert!(!e.message.contains("permission") && !e.message.contains("forbidden"), "{}", e.message);
    }
    let ghost = ben.query(&spec(json!({"object": "opportunity", "fields": ["no_such_field"]}))).unwrap_err();
    assert_eq!(ghost.code, Code::UnknownField);
    // The same query is fine for a manager who can read the field.
    let cara = f.ws.session("cara").unwrap();
    cara.query(&spec(
        json!({"object": "opportunity", "filters": {"field": "margin_pct", "op": "gt", "value": 40}}),
    ))
    .unwrap();
}

#[test]
fn ben_sees_only_his_own_opportunities() {
    let f = demo();
    let ben = f.ws.session("ben").unwrap();
    let res = ben
        .query(&spec(json!({"object": "opportunity", "fields": ["owner", "name"], "limit": 1000})))
        .unwrap();
    let expected: Vec<String> = demo_rows("opportunity")
        .into_iter()
        .filter(|r| r["owner"] == "ben")
        .map(|r| r["id"].clone())
        .collect();
    assert!(!expected.is_empty());
    let got: Vec<String> = res.records.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(got, expected);
    assert!(res.records.iter().all(|r| r["owner"] == "ben"));
    let eves = demo_rows("opportunity").into_iter().find(|r| r["owner"] == "eve").unwrap();
    assert_eq!(ben.get("opportunity", &eves["id"]).unwrap_err().code, Code::NotFound);
    assert_eq!(
        ben.update("opportunity", &eves["id"], map(json!({"next_step": "x"})), None).unwrap_err().code,
        Code::NotFound
    );
    // viewAll sees every row.
    let cara = f.ws.session("cara").unwrap();
    let all = cara.query(&spec(json!({"object": "opportunity", "limit": 1000}))).unwrap();
    assert_eq!(all.records.len(), demo_rows("opportunity").len());
}

#[test]
fn dan_cannot_save_anything() {
    let f = demo();
    let dan = f.ws.session("dan").unwrap();
    let before = history_rows(&f.ws);
    for object in ["account", "contact", "opportunity", "invoice", "invoice_line", "note"] {
        assert_eq!(dan.create(object, map(json!({}))).unwrap_err().code, Code::Permission, "{object}");
        let visible = dan.query(&spec(json!({"object": object, "limit": 1}))).unwrap();
        if object == "opportunity" {
            // Private and he owns none: nothing to read, so nothing to change either.
            assert!(visible.records.is_empty());
            assert_eq!(
                dan.update(object, "opp_0001", map(json!({"next_step": "x"})), None).unwrap_err().code,
                Code::NotFound
            );
            continue;
        }
        let rec = &visible.records[0];
        let id = rec["id"].as_str().unwrap();
        let (key, value) = rec
            .iter()
            .find(|(k, v)| *k != "id" && v.is_string())
            .map(|(k, v)| (k.clone(), v.clone()))
            .unwrap();
        let e = dan.update(object, id, map(json!({ key: value })), None).unwrap_err();
        assert_eq!(e.code, Code::Permission, "{object}");
        assert_eq!(dan.delete(object, id, None).unwrap_err().code, Code::Permission, "{object}");
    }
    assert_eq!(history_rows(&f.ws), before);
}

#[test]
fn owner_edits_public_read_rows_others_only_read_them() {
    let f = demo();
    let accounts = demo_rows("account");
    let bens = accounts.iter().find(|r| r["owner"] == "ben").unwrap();
    let eves = accounts.iter().find(|r| r["owner"] == "eve").unwrap();
    let ben = f.ws.session("ben").unwrap();
    ben.update("account", &bens["id"], map(json!({"rating": "hot"})), None).unwrap();
    ben.get("account", &eves["id"]).unwrap();
    let e = ben.update("account", &eves["id"], map(json!({"rating": "hot"})), None).unwrap_err();
    assert_eq!(e.code, Code::Permission);
    // Cara (viewAll, account edit) may edit anyone's credit limit but not the name (read-only for her).
    let cara = f.ws.session("cara").unwrap();
    cara.update("account", &eves["id"], map(json!({"credit_limit": "125000.50"})), None).unwrap();
    let e = cara.update("account", &eves["id"], map(json!({"name": "Renamed"})), None).unwrap_err();
    assert_eq!((e.code, e.field.as_deref()), (Code::Permission, Some("name")));
    // Ben cannot write a field he cannot see: it is absent.
    let e = ben.update("account", &bens["id"], map(json!({"credit_limit": "1"})), None).unwrap_err();
    assert_eq!((e.code, e.field.as_deref()), (Code::UnknownField, Some("credit_limit")));
}

#[test]
fn history_hides_fields_the_reader_cannot_see() {
    let f = demo();
    let cara = f.ws.session("cara").unwrap();
    cara.update("account", "acc_0001", map(json!({"credit_limit": 400000, "rating": "warm"})), None).unwrap();
    let full = cara.history_of("account", "acc_0001").unwrap();
    assert!(full.iter().any(|e| e.field == "credit_limit" && e.new_value == json!(400000)));
    let ben = f.ws.session("ben").unwrap();
    let seen = ben.history_of("account", "acc_0001").unwrap();
    assert!(seen.iter().any(|e| e.field == "rating" && e.new_value == json!("warm")));
    assert!(seen.iter().all(|e| e.field != "credit_limit" && e.field != "tax_id"));
}

#[test]
fn unknown_and_inactive_users_get_no_session() {
    let f = demo();
    assert_eq!(f.ws.session("mallory").err().unwrap().code, Code::UnknownUser);
    let g = with_definition(projects_definition());
    assert_eq!(g.ws.session("old").err().unwrap().code, Code::Permission);
}

#[test]
fn private_parents_are_absent_through_paths_and_lookups() {
    let f = with_definition(projects_definition());
    let kim = f.ws.session("kim").unwrap();
    let lee = f.ws.session("lee").unwrap();
    let p = kim.create("project", map(json!({"name": "Kim's secret", "budget": "1000"}))).unwrap();
    let t = kim.create("task", map(json!({"title": "Shared task", "project": p.id}))).unwrap();
    // Lee sees the public task but not the private project: the path is blank, the filter false.
    let res = lee
        .query(
            &QuerySpec::from_json(&json!({"object": "task", "fields": ["title", "project", "project.name"]}))
                .unwrap(),
        )
        .unwrap();
    assert_eq!(res.records.len(), 1);
    assert_eq!(res.records[0]["project.name"], json!(null));
    let filtered = lee
        .query(&QuerySpec::from_json(&json!({"object": "task", "filters": {"field": "project.name", "op": "contains", "value": "secret"}})).unwrap())
        .unwrap();
    assert!(filtered.records.is_empty());
    let kims = kim
        .query(&QuerySpec::from_json(&json!({"object": "task", "filters": {"field": "project.name", "op": "contains", "value": "SECRET"}})).unwrap())
        .unwrap();
    assert_eq!(kims.records.len(), 1);
    // Lee cannot point a lookup at a project he cannot read.
    let e = lee.create("task", map(json!({"title": "Mine", "project": p.id}))).unwrap_err();
    assert_eq!((e.code, e.field.as_deref()), (Code::InvalidValue, Some("project")));
    // Lee may still edit the shared task's other fields (unchanged lookup stays valid).
    lee.update("task", &t.id, map(json!({"done": true, "project": p.id})), None).unwrap();
    // Master-detail: steps inherit the project's access.
    let s = kim.create("step", map(json!({"project": p.id, "label": "one"}))).unwrap();
    assert_eq!(lee.get("step", &s.id).unwrap_err().code, countersign_kernel::Code::NotFound);
    let e = lee.create("step", map(json!({"project": p.id, "label": "two"}))).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("project"));
    assert_eq!(kim.get("step", &s.id).unwrap().fields["label"], json!("one"));
}

#[test]
fn describe_shows_only_what_the_user_may_read() {
    let f = demo();
    let ben = f.ws.session("ben").unwrap();
    let acc = ben.describe_object("account").unwrap();
    let keys: Vec<&str> = acc.fields.iter().map(|f| f.key.as_str()).collect();
    assert!(!keys.contains(&"credit_limit") && !keys.contains(&"tax_id"));
    assert!(acc.sections.iter().all(|s| s.fields.iter().all(|k| keys.contains(&k.as_str()))));
    assert_eq!((acc.rights.create, acc.rights.edit, acc.rights.delete), (true, true, false));
    // Related lists: children one hop; opportunity names its account by name.
    let related: Vec<&str> = acc.related.iter().map(|r| r.object.as_str()).collect();
    assert_eq!(related, vec!["contact", "opportunity", "invoice", "note"]);
    let opp = ben.describe_object("opportunity").unwrap();
    assert_eq!(&opp.list_columns[..3], &["name", "account.name", "stage"]);
    assert!(!opp.list_columns.contains(&"margin_pct".to_string()));
    // Every list column is a valid query path for that user.
    for o in ben.describe_workspace().objects {
        let v = ben.describe_object(&o.key).unwrap();
        let spec = QuerySpec {
            search: None,
            object: o.key.clone(),
            fields: v.list_columns.clone(),
            filters: None,
            sort: vec![],
            limit: Some(1),
            offset: None,
            after: None,
        };
        ben.query(&spec).unwrap();
    }
    let dan = f.ws.session("dan").unwrap();
    let d = dan.describe_object("invoice").unwrap();
    assert!(
        !d.rights.create
            && !d.rights.edit
            && d.fields
                .iter()
                .all(|f| f.access == countersign_kernel::metadata::definition::FieldLevel::Read)
    );
}

#[test]
fn the_users_rights_are_shown_read_only_to_those_who_run_the_ai_platform() {
    let f = common::demo();
    let ben = f.ws.session("ben").unwrap();
    assert_eq!(ben.user_rights().unwrap_err().code, Code::Permission);
    let rights = f.ws.session("ava").unwrap().user_rights().unwrap();
    let of = |user: &str| rights.iter().find(|u| u.key == user).unwrap();
    assert!(of("ava").system_permissions.iter().any(|p| p == "ai.manage"));
    let ben_accounts = of("ben").objects.iter().find(|o| o.object == "account").unwrap();
    assert!(ben_accounts.read);
    assert!(
        ben_accounts.hidden_fields.iter().any(|f| f == "Credit Limit"),
        "{:?}",
        ben_accounts.hidden_fields
    );
    assert!(!of("dan").system_permissions.iter().any(|p| p == "ai.use"));
}
