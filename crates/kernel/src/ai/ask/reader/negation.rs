//! Negation as grammar. A cue ("not", "n't", "no", "without", "except", "other than",
//! "neither … nor", "non-", "outside"; German "nicht", "kein", "ohne", "außer", "außerhalb";
//! French "pas", "sans", "sauf", "aucun", "hors", "en dehors"; Spanish "no", "sin", "excepto",
//! "salvo", "fuera de") negates the first reading after it
//! in its clause, and the readings joined to that one by "or" / "nor" ("that aren't A or B" is
//! neither A nor B). A negated reading replaces its positive: the positive is never offered, so
//! no choice of the model can turn "not in Lyon" into "in Lyon".
//!
//! A cue inside another reading's words is that reading's ("no more than 5", "with no notes").

use super::*;
use crate::metadata::condition::NotOf;
use crate::metadata::types::{Has, Related, RelatedTo};

/// Words that negate what follows them, in the four languages the reader reads.
const CUES: &[&str] = &[
    "not",
    "no",
    "never",
    "without",
    "except",
    "excepting",
    "excluding",
    "exclude",
    "excl",
    "outside",
    "neither",
    "nor",
    "non",
    "cannot",
    "nicht",
    "kein",
    "keine",
    "keinen",
    "keinem",
    "keiner",
    "keines",
    "ohne",
    "außer",
    "ausser",
    "ausgenommen",
    "außerhalb",
    "ausserhalb",
    "weder",
    "pas",
    "sans",
    "sauf",
    "hormis",
    "excepté",
    "hors",
    "dehors",
    "aucun",
    "aucune",
    "ni",
    "sin",
    "excepto",
    "salvo",
    "fuera",
    "ninguno",
    "ninguna",
];

/// Words that join a negated reading to the next one it negates too.
const OR_WORDS: &[&str] = &["or", "nor", "oder", "noch", "ou", "ni", "o", "u"];

/// Words that end a clause: a negation does not reach past them.
const CLAUSE_ENDS: &[&str] =
    &["and", "but", "und", "aber", "sondern", "et", "mais", "y", "pero", "sino", "while", "whereas"];

/// The cue at word `i` and how many words it takes (`other than` takes two, "aren't" is the
/// split "aren" "t"), if there is one.
pub(super) fn cue_at(t: &[Token], i: usize) -> Option<usize> {
    let w = t[i].lower.as_str();
    if CUES.contains(&w) {
        return Some(1);
    }
    // "n't" as the tokenizer splits it: "aren" + "t", "don" + "t".
    if w == "t" && i > 0 && t[i - 1].lower.ends_with('n') {
        return Some(1);
    }
    let next = t.get(i + 1).map(|x| x.lower.as_str());
    match (w, next) {
        ("other" | "rather", Some("than")) | ("apart" | "aside", Some("from")) => Some(2),
        // "anything but prospecting", "all but the paid ones": "but" after a word of all.
        ("anything" | "everything" | "all" | "any" | "everyone" | "anyone", Some("but")) => Some(2),
        ("autre" | "autres", Some("que")) | ("distinto" | "distinta" | "distintos", Some("de")) => Some(2),
        _ => None,
    }
}

/// Word index → clause number, from the question's punctuation (a comma between digits is a
/// number's, not a clause's).
pub(super) fn clauses(question: &str, t: &[Token]) -> Vec<usize> {
    let chars: Vec<char> = question.chars().collect();
    let mut parts: Vec<String> = vec![String::new()];
    for (i, &c) in chars.iter().enumerate() {
        let digit_around =
            i > 0 && chars[i - 1].is_ascii_digit() && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if matches!(c, ';' | ':' | '!' | '?') || (matches!(c, ',' | '.') && !digit_around) {
            parts.push(String::new());
        } else {
            parts.last_mut().expect("one part").push(c);
        }
    }
    let mut out = vec![];
    for (k, part) in parts.iter().enumerate() {
        out.extend(std::iter::repeat_n(k, tokens(part).len()));
    }
    // The split must agree with the question's own words; where it does not, one clause.
    if out.len() != t.len() {
        return vec![0; t.len()];
    }
    out
}

