//! Evidence: every literal in a plan must come from the question, a refusal must not be
//! contradicted by the schema, and a question word that names a picklist value must be used.
//! These are general rules over the question, the projection and the plan; they ask for the
//! one repair with the exact reason.

use super::*;

/// Words that say nothing about what a refusal finds missing.
pub(super) const REFUSAL_FILLER: &[&str] = &[
    "the",
    "schema",
    "field",
    "fields",
    "has",
    "have",
    "no",
    "not",
    "there",
    "is",
    "are",
    "question",
    "data",
    "property",
    "value",
    "values",
    "about",
    "ask",
    "asks",
    "for",
    "with",
    "missing",
    "object",
    "objects",
    "record",
    "records",
    "information",
    "any",
    "does",
    "doe",
    "contain",
    "include",
    "includes",
    "listed",
    "named",
    "a",
    "an",
    "of",
    "in",
    "on",
    "to",
    "by",
    "and",
    "or",
    "such",
    "that",
    "this",
    "which",
    "called",
    "available",
    "only",
    "provide",
    "provides",
    "i",
    "can",
    "cannot",
    "can't",
    "see",
    "find",
    "found",
    "show",
    "list",
];

/// Why a refusal is contradicted by the projection, if it is.
pub(super) fn refusal_contradiction(p: &Projection, reason: &str) -> Option<String> {
    if reason.chars().any(|c| c.is_ascii_digit()) {
        return Some("it names a date or a number".into());
    }
    for w in crate::ai::projection::words(reason) {
        if w.len() < 3 || REFUSAL_FILLER.contains(&w.as_str()) {
            continue;
        }
        for o in &p.objects {
            let object_words: Vec<String> = [&o.key, &o.label, &o.plural_label]
                .iter()
                .flat_map(|t| crate::ai::projection::words(t))
                .collect();
            if object_words.contains(&w) {
                return Some(format!("`{}` is an object of the schema", o.key));
            }
            for f in &o.fields {
                let mut fw = crate::ai::projection::words(&f.key);
                fw.extend(crate::ai::projection::words(&f.label));
                if fw.contains(&w) {
                    return Some(format!("`{}.{}` ({}) is in the schema", o.key, f.key, f.label));
                }
                for (v, l) in &f.values {
                    if crate::ai::projection::words(v).contains(&w)
                        || crate::ai::projection::words(l).contains(&w)
                    {
                        return Some(format!("\"{v}\" is a value of `{}.{}`", o.key, f.key));
                    }
                }
            }
        }
    }
    None
}

pub(super) const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "fifteen", "twenty",
];

