//! Records: the one save path — order of checks, typed errors naming the field, history,
//! versions, and all-or-nothing writes.

use crate::common;

use chrono::Duration;
use common::*;
use countersign_kernel::{Code, SaveContext, SaveRequest};
use serde_json::json;

#[test]
fn paid_invoice_without_paid_date_is_refused_on_paid_date() {
    let f = demo();
    let cara = f.ws.session("cara").unwrap();
    let inv = demo_rows("invoice")
        .into_iter()
        .find(|r| r["status"] == "sent" && r["paid_date"].is_empty())
        .unwrap();
    let before = cara.get("invoice", &inv["id"]).unwrap();
    let history = history_rows(&f.ws);
    let e = cara.update("invoice", &inv["id"], map(json!({"status": "paid"})), None).unwrap_err();
    assert_eq!(e.code, Code::ValidationRule);
    assert_eq!(e.field.as_deref(), Some("paid_date"));
    assert_eq!(e.message, "A paid invoice needs a paid date.");
    assert_eq!(cara.get("invoice", &inv["id"]).unwrap(), before);
    assert_eq!(history_rows(&f.ws), history);
    // With the date it saves.
    let ok = cara
        .update(
            "invoice",
            &inv["id"],
            map(json!({"status": "paid", "paid_date": "2026-11-20"})),
            Some(before.version),
        )
        .unwrap();
    assert_eq!(ok.version, before.version + 1);
    assert_eq!(ok.changed, vec!["status".to_string(), "paid_date".to_string()]);
}

#[test]
fn other_field_rules_and_several_failures() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let e = ava
        .create(
            "invoice",
            map(json!({"number": "INV-T-1", "account": "acc_0001", "status": "paid",
                        "issue_date": "2026-05-10", "due_date": "2026-05-01", "total": -5})),
        )
        .unwrap_err();
    assert_eq!(e.code, Code::ValidationRule);
    let paths: Vec<&str> = e.details.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, vec!["due_date", "paid_date", "total"]);
    assert_eq!(e.field.as_deref(), Some("due_date"));
}

#[test]
fn retired_picklist_values_are_refused_for_new_values_only() {
    let mut f = demo();
    let ava = f.ws.session("ava").unwrap();
    let e = ava.create("account", map(json!({"name": "Tel Co", "industry": "telecom"}))).unwrap_err();
    assert_eq!((e.code, e.field.as_deref()), (Code::InvalidValue, Some("industry")));
    assert!(e.message.contains("retired"), "{}", e.message);
    let e = ava.update("account", "acc_0001", map(json!({"industry": "telecom"})), None).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("industry"));
    // Retire a value that records hold: they stay valid and stay editable.
    let holder = demo_rows("account").into_iter().find(|r| r["industry"] == "software").unwrap();
    drop(ava);
    let mut def = countersign_kernel::records::demo::demo_definition();
    let acc = def.objects.iter_mut().find(|o| o.key == "account").unwrap();
    let industry = acc.fields.iter_mut().find(|f| f.key == "industry").unwrap();
    industry.values.as_mut().unwrap().iter_mut().find(|v| v.value == "software").unwrap().active = false;
    f.ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    let ava = f.ws.session("ava").unwrap();
    let rec = ava.get("account", &holder["id"]).unwrap();
    assert_eq!(rec.fields["industry"], json!("software"));
    ava.update("account", &holder["id"], map(json!({"rating": "hot", "industry": "software"})), None)
        .unwrap();
    let e = ava.create("account", map(json!({"name": "New Soft", "industry": "software"}))).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("industry"));
    // Labels are accepted and stored as values.
    let ok = ava.create("account", map(json!({"name": "Label Co", "industry": "Retail"}))).unwrap();
    assert_eq!(ava.get("account", &ok.id).unwrap().fields["industry"], json!("retail"));
}

#[test]
fn stale_version_is_refused_and_nothing_written() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let rec = ava.get("opportunity", "opp_0001").unwrap();
    ava.update("opportunity", "opp_0001", map(json!({"next_step": "Call"})), Some(rec.version)).unwrap();
    let history = history_rows(&f.ws);
    let e = ava
        .update("opportunity", "opp_0001", map(json!({"next_step": "Email"})), Some(rec.version))
        .unwrap_err();
    assert_eq!(e.code, Code::Conflict);
    assert_eq!(ava.get("opportunity", "opp_0001").unwrap().fields["next_step"], json!("Call"));
    assert_eq!(history_rows(&f.ws), history);
    let e = ava.delete("opportunity", "opp_0001", Some(rec.version)).unwrap_err();
    assert_eq!(e.code, Code::Conflict);
}

