//! The TypeScript types of the app's IPC DTOs are generated from the Rust types (ts-rs) and
//! committed in `ui/src/bindings`. This test fails when they are stale; regenerate with
//! `COUNTERSIGN_UPDATE_BINDINGS=1 cargo test -p countersign-kernel --test kernel bindings::`.

use countersign_kernel::records::csvio::ExportResult;
use countersign_kernel::records::describe::{ObjectView, WorkspaceView};
use countersign_kernel::records::import::{ImportMode, ImportReport};
use countersign_kernel::{Error, HistoryEntry, QueryResult, QuerySpec, Record, SaveOutcome, SaveRequest};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use ts_rs::TS;

fn export(dir: &Path) {
    Error::export_all_to(dir).unwrap();
    Record::export_all_to(dir).unwrap();
    SaveRequest::export_all_to(dir).unwrap();
    SaveOutcome::export_all_to(dir).unwrap();
    HistoryEntry::export_all_to(dir).unwrap();
    QuerySpec::export_all_to(dir).unwrap();
    QueryResult::export_all_to(dir).unwrap();
    countersign_kernel::records::counts::RecordCount::export_all_to(dir).unwrap();
    countersign_kernel::records::use_index::UseIndex::export_all_to(dir).unwrap();
    ImportReport::export_all_to(dir).unwrap();
    ImportMode::export_all_to(dir).unwrap();
    ExportResult::export_all_to(dir).unwrap();
    WorkspaceView::export_all_to(dir).unwrap();
    ObjectView::export_all_to(dir).unwrap();
    countersign_kernel::ai::pins::ProviderSettings::export_all_to(dir).unwrap();
    countersign_kernel::ai::pins::ConnectionReport::export_all_to(dir).unwrap();
    countersign_kernel::ai::pins::PinSettings::export_all_to(dir).unwrap();
    countersign_kernel::ai::runtime::BuiltInModel::export_all_to(dir).unwrap();
    countersign_kernel::ai::pipeline::ModelInUse::export_all_to(dir).unwrap();
    countersign_kernel::ai::mcp::ServerSetup::export_all_to(dir).unwrap();
    countersign_kernel::ai::mcp::ServerSettings::export_all_to(dir).unwrap();
    countersign_kernel::ai::assistant::Turn::export_all_to(dir).unwrap();
    countersign_kernel::ai::assistant::TurnProgress::export_all_to(dir).unwrap();
    countersign_kernel::ai::assistant::Conversation::export_all_to(dir).unwrap();
    countersign_kernel::ai::assistant::ConversationSummary::export_all_to(dir).unwrap();
    countersign_kernel::ai::assistant::ScreenContext::export_all_to(dir).unwrap();
    countersign_kernel::ai::runtime::download::Progress::export_all_to(dir).unwrap();
    countersign_kernel::ai::ask::AskAnswer::export_all_to(dir).unwrap();
    countersign_kernel::ai::ask::AskProgress::export_all_to(dir).unwrap();
    countersign_kernel::records::query::ListView::export_all_to(dir).unwrap();
    countersign_kernel::ai::pipeline::TraceEntry::export_all_to(dir).unwrap();
    countersign_kernel::proposals::Proposal::export_all_to(dir).unwrap();
    countersign_kernel::ingest::Document::export_all_to(dir).unwrap();
    countersign_kernel::proposals::ProposalReview::export_all_to(dir).unwrap();
    countersign_kernel::ai::extract::ExtractAnswer::export_all_to(dir).unwrap();
    countersign_kernel::proposals::AutoApplyList::export_all_to(dir).unwrap();
    countersign_kernel::ai::summarize::SummaryAnswer::export_all_to(dir).unwrap();
    countersign_kernel::ai::ask::LearnedExample::export_all_to(dir).unwrap();
    countersign_kernel::records::vocabulary::ObjectVocabulary::export_all_to(dir).unwrap();
    countersign_kernel::ai::tools::calls::ToolCallView::export_all_to(dir).unwrap();
    countersign_kernel::ai::tools::calls::Decision::export_all_to(dir).unwrap();
    countersign_kernel::ai::tools::registry::ToolInfo::export_all_to(dir).unwrap();
    countersign_kernel::ai::tools::mcp_servers::ServerReview::export_all_to(dir).unwrap();
    countersign_kernel::ai::tools::mcp_servers::McpServerInfo::export_all_to(dir).unwrap();
    countersign_kernel::eval::suites::Studio::export_all_to(dir).unwrap();
    countersign_kernel::eval::suites::EvalRun::export_all_to(dir).unwrap();
    countersign_kernel::eval::suites::SuiteRevision::export_all_to(dir).unwrap();
    countersign_kernel::backup::Backup::export_all_to(dir).unwrap();
    countersign_kernel::recent::RecentWorkspace::export_all_to(dir).unwrap();
    countersign_kernel::open::About::export_all_to(dir).unwrap();
    countersign_kernel::eval::suites::SuiteProgress::export_all_to(dir).unwrap();
    countersign_kernel::proposals::DiffPart::export_all_to(dir).unwrap();
    countersign_kernel::ai::pipeline::Activity::export_all_to(dir).unwrap();
    countersign_kernel::ai::pipeline::TraceFilter::export_all_to(dir).unwrap();
    countersign_kernel::records::describe::UserRights::export_all_to(dir).unwrap();
    countersign_kernel::records::templates::TemplateSummary::export_all_to(dir).unwrap();
    countersign_kernel::records::deploy::DeployPreview::export_all_to(dir).unwrap();
    countersign_kernel::records::deploy::DeployProgress::export_all_to(dir).unwrap();
    countersign_kernel::metadata::definition::WorkspaceDefinition::export_all_to(dir).unwrap();
    countersign_kernel::records::import::MappingSuggestion::export_all_to(dir).unwrap();
    countersign_kernel::records::import::ImportProgress::export_all_to(dir).unwrap();
    countersign_kernel::records::import::ImportOptions::export_all_to(dir).unwrap();
    countersign_kernel::records::import::Upload::export_all_to(dir).unwrap();
    countersign_kernel::records::import::SourceTool::export_all_to(dir).unwrap();
    countersign_kernel::records::describe::SeenAs::export_all_to(dir).unwrap();
    countersign_kernel::eval::suites::Fitness::export_all_to(dir).unwrap();
    countersign_kernel::eval::suites::FitnessProgress::export_all_to(dir).unwrap();
}

fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn typescript_bindings_are_current() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/bindings");
    if std::env::var_os("COUNTERSIGN_UPDATE_BINDINGS").is_some() {
        let _ = std::fs::remove_dir_all(&committed);
        export(&committed);
        return;
    }
    let fresh = tempfile::tempdir().unwrap();
    export(fresh.path());
    let (want, have) = (files(fresh.path()), files(&committed));
    let stale: Vec<_> = want
        .keys()
        .chain(have.keys())
        .filter(|k| want.get(*k) != have.get(*k))
        .map(|k| k.display().to_string())
        .collect();
    assert!(
        stale.is_empty(),
        "ui/src/bindings is stale ({stale:?}); run COUNTERSIGN_UPDATE_BINDINGS=1 cargo test -p countersign-kernel --test kernel bindings::"
    );
}

#[test]
fn error_codes_serialize_as_their_stable_strings() {
    for code in countersign_kernel::Code::ALL {
        assert_eq!(serde_json::to_value(code).unwrap(), serde_json::json!(code.as_str()));
    }
}
