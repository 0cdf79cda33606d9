//! The question reader (prompt versions 4 and 5): before any model call, the kernel reads the
//! question in the workspace's terms, on the asking user's projection only, and turns it into
//! **candidate conditions**, each with the words of the question that justify it. The model
//! then only chooses among them (`conditions: ["c1", …]`); it never writes a field, an operator
//! or a value, so a filter the question's words do not justify cannot be expressed.
//!
//! What the reader finds, each through the user's session (a value only another user can see
//! is never a candidate):
//! - the workspace's terms, by label and synonyms;
//! - picklist values and boolean fields by label or key, matched through a stemmer and an edit
//!   distance of one (inflected forms, plurals, typos);
//! - records by name (`records::names`), and stored values of short text fields (a city, a
//!   country, a title), matched as runs of the question's words;
//! - workspace users by name, as the record's owner;
//! - quantities with units and ranges ("40k", "2.5 million", "between 10k and 20k", "at least
//!   75,000", "above 40 percent") on the number and currency fields they fit;
//! - currency words ("euros", "pounds") on a picklist whose values are currency codes;
//! - date phrases (`ai::dates::read_dates`) on the date fields the question's words name.

use super::DateChoice;
use crate::ai::dates::{read_dates, DateRange};
use crate::ai::projection::{ProjectedField, Projection};
use crate::error::Result;
use crate::metadata::condition::{AllOf, Condition, Op};
use crate::metadata::definition::FieldType;
use crate::records::access::Session;
use crate::records::names::{name_tokens, Resolution, ResolutionStatus};
use crate::records::value_index::probe;
use serde_json::Value;

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

fn token(text: &str) -> Token {
    let lower = text.to_lowercase();
    let stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    let stem = stemmer.stem(&lower).into_owned();
    Token { text: text.to_string(), lower, stem }
}

/// A question word says a word of a label or value: the same word, the same stem, or (both at
/// least five letters) one edit apart.
fn says(q: &Token, p: &Token) -> bool {
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
fn runs(question: &[Token], phrase: &[Token]) -> Vec<usize> {
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

/// What kind of thing a candidate is (for the prompt's wording and the answer's chips).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Term,
    Value,
    Flag,
    Record,
    Owner,
    Quantity,
    Currency,
    Date,
    Related,
    Text,
}

/// One condition the question's words justify.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// `c1`, `c2`, … in the order read.
    pub id: String,
    pub kind: Kind,
    /// The object whose fields the condition reads; `None` for every object (the owner).
    pub object: Option<String>,
    /// Chosen candidates of one group are joined with OR (values of one field), groups with AND.
    pub group: String,
    /// The question's words, as written.
    pub words: String,
    /// Indexes of those words in the question.
    pub span: Vec<usize>,
    /// What the condition means, in the workspace's labels ("Status is Overdue").
    pub meaning: String,
    /// On `object`'s own fields.
    pub condition: Condition,
    /// The records a name names (`Kind::Record`): a child queries its lookup by their ids.
    pub records: Option<Resolution>,
    /// The date phrase (`Kind::Date`), for the answer's chip.
    pub date: Option<DateChoice>,
    /// The term's key and label (`Kind::Term`).
    pub term: Option<(String, String)>,
}

/// What the reader found in one question.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub tokens: Vec<Token>,
    pub candidates: Vec<Candidate>,
    /// Whole numbers the question says that could be a count of rows ("the five largest").
    pub counts: Vec<u32>,
    /// Word indexes inside a date phrase or a quantity (not counts, not unused words).
    pub used_by_readings: Vec<usize>,
    /// The objects the question may be asking to list: those it names; else those whose own
    /// candidates cover the most of its words; else every object in scope.
    pub objects: Vec<String>,
}

fn words_of(tokens: &[Token], span: &[usize]) -> String {
    span.iter().map(|&i| tokens[i].text.as_str()).collect::<Vec<_>>().join(" ")
}

impl Candidate {
    /// A candidate of `kind` on `object` (`None`: every object) in `group`, read from the
    /// question's words at `span`; its id is given once the reading is complete.
    fn new(
        kind: Kind,
        object: Option<String>,
        group: String,
        t: &[Token],
        span: Vec<usize>,
        meaning: String,
        condition: Condition,
    ) -> Candidate {
        Candidate {
            id: String::new(),
            kind,
            object,
            group,
            words: words_of(t, &span),
            span,
            meaning,
            condition,
            records: None,
            date: None,
            term: None,
        }
    }

    /// The condition on the queried object `object`: as read on its own object, through a
    /// lookup on a child of it (a parent's records by id), or `None` when it does not apply.
    pub fn on(&self, p: &Projection, object: &str) -> Option<Condition> {
        let Some(own) = &self.object else { return Some(self.condition.clone()) };
        if own == object {
            return Some(self.condition.clone());
        }
        let lookup = p
            .object(object)?
            .fields
            .iter()
            .find(|f| f.field_type == FieldType::Lookup && f.target.as_deref() == Some(own.as_str()))?;
        if let Some(r) = &self.records {
            let ids: Vec<Value> = r.matches.iter().map(|c| Value::String(c.id.clone())).collect();
            return Some(Condition::compare(&lookup.key, Op::In, Value::Array(ids)));
        }
        if self.kind == Kind::Related || self.condition.fields().iter().any(|f| f.contains('.')) {
            return None;
        }
        Some(self.condition.through(&lookup.key))
    }
}