/// Every literal in the plan must come from the question: values of picklist, number and text
/// filters appear in it (a picklist value by its key or label words), and a sorted answer to a
/// question that counts ("the three largest") has that limit.
pub(super) fn check_evidence(
    question: &str,
    p: &Projection,
    plan: &PlanOut,
) -> std::result::Result<(), String> {
    let q = question.to_lowercase();
    let q_words: Vec<String> = crate::ai::projection::words(&q);
    let q_numbers: Vec<f64> = q
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .filter_map(|t| t.replace(',', "").trim_matches('.').parse::<f64>().ok())
        .collect();
    let numbers_with_scale: Vec<f64> = q_numbers
        .iter()
        .flat_map(|n| [*n, n * 1_000.0, n * 1_000_000.0])
        .chain(
            NUMBER_WORDS
                .iter()
                .enumerate()
                .filter(|(_, w)| q_words.contains(&w.to_string()))
                .map(|(i, _)| [0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 15., 20.][i]),
        )
        .collect();
    for (i, f) in plan.filters.iter().enumerate() {
        let values: Vec<&Value> = match &f.value {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(v) => vec![v],
            None => continue,
        };
        if matches!(f.op.as_str(), "ne" | "not_in") {
            continue;
        }
        if let Some((_, field)) =
            p.field(&plan.object, &f.field).filter(|(_, x)| x.field_type == FieldType::Picklist)
        {
            // A picklist filter is evidenced when the question talks about its field: the
            // field's label or any of its values ("unpaid" → status in [sent, overdue]).
            let mut words = crate::ai::projection::words(&field.label);
            words.extend(crate::ai::projection::words(&field.key));
            for (v, l) in &field.values {
                words.extend(crate::ai::projection::words(v));
                words.extend(crate::ai::projection::words(l));
            }
            if words.iter().any(|w| w.len() > 2 && (q_words.contains(w) || q.contains(w.as_str()))) {
                continue;
            }
            return Err(format!(
                "filters[{i}] ({} {} {}) is not asked for: the question says nothing about {}. Answer again without that filter.",
                f.field,
                f.op,
                f.value.as_ref().map(Value::to_string).unwrap_or_default(),
                field.label
            ));
        }
        // "The largest by amount" often comes with `amount > 0`: implied by the sort, harmless.
        let sorted_desc =
            plan.sort.iter().any(|s| s.field == f.field && s.direction == Some(Direction::Desc));
        for v in values {
            let evidenced = match v {
                Value::Number(n)
                    if sorted_desc && n.as_f64() == Some(0.0) && matches!(f.op.as_str(), "gt" | "gte") =>
                {
                    true
                }
                Value::Number(n) => {
                    let n = n.as_f64().unwrap_or(f64::NAN);
                    numbers_with_scale.iter().any(|x| (x - n).abs() < 1e-9)
                }
                Value::String(s) if s.len() == 10 && s.as_bytes()[4] == b'-' => true, // dates: checked by type
                Value::String(s) => {
                    let w = crate::ai::projection::words(s);
                    w.is_empty()
                        || w.iter().any(|x| q_words.contains(x) || q.contains(x.as_str()))
                        || q.contains(&s.to_lowercase())
                }
                _ => true,
            };
            if !evidenced {
                return Err(format!(
                    "filters[{i}] ({} {} {v}) is not asked for: the question never mentions {v}. Answer again without that filter.",
                    f.field, f.op
                ));
            }
        }
    }
    if !plan.sort.is_empty() && plan.limit.is_none() {
        let n = q.split_whitespace().map(|t| t.trim_matches(|c: char| !c.is_alphanumeric())).find_map(|t| {
            t.parse::<u32>().ok().filter(|n| (1..=100).contains(n)).or_else(|| {
                NUMBER_WORDS
                    .iter()
                    .position(|w| *w == t)
                    .map(|i| [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 20][i])
            })
        });
        if let Some(n) = n.filter(|n| *n >= 1) {
            if !plan.filters.iter().any(|f| f.value.as_ref().and_then(Value::as_f64) == Some(n as f64)) {
                return Err(format!("the question asks for {n} records: set \"limit\" to {n}"));
            }
        }
    }
    Ok(())
}

/// A question word that is a picklist value of the queried object (or a parent) with no filter
/// using it: the plan probably dropped a condition ("customers" → `type` = customer). Checked on
/// the first answer only; the repair may keep its plan.
pub(super) fn check_unused_values(
    question: &str,
    p: &Projection,
    plan: &PlanOut,
) -> std::result::Result<(), String> {
    let q_words = crate::ai::projection::words(question);
    let used: Vec<String> = plan
        .filters
        .iter()
        .flat_map(|f| match &f.value {
            Some(Value::Array(a)) => a.clone(),
            Some(v) => vec![v.clone()],
            None => vec![],
        })
        .flat_map(|v| crate::ai::projection::words(v.as_str().unwrap_or_default()))
        .collect();
    let object_words: Vec<String> = p
        .object(&plan.object)
        .map(|o| {
            [&o.key, &o.label, &o.plural_label].iter().flat_map(|t| crate::ai::projection::words(t)).collect()
        })
        .unwrap_or_default();
    for w in q_words.iter().filter(|w| w.len() > 2 && !used.contains(w) && !object_words.contains(w)) {
        let holders: Vec<String> = p
            .paths(&plan.object)
            .into_iter()
            .filter(|(_, f)| f.field_type == FieldType::Picklist)
            .filter_map(|(path, f)| {
                f.values
                    .iter()
                    .find(|(v, _)| crate::ai::projection::words(v) == [w.clone()])
                    .map(|(v, _)| format!("{{\"field\":\"{path}\",\"op\":\"eq\",\"value\":\"{v}\"}}"))
            })
            .collect();
        if !holders.is_empty() {
            return Err(format!(
                "the question says \"{w}\", a picklist value, but no filter uses it. If the question means it, add the filter {}.",
                holders.join(" or ")
            ));
        }
    }
    Ok(())
}
