//! Related records: "with no notes", "without contacts", "that have overdue invoices",
//! "with at least 5 contacts".

use super::*;

impl Session<'_> {
    /// Where the question asks for `parent` records by their `child` records: the child's
    /// label or plural, the child's own readings just before it ("overdue"), and before those
    /// "no"/"without" (none), "at least N"/"more than N"/"N or more" (at least), or
    /// "with"/"have"/"having" (some).
    pub(super) fn related_said(
        &self,
        t: &[Token],
        p: &Projection,
        parent: &str,
        child: &str,
        via: &str,
        found: &[Candidate],
    ) -> Vec<Candidate> {
        use crate::metadata::types::{Has, Related, RelatedTo};
        let Some(c) = p.object(child) else { return vec![] };
        let mut out = vec![];
        let mut names = vec![tokens(&c.plural_label), tokens(&c.label)];
        names.retain(|n| !n.is_empty());
        for name in &names {
            for at in runs(t, name) {
                // The child's own readings just before its name ("overdue invoices").
                let mut start = at;
                let mut filters: Vec<&Candidate> = vec![];
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
                let w = |i: Option<usize>| i.map(|i| t[i].lower.as_str());
                // "without any contacts", "with no open opportunities": a determiner between.
                while start > 0
                    && matches!(t[start - 1].lower.as_str(), "any" | "a" | "an" | "the" | "some" | "single")
                {
                    start -= 1;
                }
                let b1 = start.checked_sub(1);
                let b2 = start.checked_sub(2);
                let b3 = start.checked_sub(3);
                let number = |i: Option<usize>| {
                    i.and_then(|i| {
                        t[i].lower.parse::<u32>().ok().or_else(|| {
                            NUMBER_WORDS.iter().find(|(k, _)| *k == t[i].lower).map(|(_, n)| *n as u32)
                        })
                    })
                };
                let (has, count, from) = match (w(b3), w(b2), w(b1)) {
                    (_, Some("with" | "have" | "has" | "having"), Some("no" | "zero")) => {
                        (Has::None, None, b2)
                    }
                    (_, _, Some("no" | "without" | "lacking")) => (Has::None, None, b1),
                    (Some("at"), Some("least"), _) if number(b1).is_some() => (Has::AtLeast, number(b1), b3),
                    (Some("more" | "over"), Some("than"), _) if number(b1).is_some() => {
                        (Has::AtLeast, number(b1).map(|n| n + 1), b3)
                    }
                    (_, Some("over"), _) if number(b1).is_some() => {
                        (Has::AtLeast, number(b1).map(|n| n + 1), b2)
                    }
                    (_, Some("with" | "have" | "has" | "having"), _) if number(b1).is_some() => {
                        (Has::AtLeast, number(b1), b2)
                    }
                    (_, _, Some("with" | "have" | "has" | "having")) => (Has::Some, None, b1),
                    _ => continue,
                };
                // "N or more contacts" is written before the name too: "with 5 or more".
                let Some(from) = from else { continue };
                let span: Vec<usize> = (from..at + name.len()).collect();
                let parts: Vec<Condition> = filters.iter().rev().map(|x| x.condition.clone()).collect();
                let filter = match parts.len() {
                    0 => None,
                    1 => Some(Box::new(parts.into_iter().next().expect("one"))),
                    _ => Some(Box::new(Condition::All(AllOf { all: parts }))),
                };
                let which = filters.iter().rev().map(|x| x.words.as_str()).collect::<Vec<_>>().join(" ");
                let what = if which.is_empty() {
                    c.plural_label.to_lowercase()
                } else {
                    format!("{which} {}", c.plural_label.to_lowercase())
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
                        related: Related {
                            object: child.to_string(),
                            via: via.to_string(),
                            has,
                            count,
                            filter,
                        },
                    }),
                ));
            }
        }
        out
    }
}
