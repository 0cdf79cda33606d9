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
            for t in &o.terms {
                if t.phrases().any(|ph| crate::ai::projection::words(ph).contains(&w)) {
                    return Some(format!("\"{}\" is the term {} of {}", t.label, t.key, o.key));
                }
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

/// What a question says, as evidence for a plan: its words (stemmed); the same words with the
/// names the plan writes taken out — a word inside a name ("Bluth Partners") is that name, not
/// a picklist value or a term; and with the words of the terms the plan uses taken out too — a
/// word of "still in play" is that term, not a text value or a field.
pub(super) struct Said {
    outside_terms: Vec<String>,
    outside_names: Vec<String>,
    plain: Vec<String>,
}

impl Said {
    pub(super) fn of(question: &str, p: &Projection, plan: &PlanOut) -> Said {
        let words = crate::ai::projection::words(question);
        // The words of the terms the plan uses first: a name written over them ("Customer" for
        // "customers", a term) is no name of the question.
        let mut in_term = vec![false; words.len()];
        for (_, t, _) in p.terms(&plan.object).iter().filter(|(k, _, _)| plan.terms.contains(k)) {
            for phrase in t.phrases() {
                let w = crate::ai::projection::words(phrase);
                if let Some(at) = find_run(&words, &w) {
                    in_term[at..at + w.len()].iter_mut().for_each(|x| *x = true);
                }
            }
        }
        let mut in_name = vec![false; words.len()];
        for f in plan.filters.iter().filter(|f| name_root(p, &plan.object, &f.field).is_some()) {
            let values: Vec<&str> = match &f.value {
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                Some(Value::String(v)) => vec![v.as_str()],
                _ => vec![],
            };
            for v in values {
                let name = crate::ai::projection::words(v);
                if let Some(at) = find_run(&words, &name) {
                    if !in_term[at..at + name.len()].iter().any(|x| *x) {
                        in_name[at..at + name.len()].iter_mut().for_each(|w| *w = true);
                    }
                }
            }
        }
        let keep = |mask: &dyn Fn(usize) -> bool| -> Vec<String> {
            words.iter().enumerate().filter(|(i, _)| !mask(*i)).map(|(_, w)| w.clone()).collect()
        };
        let outside_names = keep(&|i| in_name[i]);
        let outside_terms = keep(&|i| in_term[i]);
        let plain = keep(&|i| in_name[i] || in_term[i]);
        Said { outside_terms, outside_names, plain }
    }

    /// Some word of a name somewhere outside the terms the plan uses.
    fn names(&self, text: &str) -> bool {
        crate::ai::projection::words(text).iter().any(|x| self.outside_terms.contains(x))
    }

    /// Every word of `text` somewhere outside the names and the terms the plan uses.
    fn plainly(&self, text: &str) -> bool {
        let w = crate::ai::projection::words(text);
        !w.is_empty() && w.iter().all(|x| self.plain.contains(x))
    }

    /// The phrase's words, in order, outside the names.
    pub(super) fn says(&self, phrase: &str) -> bool {
        let w = crate::ai::projection::words(phrase);
        !w.is_empty() && find_run(&self.outside_names, &w).is_some()
    }

    /// Every word of `text` somewhere outside the names.
    fn names_value(&self, text: &str) -> bool {
        let w = crate::ai::projection::words(text);
        !w.is_empty() && w.iter().all(|x| self.outside_names.contains(x))
    }
}

/// A term the question says, offered to the model for queries on `object`.
#[derive(Debug, Clone)]
pub struct SaidTerm {
    pub object: String,
    /// As a plan names it (`open_opportunity`, `account.key_account`).
    pub key: String,
    /// The words of the question that say it (its label or a synonym).
    pub phrase: String,
}

/// The terms `question` says, for each object in `objects`: the only terms a plan may use
/// (a term the question does not say would be refused as not asked for). The longest phrase
/// that says a term is the one named.
pub(super) fn said_terms(question: &str, p: &Projection, objects: &[String]) -> Vec<SaidTerm> {
    let words = crate::ai::projection::words(question);
    let mut out = vec![];
    for object in objects {
        for (key, t, _) in p.terms(object) {
            let phrase = t
                .phrases()
                .filter(|ph| find_run(&words, &crate::ai::projection::words(ph)).is_some())
                .max_by_key(|ph| ph.len());
            if let Some(phrase) = phrase {
                out.push(SaidTerm { object: object.clone(), key, phrase: phrase.to_string() });
            }
        }
    }
    out
}

/// The picklists (object, path) of `objects` whose values (key or label) the question says
/// outside the words of the terms it says: their filters stay offered beside those terms.
pub(super) fn values_said(
    question: &str,
    p: &Projection,
    objects: &[String],
    terms: &[SaidTerm],
) -> Vec<(String, String)> {
    let words = crate::ai::projection::words(question);
    let mut in_term = vec![false; words.len()];
    for t in terms {
        let w = crate::ai::projection::words(&t.phrase);
        if let Some(at) = find_run(&words, &w) {
            in_term[at..at + w.len()].iter_mut().for_each(|x| *x = true);
        }
    }
    let outside: Vec<String> =
        words.iter().enumerate().filter(|(i, _)| !in_term[*i]).map(|(_, w)| w.clone()).collect();
    let mut out = vec![];
    for object in objects {
        for (path, f) in p.paths(object) {
            let said = f.values.iter().any(|(v, l)| {
                [v, l].iter().any(|x| find_run(&outside, &crate::ai::projection::words(x)).is_some())
            });
            if f.field_type == FieldType::Picklist && said {
                out.push((object.clone(), path));
            }
        }
    }
    out
}

/// Whether a said term's phrase is the name of a value of a picklist its condition sets, while
/// the question lists values of that picklist (`values_said`).
pub(super) fn names_a_listed_value(
    said: &SaidTerm,
    p: &Projection,
    values_said: &[(String, String)],
) -> bool {
    let phrase = crate::ai::projection::words(&said.phrase);
    let Some((_, _, condition)) = p.terms(&said.object).into_iter().find(|(k, _, _)| *k == said.key) else {
        return false;
    };
    condition.fields().into_iter().any(|path| {
        values_said.iter().any(|(o, f)| *o == said.object && f == path)
            && p.field(&said.object, path).is_some_and(|(_, f)| {
                f.values.iter().any(|(v, l)| {
                    crate::ai::projection::words(v) == phrase || crate::ai::projection::words(l) == phrase
                })
            })
    })
}

/// For a path that names a record — a lookup (`account`), a parent's name field
/// (`account.name`) or the object's own name field — the path that stands for that record
/// (`account`; the name field itself for the object's own records).
pub(super) fn name_root(p: &Projection, object: &str, path: &str) -> Option<String> {
    let (owner, field) = p.field(object, path)?;
    if field.field_type == FieldType::Lookup {
        return Some(path.to_string());
    }
    if field.key != owner.name_field {
        return None;
    }
    Some(path.split_once('.').map_or(path, |(lookup, _)| lookup).to_string())
}

/// Where `run` occurs in `words` as consecutive words.
pub(super) fn find_run(words: &[String], run: &[String]) -> Option<usize> {
    if run.is_empty() || run.len() > words.len() {
        return None;
    }
    (0..=words.len() - run.len()).find(|&i| words[i..i + run.len()] == *run)
}

/// The picklist values a condition admits per path (`eq` and `in`, outside any `not`).
fn admitted(c: &Condition, out: &mut Vec<(String, String)>) {
    match c {
        Condition::All(a) => a.all.iter().for_each(|c| admitted(c, out)),
        Condition::Any(a) => a.any.iter().for_each(|c| admitted(c, out)),
        Condition::Not(_) | Condition::Related(_) => {}
        Condition::Compare(cmp) if matches!(cmp.op, Op::Eq | Op::In) => {
            let values: Vec<&Value> = match &cmp.value {
                Some(Value::Array(a)) => a.iter().collect(),
                Some(v) => vec![v],
                None => vec![],
            };
            out.extend(
                values.into_iter().filter_map(Value::as_str).map(|v| (cmp.field.clone(), v.to_string())),
            );
        }
        Condition::Compare(_) => {}
    }
}

/// Why a picklist value the plan writes for `path` is asked for, if it is: the question says
/// the value (its key or label words), a category it belongs to, or a term whose filter admits
/// it — all outside the names the plan writes.
fn picklist_evidence(
    said: &Said,
    p: &Projection,
    object: &str,
    path: &str,
    field: &ProjectedField,
    v: &str,
) -> bool {
    if field.values.iter().any(|(k, l)| k == v && (said.names_value(k) || said.names_value(l))) {
        return true;
    }
    if field.categories.iter().any(|(c, vs)| vs.iter().any(|x| x == v) && said.says(c)) {
        return true;
    }
    p.terms(object).into_iter().any(|(_, t, condition)| {
        let mut values = vec![];
        admitted(&condition, &mut values);
        values.iter().any(|(f, x)| f == path && x == v) && t.phrases().any(|ph| said.says(ph))
    })
}

/// Why a plan is not what the question asks: the repair's message, and the filter field the
/// repair's contract leaves out (a small model otherwise writes the same filter again).
pub(super) struct Unasked {
    pub message: String,
    pub field: Option<String>,
}

impl Unasked {
    fn plan(message: String) -> Unasked {
        Unasked { message, field: None }
    }
    fn filter(field: &str, message: String) -> Unasked {
        Unasked { message, field: Some(field.to_string()) }
    }
}

/// Every literal in the plan must come from the question: a term is said (its label or a
/// synonym), a picklist value is said or stands for a category or term that is (outside the
/// names the plan writes), a number or a text value appears in it, and a sorted answer to a
/// question that counts ("the three largest") has that limit.
pub(super) fn check_evidence(
    question: &str,
    p: &Projection,
    plan: &PlanOut,
) -> std::result::Result<(), Unasked> {
    let said = Said::of(question, p, plan);
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
    let terms = p.terms(&plan.object);
    for key in &plan.terms {
        let Some((_, t, _)) = terms.iter().find(|(k, _, _)| k == key) else { continue };
        if !t.phrases().any(|ph| said.says(ph)) {
            return Err(Unasked::plan(format!(
                "the term {key} (\"{}\") is not asked for: the question says none of its words{}. Answer again without that term.",
                t.label,
                if t.synonyms.is_empty() { String::new() } else { format!(" (\"{}\")", t.synonyms.join("\", \"")) }
            )));
        }
    }
    for (i, f) in plan.filters.iter().enumerate() {
        if f.op == "is_blank" {
            // "without an email": the question names the field. (`is_set` is left alone: a
            // small model adds it to a field it filters anyway, and it rarely changes an answer.)
            let Some((_, field)) = p.field(&plan.object, &f.field) else { continue };
            if !(said.plainly(&field.label) || said.plainly(&field.key)) {
                return Err(Unasked::filter(
                    &f.field,
                    format!(
                        "filters[{i}] ({} {}) is not asked for: the question does not name {}. Answer again without that filter.",
                        f.field, f.op, field.label
                    ),
                ));
            }
            continue;
        }
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
            for v in values.iter().filter_map(|v| v.as_str()) {
                if !picklist_evidence(&said, p, &plan.object, &f.field, field, v) {
                    return Err(Unasked::plan(format!(
                        "filters[{i}] ({} {} {}) is not asked for: the question says neither \"{v}\" nor a word that means it. Answer again without that value.",
                        f.field,
                        f.op,
                        f.value.as_ref().map(Value::to_string).unwrap_or_default(),
                    )));
                }
            }
            continue;
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
                    // A name (a lookup, a name field) needs some word of the question that is
                    // not a term the plan uses; another text value words outside names and terms.
                    let w = crate::ai::projection::words(s);
                    w.is_empty()
                        || if name_root(p, &plan.object, &f.field).is_some() {
                            said.names(s)
                        } else {
                            w.iter().any(|x| said.plainly(x))
                        }
                }
                _ => true,
            };
            if !evidenced {
                let message = format!(
                    "filters[{i}] ({} {} {v}) is not asked for: the question never mentions {v}. Answer again without that filter.",
                    f.field, f.op
                );
                // A record the question does not name at all: the repair may not name one
                // either. (A number or a text value may be the right field with a wrong value.)
                let named = p
                    .field(&plan.object, &f.field)
                    .is_some_and(|(owner, x)| x.field_type == FieldType::Lookup || x.key == owner.name_field);
                return Err(if named { Unasked::filter(&f.field, message) } else { Unasked::plan(message) });
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
                return Err(Unasked::plan(format!(
                    "the question asks for {n} records: set \"limit\" to {n}"
                )));
            }
        }
    }
    Ok(())
}

