//! The store and typed metadata: migrations and version refusal, definition validation with JSON
//! paths, generations, and deploys that refuse to lose data unless forced.

use crate::common;

use common::*;
use countersign_kernel::metadata::definition::WorkspaceDefinition;
use countersign_kernel::{Code, DeployOptions, Workspace, WorkspaceOptions};
use serde_json::{json, Value};

fn field<'a>(
    def: &'a mut WorkspaceDefinition,
    object: &str,
    key: &str,
) -> &'a mut countersign_kernel::metadata::definition::FieldDef {
    def.objects
        .iter_mut()
        .find(|x| x.key == object)
        .unwrap()
        .fields
        .iter_mut()
        .find(|x| x.key == key)
        .unwrap()
}

fn paths(e: &countersign_kernel::Error) -> Vec<String> {
    e.details.iter().map(|d| d.path.clone()).collect()
}

#[test]
fn demo_definition_is_schema_valid_and_round_trips() {
    let doc: Value = serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    let def = WorkspaceDefinition::from_json(&doc).unwrap();
    let again = WorkspaceDefinition::from_json(&serde_json::to_value(&def).unwrap()).unwrap();
    assert_eq!(def, again);
}

#[test]
fn shape_errors_name_the_json_path() {
    let mut doc: Value = serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    doc["objects"][0]["fields"][1]["type"] = json!("money");
    doc["objects"][2]["sharing"] = json!("secret");
    doc["users"][0]["extra"] = json!(1);
    // Only a number or a currency is additive or not.
    doc["objects"][0]["fields"][0]["additive"] = json!(false);
    let e = WorkspaceDefinition::from_json(&doc).unwrap_err();
    assert_eq!(e.code, Code::InvalidDefinition);
    let p = paths(&e);
    for expected in ["/objects/0/fields/1/type", "/objects/2/sharing", "/users/0", "/objects/0/fields/0"] {
        assert!(p.iter().any(|x| x == expected), "{expected} not in {p:?}");
    }
}

#[test]
fn semantic_errors_name_the_json_path() {
    let mut doc: Value = serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    doc["objects"][1]["fields"][2]["target"] = json!("company");
    doc["objects"][0]["nameField"] = json!("nickname");
    doc["objects"][0]["validationRules"][0]["assert"]["any"][1]["field"] = json!("revenue");
    doc["objects"][3]["layout"]["sections"][0]["fields"][0] = json!("ghost");
    doc["permissionSets"][1]["fields"]["account.shoe_size"] = json!("none");
    doc["users"][1]["permissionSets"][0] = json!("nobody");
    doc["objects"][4]["fields"][4]["scale"] = json!(13);
    let e = WorkspaceDefinition::from_json(&doc).unwrap_err();
    let p = paths(&e);
    for expected in [
        "/objects/1/fields/2/target",
        "/objects/0/nameField",
        "/objects/0/validationRules/0/assert/any/1",
        "/objects/3/layout/sections/0/fields/0",
        "/permissionSets/1/fields/account.shoe_size",
        "/users/1/permissionSets/0",
        "/objects/4/fields/4/scale",
    ] {
        assert!(p.iter().any(|x| x == expected), "{expected} not in {p:?}");
    }
    let not_json = WorkspaceDefinition::parse("{ nope").unwrap_err();
    assert_eq!(not_json.code, Code::InvalidDefinition);
}

#[test]
fn deploys_bump_the_generation_and_survive_reopen() {
    let mut f = demo();
    assert_eq!(f.ws.generation(), 1);
    let mut def = countersign_kernel::records::demo::demo_definition();
    def.objects[0].fields.push(
        serde_json::from_value(
            json!({"key": "segment", "label": "Segment", "type": "text", "default": "mid"}),
        )
        .unwrap(),
    );
    let r = f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    assert_eq!(r.generation, 2);
    assert!(r.changes.iter().any(|c| c.starts_with("added field account.segment")), "{:?}", r.changes);
    let ava = f.ws.session("ava").unwrap();
    assert_eq!(ava.get("account", "acc_0001").unwrap().fields["segment"], json!("mid"));
    let path = f.ws.path().to_path_buf();
    drop(ava);
    drop(f.ws);
    let ws = Workspace::open(&path, options(&f.clock)).unwrap();
    assert_eq!(ws.generation(), 2);
    assert_eq!(
        ws.session("ava").unwrap().get("account", "acc_0001").unwrap().fields["segment"],
        json!("mid")
    );
}

