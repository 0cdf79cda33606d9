//! Words to find in long texts: the words after "mentions", "says", "about" (or in quotes).

use super::*;

/// A field's candidates are offered on an object the question names, or on every object
/// when it names none.
/// Words that say the rest of the question is text to find: "notes that say", "mentioning",
/// "about", "containing the word".
pub(super) const TEXT_CUES: &[&str] = &[
    "say",
    "says",
    "saying",
    "said",
    "mention",
    "mentions",
    "mentioning",
    "mentioned",
    "contain",
    "contains",
    "containing",
    "about",
    "regarding",
    "discuss",
    "discusses",
    "discussing",
    "discussed",
];

/// The phrases a question asks to find in text, each as (its words' span with the cue, the
/// words to find): a quoted phrase, or the words after a cue up to a word another reading
/// claims, "and"/"or", or the end. Filler words are not searched for.
pub(super) fn text_said(question: &str, t: &[Token], claimed: &[usize]) -> Vec<(Vec<usize>, String)> {
    let searched = |span: &[usize]| -> String {
        span.iter()
            .map(|&i| &t[i])
            .filter(|w| !FILLER.contains(&w.lower.as_str()) && !TEXT_CUES.contains(&w.lower.as_str()))
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out: Vec<(Vec<usize>, String)> = vec![];
    // Quoted: "…", “…”, ‘…’, or '…' around words.
    let chars: Vec<char> = question.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let close = match chars[i] {
            '"' => Some('"'),
            '“' => Some('”'),
            '‘' => Some('’'),
            '\'' if i == 0 || !chars[i - 1].is_alphanumeric() => Some('\''),
            _ => None,
        };
        let end = close.and_then(|c| (i + 1..chars.len()).find(|&j| chars[j] == c));
        if let Some(end) = end {
            let inner: String = chars[i + 1..end].iter().collect();
            let phrase = tokens(&inner);
            if let Some(&at) = runs(t, &phrase).first() {
                let span: Vec<usize> = (at..at + phrase.len()).collect();
                let said = searched(&span);
                if !said.is_empty() {
                    out.push((span, said));
                }
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    for (at, w) in t.iter().enumerate() {
        if !TEXT_CUES.contains(&w.lower.as_str()) || out.iter().any(|(s, _)| s.contains(&at)) {
            continue;
        }
        let mut span = vec![at];
        for (j, next) in t.iter().enumerate().skip(at + 1) {
            if claimed.contains(&j) || matches!(next.lower.as_str(), "and" | "or") {
                break;
            }
            span.push(j);
        }
        // Filler at the end ("… for" before a name another reading claims) is not the phrase's.
        while span.len() > 1 && FILLER.contains(&t[*span.last().expect("not empty")].lower.as_str()) {
            span.pop();
        }
        let said = searched(&span);
        if !said.is_empty() {
            out.push((span, said));
        }
    }
    out
}
