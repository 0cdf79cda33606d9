//! The objects a question names, and which one it asks to list. An object is named by its
//! label or plural in any of its languages ("Rechnungen", "factures") or a synonym ("deals"),
//! each matched with its own language's stemmer. The **head noun** decides: the first object
//! named that is not after a word of relation ("contacts *at* Acme", "deals *for* accounts in
//! Germany", "lines *on* Acme's invoices", "notes *about* Initech") is the one the answer lists;
//! the others are conditions through their lookups.

use super::*;
use crate::locale::Language;

/// Words after which an object's name is a condition's, not the one asked to list.
const RELATION_WORDS: &[&str] = &[
    "of", "at", "for", "with", "without", "on", "about", "from", "in", "by", "to", "under", "whose", "no",
    "von", "vom", "bei", "für", "mit", "ohne", "auf", "über", "zu", "zum", "zur", "aus", "kein", "keine",
    "keinen", "de", "du", "des", "à", "au", "aux", "pour", "avec", "sans", "sur", "chez", "d", "del", "con",
    "sin", "para", "en", "por", "having", "have", "has", "that", "which",
];

/// One object named in the question: where, and whether it reads as the one asked for.
#[derive(Debug, Clone)]
pub struct Mention {
    pub object: String,
    pub span: Vec<usize>,
    /// Said in the plural ("invoices", "Rechnungen"), the singular, or not known (a synonym).
    pub plural: Option<bool>,
    /// Said exactly as one of its names (accents aside), not only by a stem or an edit.
    pub exact: bool,
}

/// Every place the question names an object in scope (the longest name wins where two overlap:
/// "invoice lines" names invoice lines, not invoices).
pub(super) fn objects_said(t: &[Token], in_scope: &[&ProjectedObject]) -> Vec<Mention> {
    let mut out: Vec<Mention> = vec![];
    for o in in_scope {
        for name in &o.names {
            let phrase = tokens(&name.text);
            let languages: Vec<Language> = match name.language {
                Some(l) => vec![l],
                None => Language::ALL.to_vec(),
            };
            for l in languages {
                // The head of a one-word compound name ("Chancen" of "Verkaufschancen") names
                // the object alone, in the name's number.
                let heads = match phrase.as_slice() {
                    [_] => super::compounds::heads_said(t, l, &phrase),
                    _ => vec![],
                };
                for at in heads {
                    if !out.iter().any(|m| m.object == o.key && m.span == [at]) {
                        out.push(Mention {
                            object: o.key.clone(),
                            span: vec![at],
                            plural: name.plural,
                            exact: false,
                        });
                    }
                }
                for at in runs_in(t, &phrase, l) {
                    let span: Vec<usize> = (at..at + phrase.len()).collect();
                    // Written exactly as this name: its number is the name's.
                    let exact = phrase.iter().zip(&span).all(|(p, &i)| fold(&p.lower) == fold(&t[i].lower));
                    match out.iter_mut().find(|m| m.object == o.key && m.span == span) {
                        Some(m) => {
                            if exact && name.plural.is_some() {
                                m.plural = name.plural;
                            }
                            m.exact |= exact;
                        }
                        None => out.push(Mention {
                            object: o.key.clone(),
                            span,
                            plural: if exact { name.plural } else { None },
                            exact,
                        }),
                    }
                }
            }
        }
    }
    let all = out.clone();
    out.retain(|m| {
        !all.iter().any(|x| x.span.len() > m.span.len() && m.span.iter().all(|i| x.span.contains(i)))
    });
    out.sort_by_key(|m| m.span[0]);
    out
}

/// The object the question asks to list: the first one named that no word of relation comes
/// before, and that is not part of a name, a value or a related reading.
pub(super) fn head(t: &[Token], mentions: &[Mention], found: &[Candidate]) -> Option<String> {
    mentions
        .iter()
        .filter(|m| {
            !found.iter().any(|c| {
                matches!(c.kind, Kind::Record | Kind::Value | Kind::Related | Kind::Text)
                    && m.span.iter().all(|i| c.span.contains(i))
            })
        })
        .find(|m| {
            // Skip an article or a possessive between the relation and the name.
            let mut b = m.span[0];
            while b > 0
                && matches!(
                    t[b - 1].lower.as_str(),
                    "the"
                        | "a"
                        | "an"
                        | "our"
                        | "their"
                        | "its"
                        | "s"
                        | "der"
                        | "die"
                        | "das"
                        | "den"
                        | "dem"
                        | "les"
                        | "la"
                        | "le"
                        | "l"
                        | "los"
                        | "las"
                        | "el"
                        | "nos"
                        | "unsere"
                        | "unseren"
                        | "nuestros"
                        | "nuestras"
                        | "all"
                        | "any"
                        | "some"
                )
            {
                b -= 1;
            }
            // "which", "that" open a question ("which account has …") as often as they relate
            // a clause to a noun ("accounts which have …"): first in the question, they ask.
            let opens = b == 1 && matches!(t[0].lower.as_str(), "which" | "that" | "what");
            b == 0 || opens || !RELATION_WORDS.contains(&t[b - 1].lower.as_str())
        })
        .map(|m| m.object.clone())
}

/// The question's words that name `o` (any language, a synonym) or, in another language, one
/// of `fields` — words an answer on `o` that reads those fields uses.
pub fn words_naming(t: &[Token], o: &ProjectedObject, fields: &[&str]) -> Vec<usize> {
    let mut out: Vec<usize> = objects_said(t, &[o]).into_iter().flat_map(|m| m.span).collect();
    for f in o.fields.iter().filter(|f| fields.contains(&f.key.as_str())) {
        for (language, label) in &f.other_labels {
            let phrase = tokens(label);
            for at in runs_in(t, &phrase, *language) {
                out.extend(at..at + phrase.len());
            }
            // The head of a compound label ("Betrag" of "Rechnungsbetrag").
            out.extend(super::compounds::heads_said(t, *language, &phrase));
            // A verb of the label's noun ("émises" of "Date d'émission").
            for (i, q) in t.iter().enumerate() {
                if phrase.iter().any(|w| w.lower.chars().count() >= 5 && super::same_root(&q.lower, &w.lower))
                {
                    out.push(i);
                }
            }
        }
    }
    out
}

/// The fields of `o` the question names by their whole label (in any of its languages) or key:
/// each with the words that name it. A field named but not compared is a column to show
/// ("invoice numbers and totals of Acme").
pub fn fields_named(t: &[Token], o: &ProjectedObject) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = vec![];
    for f in &o.fields {
        let mut names =
            vec![(Language::En, tokens(&f.label)), (Language::En, tokens(&f.key.replace('_', " ")))];
        names.extend(f.other_labels.iter().map(|(l, label)| (*l, tokens(label))));
        let mut words: Vec<usize> = vec![];
        for (language, name) in names.iter().filter(|(_, n)| !n.is_empty()) {
            // A label of filler words alone ("Type", "Name") is too generic to name a column.
            if name.iter().all(|w| FILLER.contains(&w.lower.as_str())) {
                continue;
            }
            for at in runs_in(t, name, *language) {
                words.extend(at..at + name.len());
            }
        }
        if !words.is_empty() {
            words.sort_unstable();
            words.dedup();
            out.push((f.key.clone(), words));
        }
    }
    out
}
