//! Workspaces from the templates that are not the demo CRM: the vocabulary lists each one's
//! terms, and Ask's question reader reads them — and the template's picklist values — in a
//! question, with no code that names the template's objects. (The model's part on these
//! workspaces is `real_model::ask_summarize_and_extract_work_on_a_workspace_from_another_template`.)

use countersign_kernel::ai::ask::reader::Kind;
use countersign_kernel::open::{self, Start};
use countersign_kernel::records::templates;

#[test]
fn the_vocabulary_and_the_question_reader_work_on_the_other_templates() {
    for (name, question, object, term, value) in [
        ("freelance", "active projects of Brightleaf Studio", "project", "active_project", None),
        ("inventory", "low stock products that are discontinued", "product", "needs_reorder", None),
        ("inventory", "preferred suppliers", "supplier", "", Some("preferred")),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let start = Start::Template { template: templates::template(name).unwrap(), records: true };
        let (ws, _) = open::create(&dir.path().join("t.countersign"), start, Default::default()).unwrap();
        let me = ws.session("me").unwrap();
        let vocabulary = me.vocabulary().unwrap();
        if !term.is_empty() {
            let terms: Vec<&str> = vocabulary
                .iter()
                .filter(|v| v.object == object)
                .flat_map(|v| v.terms.iter().map(|t| t.key.as_str()))
                .collect();
            assert!(terms.contains(&term), "{name}: {terms:?}");
        }
        let p = me.whole_grounding().projection.clone();
        let objects: Vec<String> = p.objects.iter().map(|o| o.key.clone()).collect();
        let reading = me.read_question(question, &p, &objects).unwrap();
        let found = reading.candidates.iter().any(|c| {
            c.object.as_deref() == Some(object)
                && match value {
                    None => c.kind == Kind::Term && c.term.as_ref().is_some_and(|(k, _)| k == term),
                    Some(v) => {
                        c.kind == Kind::Value && serde_json::to_string(&c.condition).unwrap().contains(v)
                    }
                }
        });
        let seen: Vec<String> =
            reading.candidates.iter().map(|c| format!("{:?} {} {}", c.kind, c.words, c.meaning)).collect();
        assert!(found, "{name}: \"{question}\" read as {seen:?}");
        assert!(reading.objects.contains(&object.to_string()), "{name}: {:?}", reading.objects);
    }
}
