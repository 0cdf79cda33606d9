//! The question reader (Ask's prompt version 4): each kind of wording reaches its candidate
//! condition, at the fixtures' fixed today, on the asking user's projection only.

use crate::common;
use countersign_kernel::ai::ask::reader::{Candidate, Reading};
use countersign_kernel::Session;

fn read(session: &Session<'_>, question: &str) -> Reading {
    let p = session.whole_grounding().projection.clone();
    let objects: Vec<String> = p.objects.iter().map(|o| o.key.clone()).collect();
    session.read_question(question, &p, &objects).expect("the question is read")
}

fn lines(r: &Reading) -> Vec<String> {
    r.candidates
        .iter()
        .map(|c: &Candidate| {
            format!(
                "{} \"{}\" ({}): {} = {}",
                c.id,
                c.words,
                c.object.as_deref().unwrap_or("any"),
                c.meaning,
                serde_json::to_string(&c.condition).unwrap()
            )
        })
        .collect()
}

#[test]
#[ignore = "a dump of the readings of the eval sets' questions, for development"]
fn dump_readings() {
    let f = common::demo();
    for file in ["/../../../shared/eval/ask-dev.jsonl", "/../../eval/ask-extra.jsonl"] {
        let text = std::fs::read_to_string(format!("{}{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let case: serde_json::Value = serde_json::from_str(line).unwrap();
            let session = f.ws.session(case["user"].as_str().unwrap()).unwrap();
            let q = case["question"].as_str().unwrap();
            let r = read(&session, q);
            eprintln!("\n{} [{}] {q}  counts={:?}", case["id"], case["user"], r.counts);
            for l in lines(&r) {
                eprintln!("   {l}");
            }
        }
    }
}
