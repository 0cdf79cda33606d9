#![allow(dead_code)]
//! Shared set-up: a real SQLite file in a temporary directory, a fixed clock and sequential ids.

pub mod fake_model;

use countersign_kernel::open::{self, Start};
use countersign_kernel::{FixedClock, SequentialIds, Workspace, WorkspaceDefinition, WorkspaceOptions};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Arc;

pub const START: &str = "2026-11-29T10:00:00Z";

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub ws: Workspace,
    pub clock: Arc<FixedClock>,
}

pub fn options(clock: &Arc<FixedClock>) -> WorkspaceOptions {
    WorkspaceOptions { clock: clock.clone(), ids: Arc::new(SequentialIds::default()) }
}

pub fn empty() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(FixedClock::at(START));
    let (ws, _) =
        open::create(&dir.path().join("ws.countersign"), Start::Empty, options(&clock)).expect("create");
    Fixture { dir, ws, clock }
}

/// The demo workspace, as `open::create(…, Start::Demo, …)` makes it at [`START`] with
/// sequential ids. It is built once per build of this test binary and copied for each test
/// (nextest runs every test in a process of its own, so the template lives on disk).
pub fn demo() -> Fixture {
    let (template, issued) = demo_template();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ws.countersign");
    std::fs::copy(&template, &path).expect("copy the demo template");
    let clock = Arc::new(FixedClock::at(START));
    // The copy's ids go on where the template's stopped, as they would in the original.
    let opts = WorkspaceOptions { clock: clock.clone(), ids: Arc::new(SequentialIds::after(issued)) };
    let ws = open::open(&path, opts).expect("the demo copy opens");
    Fixture { dir, ws, clock }
}

/// The demo workspace made here, not copied (a test of what making it does).
pub fn demo_made_here() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(FixedClock::at(START));
    let (ws, _) =
        open::create(&dir.path().join("ws.countersign"), Start::Demo, options(&clock)).expect("demo loads");
    Fixture { dir, ws, clock }
}

/// The demo template for this build of the tests (keyed by the test binary's size and time,
/// which change whenever the kernel does) and how many ids making it used.
fn demo_template() -> (PathBuf, u64) {
    let exe = std::env::current_exe().expect("test binary");
    let meta = std::fs::metadata(&exe).expect("test binary metadata");
    let stamp =
        meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).unwrap_or_default();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("demo-template");
    std::fs::create_dir_all(&dir).expect("template folder");
    let name = format!("demo-{}-{}", meta.len(), stamp.as_nanos());
    let (file, ids) = (dir.join(format!("{name}.countersign")), dir.join(format!("{name}.ids")));
    if let (true, Ok(issued)) = (file.exists(), std::fs::read_to_string(&ids)) {
        return (file, issued.trim().parse().expect("issued ids"));
    }
    // Built under names of this process's own, then renamed into place (the ids first): a
    // test in another process either finds the whole template or builds its own.
    let pid = std::process::id();
    let (own, own_ids) = (dir.join(format!("{name}.{pid}.building")), dir.join(format!("{name}.{pid}.ids")));
    let issued_by = Arc::new(SequentialIds::default());
    let opts = WorkspaceOptions { clock: Arc::new(FixedClock::at(START)), ids: issued_by.clone() };
    let (ws, _) = open::create(&own, Start::Demo, opts).expect("demo loads");
    drop(ws); // closing checkpoints the write-ahead log into the file
    let issued = issued_by.issued();
    std::fs::write(&own_ids, issued.to_string()).expect("template ids");
    std::fs::rename(&own_ids, &ids).expect("template ids in place");
    std::fs::rename(&own, &file).expect("template in place");
    (file, issued)
}

/// The demo where cara (finance reviewer) also manages AI, so she reads every trace, but may
/// not read `field` (`object.field`): what she sees of traces that hold its values is masked.
pub fn demo_with_a_trace_reader_who_cannot_read(field: &str) -> Fixture {
    let mut f = demo();
    let mut def: Value = serde_json::from_str(countersign_kernel::records::demo::DEMO_DEFINITION).unwrap();
    def.as_object_mut().unwrap().remove("data");
    let sets = def["permissionSets"].as_array_mut().unwrap();
    let finance = sets.iter_mut().find(|p| p["key"] == "finance_reviewer").unwrap();
    finance["system"].as_array_mut().unwrap().push(serde_json::json!("ai.manage"));
    finance["fields"][field] = serde_json::json!("none");
    let def = WorkspaceDefinition::from_json(&def).unwrap();
    f.ws.deploy(&def, &countersign_kernel::DeployOptions::by("ava")).unwrap();
    f
}

