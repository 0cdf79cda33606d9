//! Sentences in a document addressed to an AI (prompt injections): found by their markers and
//! shown to the reviewer; a proposal with one is never applied by itself.

use super::*;

pub(super) const INJECTION_MARKERS: &[&str] = &[
    "ai assistant",
    "ai model",
    "language model",
    "ignore your instructions",
    "ignore previous instructions",
    "ignore all previous",
    "ignore the above",
    "disregard",
    "system prompt",
    "note to ai",
    "instructions to the ai",
    "as an ai",
];

/// Lines of the document that address an AI.
pub fn find_injections(doc: &Document) -> Vec<Injection> {
    let mut out = vec![];
    let mut start = 0;
    for line in doc.text.split('\n') {
        let lower = line.to_lowercase();
        if INJECTION_MARKERS.iter().any(|m| lower.contains(m)) {
            out.push(Injection { text: line.trim().to_string(), start, end: start + line.len() });
        }
        start += line.len() + 1;
    }
    out
}
