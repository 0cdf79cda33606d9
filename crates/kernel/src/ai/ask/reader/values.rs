//! Record names and stored values of short text fields, read from the value index through the
//! user's session.

use super::*;

impl Session<'_> {
    /// The stored values of a short text field that the question says as a run of words:
    /// records by name (the object's name field) or values ("Germany", "Payment delay"). Read
    /// through the user's session, so a value only another user can see is never found.
    pub(super) fn stored_values_said(
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
            // An acronym in the plural ("CFOs", "VPs") is probed without its "s".
            .chain(t.iter().filter_map(|w| {
                let bare = w.text.strip_suffix('s')?;
                (bare.chars().count() >= 2 && bare.chars().all(|c| c.is_ascii_uppercase()))
                    .then(|| probe(bare))?
            }))
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

/// The words of a picklist's labels of several words that say one value alone: in a label's
/// own language, a word of five letters or more, not a filler, that no other value's label (in
/// that language) has — "minorista" of "Comercio minorista", "détail" of "Commerce de détail".
/// (value, the label's language, the word.)
pub(super) fn partial_value_words(f: &ProjectedField) -> Vec<(String, crate::locale::Language, Token)> {
    use crate::locale::Language;
    // Every label of every value, tokenized once.
    let labels: Vec<(&str, Language, Vec<Token>)> = f
        .values
        .iter()
        .map(|(v, l)| (v.as_str(), Language::En, tokens(l)))
        .chain(f.other_value_labels.iter().map(|(v, l, text)| (v.as_str(), *l, tokens(text))))
        .collect();
    if labels.iter().all(|(_, _, w)| w.len() < 2) {
        return vec![];
    }
    // A word that names the field itself ("industries": Industry, "Industrie manufacturière")
    // is not its value.
    let field_words: Vec<(Language, Token)> = std::iter::once((Language::En, f.label.as_str()))
        .chain(f.other_labels.iter().map(|(l, text)| (*l, text.as_str())))
        .flat_map(|(l, text)| tokens(text).into_iter().map(move |w| (l, w)))
        .collect();
    let mut out: Vec<(String, Language, Token)> = vec![];
    for (value, language, words) in labels.iter().filter(|(_, _, w)| w.len() > 1) {
        for w in words {
            let significant = w.lower.chars().count() >= 5
                && w.lower.chars().all(char::is_alphabetic)
                && !FILLER.contains(&w.lower.as_str())
                && !LIGHT_WORDS.contains(&w.lower.as_str());
            if !significant || out.iter().any(|(v, l, x)| v == value && l == language && x.lower == w.lower) {
                continue;
            }
            let names_field = field_words.iter().any(|(l, x)| says_in(w, x, *l) || says(w, x));
            // Any other value with a label (of any length, in this language) that says it.
            let shared = labels
                .iter()
                .any(|(v, l, other)| v != value && l == language && other.iter().any(|x| says_in(w, x, *l)));
            if !names_field && !shared {
                out.push((value.to_string(), *language, w.clone()));
            }
        }
    }
    out
}