#[test]
fn dropping_a_field_with_values_is_refused_unless_forced() {
    let mut f = demo();
    let mut def = countersign_kernel::records::demo::demo_definition();
    let acc = def.objects.iter_mut().find(|o| o.key == "account").unwrap();
    acc.fields.retain(|f| f.key != "website");
    acc.layout.as_mut().unwrap().sections[0].fields.retain(|f| f != "website");
    let e = f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap_err();
    assert_eq!(e.code, Code::DestructiveChange);
    assert_eq!(paths(&e), vec!["/objects/account/fields/website".to_string()]);
    assert_eq!(f.ws.generation(), 1);
    assert!(f.ws.session("ava").unwrap().get("account", "acc_0001").unwrap().fields.contains_key("website"));
    let r = f.ws.deploy(&def, &DeployOptions { force: true, ..DeployOptions::by("ava") }).unwrap();
    assert_eq!((r.generation, r.lost.len()), (2, 1));
    assert!(!f.ws.session("ava").unwrap().get("account", "acc_0001").unwrap().fields.contains_key("website"));
}

#[test]
fn narrowing_is_refused_only_when_values_do_not_fit() {
    let mut f = demo();
    let mut def = countersign_kernel::records::demo::demo_definition();
    // po_number values are like "PO-28506": 8 characters fit in 10, not in 5.
    field(&mut def, "invoice", "po_number").max_length = Some(10);
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    field(&mut def, "invoice", "po_number").max_length = Some(5);
    let e = f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap_err();
    assert_eq!(e.code, Code::DestructiveChange);
    field(&mut def, "invoice", "po_number").max_length = Some(40);
    // Scale 2 → 0 loses cents on totals that have them.
    field(&mut def, "invoice_line", "quantity").scale = Some(0);
    let e = f.ws.deploy(&def, &DeployOptions::by("ava"));
    let has_fractions = demo_rows("invoice_line").iter().any(|r| !r["quantity"].ends_with(".00"));
    assert_eq!(e.is_err(), has_fractions);
    field(&mut def, "invoice_line", "quantity").scale = Some(2);
    // Type change text → number: refused (names are not numbers).
    field(&mut def, "account", "billing_city").field_type =
        countersign_kernel::metadata::definition::FieldType::Number;
    field(&mut def, "account", "billing_city").max_length = None;
    field(&mut def, "account", "billing_city").precision = Some(10);
    field(&mut def, "account", "billing_city").scale = Some(0);
    assert_eq!(f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap_err().code, Code::DestructiveChange);
}

#[test]
fn removing_a_picklist_value_in_use_is_refused_retiring_is_not() {
    let mut f = demo();
    let mut def = countersign_kernel::records::demo::demo_definition();
    let status = field(&mut def, "invoice", "status");
    status.values.as_mut().unwrap().retain(|v| v.value != "draft");
    let e = f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap_err();
    assert_eq!(e.code, Code::DestructiveChange);
    let mut def = countersign_kernel::records::demo::demo_definition();
    let status = field(&mut def, "invoice", "status");
    status.values.as_mut().unwrap().iter_mut().find(|v| v.value == "draft").unwrap().active = false;
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let draft = demo_rows("invoice").into_iter().find(|r| r["status"] == "draft").unwrap();
    let ava = f.ws.session("ava").unwrap();
    assert_eq!(ava.get("invoice", &draft["id"]).unwrap().fields["status"], json!("draft"));
}

#[test]
fn removing_an_owner_or_an_object_with_records_is_refused() {
    let mut f = demo();
    let mut def = countersign_kernel::records::demo::demo_definition();
    def.users.retain(|u| u.key != "eve");
    let e = f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap_err();
    assert_eq!(e.code, Code::DestructiveChange);
    assert!(paths(&e).iter().all(|p| p == "/users/eve"));
    let mut def = countersign_kernel::records::demo::demo_definition();
    def.objects.retain(|o| o.key != "note");
    for s in &mut def.permission_sets {
        s.objects.remove("note");
    }
    def.data.as_mut().unwrap().remove("note");
    let e = f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap_err();
    assert_eq!(paths(&e), vec!["/objects/note".to_string()]);
}

