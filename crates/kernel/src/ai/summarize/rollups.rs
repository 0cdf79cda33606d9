//! Facts worth saying, computed by the kernel: rollups over a record's related lists — counts,
//! sums (per currency), earliest dates — for each child object as a whole and for each of the
//! workspace's terms on it ("open" opportunities, "unpaid" invoices), the newest child record
//! of objects kept in time order (the latest note), and the days since it. Each rollup is a fact
//! with a **set citation**: the child object, the filter that defines the set, the field and the
//! operation — the UI opens it as the filtered list.
//!
//! Every set is read with `Session::query`, the one enforcement path: ben's rollups count only
//! the opportunities ben can read, and a field he cannot read is neither summed nor named.
//! Nothing here names an object of the demo: children, terms, currencies and time order come
//! from the metadata.

use super::*;
use crate::ai::projection::{ProjectedObject, Projection};
use crate::metadata::condition::{AllOf, Condition, Op};
use crate::metadata::definition::{FieldType, MINE};
use crate::records::query::{Direction, QuerySpec, SortKey};

/// The set a rollup fact is computed over, as the UI opens it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SetCitation {
    /// The child object listed.
    pub object: String,
    /// The rows of the set: the lookup to the summarized record, and the term's condition.
    pub filter: Condition,
    /// The field aggregated (none for a count).
    #[ts(optional)]
    pub field: Option<String>,
    /// `count`, `sum`, `earliest`, `newest`, `days_since`.
    pub operation: String,
    /// What the set is called: "open opportunities", "invoices" (the fact's own label says
    /// what was computed over it).
    pub label: String,
}

/// How far each later term's sets rank below the one before: the first term's sets come first,
/// then the newest record and the days since it, then the second term's.
const TERM_STEP: u32 = 12;

/// How many rows of one set are read at most (a rollup over more says so in its label).
const SET_ROWS: u32 = 1_000;

/// A fact with its rank: higher is what a reader of the record needs first.
pub(super) struct Ranked {
    pub fact: Fact,
    pub rank: u32,
}

