//! The question's words: tokens (as written, lower-cased, stemmed), runs of words, and the
//! word lists the reader leaves out or reads as an order.

use super::*;

/// One word of the question: as written, lower-cased, and stemmed.
#[derive(Debug, Clone)]
pub struct Token {
    pub text: String,
    pub lower: String,
    pub stem: String,
}

/// The question's words, split as the value index splits stored values.
pub fn tokens(text: &str) -> Vec<Token> {
    crate::records::value_index::words(text).iter().map(|w| token(w)).collect()
}

pub(super) fn token(text: &str) -> Token {
    let lower = text.to_lowercase();
    let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    let stem = stemmer.stem(&lower).into_owned();
    Token { text: text.to_string(), lower, stem }
}

/// A question word says a word of a label or value: the same word, the same stem, or (both at
/// least five letters) one edit apart.
pub(super) fn says(q: &Token, p: &Token) -> bool {
    if q.lower == p.lower || (q.stem == p.stem && !q.stem.is_empty()) {
        return true;
    }
    let letters = |t: &Token| t.lower.chars().all(char::is_alphabetic);
    let near = |a: &str, b: &str| {
        a.chars().count() >= 5 && b.chars().count() >= 5 && strsim::damerau_levenshtein(a, b) <= 1
    };
    letters(q) && letters(p) && (near(&q.lower, &p.lower) || near(&q.stem, &p.stem))
}

/// Where `phrase` stands in the question as a run of words.
pub(super) fn runs(question: &[Token], phrase: &[Token]) -> Vec<usize> {
    if phrase.is_empty() || phrase.len() > question.len() {
        return vec![];
    }
    (0..=question.len() - phrase.len())
        .filter(|&at| phrase.iter().enumerate().all(|(i, p)| says(&question[at + i], p)))
        .collect()
}

/// Words that carry no condition: a question's framing, articles, prepositions.
pub const FILLER: &[&str] = &[
    "a",
    "about",
    "accounts",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "each",
    "every",
    "find",
    "for",
    "from",
    "get",
    "give",
    "had",
    "has",
    "have",
    "how",
    "i",
    "in",
    "is",
    "it",
    "its",
    "let",
    "list",
    "many",
    "me",
    "much",
    "need",
    "of",
    "on",
    "or",
    "our",
    "please",
    "record",
    "records",
    "s",
    "see",
    "show",
    "some",
    "still",
    "tell",
    "that",
    "the",
    "their",
    "them",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "us",
    "want",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whose",
    "with",
    "would",
    "you",
    "your",
    "marked",
    "based",
    "located",
    "currently",
    "now",
    "ones",
    "one",
    "whole",
    // The same framing in German, French and Spanish (a locale's reader asks in its language).
    "im",
    "der",
    "die",
    "das",
    "den",
    "dem",
    "ein",
    "eine",
    "mit",
    "von",
    "für",
    "alle",
    "zeige",
    "welche",
    "les",
    "le",
    "la",
    "du",
    "avec",
    "pour",
    "tous",
    "toutes",
    "quelles",
    "quels",
    "el",
    "los",
    "las",
    "del",
    "con",
    "para",
    "todos",
    "todas",
    "muestra",
];

/// Words that ask for an order or a count of rows rather than a condition.
pub const ORDER_WORDS: &[&str] = &[
    "largest",
    "biggest",
    "highest",
    "top",
    "most",
    "greatest",
    "smallest",
    "lowest",
    "least",
    "newest",
    "latest",
    "recent",
    "oldest",
    "earliest",
    "first",
    "last",
    "sorted",
    "sort",
    "order",
    "ordered",
    "ascending",
    "descending",
    "by",
];

pub(super) fn words_of(tokens: &[Token], span: &[usize]) -> String {
    span.iter().map(|&i| tokens[i].text.as_str()).collect::<Vec<_>>().join(" ")
}

/// The stems of every word the projection uses for objects, fields, values and terms: a
/// one-word stored value that is also one of these is not taken as said.
pub(super) fn vocabulary_words(p: &Projection) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let mut add = |text: &str| out.extend(tokens(text).into_iter().map(|t| t.stem));
    for o in &p.objects {
        add(&o.label);
        add(&o.plural_label);
        add(&o.key.replace('_', " "));
        for f in &o.fields {
            add(&f.label);
            for (v, l) in &f.values {
                add(&v.replace('_', " "));
                add(l);
            }
        }
        for term in &o.terms {
            for ph in term.phrases() {
                add(ph);
            }
        }
    }
    for w in FILLER.iter().chain(ORDER_WORDS) {
        add(w);
    }
    out.sort();
    out.dedup();
    out
}