/// A number the question says, with its unit applied ("40k" = 40,000; "2.5 million").
#[derive(Debug, Clone, Copy)]
struct Said {
    value: f64,
    /// Word indexes it covers.
    from: usize,
    to: usize,
    money: bool,
    percent: bool,
    /// Written as a plain whole number with no unit (a possible count of rows).
    plain: bool,
}

const NUMBER_WORDS: &[(&str, f64)] = &[
    ("one", 1.0),
    ("two", 2.0),
    ("three", 3.0),
    ("four", 4.0),
    ("five", 5.0),
    ("six", 6.0),
    ("seven", 7.0),
    ("eight", 8.0),
    ("nine", 9.0),
    ("ten", 10.0),
    ("eleven", 11.0),
    ("twelve", 12.0),
    ("fifteen", 15.0),
    ("twenty", 20.0),
    ("fifty", 50.0),
    ("hundred", 100.0),
];

const SCALES: &[(&str, f64)] = &[
    ("k", 1e3),
    ("thousand", 1e3),
    ("grand", 1e3),
    ("m", 1e6),
    ("mm", 1e6),
    ("mn", 1e6),
    ("million", 1e6),
    ("millions", 1e6),
    ("b", 1e9),
    ("bn", 1e9),
    ("billion", 1e9),
];

const MONEY_WORDS: &[&str] =
    &["$", "€", "£", "¥", "usd", "eur", "gbp", "dollar", "dollars", "euro", "euros", "pound", "pounds"];

/// Currency words and symbols, and the ISO code each stands for.
const CURRENCY_WORDS: &[(&str, &str)] = &[
    ("dollar", "USD"),
    ("dollars", "USD"),
    ("usd", "USD"),
    ("euro", "EUR"),
    ("euros", "EUR"),
    ("eur", "EUR"),
    ("pound", "GBP"),
    ("pounds", "GBP"),
    ("sterling", "GBP"),
    ("gbp", "GBP"),
    ("yen", "JPY"),
    ("jpy", "JPY"),
    ("franc", "CHF"),
    ("francs", "CHF"),
    ("chf", "CHF"),
    ("cad", "CAD"),
    ("aud", "AUD"),
    ("yuan", "CNY"),
    ("renminbi", "CNY"),
    ("rupee", "INR"),
    ("rupees", "INR"),
    ("krona", "SEK"),
    ("kronor", "SEK"),
    ("zloty", "PLN"),
];

/// The numbers the question says, with units: digits ("50,000", "2.5", "40k", "2.5M"), number
/// words, "half a million", "a quarter of a million".
fn numbers(t: &[Token], taken: &[usize]) -> Vec<Said> {
    let mut out: Vec<Said> = vec![];
    let mut i = 0;
    while i < t.len() {
        if taken.contains(&i) {
            i += 1;
            continue;
        }
        let w = t[i].lower.as_str();
        let (mut value, mut to, mut plain, mut start) = (None, i, false, i);
        // "40k", "2.5m", "10bn": digits with the scale stuck on.
        let digits_end = w.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',')).unwrap_or(w.len());
        if digits_end > 0 && w.as_bytes()[0].is_ascii_digit() {
            let number: Option<f64> = w[..digits_end].replace(',', "").parse().ok();
            let rest = &w[digits_end..];
            if let Some(n) = number {
                if rest.is_empty() {
                    value = Some(n);
                    plain = !w.contains('.');
                } else if let Some((_, s)) = SCALES.iter().find(|(k, _)| *k == rest) {
                    value = Some(n * s);
                }
            }
        } else if let Some((_, n)) = NUMBER_WORDS.iter().find(|(k, _)| *k == w) {
            value = Some(*n);
            plain = true;
        } else if (w == "half" || w == "quarter") && i + 1 < t.len() {
            // "half a million", "a quarter of a million"
            let share = if w == "half" { 0.5 } else { 0.25 };
            let mut j = i + 1;
            while j < t.len() && matches!(t[j].lower.as_str(), "a" | "of") {
                j += 1;
            }
            if let Some((_, s)) = t.get(j).and_then(|x| SCALES.iter().find(|(k, _)| *k == x.lower)) {
                value = Some(share * s);
                to = j;
                // "a quarter of a million": the article belongs to the number.
                if i > 0 && t[i - 1].lower == "a" {
                    start = i - 1;
                }
            }
        }
        let Some(mut n) = value else {
            i += 1;
            continue;
        };
        // A scale word after the number ("2.5 million", "40 thousand").
        if let Some((_, s)) = t.get(to + 1).and_then(|x| SCALES.iter().find(|(k, _)| *k == x.lower)) {
            if t[to + 1].lower.len() > 1 {
                n *= s;
                to += 1;
                plain = false;
            }
        }
        let before = start.checked_sub(1).map(|b| t[b].lower.as_str());
        let after = t.get(to + 1).map(|x| x.lower.as_str());
        let money = before.is_some_and(|b| MONEY_WORDS.contains(&b))
            || after.is_some_and(|a| MONEY_WORDS.contains(&a))
            || to > i
            || !plain && value.is_some() && w.ends_with(|c: char| c.is_alphabetic());
        let percent = after.is_some_and(|a| matches!(a, "%" | "percent" | "pct"));
        let from = if before.is_some_and(|b| MONEY_WORDS.contains(&b) && b.chars().count() == 1) {
            start - 1
        } else {
            start
        };
        let to = if percent || after.is_some_and(|a| MONEY_WORDS.contains(&a)) { to + 1 } else { to };
        out.push(Said { value: n, from, to, money, percent, plain: plain && !percent });
        i = to + 1;
    }
    out
}

