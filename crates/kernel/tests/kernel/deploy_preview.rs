//! Deploy previews and retirement: every problem class a deploy can meet in the data, each
//! naming its rows; a preview writes nothing; retiring keeps values and history and restoring
//! brings them back.

use crate::common;

use common::*;
use countersign_kernel::metadata::definition::{FieldDef, FieldType, WorkspaceDefinition};
use countersign_kernel::records::demo::demo_definition;
use countersign_kernel::records::deploy::{ChangeAction, DeployPreview, ProblemKind};
use countersign_kernel::{Code, DeployOptions, QuerySpec};
use serde_json::json;

fn field<'a>(def: &'a mut WorkspaceDefinition, object: &str, key: &str) -> &'a mut FieldDef {
    let o = def.objects.iter_mut().find(|x| x.key == object).unwrap();
    o.fields.iter_mut().find(|x| x.key == key).unwrap()
}

fn problem(p: &DeployPreview, kind: ProblemKind) -> &countersign_kernel::records::deploy::DeployProblem {
    p.problems.iter().find(|x| x.kind == kind).unwrap_or_else(|| panic!("no {kind:?} in {:?}", p.problems))
}

/// The ids of demo rows of `object` whose `field` matches `keep`.
fn demo_ids(object: &str, keep: impl Fn(&str) -> bool, field: &str) -> Vec<String> {
    let mut ids: Vec<String> =
        demo_rows(object).into_iter().filter(|r| keep(&r[field])).map(|r| r["id"].clone()).collect();
    ids.sort();
    ids
}

#[test]
fn a_type_change_names_the_rows_whose_values_do_not_convert() {
    let f = demo();
    let mut def = demo_definition();
    // Text → number: only the employee counts written as digits would survive.
    let phone = field(&mut def, "account", "phone");
    (phone.field_type, phone.precision, phone.scale) = (FieldType::Number, Some(12), Some(0));
    let p = f.ws.preview_deploy(&def, Some("ava")).unwrap();
    let loss = problem(&p, ProblemKind::Loss);
    assert_eq!(loss.path, "/objects/account/fields/phone");
    let expected = demo_ids("account", |v| !v.is_empty() && v.trim().parse::<f64>().is_err(), "phone");
    assert_eq!(loss.count as usize, expected.len());
    assert_eq!(loss.rows, expected.into_iter().take(20).collect::<Vec<_>>());
    assert!(!p.applies && p.applies_forced);
    assert!(p.changes.iter().any(|c| c.target == "field account.phone" && c.detail.contains("\"number\"")));
    // Nothing was written: the values are still there, the generation has not moved.
    assert_eq!(f.ws.generation(), 1);
    let ava = f.ws.session("ava").unwrap();
    assert!(ava.get("account", &loss.rows[0]).unwrap().fields["phone"].as_str().is_some());
}

#[test]
fn a_unique_field_with_duplicates_is_refused_with_its_rows_even_forced() {
    let mut f = demo();
    let mut def = demo_definition();
    field(&mut def, "account", "billing_city").unique = true;
    let p = f.ws.preview_deploy(&def, Some("ava")).unwrap();
    let dup = problem(&p, ProblemKind::Duplicates);
    let rows = demo_rows("account");
    let city = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap()["billing_city"].clone();
    // Every row named shares its city with another row.
    for id in &dup.rows {
        let c = city(id);
        assert!(rows.iter().filter(|r| r["billing_city"] == c).count() > 1, "{id} ({c}) is not a duplicate");
    }
    assert!(!p.applies && !p.applies_forced);
    let e = f.ws.deploy(&def, &DeployOptions { force: true, ..DeployOptions::by("ava") }).unwrap_err();
    assert_eq!(e.code, Code::InvalidDefinition);
    assert!(e.details[0].message.contains(&dup.rows[0]), "{:?}", e.details);
    assert_eq!(f.ws.generation(), 1);
}

