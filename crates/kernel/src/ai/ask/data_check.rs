//! Answers checked against the data: a plan that finds no record gets one repair that says
//! what the data holds for the values it wrote — where else a value is stored ("Germany" is a
//! billing country, not an account's name) and the stored values nearest to it ("Payment
//! delay" for "payment delays"). The kernel never swaps a value itself: the model decides, and
//! a second empty answer is shown as it is. Every look at the data is a query on the user's
//! session, so nothing a user cannot read is ever named.

use super::*;

/// A value the plan wrote for a text-like field or a lookup (`path`, as the plan wrote it).
pub(super) struct Written {
    pub path: String,
    pub value: String,
}

/// How many other fields and stored values one written value reports at most.
const MAX_HINTS: usize = 3;

impl Session<'_> {
    /// What the data holds for the written values of a plan that found nothing: one line per
    /// value that alone matches no record of `object`. Empty when every value matches alone
    /// (the combination is what is empty) or nothing better is stored.
    pub(super) fn data_hints(&self, p: &Projection, object: &str, written: &[Written]) -> Vec<String> {
        let mut lines = vec![];
        for w in written {
            let Some((owner, field)) = p.field(object, &w.path) else { continue };
            let alone = match field.field_type {
                FieldType::Lookup => {
                    let target = field.target.as_deref().unwrap_or_default();
                    self.resolve_name(target, &w.path, &w.value)
                        .is_ok_and(|r| r.status != ResolutionStatus::Unmatched)
                }
                _ => self.count(object, &w.path, Op::Contains, &w.value) > 0,
            };
            if alone {
                continue;
            }
            // Each finding says the filter that would use it, instead of the one written.
            let instead = |path: &str, op: &str, value: &str| {
                format!(
                    ": write {} instead of the filter on {}",
                    json!({"field": path, "op": op, "value": value}),
                    w.path
                )
            };
            let mut found: Vec<String> = self
                .elsewhere(p, object, &w.path, &w.value)
                .into_iter()
                .map(|(path, n, op, value)| {
                    format!(
                        "“{}” is in {path} of {n} {object} record(s){}",
                        w.value,
                        instead(&path, op, &value)
                    )
                })
                .collect();
            // Stored values near the written one: in its own field first, else in the other
            // short text fields of the object.
            let quote =
                |near: &[String]| near.iter().map(|v| format!("“{v}”")).collect::<Vec<_>>().join(", ");
            let own = if field.field_type == FieldType::Lookup {
                vec![]
            } else {
                self.nearest_values(object, &w.path, &w.value)
            };
            if !own.is_empty() {
                found.push(format!("{} holds {}{}", w.path, quote(&own), instead(&w.path, "eq", &own[0])));
            } else if found.is_empty() {
                for (other, f) in p.paths(object) {
                    if other == w.path || f.field_type != FieldType::Text {
                        continue;
                    }
                    let near = self.nearest_values(object, &other, &w.value);
                    if !near.is_empty() {
                        found.push(format!(
                            "{other} holds {}{}",
                            quote(&near),
                            instead(&other, "eq", &near[0])
                        ));
                    }
                    if found.len() >= MAX_HINTS {
                        break;
                    }
                }
            }
            if found.is_empty() {
                continue;
            }
            let missing = match field.field_type {
                FieldType::Lookup => {
                    format!("no {} is named “{}”", field.target.as_deref().unwrap_or(&owner.key), w.value)
                }
                _ => format!("no {object} has {} “{}”", w.path, w.value),
            };
            lines.push(format!("{missing}; {}", found.join("; ")));
        }
        lines
    }

    /// Up to 1,000 records of `object` whose `path` compares to `value` by `op`, with `fields`
    /// (on the user's session, like every read); `None` when the query is refused.
    fn matching(
        &self,
        object: &str,
        path: &str,
        op: Op,
        value: &str,
        fields: Vec<String>,
    ) -> Option<QueryResult> {
        let spec = QuerySpec {
            search: None,
            object: object.to_string(),
            fields,
            filters: Some(Condition::compare(path, op, Value::String(value.to_string()))),
            sort: vec![],
            limit: Some(1_000),
            offset: None,
            after: None,
        };
        self.query(&spec).ok()
    }

    /// How many records of `object` (up to 1,000) have `path` compared to `value` by `op`.
    fn count(&self, object: &str, path: &str, op: Op, value: &str) -> usize {
        self.matching(object, path, op, value, vec![]).map_or(0, |r| r.records.len())
    }

    /// Other text and picklist fields of `object` (and its parents) that hold `value`, with
    /// how many records hold it there and the filter that finds them (`eq` the stored value, or
    /// `contains` in a long text); the most first.
    fn elsewhere(
        &self,
        p: &Projection,
        object: &str,
        path: &str,
        value: &str,
    ) -> Vec<(String, usize, &'static str, String)> {
        let wanted = normal_text(value);
        let mut out = vec![];
        for (other, f) in p.paths(object) {
            if other == path {
                continue;
            }
            let (n, op, stored) = match f.field_type {
                FieldType::Text => match self.count(object, &other, Op::Eq, value) {
                    0 => (self.count(object, &other, Op::Contains, value), "contains", value.to_string()),
                    n => (n, "eq", value.to_string()),
                },
                FieldType::LongText => {
                    (self.count(object, &other, Op::Contains, value), "contains", value.to_string())
                }
                FieldType::Picklist => {
                    match f.values.iter().find(|(v, l)| normal_text(v) == wanted || normal_text(l) == wanted)
                    {
                        Some((v, _)) => (self.count(object, &other, Op::Eq, v), "eq", v.clone()),
                        None => (0, "eq", String::new()),
                    }
                }
                _ => (0, "eq", String::new()),
            };
            if n > 0 {
                out.push((other, n, op, stored));
            }
        }
        out.sort_by_key(|(_, n, _, _)| std::cmp::Reverse(*n));
        out.truncate(MAX_HINTS);
        out
    }

    /// Stored values of `path` that share the written value's longest word (its first five
    /// letters, so "delays" finds "delay"), most common first.
    fn nearest_values(&self, object: &str, path: &str, value: &str) -> Vec<String> {
        let Some(word) = value
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .max_by_key(|w| w.chars().count())
        else {
            return vec![];
        };
        let stem: String = word.chars().take(5).collect();
        let Some(found) = self.matching(object, path, Op::Contains, &stem, vec![path.to_string()]) else {
            return vec![];
        };
        let mut counts: Vec<(String, usize)> = vec![];
        for r in &found.records {
            let Some(v) = r.get(path).and_then(Value::as_str) else { continue };
            // Long texts are not values to pick from: only short ones are offered.
            if v.chars().count() > 80 {
                continue;
            }
            match counts.iter_mut().find(|(s, _)| s == v) {
                Some((_, n)) => *n += 1,
                None => counts.push((v.to_string(), 1)),
            }
        }
        counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        counts.into_iter().take(MAX_HINTS).map(|(v, _)| v).collect()
    }
}