/// A comparison word before a number: its operator and how many words it takes.
fn comparison_before(t: &[Token], at: usize) -> Option<(Op, usize)> {
    let w = |back: usize| at.checked_sub(back).map(|i| t[i].lower.as_str());
    // "no more than" / "no less than": three words.
    if let (Some(a), Some(b), Some("than")) = (w(3), w(2), w(1)) {
        match (a, b) {
            ("no" | "not", "more") => return Some((Op::Lte, 3)),
            ("no" | "not", "less") => return Some((Op::Gte, 3)),
            _ => {}
        }
    }
    let two = (w(2), w(1));
    let op = match two {
        (Some("more" | "greater" | "higher" | "larger" | "bigger"), Some("than")) => Some((Op::Gt, 2)),
        (Some("less" | "fewer" | "lower" | "smaller"), Some("than")) => Some((Op::Lt, 2)),
        (Some("at"), Some("least")) => Some((Op::Gte, 2)),
        (Some("at"), Some("most")) => Some((Op::Lte, 2)),
        (Some("up"), Some("to")) => Some((Op::Lte, 2)),
        (Some("no"), Some("more")) | (Some("not"), Some("over")) => Some((Op::Lte, 2)),
        (Some("no"), Some("less")) => Some((Op::Gte, 2)),
        _ => None,
    };
    if op.is_some() {
        return op;
    }
    match w(1)? {
        "above" | "over" | "exceeding" | "exceeds" | "exceed" | ">" => Some((Op::Gt, 1)),
        "below" | "under" | "<" => Some((Op::Lt, 1)),
        "minimum" | "min" => Some((Op::Gte, 1)),
        "maximum" | "max" => Some((Op::Lte, 1)),
        _ => None,
    }
}

/// The number as the spec writes it (whole numbers without a fraction).
fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map(Value::Number).unwrap_or(Value::Null)
    }
}

fn shown_number(n: f64) -> String {
    let whole = n.trunc() as i64;
    let mut s = whole.abs().to_string();
    let mut grouped = String::new();
    while s.len() > 3 {
        let tail = s.split_off(s.len() - 3);
        grouped = format!(",{tail}{grouped}");
    }
    let frac = if n.fract() != 0.0 {
        format!("{}", n.fract()).trim_start_matches('0').to_string()
    } else {
        String::new()
    };
    format!("{}{s}{grouped}{frac}", if n < 0.0 { "-" } else { "" })
}

fn op_words(op: Op) -> &'static str {
    match op {
        Op::Gt => "more than",
        Op::Gte => "at least",
        Op::Lt => "less than",
        Op::Lte => "at most",
        _ => "is",
    }
}

/// The words of a field's label and key, stemmed.
fn field_words(f: &ProjectedField) -> Vec<Token> {
    let mut out = tokens(&f.label);
    out.extend(tokens(&f.key.replace('_', " ")));
    out
}

/// Field words too generic to point at one field ("date", "number", "amount" are kept: an
/// amount field is named by them).
const GENERIC_FIELD_WORDS: &[&str] = &["name", "id", "type", "code", "at", "of", "the", "pct"];

/// Whether the question's words name the field (its label or key, beyond generic words).
fn names_field(t: &[Token], f: &ProjectedField) -> bool {
    field_words(f)
        .iter()
        .filter(|w| !GENERIC_FIELD_WORDS.contains(&w.lower.as_str()) && !FILLER.contains(&w.lower.as_str()))
        .any(|w| t.iter().any(|q| q.stem == w.stem || q.lower == w.lower))
}