#[test]
fn a_required_field_with_blanks_is_refused_unless_a_default_fills_them() {
    let mut f = demo();
    let mut def = demo_definition();
    field(&mut def, "invoice", "po_number").required = true;
    let blank = demo_ids("invoice", str::is_empty, "po_number");
    assert!(!blank.is_empty(), "the demo has invoices without a PO number");
    let p = f.ws.preview_deploy(&def, Some("ava")).unwrap();
    let req = problem(&p, ProblemKind::RequiredBlanks);
    assert_eq!((req.count as usize, req.rows.first()), (blank.len(), blank.first()));
    assert!(f.ws.deploy(&def, &DeployOptions { force: true, ..DeployOptions::by("ava") }).is_err());
    // With a default, the blanks are filled, each as a change with history.
    field(&mut def, "invoice", "po_number").default = Some(json!("NONE"));
    let p = f.ws.preview_deploy(&def, Some("ava")).unwrap();
    assert!(p.applies, "{:?}", p.problems);
    let before = f.ws.session("ava").unwrap().get("invoice", &blank[0]).unwrap();
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let ava = f.ws.session("ava").unwrap();
    let after = ava.get("invoice", &blank[0]).unwrap();
    assert_eq!(after.fields["po_number"], json!("NONE"));
    // A change like any save's: the version moves on, and history holds it at that version.
    assert_eq!(after.version, before.version + 1);
    let history = ava.history_of("invoice", &blank[0]).unwrap();
    let fill = history.iter().find(|h| h.field == "po_number" && h.actor == "ava").unwrap();
    assert_eq!((fill.old_value.clone(), fill.new_value.clone()), (json!(null), json!("NONE")));
    assert_eq!(fill.record_version, after.version);
    // Rows that held a PO number keep it and their version.
    let kept = demo_ids("invoice", |s| !s.is_empty(), "po_number");
    assert_eq!(ava.get("invoice", &kept[0]).unwrap().version, 1);
    crate::value_index::assert_index_is_the_tables(&f.ws);
}

/// A deploy tells its watcher each step as it begins; a cancel stops it with nothing changed.
#[test]
fn a_deploy_reports_its_steps_and_a_cancel_changes_nothing() {
    use countersign_kernel::records::deploy::{DeployProgress, DeployStep};
    use countersign_kernel::records::Watch;
    let mut f = demo();
    let mut def = demo_definition();
    field(&mut def, "invoice", "po_number").default = Some(json!("NONE"));
    let mut seen: Vec<DeployProgress> = vec![];
    let stop_at = std::cell::Cell::new(Some(DeployStep::Indexes));
    let last = std::cell::Cell::new(None);
    let mut record = |p: &DeployProgress| {
        last.set(Some(p.step));
        seen.push(p.clone());
    };
    let cancelled = || last.get().is_some() && last.get() == stop_at.get();
    let e =
        f.ws.deploy_watched(
            &def,
            &DeployOptions::by("ava"),
            Watch { progress: &mut record, cancelled: &cancelled },
        )
        .unwrap_err();
    assert_eq!(e.code, Code::Cancelled);
    assert_eq!(f.ws.generation(), 1);
    let blank = demo_ids("invoice", str::is_empty, "po_number");
    let ava = f.ws.session("ava").unwrap();
    assert_eq!(ava.get("invoice", &blank[0]).unwrap().fields["po_number"], json!(null));
    drop(ava);
    let steps: Vec<(DeployStep, u32, u32)> = seen.iter().map(|p| (p.step, p.done, p.steps)).collect();
    assert_eq!(
        steps,
        vec![(DeployStep::Backup, 0, 4), (DeployStep::Data, 1, 4), (DeployStep::Indexes, 2, 4)]
    );

    seen.clear();
    stop_at.set(None);
    let mut record = |p: &DeployProgress| seen.push(p.clone());
    f.ws.deploy_watched(
        &def,
        &DeployOptions::by("ava"),
        Watch { progress: &mut record, cancelled: &|| false },
    )
    .unwrap();
    assert_eq!(f.ws.generation(), 2);
    assert_eq!(seen.iter().map(|p| p.step).collect::<Vec<_>>(), DeployStep::ALL.to_vec());
}

#[test]
fn a_definition_that_leaves_nobody_able_to_deploy_is_refused() {
    let mut f = demo();
    let mut def = demo_definition();
    for set in &mut def.permission_sets {
        set.system.retain(|p| p != countersign_kernel::DEPLOY_PERMISSION);
    }
    let p = f.ws.preview_deploy(&def, Some("ava")).unwrap();
    assert_eq!(problem(&p, ProblemKind::NoDeployer).path, "/users");
    assert!(!p.applies_forced);
    // Making the only deployer inactive is the same.
    let mut def = demo_definition();
    def.users.iter_mut().find(|u| u.key == "ava").unwrap().active = false;
    let e = f.ws.deploy(&def, &DeployOptions { force: true, ..DeployOptions::by("ava") }).unwrap_err();
    assert_eq!(e.code, Code::InvalidDefinition);
    assert_eq!(e.details[0].path, "/users");
    // A second deployer makes it fine.
    def.users.iter_mut().find(|u| u.key == "cara").unwrap().permission_sets.push("admin".into());
    assert!(f.ws.preview_deploy(&def, Some("ava")).unwrap().applies);
}