#[test]
fn a_failure_in_the_middle_of_a_save_leaves_nothing_behind() {
    let f = demo();
    // Make the history write of one field fail *after* the record row was updated.
    f.ws.raw_connection()
        .execute_batch(
            "CREATE TEMP TRIGGER fail_history BEFORE INSERT ON data_history WHEN NEW.field = 'po_number' OR NEW.op = 'create'
             BEGIN SELECT RAISE(ABORT, 'simulated failure'); END;",
        )
        .unwrap();
    let cara = f.ws.session("cara").unwrap();
    let before = cara.get("invoice", "inv_0001").unwrap();
    let history = history_rows(&f.ws);
    let e = cara
        .update("invoice", "inv_0001", map(json!({"notes": "checked", "po_number": "PO-NEW"})), None)
        .unwrap_err();
    assert_eq!(e.code, Code::Storage);
    assert_eq!(cara.get("invoice", "inv_0001").unwrap(), before);
    assert_eq!(history_rows(&f.ws), history);
    // Same for a create: no row, no history.
    let e = cara
        .create(
            "invoice",
            map(json!({"number": "INV-X", "account": "acc_0001", "status": "draft",
                                       "issue_date": "2026-01-01", "po_number": "PO-1"})),
        )
        .unwrap_err();
    assert_eq!(e.code, Code::Storage);
    let n: i64 =
        f.ws.raw_connection()
            .query_row("SELECT count(*) FROM \"obj_invoice\" WHERE \"f_number\" = 'INV-X'", [], |r| r.get(0))
            .unwrap();
    assert_eq!(n, 0);
    assert_eq!(history_rows(&f.ws), history);
}

#[test]
fn every_save_writes_history_with_actor_time_and_correlation() {
    let f = demo();
    let cara = f.ws.session("cara").unwrap();
    let created = cara
        .save(
            SaveRequest::Create {
                object: "invoice".into(),
                values: map(json!({"number": "INV-H-1", "account": "acc_0002", "status": "draft", "issue_date": "2026-11-01", "total": "120.50"})),
                id: None,
                owner: None,
            },
            &SaveContext { proposed_by: Some("proposal:p_1".into()), correlation_id: Some("corr-create".into()) },
        )
        .unwrap();
    assert!(created.id.starts_with("invoice_t"), "ids come from the injected source: {}", created.id);
    f.clock.advance(Duration::days(3));
    cara.update("invoice", &created.id, map(json!({"total": 99.5, "po_number": "PO-9"})), Some(1)).unwrap();
    f.clock.advance(Duration::hours(1));
    let ava = f.ws.session("ava").unwrap();
    ava.delete("invoice", &created.id, Some(2)).unwrap();

    let h = ava.history_of("invoice", &created.id).unwrap();
    let ops: Vec<(&str, &str)> = h.iter().map(|e| (e.operation.as_str(), e.field.as_str())).collect();
    assert_eq!(
        ops,
        vec![
            ("create", "owner"),
            ("create", "number"),
            ("create", "account"),
            ("create", "status"),
            ("create", "issue_date"),
            ("create", "total"),
            ("update", "total"),
            ("update", "po_number"),
            ("delete", "owner"),
            ("delete", "number"),
            ("delete", "account"),
            ("delete", "status"),
            ("delete", "issue_date"),
            ("delete", "total"),
            ("delete", "po_number"),
        ]
    );
    let first = &h[0];
    assert_eq!((first.actor.as_str(), first.proposed_by.as_deref()), ("cara", Some("proposal:p_1")));
    assert_eq!(
        (first.correlation_id.as_str(), first.at.as_str(), first.record_version),
        ("corr-create", START, 1)
    );
    let total = h.iter().find(|e| e.operation == "update" && e.field == "total").unwrap();
    assert_eq!((total.old_value.clone(), total.new_value.clone()), (json!(120.5), json!(99.5)));
    assert_eq!(
        (total.at.as_str(), total.record_version, total.actor.as_str()),
        ("2026-12-02T10:00:00Z", 2, "cara")
    );
    assert!(total.proposed_by.is_none());
    assert_eq!(h.last().unwrap().actor, "ava");
    assert_eq!(h.last().unwrap().at, "2026-12-02T11:00:00Z");
    // Deleted: gone for everyone; history only for viewAll users.
    assert_eq!(ava.get("invoice", &created.id).unwrap_err().code, Code::NotFound);
    let ben = f.ws.session("ben").unwrap();
    assert_eq!(ben.history_of("invoice", &created.id).unwrap_err().code, Code::NotFound);
}

#[test]
fn an_update_that_changes_nothing_writes_nothing() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let rec = ava.get("account", "acc_0003").unwrap();
    let history = history_rows(&f.ws);
    let name = rec.fields["name"].clone();
    let out = ava.update("account", "acc_0003", map(json!({"name": name})), None).unwrap();
    assert!(out.changed.is_empty());
    assert_eq!(out.version, rec.version);
    assert_eq!(history_rows(&f.ws), history);
}

