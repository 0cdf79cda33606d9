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
use crate::ai::dates::{read_dates_in, DateRange};
use crate::ai::projection::{ProjectedField, ProjectedObject, Projection};
use crate::error::Result;
use crate::metadata::condition::{AllOf, Condition, Op};
use crate::metadata::definition::FieldType;
use crate::records::access::Session;
use crate::records::names::{name_tokens, Resolution, ResolutionStatus};
use crate::records::value_index::probe;
use serde_json::Value;

mod compounds;
mod language;
mod negation;
mod objects;
mod order;
mod places;
mod presence;
mod quantities;
mod related;
mod text;
mod values;
mod words;

pub use objects::{fields_named, words_naming};
pub use order::OrderReading;
use places::*;
use presence::*;
use quantities::*;
use text::*;
use words::*;
pub use words::{tokens, Token, FILLER, LIGHT_WORDS, ORDER_WORDS, POINTING};

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
    /// A field set or blank ("has a PO number", "missing email").
    Presence,
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
    /// Read under a negation ("not in Lyon"): `condition` and `meaning` are the negation's.
    pub negated: bool,
    /// The negation's words ("not", "other than"), used by this reading too.
    pub cue: Vec<usize>,
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
    /// The order a superlative asks for ("the largest", "the 5 oldest"), per object.
    pub orders: Vec<OrderReading>,
    /// Where each possible count of rows stands: (first word, last word, count).
    pub count_words: Vec<(usize, usize, u32)>,
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
            negated: false,
            cue: vec![],
        }
    }

    /// The condition on the queried object `object`: as read on its own object, through a
    /// lookup on a child of it (a parent's records by id), or `None` when it does not apply.
    pub fn on(&self, p: &Projection, object: &str) -> Option<Condition> {
        let Some(own) = &self.object else { return Some(self.condition.clone()) };
        if own == object {
            return Some(self.condition.clone());
        }
        let via = path_to(p, object, own)?;
        if let Some(r) = &self.records {
            let ids: Vec<Value> = r.matches.iter().map(|c| Value::String(c.id.clone())).collect();
            return Some(Condition::compare(&via, Op::In, Value::Array(ids)));
        }
        if self.kind == Kind::Related || self.condition.fields().iter().any(|f| f.contains('.')) {
            return None;
        }
        Some(self.condition.through(&via))
    }
}