impl Session<'_> {
    /// Read `question` for the objects in `objects`, on this user's projection `p`.
    pub fn read_question(&self, question: &str, p: &Projection, objects: &[String]) -> Result<Reading> {
        let t = tokens(question);
        let mut reading = Reading { tokens: t.clone(), ..Reading::default() };
        let mut found: Vec<Candidate> = vec![];
        let push = |found: &mut Vec<Candidate>, mut c: Candidate| {
            // A condition on the owner alone ("my") reads a field every object has.
            let fields = c.condition.fields();
            if !fields.is_empty() && fields.iter().all(|f| *f == "owner") {
                c.object = None;
                c.group = "owner".into();
            }
            let same =
                found.iter().any(|x| x.object == c.object && x.condition == c.condition && x.span == c.span);
            if !same {
                c.id = String::new();
                found.push(c);
            }
        };
        // The objects the question is about: those it names, else those whose terms it says.
        let listed: Vec<String> =
            self.objects_named(question).into_iter().filter(|o| objects.contains(o)).collect();
        let mut named = listed.clone();
        if named.is_empty() {
            for o in objects.iter().filter_map(|k| p.object(k)) {
                let says_term = o
                    .terms
                    .iter()
                    .filter(|x| x.key != crate::metadata::definition::MINE)
                    .any(|x| x.phrases().any(|ph| !runs(&t, &tokens(ph)).is_empty()));
                if says_term {
                    named.push(o.key.clone());
                }
            }
        }
        let in_scope: Vec<&crate::ai::projection::ProjectedObject> =
            objects.iter().filter_map(|k| p.object(k)).collect();

        // Dates first: their words are not numbers.
        let day = self.today();
        for range in read_dates(question, day) {
            let phrase = tokens(&range.phrase);
            let Some(at) = runs(&t, &phrase).first().copied() else { continue };
            let span: Vec<usize> = (at..at + phrase.len()).collect();
            reading.used_by_readings.extend(&span);
            for o in &in_scope {
                let dates: Vec<&ProjectedField> = o
                    .fields
                    .iter()
                    .filter(|f| matches!(f.field_type, FieldType::Date | FieldType::Datetime))
                    .collect();
                let said: Vec<&&ProjectedField> = dates.iter().filter(|f| names_field(&t, f)).collect();
                let offered: Vec<&ProjectedField> =
                    if said.is_empty() { dates.clone() } else { said.into_iter().copied().collect() };
                if !said_or_named(&named, &o.key, !offered.is_empty()) {
                    continue;
                }
                for f in offered {
                    push(&mut found, self.date_candidate(o.key.as_str(), f, &range, &t, &span));
                }
            }
        }

        // Quantities: a comparison and a number (or "between X and Y") on the number and
        // currency fields they fit.
        let taken = reading.used_by_readings.clone();
        let said_numbers = numbers(&t, &taken);
        let mut k = 0;
        while k < said_numbers.len() {
            let n = said_numbers[k];
            let between = n.from > 0
                && matches!(t[n.from - 1].lower.as_str(), "between" | "from")
                && said_numbers.get(k + 1).is_some_and(|m| {
                    m.from == n.to + 2 && matches!(t[n.to + 1].lower.as_str(), "and" | "to")
                });
            let (conditions, span, money, percent) = if between {
                let m = said_numbers[k + 1];
                k += 1;
                let (lo, hi) = (n.value.min(m.value), n.value.max(m.value));
                (
                    vec![(Op::Gte, lo), (Op::Lte, hi)],
                    (n.from - 1..=m.to).collect::<Vec<_>>(),
                    n.money || m.money,
                    n.percent || m.percent,
                )
            } else if let Some((op, words)) = comparison_before(&t, n.from) {
                (vec![(op, n.value)], (n.from - words..=n.to).collect(), n.money, n.percent)
            } else {
                if n.plain && n.value >= 1.0 && n.value <= 1000.0 {
                    reading.counts.push(n.value as u32);
                }
                k += 1;
                continue;
            };
            k += 1;
            reading.used_by_readings.extend(&span);
            for o in &in_scope {
                let numeric: Vec<&ProjectedField> = o
                    .fields
                    .iter()
                    .filter(|f| matches!(f.field_type, FieldType::Number | FieldType::Currency))
                    .filter(|f| !percent || f.field_type == FieldType::Number)
                    .filter(|f| !money || f.field_type == FieldType::Currency)
                    .filter(|f| conditions.iter().all(|(_, v)| fits(f, *v)))
                    .collect();
                let said: Vec<&ProjectedField> =
                    numeric.iter().copied().filter(|f| names_field(&t, f)).collect();
                let offered = if said.is_empty() { numeric } else { said };
                if !said_or_named(&named, &o.key, !offered.is_empty()) {
                    continue;
                }
                for f in offered {
                    let parts: Vec<Condition> = conditions
                        .iter()
                        .map(|(op, v)| Condition::compare(&f.key, *op, number_value(*v)))
                        .collect();
                    let meaning = match conditions.as_slice() {
                        [(_, lo), (_, hi)] => {
                            format!("{} between {} and {}", f.label, shown_number(*lo), shown_number(*hi))
                        }
                        [(op, v)] => format!("{} {} {}", f.label, op_words(*op), shown_number(*v)),
                        _ => continue,
                    };
                    let condition = match parts.len() {
                        1 => parts.into_iter().next().expect("one"),
                        _ => Condition::All(AllOf { all: parts }),
                    };
                    push(
                        &mut found,
                        Candidate::new(
                            Kind::Quantity,
                            Some(o.key.clone()),
                            format!("{}:{}:{}", o.key, f.key, span[0]),
                            &t,
                            span.clone(),
                            meaning,
                            condition,
                        ),
                    );
                }
            }
        }

        let free = |span: &[usize]| span.iter().all(|i| !reading.used_by_readings.contains(i));

        // Terms, by label and synonyms (the longest phrase that says each).
        for o in &in_scope {
            for term in &o.terms {
                let best = term
                    .phrases()
                    .filter_map(|ph| {
                        let w = tokens(ph);
                        runs(&t, &w).first().map(|&at| (at..at + w.len()).collect::<Vec<usize>>())
                    })
                    .filter(|span| free(span))
                    .max_by_key(Vec::len);
                let Some(span) = best else { continue };
                push(
                    &mut found,
                    Candidate {
                        term: Some((term.key.clone(), term.label.clone())),
                        ..Candidate::new(
                            Kind::Term,
                            Some(o.key.clone()),
                            format!("{}:{}", o.key, term_group(&term.condition)),
                            &t,
                            span,
                            if term.key == crate::metadata::definition::MINE {
                                "your own records (you are the owner)".to_string()
                            } else {
                                format!("{} (a term of {})", term.label, o.plural_label.to_lowercase())
                            },
                            term.condition.clone(),
                        )
                    },
                );
            }
        }

        // Picklist values and boolean fields by label or key.
        for o in &in_scope {
            for f in &o.fields {
                match f.field_type {
                    FieldType::Picklist => {
                        for (value, label) in &f.values {
                            let mut spans: Vec<Vec<usize>> = vec![];
                            for phrase in [label.clone(), value.replace('_', " ")] {
                                let w = tokens(&phrase);
                                for at in runs(&t, &w) {
                                    let span: Vec<usize> = (at..at + w.len()).collect();
                                    if free(&span) && !spans.contains(&span) {
                                        spans.push(span);
                                    }
                                }
                            }
                            // A currency said in words ("in euros") is its code's value.
                            if let Some(span) = currency_said(&t, value) {
                                if free(&span) && !spans.contains(&span) {
                                    spans.push(span);
                                }
                            }
                            for span in spans {
                                push(
                                    &mut found,
                                    Candidate::new(
                                        if looks_like_currency_code(value) {
                                            Kind::Currency
                                        } else {
                                            Kind::Value
                                        },
                                        Some(o.key.clone()),
                                        format!("{}:{}", o.key, f.key),
                                        &t,
                                        span,
                                        format!("{} is {}", f.label, label),
                                        Condition::compare(&f.key, Op::Eq, Value::String(value.clone())),
                                    ),
                                );
                            }
                        }
                    }
                    FieldType::Boolean => {
                        let w = tokens(&f.label);
                        for at in runs(&t, &w) {
                            let span: Vec<usize> = (at..at + w.len()).collect();
                            push(
                                &mut found,
                                Candidate::new(
                                    Kind::Flag,
                                    Some(o.key.clone()),
                                    format!("{}:{}", o.key, f.key),
                                    &t,
                                    span,
                                    format!("{} is yes", f.label),
                                    Condition::compare(&f.key, Op::Eq, Value::Bool(true)),
                                ),
                            );
                        }
                    }
                    _ => {}
                }
            }
        }

        // Records by name, and stored values of short text fields.
        let vocabulary = vocabulary_words(p);
        let places = places_said(&t);
        for o in &in_scope {
            for f in o.fields.iter().filter(|f| f.field_type == FieldType::Text) {
                for c in
                    self.stored_values_said(o.key.as_str(), f, &o.name_field, &t, &vocabulary, &places)?
                {
                    if free(&c.span) {
                        push(&mut found, c);
                    }
                }
            }
        }

        // Related records: "with no notes", "without contacts", "that have overdue invoices",
        // "with at least 5 contacts".
        for o in &in_scope {
            for (child, via) in &o.children {
                for c in self.related_said(&t, p, o.key.as_str(), child, via, &found) {
                    // A number inside it counts records, not an amount.
                    found.retain(|x| x.kind != Kind::Quantity || !x.span.iter().all(|i| c.span.contains(i)));
                    push(&mut found, c);
                }
            }
        }

        // People: a workspace user named in the question is an owner.
        for u in &self.catalog().definition.users {
            if !u.active || u.key == self.user().key {
                continue;
            }
            let first = tokens(&u.name);
            let mut spans: Vec<Vec<usize>> = vec![];
            for phrase in [first.clone(), first.iter().take(1).cloned().collect()] {
                if phrase.is_empty() || phrase.iter().any(|w| w.lower.len() < 3) {
                    continue;
                }
                for at in runs(&t, &phrase) {
                    // Exact words only: a person's name is not stemmed or spelled loosely.
                    if phrase.iter().enumerate().all(|(i, w)| t[at + i].lower == w.lower) {
                        let span: Vec<usize> = (at..at + phrase.len()).collect();
                        if free(&span) && !spans.iter().any(|s| span.iter().all(|i| s.contains(i))) {
                            spans.push(span);
                        }
                    }
                }
            }
            for span in spans {
                push(
                    &mut found,
                    Candidate::new(
                        Kind::Owner,
                        None,
                        "owner".into(),
                        &t,
                        span,
                        format!("owned by {}", u.name),
                        Condition::compare("owner", Op::Eq, Value::String(u.key.clone())),
                    ),
                );
            }
        }

        // Text: the words after "says", "mentions", "about" (or in quotes), as a full-text
        // condition on each long text field; never a literal `contains` of the phrase.
        // A phrase stops at a name, a person, a date or an amount; a word that is also a value
        // or a term stays in it (both readings are offered: the model chooses, the chip swaps).
        let claimed: Vec<usize> = found
            .iter()
            .filter(|c| !matches!(c.kind, Kind::Value | Kind::Term | Kind::Flag))
            .flat_map(|c| c.span.iter().copied())
            .chain(reading.used_by_readings.iter().copied())
            .collect();
        for (span, said) in text_said(question, &t, &claimed) {
            for o in &in_scope {
                let long: Vec<&ProjectedField> =
                    o.fields.iter().filter(|f| f.field_type == FieldType::LongText).collect();
                if !said_or_named(&named, &o.key, !long.is_empty()) {
                    continue;
                }
                for f in long {
                    push(
                        &mut found,
                        Candidate::new(
                            Kind::Text,
                            Some(o.key.clone()),
                            format!("{}:{}", o.key, f.key),
                            &t,
                            span.clone(),
                            format!("{} mentions “{said}”", f.label),
                            Condition::compare(&f.key, Op::Matches, Value::String(said.clone())),
                        ),
                    );
                }
            }
        }

        // A value whose words a term also says, on a field the term reads, is that term.
        let terms: Vec<(Vec<usize>, String, Vec<String>)> = found
            .iter()
            .filter(|c| c.kind == Kind::Term)
            .map(|c| {
                (
                    c.span.clone(),
                    c.object.clone().unwrap_or_default(),
                    c.condition.fields().into_iter().map(String::from).collect(),
                )
            })
            .collect();
        found.retain(|c| {
            c.kind != Kind::Value
                || !terms.iter().any(|(span, object, fields)| {
                    c.span.iter().all(|i| span.contains(i))
                        && c.object.as_deref() == Some(object.as_str())
                        && c.condition.fields().iter().all(|f| fields.iter().any(|x| x == f))
                })
        });
        // A shorter reading inside a name's or a stored value's longer run of words
        // ("Partners" in "Bluth Partners", "Acme" of another object beside "Acme Industries")
        // is not the question's.
        let long: Vec<Vec<usize>> = found
            .iter()
            .filter(|c| matches!(c.kind, Kind::Record | Kind::Value | Kind::Term) && c.span.len() > 1)
            .map(|c| c.span.clone())
            .collect();
        found.retain(|c| {
            matches!(c.kind, Kind::Date | Kind::Quantity | Kind::Related)
                || !long.iter().any(|l| l.len() > c.span.len() && c.span.iter().all(|i| l.contains(i)))
        });
        // A date phrase inside a longer one on the same field ("the end of June" in "before
        // the end of June") is not what the question means.
        let dates: Vec<(Vec<usize>, Option<String>, String)> = found
            .iter()
            .filter(|c| c.kind == Kind::Date)
            .map(|c| {
                (
                    c.span.clone(),
                    c.object.clone(),
                    c.date.as_ref().map(|d| d.field.clone()).unwrap_or_default(),
                )
            })
            .collect();
        found.retain(|c| {
            c.kind != Kind::Date
                || !dates.iter().any(|(span, object, field)| {
                    span.len() > c.span.len()
                        && c.span.iter().all(|i| span.contains(i))
                        && *object == c.object
                        && Some(field) == c.date.as_ref().map(|d| &d.field)
                })
        });
        for (i, c) in found.iter_mut().enumerate() {
            c.id = format!("c{}", i + 1);
        }
        // An object named only inside a related reading ("customers without contacts") is
        // not the one asked for.
        let related: Vec<usize> =
            found.iter().filter(|c| c.kind == Kind::Related).flat_map(|c| c.span.iter().copied()).collect();
        let listed: Vec<String> = if related.is_empty() {
            listed
        } else {
            let outside: Vec<&str> = t
                .iter()
                .enumerate()
                .filter(|(i, _)| !related.contains(i))
                .map(|(_, w)| w.text.as_str())
                .collect();
            self.objects_named(&outside.join(" ")).into_iter().filter(|o| objects.contains(o)).collect()
        };
        reading.objects = if listed.is_empty() {
            most_covered(&found, objects)
        } else {
            // A child of a named object whose own words the question says ("engineers at
            // accounts in the UK" lists contacts).
            let mut with_children = listed.clone();
            for o in objects.iter().filter_map(|k| p.object(k)) {
                let child_of_listed = o.fields.iter().any(|f| {
                    f.field_type == FieldType::Lookup && f.target.as_ref().is_some_and(|x| listed.contains(x))
                });
                let says_own = found
                    .iter()
                    .any(|c| c.object.as_deref() == Some(o.key.as_str()) && c.kind != Kind::Related);
                if child_of_listed && says_own && !with_children.contains(&o.key) {
                    with_children.push(o.key.clone());
                }
            }
            with_children
        };
        reading.counts.sort_unstable();
        reading.counts.dedup();
        reading.candidates = found;
        Ok(reading)
    }

    /// Where the question asks for `parent` records by their `child` records: the child's
    /// label or plural, the child's own readings just before it ("overdue"), and before those
    /// "no"/"without" (none), "at least N"/"more than N"/"N or more" (at least), or
    /// "with"/"have"/"having" (some).
    fn related_said(
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

    fn date_candidate(
        &self,
        object: &str,
        f: &ProjectedField,
        range: &DateRange,
        t: &[Token],
        span: &[usize],
    ) -> Candidate {
        let mut ends = super::date_conditions(&f.key, f.field_type, range, self.time_zone());
        let condition = match ends.len() {
            1 => ends.remove(0),
            _ => Condition::All(AllOf { all: ends }),
        };
        Candidate {
            date: Some(DateChoice {
                field: f.key.clone(),
                phrase: range.phrase.clone(),
                start: range.start.map(|d| d.to_string()),
                end: range.end.map(|d| d.to_string()),
            }),
            ..Candidate::new(
                Kind::Date,
                Some(object.to_string()),
                format!("{object}:{}:{}", f.key, span[0]),
                t,
                span.to_vec(),
                format!(
                    "{} {}",
                    f.label,
                    match (range.start, range.end) {
                        (Some(a), Some(b)) if a == b => format!("on {a}"),
                        (Some(a), Some(b)) => format!("from {a} to {b}"),
                        (Some(a), None) => format!("on or after {a}"),
                        (None, Some(b)) => format!("on or before {b}"),
                        (None, None) => "any day".into(),
                    }
                ),
                condition,
            )
        }
    }

    /// The stored values of a short text field that the question says as a run of words:
    /// records by name (the object's name field) or values ("Germany", "Payment delay"). Read
    /// through the user's session, so a value only another user can see is never found.
    fn stored_values_said(
        &self,
        object: &str,
        f: &ProjectedField,
        name_field: &str,
        t: &[Token],
        vocabulary: &[String],
        places: &[(&'static Place, Vec<usize>)],
    ) -> Result<Vec<Candidate>> {
        // The probes: any question word of three letters or more (by its first four, or whole
        // with a digit); a word of two letters only when written as a code ("HW-GW", "EU").
        let probes: std::collections::BTreeSet<String> = t
            .iter()
            .filter(|w| {
                let n = w.lower.chars().count();
                let code = n == 2 && w.text.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
                (n >= 3 || code) && !FILLER.contains(&w.lower.as_str())
            })
            .filter_map(|w| probe(&w.lower))
            .chain(places.iter().flat_map(|(place, _)| place.names.iter().filter_map(|n| probe(n))))
            .collect();
        if probes.is_empty() {
            return Ok(vec![]);
        }
        let is_name = f.key == name_field;
        // Where each stored value the question says stands in it, and whether it is said whole.
        let mut hits: std::collections::HashMap<String, (Vec<usize>, bool)> = Default::default();
        let mut said_at = |v: &str| {
            // A name as written, else its significant words ("Acme" for "Acme Inc").
            let literal = tokens(v);
            let whole = if is_name && runs(t, &literal).is_empty() {
                tokens(&name_tokens(v).join(" "))
            } else {
                literal
            };
            let mut hit: Option<(Vec<usize>, bool)> = runs(t, &whole)
                .first()
                .map(|&at| ((at..at + whole.len()).collect(), true))
                .filter(|(span, _): &(Vec<usize>, bool)| {
                    // A one-word name must be a word the workspace does not use for anything
                    // else, or be written as a name (capitalised). A one-word stored value is
                    // offered beside the other readings of its word (a job title "Engineer"
                    // beside the department for "engineers"): the model chooses, the chip swaps.
                    !is_name
                        || span.len() > 1
                        || !vocabulary.contains(&t[span[0]].stem)
                        || t[span[0]].text.starts_with(char::is_uppercase)
                });
            // A name said by its first word alone ("Acme" for Acme Industries): a partial
            // match, offered as a choice among every record it fits.
            if hit.is_none() && is_name && whole.len() > 1 {
                let first = &whole[0];
                if first.lower.chars().count() >= 4 && !vocabulary.contains(&first.stem) {
                    if let Some(at) = t.iter().position(|q| q.lower == first.lower) {
                        hit = Some((vec![at], false));
                    }
                }
            }
            // A country said by nationality or code ("German accounts", "UK").
            if hit.is_none() && !is_name {
                let value = v.to_lowercase();
                hit = places
                    .iter()
                    .find(|(place, _)| place.names.contains(&value))
                    .map(|(_, span)| (span.clone(), true));
            }
            match hit {
                Some(h) => {
                    hits.insert(v.to_string(), h);
                    true
                }
                None => false,
            }
        };
        // Names need their records' ids (one record is resolved, several are a choice).
        let held =
            self.values_by_probe(object, &f.key, &probes, &mut said_at, if is_name { 21 } else { 1 })?;
        // value → (span, ids)
        let mut said: Vec<(String, Vec<usize>, Vec<String>, bool)> = vec![];
        for h in &held {
            let Some((span, whole_name)) = hits.get(&h.value).cloned() else { continue };
            let v = h.value.as_str();
            match said.iter_mut().find(|(_, s, _, _)| *s == span) {
                Some(entry) => {
                    for id in &h.ids {
                        if !entry.2.contains(id) {
                            entry.2.push(id.clone());
                        }
                    }
                    if !entry.0.split(" | ").any(|x| x == v) {
                        entry.0.push_str(" | ");
                        entry.0.push_str(v);
                    }
                }
                None => said.push((v.to_string(), span, h.ids.clone(), whole_name)),
            }
        }
        // A longer run wins over a shorter one inside it.
        let spans: Vec<Vec<usize>> = said.iter().map(|(_, s, _, _)| s.clone()).collect();
        said.retain(|(_, s, _, _)| {
            !spans.iter().any(|l| l.len() > s.len() && s.iter().all(|i| l.contains(i)))
        });
        let mut out = vec![];
        for (values, span, ids, _) in said {
            let values: Vec<String> = values.split(" | ").map(String::from).collect();
            // Records that all bear the very same name (notes titled "Payment delay") are a
            // value of the field, not a choice among records.
            if is_name && (ids.len() == 1 || values.len() > 1) {
                let resolution = Resolution {
                    field: f.key.clone(),
                    object: object.to_string(),
                    written: words_of(t, &span),
                    status: if ids.len() == 1 {
                        ResolutionStatus::Resolved
                    } else {
                        ResolutionStatus::Ambiguous
                    },
                    matches: ids
                        .iter()
                        .map(|id| crate::records::names::Candidate {
                            id: id.clone(),
                            name: held
                                .iter()
                                .find(|h| h.ids.contains(id))
                                .map(|h| h.value.clone())
                                .unwrap_or_default(),
                        })
                        .take(20)
                        .collect(),
                };
                let names: Vec<Value> =
                    resolution.matches.iter().map(|c| Value::String(c.name.clone())).collect();
                let meaning = if names.len() == 1 {
                    format!("the {object} “{}”", resolution.matches[0].name)
                } else {
                    format!("one of {} {object} records named like this", names.len())
                };
                let condition = match names.len() {
                    1 => Condition::compare(&f.key, Op::Eq, names[0].clone()),
                    _ => Condition::compare(&f.key, Op::In, Value::Array(names)),
                };
                out.push(Candidate {
                    records: Some(resolution),
                    ..Candidate::new(
                        Kind::Record,
                        Some(object.to_string()),
                        format!("{object}:{}", f.key),
                        t,
                        span,
                        meaning,
                        condition,
                    )
                });
            } else {
                let shown = values.join(" or ");
                out.push(Candidate::new(
                    Kind::Value,
                    Some(object.to_string()),
                    format!("{object}:{}", f.key),
                    t,
                    span,
                    format!("{} is {shown}", f.label),
                    match values.len() {
                        1 => Condition::compare(&f.key, Op::Eq, Value::String(values[0].clone())),
                        _ => Condition::compare(
                            &f.key,
                            Op::In,
                            Value::Array(values.into_iter().map(Value::String).collect()),
                        ),
                    },
                ));
            }
        }
        Ok(out)
    }
}

/// The objects whose own candidates cover the most words of the question (every object when
/// no candidate is any object's own).
fn most_covered(found: &[Candidate], objects: &[String]) -> Vec<String> {
    let coverage = |o: &String| {
        let mut words: Vec<usize> = found
            .iter()
            .filter(|c| c.object.as_ref() == Some(o))
            .flat_map(|c| c.span.iter().copied())
            .collect();
        words.sort_unstable();
        words.dedup();
        words.len()
    };
    let best = objects.iter().map(coverage).max().unwrap_or(0);
    if best == 0 {
        return objects.to_vec();
    }
    objects.iter().filter(|o| coverage(o) == best).cloned().collect()
}

/// Whether a number fits the field's precision (a percentage field holds no 200,000).
fn fits(f: &ProjectedField, v: f64) -> bool {
    match f.precision {
        Some(precision) => {
            let digits = i32::from(precision) - i32::from(f.scale.unwrap_or(0));
            v.abs() < 10f64.powi(digits.max(0))
        }
        None => true,
    }
}

/// A field's candidates are offered on an object the question names, or on every object
/// when it names none.
/// Words that say the rest of the question is text to find: "notes that say", "mentioning",
/// "about", "containing the word".
const TEXT_CUES: &[&str] = &[
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
fn text_said(question: &str, t: &[Token], claimed: &[usize]) -> Vec<(Vec<usize>, String)> {
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

fn said_or_named(named: &[String], object: &str, has_fields: bool) -> bool {
    has_fields && (named.is_empty() || named.iter().any(|n| n == object))
}

/// The group of a term: the fields it reads, so a term and a value of the same picklist are
/// joined with OR ("unpaid (sent or overdue)").
fn term_group(c: &Condition) -> String {
    let mut f: Vec<&str> = c.fields();
    f.sort_unstable();
    f.dedup();
    f.join("+")
}

fn looks_like_currency_code(v: &str) -> bool {
    crate::metadata::catalog::is_currency_code(v)
}

/// Where the question says the currency `code` in words ("euros", "pounds").
fn currency_said(t: &[Token], code: &str) -> Option<Vec<usize>> {
    if !looks_like_currency_code(code) {
        return None;
    }
    t.iter()
        .position(|w| CURRENCY_WORDS.iter().any(|(word, c)| *c == code && w.lower == *word))
        .map(|i| vec![i])
}

/// A country as the question may say it: its names (ISO short name and the usual others,
/// lower-cased) and its nationality ("German"); its ISO codes only as written in capitals.
struct Place {
    names: Vec<String>,
    nationality: Option<String>,
    codes: Vec<String>,
}

/// Every country of ISO 3166-1, from the `keshvar` data set.
fn places() -> &'static [Place] {
    static PLACES: std::sync::OnceLock<Vec<Place>> = std::sync::OnceLock::new();
    PLACES.get_or_init(|| {
        keshvar::CountryIterator::new()
            .map(|c| {
                let mut names = vec![c.iso_short_name().to_lowercase()];
                names.extend(c.unofficial_name_list().iter().map(|n| n.to_lowercase()));
                names.dedup();
                Place {
                    names,
                    nationality: c.maybe_nationality().map(str::to_lowercase),
                    codes: vec![c.alpha2().to_string(), c.alpha3().to_string()],
                }
            })
            .collect()
    })
}

/// The countries the question says by nationality or code, with the words that say each.
fn places_said(t: &[Token]) -> Vec<(&'static Place, Vec<usize>)> {
    let mut out = vec![];
    for place in places() {
        let mut said = vec![];
        if let Some(n) = &place.nationality {
            let w = tokens(n);
            said.extend(
                runs(t, &w)
                    .into_iter()
                    .filter(|&at| {
                        // Exactly the word: "French", not a stem of something else.
                        (0..w.len()).all(|i| t[at + i].lower == w[i].lower)
                    })
                    .map(|at| (at..at + w.len()).collect::<Vec<_>>()),
            );
        }
        for (i, q) in t.iter().enumerate() {
            if place.codes.contains(&q.text) {
                said.push(vec![i]);
            }
        }
        for span in said {
            out.push((place, span));
        }
    }
    out
}

/// The stems of every word the projection uses for objects, fields, values and terms: a
/// one-word stored value that is also one of these is not taken as said.
fn vocabulary_words(p: &Projection) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_units_and_digits() {
        let t = tokens("invoices over $50,000 or 2.5M, above 40k and a quarter of a million, 12 percent");
        let n = numbers(&t, &[]);
        let values: Vec<f64> = n.iter().map(|s| s.value).collect();
        assert_eq!(values, vec![50_000.0, 2_500_000.0, 40_000.0, 250_000.0, 12.0]);
        assert!(n[0].money && n[1].money && n[2].money && n[3].money);
        assert!(n[4].percent && !n[4].money);
    }

    #[test]
    fn comparisons_are_read_before_a_number() {
        let t = tokens("at least 5 and no more than 7 and under 3");
        assert_eq!(comparison_before(&t, 2).map(|x| x.0), Some(Op::Gte));
        assert_eq!(comparison_before(&t, 7).map(|x| x.0), Some(Op::Lte));
        assert_eq!(comparison_before(&t, 10).map(|x| x.0), Some(Op::Lt));
    }

    #[test]
    fn inflected_forms_plurals_and_typos_say_a_value() {
        let t = tokens("engineers negotiaton invoices");
        assert!(says(&t[0], &tokens("Engineering")[0]));
        assert!(says(&t[1], &tokens("negotiation")[0]));
        assert!(says(&t[2], &tokens("invoice")[0]));
        assert!(!says(&t[2], &tokens("voice")[0]));
    }
}