/// The candidates each cue negates: indexes into `found`, each with the cue's word indexes.
pub(super) fn negated(question: &str, t: &[Token], found: &[Candidate]) -> Vec<(usize, Vec<usize>)> {
    let clause = clauses(question, t);
    let inside_reading = |i: usize| found.iter().any(|c| c.span.contains(&i));
    let mut out: Vec<(usize, Vec<usize>)> = vec![];
    let mut i = 0;
    while i < t.len() {
        let Some(len) = cue_at(t, i).filter(|_| !inside_reading(i)) else {
            i += 1;
            continue;
        };
        let mut cue: Vec<usize> = (i..i + len).collect();
        let after = i + len;
        // The first reading after the cue, in its clause, before a word that ends the clause.
        let end = (after..t.len())
            .find(|&k| clause[k] != clause[i] || CLAUSE_ENDS.contains(&t[k].lower.as_str()))
            .unwrap_or(t.len());
        let mut start = found.iter().map(|c| c.span[0]).filter(|s| (after..end).contains(s)).min();
        while let Some(s) = start {
            let at: Vec<usize> = (0..found.len()).filter(|&k| found[k].span[0] == s).collect();
            let last = at.iter().map(|&k| *found[k].span.last().expect("a span")).max().unwrap_or(s);
            for k in at {
                match out.iter_mut().find(|(x, _)| *x == k) {
                    // Negated already ("neither A nor B": B by "neither", then by "nor").
                    Some((_, words)) => {
                        let more: Vec<usize> = cue.iter().copied().filter(|c| !words.contains(c)).collect();
                        words.extend(more);
                    }
                    None => out.push((k, cue.clone())),
                }
            }
            // "A or B", "neither A nor B": the next reading is negated too, and the joining
            // word is the negation's.
            let joined = t.get(last + 1).is_some_and(|w| OR_WORDS.contains(&w.lower.as_str()));
            if joined && !cue.contains(&(last + 1)) {
                cue.push(last + 1);
            }
            start = if joined {
                found.iter().map(|c| c.span[0]).filter(|&s| s > last + 1 && s <= last + 3 && s < end).min()
            } else {
                None
            };
        }
        i = after;
    }
    out
}

/// The negation of a condition: `ne` for `eq`, the other side of a comparison, blank for set,
/// none for some; else `not`.
pub(super) fn negate(c: &Condition) -> Condition {
    match c {
        Condition::Compare(x) if x.other_field.is_none() => {
            let op = match x.op {
                Op::Eq => Some(Op::Ne),
                Op::Ne => Some(Op::Eq),
                Op::IsSet => Some(Op::IsBlank),
                Op::IsBlank => Some(Op::IsSet),
                _ => None,
            };
            match op {
                Some(op) => {
                    let mut y = x.clone();
                    y.op = op;
                    Condition::Compare(y)
                }
                None => Condition::Not(NotOf { not: Box::new(c.clone()) }),
            }
        }
        Condition::Related(RelatedTo { related }) if related.has == Has::Some => {
            Condition::Related(RelatedTo { related: Related { has: Has::None, ..related.clone() } })
        }
        Condition::Related(RelatedTo { related }) if related.has == Has::None => {
            Condition::Related(RelatedTo { related: Related { has: Has::Some, ..related.clone() } })
        }
        Condition::Not(n) => (*n.not).clone(),
        other => Condition::Not(NotOf { not: Box::new(other.clone()) }),
    }
}

/// What a negated reading means, in the same labels ("City is not Lyon").
pub(super) fn negated_meaning(meaning: &str) -> String {
    for (from, to) in [(" is blank", " is not blank"), (" is set", " is blank"), (" is ", " is not ")] {
        if let Some(at) = meaning.find(from) {
            return format!("{}{to}{}", &meaning[..at], &meaning[at + from.len()..]);
        }
    }
    if meaning.starts_with(char::is_lowercase) {
        format!("not {meaning}")
    } else {
        format!("not: {meaning}")
    }
}

/// Replace each negated candidate by its negation, in a group of its own (negations are
/// joined with AND: neither A nor B).
pub(super) fn apply(question: &str, t: &[Token], found: &mut [Candidate]) {
    for (k, cue) in negated(question, t, found) {
        let c = &mut found[k];
        c.condition = negate(&c.condition);
        c.meaning = negated_meaning(&c.meaning);
        c.group = format!("{}:not:{}", c.group, c.span[0]);
        c.negated = true;
        c.cue = cue;
        // A date or a term read as a chip would show the positive: the spec holds the negation.
        c.date = None;
        c.term = None;
        if c.kind == Kind::Term {
            c.kind = Kind::Value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_in_four_languages() {
        let t =
            tokens("clients that aren't in Lyon, other than Paris, ohne Auftrag, sans contact, sin correo");
        let cues: Vec<usize> = (0..t.len()).filter(|&i| cue_at(&t, i).is_some()).collect();
        let words: Vec<&str> = cues.iter().map(|&i| t[i].lower.as_str()).collect();
        assert_eq!(words, ["t", "other", "ohne", "sans", "sin"]);
    }

    #[test]
    fn clauses_follow_punctuation_not_a_numbers_comma() {
        let q = "not in Lyon, over 1,000 euros; or Paris";
        let t = tokens(q);
        assert_eq!(clauses(q, &t), vec![0, 0, 0, 1, 1, 1, 2, 2]);
    }

    #[test]
    fn negation_flips_and_never_keeps_the_positive() {
        let eq = Condition::compare("city", Op::Eq, serde_json::json!("Lyon"));
        assert_eq!(negate(&eq), Condition::compare("city", Op::Ne, serde_json::json!("Lyon")));
        assert_eq!(negate(&negate(&eq)), eq);
        let gt = Condition::compare("total", Op::Gt, serde_json::json!(5));
        assert!(matches!(negate(&gt), Condition::Not(_)));
        assert_eq!(negated_meaning("City is Lyon"), "City is not Lyon");
        assert_eq!(negated_meaning("Next step is set"), "Next step is blank");
        assert_eq!(negated_meaning("owned by Ben"), "not owned by Ben");
    }
}
