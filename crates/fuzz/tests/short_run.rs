//! The CI run of every fuzz target: a few hundred seeded cases each (the same cases every run;
//! a long run with other seeds is `countersign-fuzz all --cases 100000 --seed S`). Each target
//! must end with no finding: no panic escaping, no untyped or platform error for hostile
//! input, nothing invalid stored, no trace left running, memory bounded.

use countersign_fuzz::{make, run, Run, TARGETS};

fn short_run(target: &str, cases: u64) {
    let dir = tempfile::tempdir().unwrap();
    let name = target.to_string();
    let path = dir.path().to_path_buf();
    let report = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || {
            let mut t = make(&name, &path).unwrap();
            run(t.as_mut(), Run { cases, seed: 20261201, only: None, seconds: None, progress: &mut |_| {} })
        })
        .unwrap()
        .join()
        .unwrap();
    eprintln!("{}", report.to_json());
    assert_eq!(report.cases, cases);
    assert!(report.findings.is_empty(), "{target}: {:#?}", report.findings);
    // The cases reach past the first parse: some are accepted, some refused.
    assert!(report.passed > 0, "{target}: no case got through: {:?}", report.examples);
}

#[test]
fn every_target_is_listed_and_built() {
    let dir = tempfile::tempdir().unwrap();
    for t in TARGETS {
        assert!(make(t, dir.path()).is_ok(), "{t}");
    }
    assert!(make("nonsense", dir.path()).is_err());
}

#[test]
fn documents_text() {
    short_run("documents-text", 3000);
}

#[test]
fn documents_markdown() {
    short_run("documents-markdown", 3000);
}

#[test]
fn documents_html() {
    short_run("documents-html", 3000);
}

#[test]
fn documents_email() {
    short_run("documents-email", 3000);
}

#[test]
fn documents_pdf() {
    short_run("documents-pdf", 3000);
}

#[test]
fn documents_docx() {
    short_run("documents-docx", 3000);
}

#[test]
fn query_specs() {
    short_run("query-specs", 1000);
}

#[test]
fn definitions() {
    short_run("definitions", 1000);
}

#[test]
fn csv_import() {
    short_run("csv-import", 500);
}

#[test]
fn ask() {
    short_run("ask", 1000);
}

#[test]
fn extract() {
    short_run("extract", 1000);
}

#[test]
fn summarize() {
    short_run("summarize", 1000);
}