#[test]
fn type_coercion_errors_name_the_field() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let base =
        json!({"number": "INV-C-1", "account": "acc_0001", "status": "draft", "issue_date": "2026-01-01"});
    let cases = [
        (json!({"total": "12.345"}), "total", Code::InvalidValue),
        (json!({"total": "12345678901.00"}), "total", Code::InvalidValue),
        (json!({"total": "abc"}), "total", Code::InvalidValue),
        (json!({"issue_date": "31/01/2026"}), "issue_date", Code::InvalidValue),
        (json!({"status": "archived"}), "status", Code::InvalidValue),
        (json!({"account": "acc_9999"}), "account", Code::InvalidValue),
        (json!({"number": ""}), "number", Code::Required),
        (json!({"number": "INV-2025-00001"}), "number", Code::Duplicate),
        (json!({"po_number": "x".repeat(41)}), "po_number", Code::InvalidValue),
        (json!({"colour": "red"}), "colour", Code::UnknownField),
    ];
    for (patch, field, code) in cases {
        let mut values = map(base.clone());
        values.extend(map(patch.clone()));
        let e = ava.create("invoice", values).unwrap_err();
        assert_eq!((e.code, e.field.as_deref()), (code, Some(field)), "{patch}: {}", e.message);
    }
    let contact = json!({"last_name": "Doe", "email": "not-an-address"});
    let e = ava.create("contact", map(contact)).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("email"));
    let e = ava.create("account", map(json!({"name": "W", "website": "ftp://x"}))).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("website"));
    let e = ava.create("account", map(json!({"name": "P", "phone": "call me"}))).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("phone"));
    // Defaults apply; booleans accept their text forms.
    let c = ava.create("contact", map(json!({"last_name": "Roe"}))).unwrap();
    assert_eq!(ava.get("contact", &c.id).unwrap().fields["do_not_call"], json!(false));
    ava.update("contact", &c.id, map(json!({"do_not_call": "yes"})), None).unwrap();
    assert_eq!(ava.get("contact", &c.id).unwrap().fields["do_not_call"], json!(true));
}

#[test]
fn deletes_cascade_details_clear_optional_lookups_and_refuse_required_ones() {
    let f = demo();
    let ava = f.ws.session("ava").unwrap();
    let lines: Vec<String> = demo_rows("invoice_line")
        .into_iter()
        .filter(|r| r["invoice"] == "inv_0001")
        .map(|r| r["id"].clone())
        .collect();
    assert!(!lines.is_empty());
    ava.delete("invoice", "inv_0001", None).unwrap();
    for l in &lines {
        assert_eq!(ava.get("invoice_line", l).unwrap_err().code, Code::NotFound);
        assert!(ava.history_of("invoice_line", l).unwrap().iter().any(|e| e.operation == "delete"));
    }
    // An account that opportunities need cannot go.
    let opp = demo_rows("opportunity").remove(0);
    let e = ava.delete("account", &opp["account"], None).unwrap_err();
    assert_eq!(e.code, Code::InUse);
    assert!(ava.get("account", &opp["account"]).is_ok());
    // An account only contacts point at: the contacts lose the link.
    let acc = ava.create("account", map(json!({"name": "Short Lived"}))).unwrap();
    let con = ava.create("contact", map(json!({"last_name": "Linked", "account": acc.id}))).unwrap();
    ava.delete("account", &acc.id, None).unwrap();
    let c = ava.get("contact", &con.id).unwrap();
    assert_eq!(c.fields["account"], json!(null));
    assert_eq!(c.version, 2);
}

#[test]
fn owners_are_kept_assigned_and_checked() {
    let f = demo();
    let ben = f.ws.session("ben").unwrap();
    let mine = ben.create("opportunity", map(json!({"name": "Mine", "account": "acc_0001", "stage": "prospecting", "close_date": "2027-01-01"}))).unwrap();
    assert_eq!(ben.get("opportunity", &mine.id).unwrap().owner, "ben");
    // Ben may hand his own record over, after which he no longer sees it (private).
    ben.update("opportunity", &mine.id, map(json!({"owner": "eve"})), None).unwrap();
    assert_eq!(ben.get("opportunity", &mine.id).unwrap_err().code, Code::NotFound);
    let eve = f.ws.session("eve").unwrap();
    assert_eq!(eve.get("opportunity", &mine.id).unwrap().owner, "eve");
    let e = ben
        .save(
            SaveRequest::Create {
                object: "opportunity".into(),
                values: map(json!({"name": "For eve", "account": "acc_0001", "stage": "prospecting", "close_date": "2027-01-01"})),
                id: None,
                owner: Some("eve".into()),
            },
            &SaveContext::default(),
        )
        .unwrap_err();
    assert_eq!((e.code, e.field.as_deref()), (Code::Permission, Some("owner")));
}
