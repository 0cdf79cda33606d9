//! Related records: "with no notes", "without contacts", "that have overdue invoices",
//! "with at least 5 contacts".

use super::*;
use crate::metadata::types::Has;

/// Words between a cue and the child's name ("without *any* contacts", "sans *aucun* contact").
const DETERMINERS: &[&str] = &[
    "any",
    "a",
    "an",
    "the",
    "some",
    "single",
    "ein",
    "eine",
    "einen",
    "einem",
    "einer",
    "irgendwelche",
    "un",
    "une",
    "des",
    "de",
    "d",
    "una",
    "unos",
    "unas",
    "algún",
    "alguna",
    "algun",
];

/// Words that join the child's name to a reading of its own after it.
const AFTER: &[&str] = &["in", "at", "from", "of", "im", "aus", "dans", "du", "de", "en", "del"];

/// What the words just before the child's name say of it, in the four languages: the cue's
/// words (`#` a number) and what it asks. The longest cue that ends there wins.
const CUES: &[(&[&str], Cue)] = &[
    (&["with", "no"], Cue::None),
    (&["have", "no"], Cue::None),
    (&["has", "no"], Cue::None),
    (&["having", "no"], Cue::None),
    (&["with", "zero"], Cue::None),
    (&["no"], Cue::None),
    (&["without"], Cue::None),
    (&["lacking"], Cue::None),
    (&["ohne"], Cue::None),
    (&["kein"], Cue::None),
    (&["keine"], Cue::None),
    (&["keinen"], Cue::None),
    (&["keinem"], Cue::None),
    (&["sans"], Cue::None),
    (&["aucun"], Cue::None),
    (&["aucune"], Cue::None),
    (&["sin"], Cue::None),
    (&["ningún"], Cue::None),
    (&["ningun"], Cue::None),
    (&["ninguna"], Cue::None),
    (&["at", "least", "#"], Cue::AtLeast),
    (&["mindestens", "#"], Cue::AtLeast),
    (&["au", "moins", "#"], Cue::AtLeast),
    (&["al", "menos", "#"], Cue::AtLeast),
    (&["por", "lo", "menos", "#"], Cue::AtLeast),
    (&["more", "than", "#"], Cue::MoreThan),
    (&["over", "#"], Cue::MoreThan),
    (&["mehr", "als", "#"], Cue::MoreThan),
    (&["über", "#"], Cue::MoreThan),
    (&["plus", "de", "#"], Cue::MoreThan),
    (&["más", "de", "#"], Cue::MoreThan),
    (&["mas", "de", "#"], Cue::MoreThan),
    (&["with", "#"], Cue::AtLeast),
    (&["have", "#"], Cue::AtLeast),
    (&["has", "#"], Cue::AtLeast),
    (&["having", "#"], Cue::AtLeast),
    (&["mit", "#"], Cue::AtLeast),
    (&["avec", "#"], Cue::AtLeast),
    (&["con", "#"], Cue::AtLeast),
    (&["with"], Cue::Some),
    (&["have"], Cue::Some),
    (&["has"], Cue::Some),
    (&["having"], Cue::Some),
    (&["mit"], Cue::Some),
    (&["haben"], Cue::Some),
    (&["hat"], Cue::Some),
    (&["avec"], Cue::Some),
    (&["ayant"], Cue::Some),
    (&["ont"], Cue::Some),
    (&["con"], Cue::Some),
    (&["tienen"], Cue::Some),
    (&["tiene"], Cue::Some),
];

#[derive(Clone, Copy)]
enum Cue {
    None,
    Some,
    AtLeast,
    MoreThan,
}

/// The cue that ends just before word `end`: what it asks, its count, and its first word.
fn cue_before(t: &[Token], end: usize) -> Option<(Has, Option<u32>, usize)> {
    let number = |w: &Token| {
        w.lower
            .parse::<u32>()
            .ok()
            .or_else(|| NUMBER_WORDS.iter().find(|(k, _)| *k == w.lower).map(|(_, n)| *n as u32))
    };
    let mut best: Option<(usize, Has, Option<u32>)> = None;
    for (words, cue) in CUES {
        let Some(from) = end.checked_sub(words.len()) else { continue };
        let mut n = None;
        let fits = words.iter().zip(&t[from..end]).all(|(w, q)| match *w {
            "#" => {
                n = number(q);
                n.is_some()
            }
            w => q.lower == w,
        });
        if !fits || best.as_ref().is_some_and(|(f, ..)| *f <= from) {
            continue;
        }
        let (has, count) = match cue {
            Cue::None => (Has::None, None),
            Cue::Some => (Has::Some, None),
            Cue::AtLeast => (Has::AtLeast, n),
            Cue::MoreThan => (Has::AtLeast, n.map(|n| n + 1)),
        };
        best = Some((from, has, count));
    }
    best.map(|(from, has, count)| (has, count, from))
}