/// A question word that is a picklist value of the queried object (or a parent), or a term's
/// words, with no filter or term using it: the plan probably dropped a condition ("customers"
/// → `type` = customer; "still in play" → the term `open_opportunity`). Words inside the names
/// the plan writes do not count. Checked on the first answer only; the repair may keep its plan.
pub(super) fn check_unused_values(
    question: &str,
    p: &Projection,
    plan: &PlanOut,
    terms_offered: bool,
) -> std::result::Result<(), String> {
    let said = Said::of(question, p, plan);
    let terms = p.terms(&plan.object);
    let mut used: Vec<String> = plan
        .filters
        .iter()
        .flat_map(|f| match &f.value {
            Some(Value::Array(a)) => a.clone(),
            Some(v) => vec![v.clone()],
            None => vec![],
        })
        .flat_map(|v| crate::ai::projection::words(v.as_str().unwrap_or_default()))
        .collect();
    // The fields a plan filters on (a term's, through its condition).
    let mut filtered: Vec<String> = plan.filters.iter().map(|f| f.field.clone()).collect();
    for (_, t, condition) in terms.iter().filter(|(k, _, _)| plan.terms.contains(k)) {
        let mut values = vec![];
        admitted(condition, &mut values);
        used.extend(values.iter().flat_map(|(_, v)| crate::ai::projection::words(v)));
        used.extend(t.phrases().flat_map(crate::ai::projection::words));
        filtered.extend(condition.fields().into_iter().map(String::from));
    }
    if terms_offered {
        for (key, t, condition) in &terms {
            if plan.terms.contains(key) || condition.fields().iter().any(|f| filtered.iter().any(|x| x == f))
            {
                continue;
            }
            if let Some(phrase) = t.phrases().find(|ph| said.says(ph)) {
                // The same words may say a term of the object and one of its parent ("my":
                // mine, account.mine): one of them used is enough.
                let same_words = crate::ai::projection::words(phrase);
                if terms
                    .iter()
                    .filter(|(k, _, _)| plan.terms.contains(k))
                    .any(|(_, u, _)| u.phrases().any(|ph| crate::ai::projection::words(ph) == same_words))
                {
                    continue;
                }
                return Err(format!(
                    "the question says \"{phrase}\", the term {key} (\"{}\"), but the plan does not use it. If the question means it, add \"{key}\" to \"terms\".",
                    t.label
                ));
            }
        }
    }
    let object_words: Vec<String> = p
        .object(&plan.object)
        .map(|o| {
            [&o.key, &o.label, &o.plural_label].iter().flat_map(|t| crate::ai::projection::words(t)).collect()
        })
        .unwrap_or_default();
    for w in
        said.outside_names.iter().filter(|w| w.len() > 2 && !used.contains(w) && !object_words.contains(w))
    {
        let holders: Vec<String> = p
            .paths(&plan.object)
            .into_iter()
            .filter(|(path, f)| f.field_type == FieldType::Picklist && !filtered.contains(path))
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