#[test]
fn a_preview_needs_the_deploy_permission() {
    let f = demo();
    let e = f.ws.preview_deploy(&demo_definition(), Some("ben")).unwrap_err();
    assert_eq!(e.code, Code::Permission);
}

#[test]
fn retiring_a_field_keeps_its_values_and_history_and_restoring_brings_them_back() {
    let mut f = demo();
    let mut def = demo_definition();
    let id = "acc_0001";
    let website = f.ws.session("ava").unwrap().get("account", id).unwrap().fields["website"].clone();
    field(&mut def, "account", "website").retired = true;
    let p = f.ws.preview_deploy(&def, Some("ava")).unwrap();
    assert!(p.applies, "{:?}", p.problems);
    assert_eq!(p.changes.iter().filter(|c| c.action == ChangeAction::Retire).count(), 1);
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    {
        let ava = f.ws.session("ava").unwrap();
        assert!(!ava.get("account", id).unwrap().fields.contains_key("website"));
        let spec = QuerySpec::from_json(&json!({"object": "account", "fields": ["website"]})).unwrap();
        assert_eq!(ava.query(&spec).unwrap_err().code, Code::UnknownField);
        // Saves go on without it.
        ava.update("account", id, map(json!({"billing_city": "Lyon"})), None).unwrap();
    }
    // A new field cannot take the retired one's key.
    let mut taken = def.clone();
    let mut again = taken.objects[0].fields[0].clone();
    again.key = "website".into();
    taken.objects.iter_mut().find(|o| o.key == "account").unwrap().fields.push(again);
    assert_eq!(f.ws.preview_deploy(&taken, Some("ava")).unwrap_err().code, Code::InvalidDefinition);
    // Restored: the value is back, untouched.
    field(&mut def, "account", "website").retired = false;
    let p = f.ws.preview_deploy(&def, Some("ava")).unwrap();
    assert_eq!(p.changes.iter().filter(|c| c.action == ChangeAction::Restore).count(), 1);
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    assert_eq!(f.ws.session("ava").unwrap().get("account", id).unwrap().fields["website"], website);
}

#[test]
fn retiring_an_object_hides_its_records_and_restoring_brings_them_back() {
    let mut f = demo();
    let mut def = demo_definition();
    let notes = demo_rows("note").len();
    def.objects.iter_mut().find(|o| o.key == "note").unwrap().retired = true;
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let spec = QuerySpec::from_json(&json!({"object": "note"})).unwrap();
    assert_eq!(f.ws.session("ava").unwrap().query(&spec).unwrap_err().code, Code::UnknownObject);
    // A live lookup may not point at a retired object.
    let mut def2 = def.clone();
    def2.objects.iter_mut().find(|o| o.key == "account").unwrap().retired = true;
    let e = f.ws.preview_deploy(&def2, Some("ava")).unwrap_err();
    assert_eq!(e.code, Code::InvalidDefinition);
    assert!(e.details.iter().any(|d| d.message.contains("`account` is retired")), "{:?}", e.details);
    // The name field cannot be retired.
    let mut def3 = def.clone();
    field(&mut def3, "account", "name").retired = true;
    let e = f.ws.preview_deploy(&def3, Some("ava")).unwrap_err();
    assert!(e.details.iter().any(|d| d.message.contains("name field")), "{:?}", e.details);
    def.objects.iter_mut().find(|o| o.key == "note").unwrap().retired = false;
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let all = QuerySpec::from_json(&json!({"object": "note", "limit": 1000})).unwrap();
    assert_eq!(f.ws.session("ava").unwrap().query(&all).unwrap().records.len(), notes);
}

#[test]
fn removing_instead_of_retiring_names_the_rows_it_would_lose() {
    let f = demo();
    let mut def = demo_definition();
    let acc = def.objects.iter_mut().find(|o| o.key == "account").unwrap();
    acc.fields.retain(|f| f.key != "website");
    for s in &mut acc.layout.as_mut().unwrap().sections {
        s.fields.retain(|f| f != "website");
    }
    let p = f.ws.preview_deploy(&def, Some("ava")).unwrap();
    let loss = problem(&p, ProblemKind::Loss);
    assert!(loss.message.contains("retire it to keep them"), "{}", loss.message);
    assert_eq!(loss.count as usize, demo_ids("account", |v| !v.is_empty(), "website").len());
    assert!(p
        .changes
        .iter()
        .any(|c| c.action == ChangeAction::Remove && c.target == "field account.website"));
}