impl Session<'_> {
    /// Where the question asks for `parent` records by their `child` records: the child's
    /// label or plural, the child's own readings just before it ("overdue"), and before those
    /// "no"/"without" (none), "at least N"/"more than N"/"N or more" (at least), or
    /// "with"/"have"/"having" (some).
    pub(super) fn related_said(
        &self,
        t: &[Token],
        parent: &str,
        c: &ProjectedObject,
        via: &str,
        found: &[Candidate],
        named: Option<Vec<super::objects::Mention>>,
    ) -> Vec<Candidate> {
        use crate::metadata::types::{Related, RelatedTo};
        let child = c.key.as_str();
        let mut out = vec![];
        // The child named in any of its languages ("contacts", "Kontakte", "contactos"): where
        // the question's objects were read (`named`, when the child is one), else read here.
        for mention in named.unwrap_or_else(|| super::objects::objects_said(t, &[c])) {
            let (mut at, mut end) = (mention.span[0], mention.span[mention.span.len() - 1] + 1);
            let own = |x: &&Candidate| {
                x.object.as_deref() == Some(child)
                    && matches!(x.kind, Kind::Term | Kind::Value | Kind::Flag | Kind::Currency)
            };
            let mut filters: Vec<&Candidate> = vec![];
            // A reading that holds the name ("lost deals": a term of deals) is its filter.
            if let Some(x) =
                found.iter().filter(own).find(|x| x.span[0] <= at && *x.span.last().unwrap_or(&0) + 1 >= end)
            {
                (at, end) = (x.span[0], x.span[x.span.len() - 1] + 1);
                filters.push(x);
            }
            // The child's own readings just after its name, joined by a preposition
            // ("contacts in finance", "contactos de ventas").
            if let Some(x) = t
                .get(end)
                .filter(|w| AFTER.contains(&w.lower.as_str()))
                .and_then(|_| found.iter().filter(own).find(|x| x.span[0] == end + 1))
            {
                end = x.span[x.span.len() - 1] + 1;
                filters.push(x);
            }
            let name_len = end - at;
            // The child's own readings just before its name ("overdue invoices").
            let mut start = at;
            while start > 0 {
                let before = found.iter().find(|x| {
                    x.object.as_deref() == Some(child)
                        && matches!(x.kind, Kind::Term | Kind::Value | Kind::Flag | Kind::Currency)
                        && x.span.last() == Some(&(start - 1))
                });
                match before {
                    Some(x) => {
                        start = x.span[0];
                        filters.push(x);
                    }
                    None => break,
                }
            }
            // "without any contacts", "with no open opportunities": a determiner between.
            while start > 0 && DETERMINERS.contains(&t[start - 1].lower.as_str()) {
                start -= 1;
            }
            let Some((has, count, from)) = cue_before(t, start) else { continue };
            let span: Vec<usize> = (from..at + name_len).collect();
            let parts: Vec<Condition> = filters.iter().rev().map(|x| x.condition.clone()).collect();
            let filter = match parts.len() {
                0 => None,
                1 => Some(Box::new(parts.into_iter().next().expect("one"))),
                _ => Some(Box::new(Condition::All(AllOf { all: parts }))),
            };
            // The child as the question says it, with its readings ("overdue invoices",
            // "contacts in finance"); the plural label where the question says only the name.
            let what = if filters.is_empty() {
                c.plural_label.to_lowercase()
            } else {
                let first = filters.iter().map(|x| x.span[0]).chain([at]).min().unwrap_or(at);
                words_of(t, &(first..at + name_len).collect::<Vec<_>>())
            };
            let meaning = match (has, count) {
                (Has::None, _) => format!("has no {what}"),
                (Has::AtLeast, Some(n)) => format!("has at least {n} {what}"),
                _ => format!("has {what}"),
            };
            out.push(Candidate::new(
                Kind::Related,
                Some(parent.to_string()),
                format!("{parent}:related:{}", span[0]),
                t,
                span,
                meaning,
                Condition::Related(RelatedTo {
                    related: Related { object: child.to_string(), via: via.to_string(), has, count, filter },
                }),
            ));
        }
        out
    }
}