/// The lookup path from `object` up to its parent `own`: one hop (`account`), or two through
/// a parent in between (`invoice.account` from an invoice line); the path with the fewest hops.
pub fn path_to(p: &Projection, object: &str, own: &str) -> Option<String> {
    let lookups = |o: &str| -> Vec<(String, String)> {
        p.object(o)
            .map(|o| {
                o.fields
                    .iter()
                    .filter(|f| f.field_type == FieldType::Lookup)
                    .filter_map(|f| Some((f.key.clone(), f.target.clone()?)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let first = lookups(object);
    if let Some((key, _)) = first.iter().find(|(_, t)| t == own) {
        return Some(key.clone());
    }
    first.iter().find_map(|(key, target)| {
        lookups(target).into_iter().find(|(_, t)| t == own).map(|(second, _)| format!("{key}.{second}"))
    })
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

/// Whether the question's words name the field (its label or key, beyond generic words; or its
/// label in another language).
fn names_field(t: &[Token], f: &ProjectedField) -> bool {
    // A sign ("%" of "Probability (%)") says what kind of number a field holds, not which field.
    let specific = |w: &&Token| {
        !GENERIC_FIELD_WORDS.contains(&w.lower.as_str())
            && !FILLER.contains(&w.lower.as_str())
            && w.lower.chars().any(char::is_alphanumeric)
    };
    field_words(f).iter().filter(specific).any(|w| t.iter().any(|q| q.stem == w.stem || q.lower == w.lower))
        || f.other_labels.iter().any(|(language, label)| {
            let words = tokens(label);
            words
                .iter()
                .filter(specific)
                .any(|w| t.iter().any(|q| says_in(q, w, *language) || same_root(&q.lower, &w.lower)))
                || !compounds::heads_said(t, *language, &words).is_empty()
        })
}

/// The fields of `fields` the question `t` names, not counting the words naming an object
/// (blanked in `apart`) where that leaves any.
fn named_fields<'f>(
    t: &[Token],
    apart: &[Token],
    fields: Vec<&'f ProjectedField>,
) -> Vec<&'f ProjectedField> {
    let by_own: Vec<&ProjectedField> = fields.iter().copied().filter(|f| names_field(apart, f)).collect();
    if by_own.is_empty() {
        fields.into_iter().filter(|f| names_field(t, f)).collect()
    } else {
        by_own
    }
}

/// Two words of one family in a language whose labels are nouns and whose questions say verbs
/// ("émises" and "émission", "emitidas" and "emisión", "fällig" and "Fälligkeitsdatum"): the same
/// first four letters, accents aside, or three when both are seven letters or more.
pub(super) fn same_root(a: &str, b: &str) -> bool {
    let (a, b) = (fold(a), fold(b));
    if !a.chars().all(char::is_alphabetic) {
        return false;
    }
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    common >= 4 || (common == 3 && a.chars().count() >= 7 && b.chars().count() >= 7)
}

impl Session<'_> {
    /// Read `question` for the objects in `objects`, on this user's projection `p`.
    pub fn read_question(&self, question: &str, p: &Projection, objects: &[String]) -> Result<Reading> {
        let t = tokens(question);
        // The question's own language, once: its dates, numbers and compounds are read in it.
        let asked_in = language::of_question(&t);
        let german = asked_in == Some(crate::locale::Language::De)
            || self.locale().language() == crate::locale::Language::De;
        let t = if german { compounds::split_compounds(t, p) } else { t };
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
        let in_scope: Vec<&crate::ai::projection::ProjectedObject> =
            objects.iter().filter_map(|k| p.object(k)).collect();
        // The objects the question is about: those it names (in any language, or by a
        // synonym), else those whose terms it says.
        let mentions = objects::objects_said(&t, &in_scope);
        // The question with the words naming an object blanked: in another language a field
        // is named by a word of the same root ("fällig" of "Fälligkeitsdatum"), and the object's
        // own name must not name one too ("Rechnungen" of "Rechnungsdatum").
        let apart: Vec<Token> = t
            .iter()
            .enumerate()
            .map(|(i, w)| if mentions.iter().any(|m| m.span.contains(&i)) { token("") } else { w.clone() })
            .collect();
        let mut listed: Vec<String> =
            self.objects_named(question).into_iter().filter(|o| objects.contains(o)).collect();
        for m in &mentions {
            if !listed.contains(&m.object) {
                listed.push(m.object.clone());
            }
        }
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

        // Dates first: their words are not numbers.
        let day = self.today();
        // In the asker's language, and in the question's own when it is another.
        let fiscal = u32::from(self.catalog().definition.fiscal_year_start.unwrap_or(1));
        let mut ranges = read_dates_in(question, day, self.locale().language(), fiscal);
        if let Some(other) = asked_in.filter(|l| *l != self.locale().language()) {
            for r in read_dates_in(question, day, other, fiscal) {
                if !ranges.iter().any(|x| x.phrase == r.phrase) {
                    ranges.push(r);
                }
            }
        }
        for range in ranges {
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
                let said = named_fields(&t, &apart, dates.clone());
                let offered: Vec<&ProjectedField> = if said.is_empty() { dates.clone() } else { said };
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
        let said_numbers = numbers(&t, &taken, &self.locale(), asked_in);
        let mut k = 0;
        while k < said_numbers.len() {
            let n = said_numbers[k];
            let between = n.from > 0
                && matches!(
                    t[n.from - 1].lower.as_str(),
                    "between" | "from" | "zwischen" | "entre" | "von" | "de" | "desde"
                )
                && said_numbers.get(k + 1).is_some_and(|m| {
                    m.from == n.to + 2
                        && matches!(
                            t[n.to + 1].lower.as_str(),
                            "and" | "to" | "und" | "et" | "y" | "bis" | "à" | "a" | "hasta"
                        )
                });
            let (conditions, span, (money, money_said), percent) = if between {
                let m = said_numbers[k + 1];
                k += 1;
                // "between 10 and 50 million": the second number's scale is the first's too.
                let first = if n.scale == 1.0 && m.scale > 1.0 && n.value * m.scale <= m.value {
                    n.value * m.scale
                } else {
                    n.value
                };
                let (lo, hi) = (first.min(m.value), first.max(m.value));
                (
                    vec![(Op::Gte, lo), (Op::Lte, hi)],
                    (n.from - 1..=m.to).collect::<Vec<_>>(),
                    (n.money || m.money, n.money_said || m.money_said),
                    n.percent || m.percent,
                )
            } else if let Some((op, words)) = comparison_before(&t, n.from) {
                (vec![(op, n.value)], (n.from - words..=n.to).collect(), (n.money, n.money_said), n.percent)
            } else if let Some((op, at, words)) = [n.to + 1, n.to + 2]
                .into_iter()
                .find_map(|a| comparison_after(&t, a).map(|(op, w)| (op, a, w)))
                .filter(|(_, a, _)| *a == n.to + 1 || t[n.to + 1].lower.chars().all(char::is_alphabetic))
            {
                // "20 units or more": the comparison after the number and the noun it counts.
                (vec![(op, n.value)], (n.from..at + words).collect(), (n.money, n.money_said), n.percent)
            } else if number_field_beside(&t, n.from, n.to, &in_scope) {
                // "with 250 employees", "zero probability", "a probability of 0": a number
                // beside a number field's name is its value, not a count of rows.
                (vec![(Op::Eq, n.value)], (n.from..=n.to).collect(), (n.money, n.money_said), n.percent)
            } else {
                if n.plain && n.value >= 1.0 && n.value <= 1000.0 {
                    reading.counts.push(n.value as u32);
                    reading.count_words.push((n.from, n.to, n.value as u32));
                }
                k += 1;
                continue;
            };
            k += 1;
            reading.used_by_readings.extend(&span);
            let last = said_numbers[k - 1];
            let counts_things = counted_noun(&t, &last, |w| {
                in_scope.iter().flat_map(|o| &o.fields).any(|f| {
                    matches!(f.field_type, FieldType::Date | FieldType::Datetime)
                        && names_field(std::slice::from_ref(w), f)
                })
            });
            // The noun counted is the quantity's own word ("a dozen units").
            let span = if counts_things && !span.contains(&(last.to + 1)) {
                let mut with: Vec<usize> = span.iter().copied().chain([last.to + 1]).collect();
                with.sort_unstable();
                with
            } else {
                span
            };
            if counts_things {
                reading.used_by_readings.push(last.to + 1);
            }
            for o in &in_scope {
                let numeric: Vec<&ProjectedField> = o
                    .fields
                    .iter()
                    .filter(|f| matches!(f.field_type, FieldType::Number | FieldType::Currency))
                    .filter(|f| !percent || f.field_type == FieldType::Number)
                    .filter(|f| !counts_things || f.field_type == FieldType::Number)
                    .filter(|f| !money_said || f.field_type == FieldType::Currency)
                    .filter(|f| conditions.iter().all(|(_, v)| fits(f, *v)))
                    .collect();
                let said = named_fields(&t, &apart, numeric.clone());
                // A large number ("40k", "forty thousand") is an amount unless the question
                // names a number field ("more than forty thousand employees").
                let offered = if !said.is_empty() {
                    said
                } else if money {
                    numeric.into_iter().filter(|f| f.field_type == FieldType::Currency).collect()
                } else {
                    numeric
                };
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
                    // An amount said in a currency ("less than 1000 euros") is an amount in
                    // that currency, where the record states its currency: both, as one.
                    let stated = currency_in(&t, &span)
                        .filter(|_| f.field_type == FieldType::Currency)
                        .and_then(|code| {
                            o.fields
                                .iter()
                                .filter(|c| c.field_type == FieldType::Picklist)
                                .filter(|c| {
                                    !c.values.is_empty()
                                        && c.values.iter().all(|(v, _)| looks_like_currency_code(v))
                                })
                                .find(|c| c.values.iter().any(|(v, _)| v == code))
                                .map(|c| (c, code))
                        });
                    let (mut parts, mut meaning) = (parts, meaning);
                    if let Some((c, code)) = stated {
                        parts.push(Condition::compare(&c.key, Op::Eq, Value::String(code.to_string())));
                        meaning = format!("{meaning}, {} is {code}", c.label);
                    }
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

        // The countries the question says, once: a currency's ("US dollars") and a stored
        // value's ("in Germany").
        let places = places_said(&t);
        // Picklist values and boolean fields by label or key.
        for o in &in_scope {
            for f in &o.fields {
                match f.field_type {
                    FieldType::Picklist => {
                        let partial = values::partial_value_words(f);
                        // Where a value is said whole: its one word is not also said in part.
                        let mut said_whole: Vec<usize> = vec![];
                        let mut by_value: Vec<(&String, &String, Vec<Vec<usize>>)> = vec![];
                        for (value, label) in &f.values {
                            let mut spans: Vec<Vec<usize>> = vec![];
                            // Its label, its key, and its labels in the other languages (a
                            // question in German from an English user says "bezahlt").
                            let mut phrases = vec![
                                (crate::locale::Language::En, label.clone()),
                                (crate::locale::Language::En, value.replace('_', " ")),
                            ];
                            phrases.extend(
                                f.other_value_labels
                                    .iter()
                                    .filter(|(v, _, _)| v == value)
                                    .map(|(_, l, text)| (*l, text.clone())),
                            );
                            for (language, phrase) in phrases {
                                let w = tokens(&phrase);
                                for at in runs_in(&t, &w, language) {
                                    let span: Vec<usize> = (at..at + w.len()).collect();
                                    if free(&span) && !spans.contains(&span) {
                                        spans.push(span);
                                    }
                                }
                            }
                            // A currency said in words ("in euros") is its code's value.
                            if let Some(span) = currency_said(&t, value, &places) {
                                if free(&span) && !spans.contains(&span) {
                                    spans.push(span);
                                }
                            }
                            said_whole.extend(spans.iter().flatten());
                            by_value.push((value, label, spans));
                        }
                        // One word of a label of several words that no other value of the
                        // field has ("minorista" of "Comercio minorista"), where no value is
                        // said whole.
                        for (value, language, word) in &partial {
                            for at in runs_in(&t, std::slice::from_ref(word), *language) {
                                if said_whole.contains(&at) || !free(&[at]) {
                                    continue;
                                }
                                if let Some((_, _, spans)) = by_value.iter_mut().find(|(v, ..)| *v == value) {
                                    if !spans.contains(&vec![at]) {
                                        spans.push(vec![at]);
                                    }
                                }
                            }
                        }
                        for (value, label, spans) in by_value {
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
                        let (yes, no) = flag_said(&t, f);
                        let said =
                            no.into_iter().map(|s| (s, false)).chain(yes.into_iter().map(|s| (s, true)));
                        for (span, value) in said {
                            push(
                                &mut found,
                                Candidate::new(
                                    Kind::Flag,
                                    Some(o.key.clone()),
                                    format!("{}:{}", o.key, f.key),
                                    &t,
                                    span,
                                    format!("{} is {}", f.label, if value { "yes" } else { "no" }),
                                    Condition::compare(&f.key, Op::Eq, Value::Bool(value)),
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
                let named = in_scope
                    .iter()
                    .any(|x| x.key == *child)
                    .then(|| mentions.iter().filter(|m| m.object == *child).cloned().collect());
                let Some(child) = p.object(child) else { continue };
                for c in self.related_said(&t, o.key.as_str(), child, via, &found, named) {
                    // A number inside it counts records, not an amount.
                    found.retain(|x| x.kind != Kind::Quantity || !x.span.iter().all(|i| c.span.contains(i)));
                    push(&mut found, c);
                }
            }
        }
        // The words of a related reading are its own: the child's readings inside it are its
        // filter, and no other reading of them stands beside it ("accounts with no contacts in
        // finance": not accounts in finance).
        let related: Vec<Vec<usize>> =
            found.iter().filter(|c| c.kind == Kind::Related).map(|c| c.span.clone()).collect();
        found.retain(|x| {
            x.kind == Kind::Related
                || !related.iter().any(|s| s.len() > x.span.len() && x.span.iter().all(|i| s.contains(i)))
        });

        // Blank and not blank: "has a PO number", "without a next step", "missing email".
        for o in &in_scope {
            // Words another reading holds are not an acronym's words ("paid ones" is no "PO").
            let held: Vec<usize> = found.iter().flat_map(|c| c.span.iter().copied()).collect();
            for (span, key, blank) in presence_said(&t, o, &held) {
                let related =
                    found.iter().any(|c| c.kind == Kind::Related && c.span.iter().any(|i| span.contains(i)));
                // Another reading of the same field says more ("with revenue over 10M").
                let compared = found.iter().any(|c| {
                    c.object.as_deref() == Some(o.key.as_str())
                        && c.condition.fields().contains(&key.as_str())
                });
                let Some(f) = o.fields.iter().find(|f| f.key == key) else { continue };
                if related || compared || !free(&span) {
                    continue;
                }
                let op = if blank { Op::IsBlank } else { Op::IsSet };
                push(
                    &mut found,
                    Candidate::new(
                        Kind::Presence,
                        Some(o.key.clone()),
                        format!("{}:{}:presence", o.key, f.key),
                        &t,
                        span,
                        format!("{} is {}", f.label, if blank { "blank" } else { "set" }),
                        Condition::unary(&f.key, op),
                    ),
                );
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

        // A word that names an object as written ("negocio", a deal) is no value it only
        // resembles ("Negotiation"): a value is still read where the word says it as written,
        // or in its plural.
        let as_written = |c: &Candidate| {
            let Condition::Compare(cmp) = &c.condition else { return false };
            let Some(v) = cmp.value.as_ref().and_then(Value::as_str).map(|v| fold(&v.to_lowercase())) else {
                return false;
            };
            let words = fold(&c.words.to_lowercase());
            words == v || words == format!("{v}s") || words == format!("{v}es")
        };
        found.retain(|c| {
            c.kind != Kind::Value || as_written(c) || !mentions.iter().any(|m| m.exact && m.span == c.span)
        });
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
            .filter(|c| {
                matches!(c.kind, Kind::Record | Kind::Value | Kind::Term | Kind::Currency | Kind::Presence)
                    && c.span.len() > 1
            })
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
        // Negation: a reading under "not", "without", "except" … is replaced by its negation.
        negation::apply(question, &t, &mut found);
        // "in Lyon or in retail": readings of two fields joined by "or" are one group (OR).
        join_alternatives(&t, &mut found);
        for (i, c) in found.iter_mut().enumerate() {
            c.id = format!("c{}", i + 1);
        }
        // Superlatives: the kernel reads the order and the count.
        let taken: Vec<usize> = found
            .iter()
            .flat_map(|c| c.span.iter().copied())
            .chain(reading.used_by_readings.iter().copied())
            .collect();
        reading.orders = order::orders_said(&t, &taken, &reading.count_words, &mentions, &in_scope);
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
        // The head noun decides: "contacts at Acme" lists contacts, "deals for accounts in
        // Germany" deals.
        let head = objects::head(&t, &mentions, &found);
        reading.objects = if let Some(head) = head {
            vec![head]
        } else if listed.is_empty() {
            // "who works in sales at Stark Group": a record named of a parent whose child the
            // question says a value of lists the child; the record is a condition through the
            // child's lookup, not the object asked for.
            let said_of_child: Vec<&str> = objects
                .iter()
                .filter_map(|k| p.object(k))
                .filter(|o| {
                    found.iter().any(|c| {
                        c.object.as_deref() == Some(o.key.as_str())
                            && !matches!(c.kind, Kind::Record | Kind::Related)
                    })
                })
                .flat_map(|o| o.fields.iter().filter(|f| f.field_type == FieldType::Lookup))
                .filter_map(|f| f.target.as_deref())
                .collect();
            let weighed: Vec<Candidate> = found
                .iter()
                .filter(|c| {
                    !(c.kind == Kind::Record
                        && c.object.as_deref().is_some_and(|o| said_of_child.contains(&o)))
                })
                .cloned()
                .collect();
            most_covered(&weighed, objects)
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
}

/// Readings of different fields joined by "or" ("accounts in Lyon or in retail", "invoices
/// that are overdue or in euros") are alternatives: the second joins the first's group, which
/// the kernel composes with OR. A negated reading keeps its own group (neither … nor is AND).
fn join_alternatives(t: &[Token], found: &mut Vec<Candidate>) {
    const OR: &[&str] = &["or", "oder", "ou", "o", "u"];
    const BETWEEN: &[&str] = &[
        "in", "a", "an", "the", "with", "from", "im", "mit", "à", "en", "avec", "de", "del", "con", "are",
        "is",
    ];
    for k in (1..t.len()).filter(|&k| OR.contains(&t[k].lower.as_str())) {
        let mut start = k + 1;
        while start < t.len() && BETWEEN.contains(&t[start].lower.as_str()) {
            start += 1;
        }
        let is_left = |c: &Candidate| !c.negated && c.span.last() == Some(&(k - 1));
        let is_right = |c: &Candidate| !c.negated && c.span.first() == Some(&start);
        let groups = |side: &dyn Fn(&Candidate) -> bool| -> Vec<String> {
            found.iter().filter(|c| side(c)).map(|c| c.group.clone()).collect()
        };
        let (left, right) = (groups(&is_left), groups(&is_right));
        if left.is_empty() || right.is_empty() {
            continue;
        }
        // Two words joined by "or" say the same kind of thing: where they have a field in
        // common ("from partners or referrals": both lead sources), that is what they read
        // ("partners" as an account's type is not offered).
        let common: Vec<String> = left.iter().filter(|g| right.contains(g)).cloned().collect();
        let group = common.first().unwrap_or(&left[0]).clone();
        if !common.is_empty() {
            found.retain(|c| !(is_left(c) || is_right(c)) || common.contains(&c.group));
        }
        // Every reading of the words on either side: whichever the model chooses, the two
        // sides are one group.
        for c in found.iter_mut().filter(|c| is_left(c) || is_right(c)) {
            c.group = group.clone();
        }
    }
}

/// A number field of an object in scope is named by the word right after the number at
/// `from..=to`, or right before it across "of" ("probability of 0", "Anzahl von 5").
fn number_field_beside(t: &[Token], from: usize, to: usize, in_scope: &[&ProjectedObject]) -> bool {
    let mut beside: Vec<usize> = vec![];
    if to + 1 < t.len() {
        beside.push(to + 1);
    }
    let mut b = from;
    if b > 0 && matches!(t[b - 1].lower.as_str(), "of" | "von" | "de" | "at" | "à") {
        b -= 1;
    }
    if b > 0 {
        beside.push(b - 1);
    }
    in_scope.iter().flat_map(|o| &o.fields).any(|f| {
        matches!(f.field_type, FieldType::Number | FieldType::Currency)
            && beside.iter().any(|&j| names_field(&t[j..=j], f))
    })
}

/// Where the question says the yes/no field `f`: its label in any of its languages, and for a
/// label that is a prohibition ("Do Not Call", "Nicht anrufen", "No llamar") a negation and the
/// label's verb in any form within three words of it ("may not be called", "nicht angerufen
/// werden", "sin permiso de llamada"), the negation being the label's own, not a condition's.
/// Second: where it says the opposite of a prohibition ("contacts we can call").
fn flag_said(t: &[Token], f: &ProjectedField) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
    let mut labels = vec![(crate::locale::Language::En, f.label.as_str())];
    labels.extend(f.other_labels.iter().map(|(l, x)| (*l, x.as_str())));
    let mut out: (Vec<Vec<usize>>, Vec<Vec<usize>>) = (vec![], vec![]);
    for (language, label) in labels {
        let w = tokens(label);
        out.0.extend(runs_in(t, &w, language).into_iter().map(|at| (at..at + w.len()).collect::<Vec<_>>()));
        if !(0..w.len()).any(|i| negation::cue_at(&w, i).is_some()) {
            continue;
        }
        let verbs: Vec<&Token> = (0..w.len())
            .filter(|&i| negation::cue_at(&w, i).is_none())
            .map(|i| &w[i])
            .filter(|x| x.lower.chars().count() >= 4 && !FILLER.contains(&x.lower.as_str()))
            .collect();
        for (i, q) in t.iter().enumerate() {
            let base = participle_base(&q.lower);
            if !verbs.iter().any(|v| says_in(q, v, language) || same_root(&base, &v.lower)) {
                continue;
            }
            if let Some(cue) = (i.saturating_sub(4)..i).rev().find(|&j| negation::cue_at(t, j).is_some()) {
                // "can't", "don't": the word the tokenizer split off goes with its cue.
                let from = if t[cue].lower == "t" && cue > 0 { cue - 1 } else { cue };
                out.0.push((from..=i).collect());
            } else if let Some(modal) =
                (i.saturating_sub(2)..i).find(|&j| PERMISSION.contains(&t[j].lower.as_str()))
            {
                // "contacts we can call", "que l'on peut appeler": the prohibition's opposite.
                out.1.push((modal..=i).collect());
            }
        }
    }
    for spans in [&mut out.0, &mut out.1] {
        spans.sort();
        spans.dedup();
        // "do not call" said whole is one reading, not also its "not call".
        let all = spans.clone();
        spans.retain(|s| !all.iter().any(|x| x.len() > s.len() && s.iter().all(|i| x.contains(i))));
    }
    out
}

/// Words that say something may be done, before the verb of a prohibition's label.
const PERMISSION: &[&str] = &[
    "can", "may", "allowed", "ok", "okay", "kann", "können", "darf", "dürfen", "peut", "peuvent", "puede",
    "pueden", "podemos",
];

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_their_units_and_digits() {
        let de = crate::locale::Locale::parse("de-DE").unwrap();
        let t = tokens("Rechnungen über 10.000 euro oder 2,5 million");
        let values: Vec<f64> = numbers(&t, &[], &de, None).iter().map(|s| s.value).collect();
        assert_eq!(values, vec![10_000.0, 2_500_000.0], "digits as the asker's locale writes them");
        let over = numbers(&t, &[], &de, None)[0];
        assert!(over.money);
        assert!(matches!(comparison_before(&t, over.from), Some((Op::Gt, 1))), "über");
        let t = tokens("facturas de más de 5000 euros");
        let n = numbers(&t, &[], &de, None)[0];
        assert!(matches!(comparison_before(&t, n.from), Some((Op::Gt, 2))), "más de");
        let t = tokens("invoices over $50,000 or 2.5M, above 40k and a quarter of a million, 12 percent");
        let n = numbers(&t, &[], &Default::default(), None);
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

#[cfg(test)]
mod roots {
    #[test]
    fn a_verb_and_its_noun_share_a_root() {
        assert!(super::same_root("émises", "émission"));
        assert!(super::same_root("emitidas", "emisión"));
    }
}
