//! The demo workspace, embedded in the binary so a fresh install needs no files,
//! and seeding a workspace from a definition's `data` section.

use crate::error::{Code, Error, Result};
use crate::metadata::definition::WorkspaceDefinition;
use crate::records::deploy::{DeployOptions, DeployReport};
use crate::records::import::{import_csv, ImportMode, ImportOptions, ImportReport};
use crate::records::workspace::Workspace;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

pub const DEMO_DEFINITION: &str = include_str!("../../../../fixtures/demo/workspace.json");

/// The demo's CSVs, by their path in the definition's `data`.
pub const DEMO_DATA: &[(&str, &str)] = &[
    ("data/account.csv", include_str!("../../../../fixtures/demo/data/account.csv")),
    ("data/contact.csv", include_str!("../../../../fixtures/demo/data/contact.csv")),
    ("data/opportunity.csv", include_str!("../../../../fixtures/demo/data/opportunity.csv")),
    ("data/invoice.csv", include_str!("../../../../fixtures/demo/data/invoice.csv")),
    ("data/invoice_line.csv", include_str!("../../../../fixtures/demo/data/invoice_line.csv")),
    ("data/note.csv", include_str!("../../../../fixtures/demo/data/note.csv")),
];

pub fn demo_definition() -> WorkspaceDefinition {
    WorkspaceDefinition::parse(DEMO_DEFINITION).expect("the embedded demo definition is valid")
}

#[derive(Debug, Serialize)]
pub struct InitReport {
    pub deploy: DeployReport,
    pub imports: Vec<ImportReport>,
}

/// Deploy `def` as the first generation, then load its `data` CSVs (read by `load`) as the
/// kernel's own actor, parents before children, each object all-or-nothing.
pub fn init(
    ws: &mut Workspace,
    def: &WorkspaceDefinition,
    load: &dyn Fn(&str) -> Result<String>,
) -> Result<InitReport> {
    if ws.is_initialized() {
        return Err(Error::new(
            Code::AlreadyInitialized,
            format!("{} already holds a workspace (generation {})", ws.path().display(), ws.generation()),
        ));
    }
    // The bootstrap: an empty workspace has no users yet, so no one's permission is checked.
    let deploy = ws.deploy(def, &DeployOptions::default())?;
    let mut imports = Vec::new();
    let data = def.data.clone().unwrap_or_default();
    let session = ws.system_session()?;
    for object in load_order(def, &data) {
        let text = load(&data[&object])?;
        let report = import_csv(
            &session,
            &object,
            text.as_bytes(),
            &ImportOptions { mode: ImportMode::AllOrNothing, ..Default::default() },
        )?;
        if !report.committed && report.rows > 0 {
            let first =
                report.errors.first().map(|e| format!("line {}: {}", e.line, e.message)).unwrap_or_default();
            return Err(Error::new(
                Code::InvalidCsv,
                format!("{} of {} rows of {} failed ({first})", report.failed, report.rows, data[&object]),
            ));
        }
        imports.push(report);
    }
    Ok(InitReport { deploy, imports })
}

/// Create the demo workspace in `ws`.
pub fn init_demo(ws: &mut Workspace) -> Result<InitReport> {
    init(ws, &demo_definition(), &|path| {
        DEMO_DATA
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, text)| text.to_string())
            .ok_or_else(|| Error::internal(format!("demo file {path} is not embedded")))
    })
}

/// Objects with data, each after the objects its lookups point at.
fn load_order(def: &WorkspaceDefinition, data: &BTreeMap<String, String>) -> Vec<String> {
    let mut done: HashSet<String> = HashSet::new();
    let mut order = Vec::new();
    while order.len() < data.len() {
        let pending: Vec<_> =
            def.objects.iter().filter(|o| data.contains_key(&o.key) && !done.contains(&o.key)).collect();
        let ready: Vec<_> = pending
            .iter()
            .filter(|o| {
                o.fields
                    .iter()
                    .filter_map(|f| f.target.as_ref())
                    .all(|t| t == &o.key || !data.contains_key(t) || done.contains(t))
            })
            .collect();
        // A lookup cycle: load the rest in definition order; unresolved lookups fail per row.
        let next: Vec<&String> = if ready.is_empty() {
            pending.iter().map(|o| &o.key).collect()
        } else {
            ready.iter().map(|o| &o.key).collect()
        };
        for k in next {
            done.insert(k.clone());
            order.push(k.clone());
        }
    }
    order
}
