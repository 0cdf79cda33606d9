//! What the query language cannot say yet gets one plain sentence before any model call,
//! naming it and what can be done instead — never rows of something else, never schema text:
//! an average or a sum ("I can list invoices, not average them"), two fields of one record
//! compared, a follow-up with no earlier question, records by a parent they lack that is no
//! relation the reader found.

use super::reader::{tokens, Kind, Reading, POINTING};
use super::*;

/// Why the question cannot be answered by a list of records, if it cannot.
pub(super) fn unsayable(reading: &Reading, p: &Projection, named: &[String]) -> Option<String> {
    aggregate(reading, p, named)
        .or_else(|| fields_compared(reading, p, named))
        .or_else(|| dates_apart(reading))
        .or_else(|| follow_up(reading, p, named))
        .or_else(|| lacking_a_parent(reading, p))
}

/// Words asking for a figure over records, in the four languages.
const AGGREGATES: &[&str] = &[
    "average",
    "averages",
    "avg",
    "mean",
    "median",
    "sum",
    "durchschnitt",
    "durchschnittlich",
    "durchschnittliche",
    "durchschnittlichen",
    "summe",
    "mittelwert",
    "moyenne",
    "moyen",
    "somme",
    "médiane",
    "promedio",
    "media",
    "suma",
    "mediana",
];
/// Words asking for a sum unless a field of the object is called by them ("the total of open
/// deals" is a sum; "invoices with a total over 5000" compares the invoice's Total).
const TOTALS: &[&str] = &["total", "totals", "gesamt", "insgesamt", "gesamtsumme", "gesamtbetrag"];
/// Words asking for a figure per group.
const PER_GROUP: &[&str] = &["per", "pro", "each", "jede", "jeden", "chaque", "cada"];

fn plural_of(p: &Projection, named: &[String]) -> String {
    named
        .first()
        .and_then(|o| p.object(o))
        .map(|o| o.plural_label.to_lowercase())
        .unwrap_or_else(|| "records".into())
}

/// "the average invoice total", "sum of amounts per account", "Durchschnitt".
fn aggregate(reading: &Reading, p: &Projection, named: &[String]) -> Option<String> {
    let t = &reading.tokens;
    let used = |i: usize| reading.candidates.iter().any(|c| c.span.contains(&i));
    let a_field_says = |w: &super::reader::Token| {
        named.iter().filter_map(|k| p.object(k)).any(|o| {
            o.fields.iter().any(|f| {
                std::iter::once(f.label.as_str())
                    .chain(f.other_labels.iter().map(|(_, l)| l.as_str()))
                    .any(|l| tokens(l).iter().any(|x| x.stem == w.stem))
            })
        })
    };
    let at = (0..t.len()).find(|&i| {
        let w = t[i].lower.as_str();
        !used(i) && (AGGREGATES.contains(&w) || (TOTALS.contains(&w) && !a_field_says(&t[i])))
    })?;
    // "mean" as a verb ("what do you mean") is not a figure.
    if t[at].lower == "mean"
        && at > 0
        && matches!(t[at - 1].lower.as_str(), "you" | "i" | "we" | "does" | "do")
    {
        return None;
    }
    let per = t.iter().skip(at).any(|w| PER_GROUP.contains(&w.lower.as_str()));
    let plural = plural_of(p, named);
    Some(format!(
        "I can list {plural}, not compute an {} of them{} yet (“{}”). Ask for the {plural} themselves — sorted by the field you want (“the largest …”) — and the list shows them.",
        if matches!(t[at].lower.as_str(), "sum" | "summe" | "somme" | "suma") || TOTALS.contains(&t[at].lower.as_str()) {
            "sum"
        } else {
            "average"
        },
        if per { " per group" } else { "" },
        t[at].text
    ))
}

/// Words that compare two things.
const COMPARED_BY: &[&str] = &[
    "after",
    "before",
    "than",
    "exceeds",
    "exceed",
    "exceeding",
    "above",
    "below",
    "over",
    "under",
    "later",
    "earlier",
    "equals",
    "nach",
    "vor",
    "als",
    "après",
    "avant",
    "que",
    "después",
    "antes",
];