impl Session<'_> {
    /// The rollup facts of a record: per readable child object (one hop), the whole set and
    /// one set per term of the child the user may see. `currency` is the record's: a child
    /// with no currency of its own (an invoice's lines) is in its parent's.
    pub(super) fn rollups(
        &self,
        p: &Projection,
        object: &str,
        id: &str,
        name: &str,
        currency: &str,
    ) -> Vec<Ranked> {
        let Some(subject) = p.object(object) else { return vec![] };
        let mut out = vec![];
        for (child_key, lookup) in &subject.children {
            let Some(child) = p.object(child_key) else { continue };
            let base = Condition::compare(lookup.clone(), Op::Eq, Value::String(id.to_string()));
            let mut sets = vec![(child.plural_label.to_lowercase(), base.clone(), None)];
            // A term's position in the definition says how soon a reader needs its set.
            for (position, t) in child.terms.iter().filter(|t| t.key != MINE).enumerate() {
                let condition = Condition::All(AllOf { all: vec![base.clone(), t.condition.clone()] });
                sets.push((plural_of_term(&t.label, child), condition, Some(position as u32)));
            }
            let with_terms = sets.len() > 1;
            for (label, filter, position) in sets {
                self.set_facts(child, &label, &filter, position, with_terms, name, id, currency, &mut out);
            }
            self.newest(child, &base, name, id, &mut out);
        }
        out
    }

    /// Count, sums per currency and earliest dates of one set.
    #[allow(clippy::too_many_arguments)]
    fn set_facts(
        &self,
        child: &ProjectedObject,
        label: &str,
        filter: &Condition,
        position: Option<u32>,
        with_terms: bool,
        name: &str,
        id: &str,
        currency: &str,
        out: &mut Vec<Ranked>,
    ) {
        // Only the columns this set's facts need are read: an object with terms is summed by its
        // terms' sets (its whole set is only counted), and the earliest dates are the first
        // term's set's. A field the metadata calls non-additive (a unit price) is never summed.
        let of_type = |t: FieldType| child.fields.iter().filter(move |f| f.field_type == t);
        let money: Vec<&str> = if with_terms && position.is_none() {
            vec![]
        } else {
            of_type(FieldType::Currency).filter(|f| f.additive).map(|f| f.key.as_str()).collect()
        };
        let dates: Vec<&str> = if position == Some(0) {
            of_type(FieldType::Date).map(|f| f.key.as_str()).collect()
        } else {
            vec![]
        };
        let code = currency_code(child);
        let mut fields: Vec<String> = money.iter().chain(dates.iter()).map(|s| s.to_string()).collect();
        fields.extend(code.filter(|_| !money.is_empty()).map(String::from));
        let spec = QuerySpec {
            search: None,
            object: child.key.clone(),
            fields,
            filters: Some(filter.clone()),
            sort: vec![],
            limit: Some(SET_ROWS),
            offset: None,
            after: None,
        };
        let Ok(rows) = self.query(&spec) else { return };
        let n = rows.records.len();
        let is_term = position.is_some();
        if is_term && n == 0 {
            return;
        }
        let slug = slug(label);
        let set_name = label.to_string();
        let fact = |key: String,
                    field: &str,
                    what: String,
                    operation: &str,
                    value: Value,
                    display: String,
                    set_filter: Condition| {
            Fact {
                reference: key,
                object: child.key.clone(),
                id: id.to_string(),
                field: field.to_string(),
                label: what,
                field_type: match operation {
                    "sum" => "currency",
                    "earliest" => "date",
                    _ => "number",
                }
                .into(),
                value,
                display,
                record_name: name.to_string(),
                set: Some(SetCitation {
                    object: child.key.clone(),
                    filter: set_filter,
                    field: (!field.is_empty()).then(|| field.to_string()),
                    operation: operation.into(),
                    label: set_name.clone(),
                }),
                currency: None,
            }
        };
        let more = if rows.has_more { " (first 1,000)" } else { "" };
        out.push(Ranked {
            fact: fact(
                format!("{slug}_count"),
                "",
                format!("number of {label}{more}"),
                "count",
                json!(n),
                n.to_string(),
                filter.clone(),
            ),
            rank: position.map_or(60, |p| 99u32.saturating_sub(TERM_STEP * p)),
        });
        if n == 0 {
            return;
        }
        for m in &money {
            let label_of =
                child.fields.iter().find(|f| f.key == *m).map(|f| f.label.to_lowercase()).unwrap_or_default();
            // Sums per currency: by the object's currency-code picklist, else the record's.
            let mut groups: Vec<(String, f64)> = vec![];
            for r in &rows.records {
                let Some(x) = r.get(*m).and_then(number) else { continue };
                let c = code
                    .and_then(|c| r.get(c))
                    .and_then(Value::as_str)
                    .map(String::from)
                    .unwrap_or_else(|| currency.to_string());
                match groups.iter_mut().find(|(k, _)| *k == c) {
                    Some((_, s)) => *s += x,
                    None => groups.push((c, x)),
                }
            }
            for (c, sum) in groups {
                let set_filter = match code {
                    Some(code)
                        if !rows.records.iter().all(|r| r.get(code).and_then(Value::as_str) == Some(&c)) =>
                    {
                        Condition::All(AllOf {
                            all: vec![
                                filter.clone(),
                                Condition::compare(code.to_string(), Op::Eq, Value::String(c.clone())),
                            ],
                        })
                    }
                    _ => filter.clone(),
                };
                let value = (sum * 100.0).round() / 100.0;
                let what =
                    if label_of == "total" { "total".to_string() } else { format!("total {label_of}") };
                out.push(Ranked {
                    fact: Fact {
                        currency: Some(c.clone()),
                        ..fact(
                            format!("{slug}_{m}_{}", c.to_lowercase()),
                            m,
                            format!("{what} of {label} in {c}{more}"),
                            "sum",
                            json!(value),
                            crate::locale::Locale::default().money(value, &c),
                            set_filter,
                        )
                    },
                    rank: position.map_or(55, |p| 100u32.saturating_sub(TERM_STEP * p)),
                });
            }
        }
        // The earliest dates ("next close date" of the open opportunities, "oldest due date" of
        // the overdue invoices).
        for d in &dates {
            let earliest = rows.records.iter().filter_map(|r| r.get(*d).and_then(Value::as_str)).min();
            let Some(day) = earliest else { continue };
            let label_of =
                child.fields.iter().find(|f| f.key == *d).map(|f| f.label.to_lowercase()).unwrap_or_default();
            out.push(Ranked {
                fact: fact(
                    format!("{slug}_earliest_{d}"),
                    d,
                    format!("earliest {label_of} of {label}"),
                    "earliest",
                    json!(day),
                    day.to_string(),
                    filter.clone(),
                ),
                rank: 80,
            });
        }
    }

    /// For a child object kept in time order (it has a date-time field), its newest record's
    /// name and how many days ago it was (the latest note, "last activity").
    fn newest(&self, child: &ProjectedObject, base: &Condition, name: &str, id: &str, out: &mut Vec<Ranked>) {
        let Some(when) = child.fields.iter().find(|f| f.field_type == FieldType::Datetime) else { return };
        let spec = QuerySpec {
            search: None,
            object: child.key.clone(),
            fields: vec![child.name_field.clone(), when.key.clone()],
            filters: Some(base.clone()),
            sort: vec![SortKey { field: when.key.clone(), direction: Direction::Desc }],
            limit: Some(1),
            offset: None,
            after: None,
        };
        let Ok(rows) = self.query(&spec) else { return };
        let Some(row) = rows.records.first() else { return };
        let Some(title) = row.get(&child.name_field).and_then(Value::as_str) else { return };
        let label = child.label.to_lowercase();
        let set = |field: &str, operation: &str, label: String| SetCitation {
            object: child.key.clone(),
            filter: base.clone(),
            field: Some(field.to_string()),
            operation: operation.into(),
            label,
        };
        let record_id = row.get("id").and_then(Value::as_str).unwrap_or_default();
        out.push(Ranked {
            fact: Fact {
                reference: format!("newest_{}", child.key),
                object: child.key.clone(),
                id: record_id.to_string(),
                field: child.name_field.clone(),
                label: format!("newest {label}"),
                field_type: "text".into(),
                value: Value::String(title.to_string()),
                display: title.to_string(),
                record_name: title.to_string(),
                set: Some(set(&child.name_field, "newest", child.plural_label.to_lowercase())),
                currency: None,
            },
            rank: 98,
        });
        let at = row
            .get(&when.key)
            .and_then(Value::as_str)
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
        if let Some(at) = at {
            let day = crate::clock::local_day(at.with_timezone(&chrono::Utc), self.time_zone());
            let days = (self.today() - day).num_days().max(0);
            out.push(Ranked {
                fact: Fact {
                    reference: format!("days_since_newest_{}", child.key),
                    object: child.key.clone(),
                    id: id.to_string(),
                    field: when.key.clone(),
                    label: format!("days since the newest {label}"),
                    field_type: "number".into(),
                    value: json!(days),
                    display: days.to_string(),
                    record_name: name.to_string(),
                    set: Some(set(&when.key, "days_since", child.plural_label.to_lowercase())),
                    currency: None,
                },
                rank: 90,
            });
        }
    }
}

/// The picklist that says an object's rows' currency, as the projection shows it (the rule of
/// `ObjectMeta::currency_field`).
pub(super) fn currency_code(o: &ProjectedObject) -> Option<&str> {
    o.fields
        .iter()
        .find(|f| {
            f.field_type == FieldType::Picklist
                && !f.values.is_empty()
                && f.values.iter().all(|(v, _)| crate::metadata::catalog::is_currency_code(v))
        })
        .map(|f| f.key.as_str())
}

/// "Open opportunity" → "open opportunities" (the object's plural when the label ends with
/// the object's singular label).
fn plural_of_term(label: &str, o: &ProjectedObject) -> String {
    let l = label.to_lowercase();
    let singular = o.label.to_lowercase();
    match l.strip_suffix(&singular) {
        Some(head) => format!("{head}{}", o.plural_label.to_lowercase()),
        None => format!("{l} {}", o.plural_label.to_lowercase()),
    }
}

/// A label as a slot's name: "open opportunities" → `open_opportunities`.
fn slug(label: &str) -> String {
    label
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}