pub fn with_definition(def: Value) -> Fixture {
    let mut f = empty();
    let def = WorkspaceDefinition::from_json(&def).expect("test definition is valid");
    f.ws.deploy(&def, &Default::default()).expect("deploy");
    f
}

pub fn map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("expected an object, got {other}"),
    }
}

/// Read the demo CSV rows of an object from the repository's copy of the fixture.
pub fn demo_rows(object: &str) -> Vec<std::collections::HashMap<String, String>> {
    let path = format!("{}/../../fixtures/demo/data/{object}.csv", env!("CARGO_MANIFEST_DIR"));
    let mut r = csv::Reader::from_path(path).expect("demo csv");
    let headers = r.headers().expect("headers").clone();
    r.records()
        .map(|rec| {
            let rec = rec.expect("row");
            headers.iter().zip(rec.iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect()
        })
        .collect()
}

/// Count history rows, straight from the file.
pub fn history_rows(ws: &Workspace) -> i64 {
    ws.raw_connection().query_row("SELECT count(*) FROM data_history", [], |r| r.get(0)).expect("count")
}

/// A small definition with a private parent, for row-visibility tests.
pub fn projects_definition() -> Value {
    serde_json::json!({
        "format": "countersign.workspace/v1",
        "name": "Projects",
        "objects": [
            {"key": "project", "label": "Project", "pluralLabel": "Projects", "sharing": "private", "nameField": "name",
             "fields": [
                {"key": "name", "label": "Name", "type": "text", "required": true, "maxLength": 80},
                {"key": "budget", "label": "Budget", "type": "currency", "precision": 10, "scale": 2},
                {"key": "code", "label": "Code", "type": "text", "maxLength": 10}
             ]},
            {"key": "task", "label": "Task", "pluralLabel": "Tasks", "sharing": "public_read_write", "nameField": "title",
             "fields": [
                {"key": "title", "label": "Title", "type": "text", "required": true},
                {"key": "project", "label": "Project", "type": "lookup", "target": "project"},
                {"key": "done", "label": "Done", "type": "boolean", "default": false},
                {"key": "priority", "label": "Priority", "type": "picklist", "values": [
                    {"value": "low", "label": "Low"}, {"value": "high", "label": "High"}, {"value": "urgent", "label": "Urgent", "active": true}]}
             ]},
            {"key": "step", "label": "Step", "pluralLabel": "Steps", "sharing": "inherit", "nameField": "label",
             "fields": [
                {"key": "project", "label": "Project", "type": "lookup", "target": "project", "required": true, "masterDetail": true},
                {"key": "label", "label": "Label", "type": "text", "required": true}
             ]}
        ],
        "permissionSets": [
            {"key": "member", "label": "Member", "objects": {
                "project": ["read", "create", "edit", "delete"],
                "task": ["read", "create", "edit", "delete"],
                "step": ["read", "create", "edit", "delete"]}}
        ],
        "users": [
            {"key": "kim", "name": "Kim", "permissionSets": ["member"]},
            {"key": "lee", "name": "Lee", "permissionSets": ["member"]},
            {"key": "old", "name": "Old", "active": false, "permissionSets": ["member"]}
        ]
    })
}

/// The demo workspace with Ask on its prompt version 3 (the model writes filters), for the
/// tests of that version: a workspace that keeps it answers as it did.
pub fn demo_ask_v3() -> Fixture {
    let f = demo();
    ask_on_version(&f.ws, 3);
    f
}

/// Point Ask's prompt at `version` (no model is bound yet, so no eval gate runs).
pub fn ask_on_version(ws: &Workspace, version: i64) {
    ws.session("ava").unwrap().activate_prompt_with("ask", version, None).expect("ask's prompt version");
}

/// `text` (a canary secret) is nowhere in the workspace's file, its WAL or its shared memory.
pub fn assert_not_in_files(ws: &countersign_kernel::Workspace, text: &str) {
    ws.raw_connection().execute_batch("PRAGMA wal_checkpoint(PASSIVE)").unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let mut path = ws.path().as_os_str().to_owned();
        path.push(suffix);
        if let Ok(bytes) = std::fs::read(&path) {
            assert!(!bytes.windows(text.len()).any(|w| w == text.as_bytes()), "{text} found in {path:?}");
        }
    }
}