#[test]
fn a_file_from_a_newer_version_is_refused_untouched() {
    let f = demo();
    let path = f.ws.path().to_path_buf();
    f.ws.raw_connection().execute_batch("PRAGMA user_version = 99").unwrap();
    drop(f.ws);
    let before = std::fs::read(&path).unwrap();
    let e = Workspace::open(&path, WorkspaceOptions::default()).unwrap_err();
    assert_eq!(e.code, Code::StoreTooNew);
    assert!(e.message.contains("99"), "{}", e.message);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn foreign_files_are_not_workspaces() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.countersign");
    std::fs::write(&junk, b"this is not a database at all, just some text that is long enough").unwrap();
    assert_eq!(Workspace::open(&junk, WorkspaceOptions::default()).unwrap_err().code, Code::NotAWorkspace);
    let other = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    assert_eq!(Workspace::open(&other, WorkspaceOptions::default()).unwrap_err().code, Code::NotAWorkspace);
    let missing = dir.path().join("missing.countersign");
    assert_eq!(
        Workspace::open(&missing, WorkspaceOptions::default()).unwrap_err().code,
        Code::NotInitialized
    );
    // A write-ahead log left by a deleted workspace: a typed refusal, and the log is untouched.
    let orphan = dir.path().join("orphan.countersign");
    std::fs::write(dir.path().join("orphan.countersign-wal"), b"leftover").unwrap();
    let e = Workspace::create(&orphan, WorkspaceOptions::default()).unwrap_err();
    assert_eq!(e.code, Code::Storage);
    assert!(e.message.contains("orphan.countersign-wal"), "{}", e.message);
    assert_eq!(std::fs::read(dir.path().join("orphan.countersign-wal")).unwrap(), b"leftover");
    assert!(!orphan.exists());
}

#[test]
fn store_uses_wal_and_foreign_keys() {
    let f = demo();
    let c = f.ws.raw_connection();
    let mode: String = c.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    let fk: i64 = c.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
    assert_eq!((mode.as_str(), fk), ("wal", 1));
}

#[test]
fn init_twice_is_refused() {
    let mut f = demo();
    let e = countersign_kernel::records::demo::init_demo(&mut f.ws).unwrap_err();
    assert_eq!(e.code, Code::AlreadyInitialized);
}

#[test]
fn query_spec_schema_shares_the_condition_definitions() {
    let ws: Value = serde_json::from_str(countersign_kernel::metadata::definition::SCHEMA_TEXT).unwrap();
    let q: Value = serde_json::from_str(countersign_kernel::records::query::SCHEMA_TEXT).unwrap();
    for d in ["condition", "comparison", "path"] {
        assert_eq!(ws["$defs"][d], q["$defs"][d], "$defs/{d} differs between the two schemas");
    }
}

#[test]
fn the_benchmark_runs_and_its_paths_agree() {
    // The real figures come from `countersign-cli bench` in a release build; this keeps the
    // benchmark code honest (same ids from kernel and raw SQL) on a small data set.
    let dir = tempfile::tempdir().unwrap();
    let report = countersign_kernel::bench::run(&countersign_kernel::bench::BenchOptions {
        rows: 3_000,
        import_rows: 300,
        updates: 100,
        queries: 2,
        dir: Some(dir.path().to_path_buf()),
        generate_only: None,
    })
    .unwrap()
    .expect("a report");
    assert!(report.query.same_ids, "kernel and hand-written SQL disagree");
    // Every operation at scale returns the rows the hand-written SQL returns.
    assert_eq!(report.ops.len(), 12);
    for op in &report.ops {
        assert!(op.same_rows, "{}: the kernel and raw SQL disagree", op.op);
        assert!(op.rows > 0, "{} returned nothing", op.op);
    }
    assert_eq!(report.query.rows_returned, 50);
    assert!(report.save.kernel_per_sec > 0.0);
    let import = report.import.expect("the import benchmark ran");
    assert_eq!((import.rows, import.columns), (300, 10));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the scratch workspace is removed");
}

