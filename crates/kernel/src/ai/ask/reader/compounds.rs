//! Compound words, read by their parts. German writes a value and a field as one word
//! ("Logistikbranche": the value Logistik, the field Branche; "Kundenkonten": the term Kunde,
//! the object Konten), and its labels are compounds of the object and a word the question says
//! alone ("Rechnungsbetrag" is the invoice's Betrag). A question word no label holds is split
//! where both parts are words of the workspace's own vocabulary — never by a dictionary of
//! compounds, so a workspace's new labels split the same way. Only a question in German, or
//! from a German-speaking asker, is split: the other three languages write compounds apart.

use super::words::{fold, token, Token};
use crate::ai::projection::Projection;
use std::collections::HashSet;

/// The shortest part a split may leave: shorter parts match by chance ("ort", "art").
const PART: usize = 4;

/// The folded, lower-case words of every label, value, term and name of `p`, in every language.
fn label_words(p: &Projection) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut add = |text: &str| {
        for w in crate::records::value_index::words(text) {
            let w = fold(&w.to_lowercase());
            if w.chars().count() >= PART && w.chars().all(char::is_alphabetic) {
                out.insert(w);
            }
        }
    };
    for o in &p.objects {
        add(&o.label);
        add(&o.plural_label);
        for n in &o.names {
            add(&n.text);
        }
        for f in &o.fields {
            add(&f.label);
            for (_, l) in &f.other_labels {
                add(l);
            }
            for (_, l) in &f.values {
                add(l);
            }
            for (_, _, l) in &f.other_value_labels {
                add(l);
            }
        }
        for term in &o.terms {
            for ph in term.phrases() {
                add(ph);
            }
        }
    }
    out
}

/// Where `word` (folded, lower case) splits into two words of `known`: the modifier may end in
/// a linking `s`, `n`, `en` or `es` ("Rechnungs-", "Kunden-"). The longest head wins.
fn split_at(word: &str, known: &HashSet<String>) -> Option<usize> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    if chars.len() < 2 * PART || !word.chars().all(char::is_alphabetic) || known.contains(word) {
        return None;
    }
    (PART..=chars.len() - PART).map(|k| chars[k].0).find(|&at| {
        let (modifier, head) = word.split_at(at);
        known.contains(head)
            && (known.contains(modifier)
                || ["s", "n", "en", "es"].iter().any(|l| {
                    modifier.strip_suffix(l).is_some_and(|m| m.chars().count() >= PART && known.contains(m))
                }))
    })
}

/// The question's tokens with each compound of two vocabulary words as its two parts.
pub(super) fn split_compounds(t: Vec<Token>, p: &Projection) -> Vec<Token> {
    if !t.iter().any(|w| w.lower.chars().count() >= 2 * PART) {
        return t;
    }
    let known = label_words(p);
    let mut out = Vec::with_capacity(t.len());
    for w in t {
        let folded = fold(&w.lower);
        // Folding drops accents, never letters, so a split of the folded word is one of the word.
        match split_at(&folded, &known) {
            Some(at) => {
                let k = folded[..at].chars().count();
                let cut = w.text.char_indices().nth(k).map_or(w.text.len(), |(i, _)| i);
                out.push(token(&w.text[..cut]));
                out.push(token(&w.text[cut..]));
            }
            None => out.push(w),
        }
    }
    out
}

/// A label word of a compounding language is a compound whose head is `q` ("Rechnungsbetrag"
/// ends in "Betrag"): the question word names the field alone.
pub(super) fn head_of(label_word: &str, q: &str) -> bool {
    let (l, q) = (fold(&label_word.to_lowercase()), fold(&q.to_lowercase()));
    q.chars().count() >= 5
        && q.chars().all(char::is_alphabetic)
        && l.len() > q.len()
        && l.ends_with(&q)
        && l[..l.len() - q.len()].chars().count() >= PART
}

/// The question words that say the head of a one-word compound of a label (its words `label`)
/// written in `language` ("Betrag" of "Rechnungsbetrag"). German alone of the four writes its
/// labels so.
pub(super) fn heads_said(t: &[Token], language: crate::locale::Language, label: &[Token]) -> Vec<usize> {
    if language != crate::locale::Language::De {
        return vec![];
    }
    (0..t.len()).filter(|&i| label.iter().any(|w| head_of(&w.lower, &t[i].lower))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compound_splits_only_into_two_known_words() {
        let known: HashSet<String> = ["logistik", "branche", "kunde", "konten", "rechnung", "betrag"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(split_at("logistikbranche", &known), Some(8));
        assert_eq!(split_at("kundenkonten", &known), Some(6));
        assert_eq!(split_at("rechnungsbetrag", &known), Some(9));
        // Not a compound of two known words; a known word is never split.
        assert_eq!(split_at("logistikzentrum", &known), None);
        assert_eq!(split_at("branche", &known), None);
        assert!(head_of("Rechnungsbetrag", "Betrag"));
        assert!(!head_of("Rechnungsbetrag", "trag"));
        assert!(!head_of("Betrag", "Betrag"));
    }
}
