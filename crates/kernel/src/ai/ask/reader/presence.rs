//! Blank and not blank: a field named after a word of having ("has a PO number", "with an
//! email", "mit Telefon", "avec un e-mail", "con correo") is set; after a word of lacking
//! ("missing email", "lacking a phone") or before one ("whose email is missing", "next step is
//! empty") it is blank. After a negation cue ("without a next step", "no phone", "ohne",
//! "sans", "sin") the reading is "is set", which the negation then turns into "is blank".

use super::*;
use crate::locale::Language;

/// Words of having: the field that follows is set.
const HAVE: &[&str] =
    &["has", "have", "having", "with", "hat", "haben", "mit", "avec", "ont", "con", "tiene", "tienen"];
/// Words of lacking: the field that follows is blank.
const LACK: &[&str] = &["missing", "lacking", "lack", "lacks", "fehlend", "fehlender", "manquant", "falta"];
/// Words after a field that say it is blank.
const BLANK_AFTER: &[&str] =
    &["missing", "blank", "empty", "unset", "unknown", "fehlt", "leer", "vide", "manquant", "vacío", "vacio"];
/// Words after a field that say it is set.
const SET_AFTER: &[&str] = &["set", "filled", "known", "present"];
/// Articles between the word of having and the field.
const ARTICLES: &[&str] = &[
    "a", "an", "the", "any", "some", "ein", "eine", "einen", "einer", "un", "une", "des", "de", "una",
    "unos", "le", "la", "el", "los", "las",
];

/// Where the question says a field of `o` is set or blank: (span, field, is it blank).
/// `held`: words other readings hold, which cannot spell an acronym.
pub(super) fn presence_said(
    t: &[Token],
    o: &ProjectedObject,
    held: &[usize],
) -> Vec<(Vec<usize>, String, bool)> {
    let mut out = vec![];
    for f in &o.fields {
        // Its label, its key, and its labels in other languages ("ohne Bestellnummer").
        let mut names: Vec<(Language, Vec<Token>)> =
            vec![(Language::En, tokens(&f.label)), (Language::En, tokens(&f.key.replace('_', " ")))];
        names.extend(f.other_labels.iter().map(|(l, label)| (*l, tokens(label))));
        names.retain(|(_, n)| {
            !n.is_empty()
                && n.iter().any(|w| {
                    !GENERIC_FIELD_WORDS.contains(&w.lower.as_str()) && !FILLER.contains(&w.lower.as_str())
                })
        });
        names.dedup_by(|a, b| a.1.iter().map(|x| &x.lower).eq(b.1.iter().map(|x| &x.lower)));
        let mut seen: Vec<usize> = vec![];
        for (language, name) in &names {
            let whole = runs_in(t, name, *language).into_iter().map(|at| (at, name.len()));
            for (at, len) in whole.chain(acronym_runs(t, name, held)) {
                if seen.contains(&at) {
                    continue;
                }
                seen.push(at);
                let end = at + len;
                let mut before = at;
                while before > 0 && ARTICLES.contains(&t[before - 1].lower.as_str()) {
                    before -= 1;
                }
                let word_before = before.checked_sub(1).map(|b| t[b].lower.as_str());
                let cue_before =
                    before.checked_sub(1).is_some_and(|b| super::negation::cue_at(t, b) == Some(1));
                // "is missing", "ist leer", "est vide", "está vacío": skip the verb.
                let mut after = end;
                if t.get(after).is_some_and(|w| {
                    matches!(
                        w.lower.as_str(),
                        "is" | "are" | "ist" | "sind" | "est" | "sont" | "está" | "esta"
                    )
                }) {
                    after += 1;
                }
                let word_after = t.get(after).map(|w| w.lower.as_str());
                let (from, to, blank) = if word_before.is_some_and(|w| LACK.contains(&w)) {
                    (before - 1, end, true)
                } else if word_before.is_some_and(|w| HAVE.contains(&w)) || cue_before {
                    // The cue stays outside: the negation reads it and turns "set" into "blank".
                    // "no next step set": the word after that says "set" is the reading's too.
                    let to = if word_after.is_some_and(|w| SET_AFTER.contains(&w)) { after + 1 } else { end };
                    (if cue_before { before } else { before - 1 }, to, false)
                } else if word_after.is_some_and(|w| BLANK_AFTER.contains(&w)) {
                    (at, after + 1, true)
                } else if word_after.is_some_and(|w| SET_AFTER.contains(&w)) {
                    (at, after + 1, false)
                } else {
                    continue;
                };
                out.push(((from..to).collect(), f.key.clone(), blank));
            }
        }
    }
    out
}

/// Words after an acronym in a label that only say it is a number or code ("PO *number*").
const ACRONYM_TAIL: &[&str] = &["number", "no", "nr", "id", "code", "nummer", "numéro", "numero", "número"];

/// Where the question says a label that holds an acronym by the acronym's words or alone:
/// "PO number" said as "purchase order number", "purchase order" or "PO". (first word, words).
fn acronym_runs(t: &[Token], name: &[Token], held: &[usize]) -> Vec<(usize, usize)> {
    let is_acronym =
        |w: &Token| (2..=4).contains(&w.text.len()) && w.text.chars().all(|c| c.is_ascii_uppercase());
    let Some(j) = name.iter().position(is_acronym) else { return vec![] };
    let letters: Vec<char> = name[j].lower.chars().collect();
    // The label with its tail of number words, and without it when that tail is all it adds.
    let mut variants = vec![name.to_vec()];
    if name[j + 1..].iter().all(|w| ACRONYM_TAIL.contains(&w.lower.as_str())) && j + 1 < name.len() {
        variants.push(name[..=j].to_vec());
    }
    let mut out = vec![];
    for at in 0..t.len() {
        for v in &variants {
            // Match the variant from `at`: its acronym by itself or by its words' initials.
            let mut q = at;
            let matched = v.iter().enumerate().all(|(k, w)| {
                if k == j {
                    if t.get(q).is_some_and(|x| x.lower == w.lower) {
                        q += 1;
                        return true;
                    }
                    // Each of its words a content word of its own, starting with its letter.
                    let spelled = q + letters.len() <= t.len()
                        && (q..q + letters.len()).zip(&letters).all(|(i, l)| {
                            let x = &t[i].lower;
                            x.starts_with(*l)
                                && x.chars().count() >= 4
                                && !held.contains(&i)
                                && !FILLER.contains(&x.as_str())
                                && !LIGHT_WORDS.contains(&x.as_str())
                                && !POINTING.contains(&x.as_str())
                        });
                    if spelled {
                        q += letters.len();
                    }
                    spelled
                } else {
                    let ok = t.get(q).is_some_and(|x| says(x, w));
                    q += 1;
                    ok
                }
            });
            if matched && !out.iter().any(|(a, _)| *a == at) {
                out.push((at, q - at));
            }
        }
    }
    out
}