/// "invoices whose paid date is after the due date": two fields of one record compared.
fn fields_compared(reading: &Reading, p: &Projection, named: &[String]) -> Option<String> {
    let t = &reading.tokens;
    let used = |i: usize| {
        reading.candidates.iter().any(|c| c.span.contains(&i)) || reading.used_by_readings.contains(&i)
    };
    for o in named.iter().filter_map(|k| p.object(k)) {
        let mut said: Vec<(usize, usize, &str)> = vec![];
        for f in &o.fields {
            let name = tokens(&f.label);
            if name.len() < 2 && name.iter().all(|w| w.lower.len() < 4) {
                continue;
            }
            for at in (0..t.len().saturating_sub(name.len().saturating_sub(1))).filter(|&at| {
                !name.is_empty() && name.iter().enumerate().all(|(k, w)| t[at + k].stem == w.stem)
            }) {
                said.push((at, at + name.len(), f.label.as_str()));
            }
        }
        said.sort_unstable();
        for pair in said.windows(2) {
            let ((_, end, a), (start, _, b)) = (pair[0], pair[1]);
            if a == b || start < end {
                continue;
            }
            let between = end..start;
            let compares = between.clone().any(|i| COMPARED_BY.contains(&t[i].lower.as_str()));
            let value_between = between.clone().any(used);
            if compares && !value_between && start - end <= 4 {
                return Some(format!(
                    "Two fields of one {} cannot be compared yet (“{a}” with “{b}”). Ask for one of them against a value or a date instead.",
                    o.label.to_lowercase()
                ));
            }
        }
    }
    None
}

/// "paid more than 30 days late", "signed two weeks after the meeting": a duration between two
/// dates of one record, which no condition on one field says.
fn dates_apart(reading: &Reading) -> Option<String> {
    let t = &reading.tokens;
    let units = ["day", "days", "week", "weeks", "month", "months", "year", "years"];
    (1..t.len())
        .any(|i| {
            units.contains(&t[i - 1].lower.as_str())
                && crate::ai::dates::GAP_WORDS.contains(&t[i].lower.as_str())
                && i >= 2
                && t[i - 2].lower.chars().any(|c| c.is_ascii_digit() || c.is_alphabetic())
        })
        .then(|| {
            "How far apart two dates of one record are (paid how long after it was due) cannot be asked yet. Ask for one date against a day instead (“invoices paid after 1 March 2026”).".to_string()
        })
}

/// "and in March?", "what about Globex", "only those over 10k": a question that continues
/// another, which Ask does not have.
fn follow_up(reading: &Reading, p: &Projection, named: &[String]) -> Option<String> {
    let t = &reading.tokens;
    let first = t.first().map(|w| w.lower.as_str())?;
    let second = t.get(1).map(|w| w.lower.as_str()).unwrap_or("");
    let opens = matches!(first, "and" | "und" | "et" | "y")
        || matches!(
            (first, second),
            ("what" | "how", "about") | ("same", "for") | ("et", "pour") | ("und", "was")
        );
    // A pronoun points back to an object the question names itself ("opportunités sauf
    // celles en négociation"), in any of its languages, or to an earlier question.
    let names_an_object =
        !named.is_empty() || p.objects.iter().any(|o| !super::reader::words_naming(t, o, &[]).is_empty());
    let points = !names_an_object && t.iter().any(|w| POINTING.contains(&w.lower.as_str()));
    (opens || points).then(|| {
        "Ask has no earlier question to continue: each question is read on its own. Ask it whole (“overdue invoices of Acme in March”), or use the Assistant, which keeps the conversation.".to_string()
    })
}

/// Why the query language cannot say what the question asks, if it cannot: records by what
/// they lack when that is no relation the reader found ("invoices without an account": an
/// account is an invoice's parent, not its related records).
fn lacking_a_parent(reading: &Reading, p: &Projection) -> Option<String> {
    let t = &reading.tokens;
    let object_words: Vec<String> = p
        .objects
        .iter()
        .flat_map(|o| {
            let mut w = tokens(&o.label);
            w.extend(tokens(&o.plural_label));
            w
        })
        .map(|w| w.stem)
        .collect();
    for (i, w) in t.iter().enumerate() {
        let lacks = match w.lower.as_str() {
            "without" | "lacking" => Some(i + 1),
            "no" | "zero" if i > 0 && matches!(t[i - 1].lower.as_str(), "with" | "have" | "has") => {
                Some(i + 1)
            }
            _ => None,
        };
        let Some(next) = lacks else { continue };
        // Read as a condition on related records: the language says it.
        // Read as a blank lookup ("invoices with no account": its account is blank) too.
        // Only a reading on an object the question lists counts ("notes without a contact" is
        // not accounts without contacts).
        let listed = |c: &super::reader::Candidate| {
            c.object.as_ref().is_none_or(|o| reading.objects.is_empty() || reading.objects.contains(o))
        };
        let read = reading.candidates.iter().any(|c| {
            listed(c)
                && ((c.kind == Kind::Related && c.span.contains(&i))
                    || (c.kind == Kind::Presence && c.cue.contains(&i)))
        });
        if read {
            continue;
        }
        let said = t.iter().skip(next).take(3).position(|x| object_words.contains(&x.stem));
        if let Some(k) = said {
            let words: Vec<&str> = t[i..=next + k].iter().map(|x| x.text.as_str()).collect();
            return Some(format!(
                "Ask finds records by the related records that point at them (accounts with no notes); “{}” is not such a relation, so this question is not answered rather than answered with other records.",
                words.join(" ")
            ));
        }
    }
    None
}
