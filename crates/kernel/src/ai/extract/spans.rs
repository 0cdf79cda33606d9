//! Where a value stands in the document: the spellings a value may take there, its
//! occurrences on word boundaries, and one span for values that share their text.

use super::*;

/// Ways a value can be written in a document, most specific first.
pub(super) fn spellings(f: &crate::metadata::definition::FieldDef, v: &Value) -> Vec<String> {
    let mut out = vec![];
    match (f.field_type, v) {
        (FieldType::Number | FieldType::Currency, Value::Number(n)) => {
            let x = n.as_f64().unwrap_or_default();
            let whole = x.trunc() as i64;
            let cents = ((x - x.trunc()).abs() * 100.0).round() as i64;
            let grouped = |sep: char| {
                let digits = whole.unsigned_abs().to_string();
                let mut g = String::new();
                for (i, c) in digits.chars().enumerate() {
                    if i > 0 && (digits.len() - i) % 3 == 0 {
                        g.push(sep);
                    }
                    g.push(c);
                }
                g
            };
            out.push(format!("{},{cents:02}", grouped('.')));
            out.push(format!("{}.{cents:02}", grouped(',')));
            out.push(format!("{whole}.{cents:02}"));
            out.push(grouped(','));
            out.push(whole.to_string());
        }
        (FieldType::Date, Value::String(s)) => {
            if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
                for fmt in [
                    "%Y-%m-%d",
                    "%d.%m.%Y",
                    "%B %-d, %Y",
                    "%B %d, %Y",
                    "%-d %B %Y",
                    "%d %B %Y",
                    "%b %-d, %Y",
                    "%d/%m/%Y",
                    "%m/%d/%Y",
                ] {
                    out.push(d.format(fmt).to_string());
                }
            }
        }
        (FieldType::Picklist, Value::String(s)) => {
            out.push(s.clone());
            if let Some(pv) = f.values.iter().flatten().find(|p| &p.value == s) {
                out.push(pv.label.clone());
            }
            match s.as_str() {
                "USD" => out.push("$".into()),
                "EUR" => out.push("€".into()),
                "GBP" => out.push("£".into()),
                _ => {}
            }
        }
        (_, Value::String(s)) => out.push(s.clone()),
        (_, other) => out.push(other.to_string()),
    }
    out
}

/// Where `text` (a document's) states the value: every occurrence of the first spelling that
/// occurs.
pub(super) fn occurrences(
    text: &str,
    f: &crate::metadata::definition::FieldDef,
    v: &Value,
) -> Vec<(usize, usize)> {
    // Case-insensitive where lower-casing keeps the byte offsets (it does for most scripts);
    // case-sensitive otherwise.
    let lower = text.to_lowercase();
    let fold = lower.len() == text.len();
    let haystack = if fold { lower.as_str() } else { text };
    for s in spellings(f, v) {
        let needle = if fold { s.to_lowercase() } else { s };
        if needle.is_empty() {
            continue;
        }
        let found: Vec<(usize, usize)> = haystack
            .match_indices(&needle)
            .map(|(i, m)| (i, i + m.len()))
            .filter(|(a, b)| on_word_boundaries(text, *a, *b, &needle))
            .collect();
        if !found.is_empty() {
            return found;
        }
    }
    vec![]
}

/// A match stands on its own: "0" inside "0130" is not the value 0 (a symbol like "$" may
/// touch the amount).
pub(super) fn on_word_boundaries(text: &str, start: usize, end: usize, needle: &str) -> bool {
    let alnum_edge = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let first_alnum = needle.chars().next().is_some_and(char::is_alphanumeric);
    let last_alnum = needle.chars().last().is_some_and(char::is_alphanumeric);
    let glued_before = first_alnum && alnum_edge(text[..start].chars().next_back());
    let glued_after = last_alnum && alnum_edge(text[end..].chars().next());
    !glued_before && !glued_after
}

/// When two fields claim the same words of the document (a paid date taken from the line
/// that states the due date), keep the field whose label the line names. The same words are
/// the same span: a currency code read from the mark of an amount ("USD" of "USD 35,450.00")
/// is part of what the amount's field took, not the same value.
pub(super) fn settle_shared_spans(
    doc: &Document,
    fields: &[&crate::metadata::definition::FieldDef],
    patch: &mut Vec<ProposedField>,
    unmapped: &mut Vec<Value>,
) {
    let span_of = |f: &ProposedField| f.source.as_ref().map(|s| (s.start, s.end));
    let line_of = |at: usize| {
        let a = doc.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let b = doc.text[at..].find('\n').map_or(doc.text.len(), |i| at + i);
        doc.text[a..b].to_lowercase()
    };
    let score = |f: &ProposedField, line: &str| {
        let label = fields.iter().find(|d| d.key == f.field).map(|d| d.label.clone()).unwrap_or_default();
        crate::ai::projection::words(&label)
            .into_iter()
            .filter(|w| w.len() > 2 && !matches!(w.as_str(), "date" | "number" | "name" | "code"))
            .filter(|w| line.contains(w.as_str()))
            .count()
    };
    let mut drop: Vec<String> = vec![];
    for f in patch.iter() {
        let Some((at, end)) = span_of(f) else { continue };
        // The same words, or the same identifier written again elsewhere (an invoice number in
        // the subject and on the slip is not also its PO number).
        let same_text = |g: &ProposedField| {
            f.value.as_str().is_some_and(|v| v.len() >= 4 && g.value.as_str() == Some(v))
                && [f, g].iter().all(|x| {
                    fields
                        .iter()
                        .any(|d| d.key == x.field && d.field_type == crate::metadata::types::FieldType::Text)
                })
        };
        let rivals: Vec<&ProposedField> =
            patch.iter().filter(|g| span_of(g) == Some((at, end)) || same_text(g)).collect();
        if rivals.len() < 2 {
            continue;
        }
        let line = line_of(at);
        // The field the line's label names wins; on a tie, the first in definition order (the
        // others go to unmapped, where the reviewer sees them).
        let rank = |g: &ProposedField| {
            (
                std::cmp::Reverse(score(g, &line)),
                fields.iter().position(|d| d.key == g.field).unwrap_or(usize::MAX),
            )
        };
        let winner = rivals.iter().min_by_key(|g| rank(g)).map(|g| g.field.clone());
        if winner.as_ref() != Some(&f.field) {
            drop.push(f.field.clone());
        }
    }
    patch.retain(|f| {
        if drop.contains(&f.field) {
            unmapped.push(json!({"field": f.field, "value": f.value, "source": f.source,
                "reason": "the document states this text for another field"}));
            false
        } else {
            true
        }
    });
}