#[test]
fn a_session_refuses_to_write_under_a_newer_generation_from_another_process() {
    let mut f = demo();
    let other = Workspace::open(f.ws.path(), options(&f.clock)).unwrap();
    let mut def = countersign_kernel::records::demo::demo_definition();
    def.objects[0].label = "Customer".into();
    f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap();
    let stale = other.session("ava").unwrap();
    let e = stale.update("account", "acc_0001", map(json!({"rating": "hot"})), None).unwrap_err();
    assert_eq!((e.code, e.retriable), (Code::StaleGeneration, true));
    // Reopened, it writes.
    drop(stale);
    drop(other);
    let again = Workspace::open(f.ws.path(), options(&f.clock)).unwrap();
    again.session("ava").unwrap().update("account", "acc_0001", map(json!({"rating": "hot"})), None).unwrap();
}

#[test]
fn definitions_built_in_code_are_validated_too() {
    let mut f = demo();
    let mut def = countersign_kernel::records::demo::demo_definition();
    def.objects[1].fields[2].target = Some("company".into());
    let e = f.ws.deploy(&def, &DeployOptions::by("ava")).unwrap_err();
    assert_eq!(e.code, Code::InvalidDefinition);
    assert_eq!(paths(&e), vec!["/objects/1/fields/2/target".to_string()]);
    assert_eq!(f.ws.generation(), 1);
}

#[test]
fn a_deploy_that_changes_values_writes_their_history_and_moves_the_records_on() {
    let mut f = common::demo();
    let mut def: serde_json::Value =
        serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    let account = def["objects"].as_array_mut().unwrap().iter_mut().find(|o| o["key"] == "account").unwrap();
    let fields = account["fields"].as_array_mut().unwrap();
    // A new field with a default fills every record; a narrower field clears what no longer fits.
    fields.push(serde_json::json!({"key": "tier", "label": "Tier", "type": "text", "default": "standard"}));
    fields.iter_mut().find(|x| x["key"] == "billing_city").unwrap()["maxLength"] = serde_json::json!(4);
    def.as_object_mut().unwrap().remove("data");
    let def = countersign_kernel::WorkspaceDefinition::from_json(&def).unwrap();
    let ava = f.ws.session("ava").unwrap();
    let long_city = ava
        .query(
            &countersign_kernel::QuerySpec::parse(
                r#"{"object": "account", "fields": ["billing_city"], "limit": 10000}"#,
            )
            .unwrap(),
        )
        .unwrap()
        .records
        .into_iter()
        .find(|r| r["billing_city"].as_str().is_some_and(|c| c.chars().count() > 4))
        .expect("a demo account with a city longer than 4 characters");
    let id = long_city["id"].as_str().unwrap().to_string();
    let before = ava.get("account", &id).unwrap();
    drop(ava);
    let opts =
        countersign_kernel::DeployOptions { force: true, ..countersign_kernel::DeployOptions::by("ava") };
    let report = f.ws.deploy(&def, &opts).unwrap();
    let ava = f.ws.session("ava").unwrap();
    let after = ava.get("account", &id).unwrap();
    assert_eq!(after.version, before.version + 2, "two values changed: two versions, as two saves would");
    assert_eq!(after.fields["tier"], "standard");
    assert!(after.fields.get("billing_city").is_none_or(|v| v.is_null()));
    let history = ava.history_of("account", &id).unwrap();
    let by_deploy: Vec<_> =
        history.iter().filter(|h| h.correlation_id == format!("deploy-{}", report.generation)).collect();
    assert_eq!(by_deploy.len(), 2, "{history:#?}");
    let tier = by_deploy.iter().find(|h| h.field == "tier").unwrap();
    assert_eq!(
        (tier.old_value.clone(), tier.new_value.clone()),
        (serde_json::Value::Null, serde_json::json!("standard"))
    );
    let city = by_deploy.iter().find(|h| h.field == "billing_city").unwrap();
    assert_eq!(city.old_value, long_city["billing_city"]);
    assert!(city.new_value.is_null());
    assert!(by_deploy.iter().all(|h| h.actor == "ava" && h.operation == "update"));
}
