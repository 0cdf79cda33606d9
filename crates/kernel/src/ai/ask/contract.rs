//! Ask's output contracts under prompt versions 1–3: the plan the model writes (`PlanOut`),
//! its per-request JSON Schema narrowed to the user's projection (`output_schema`), and what a
//! checked answer is (`Constrained`) or why it is not (`Violation`).

use super::*;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlanOut {
    // `sort` and `limit` are required by the contract (so the model decides them explicitly);
    // `limit` may be null.
    pub(super) object: String,
    /// Keys of terms (version 3's contract).
    #[serde(default)]
    pub(super) terms: Vec<String>,
    #[serde(default)]
    pub(super) filters: Vec<FilterOut>,
    #[serde(default)]
    pub(super) sort: Vec<SortOut>,
    #[serde(default)]
    pub(super) limit: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FilterOut {
    pub(super) field: String,
    pub(super) op: String,
    #[serde(default)]
    pub(super) value: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SortOut {
    pub(super) field: String,
    #[serde(default)]
    pub(super) direction: Option<Direction>,
}

pub(super) const OPS: &[&str] =
    &["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "contains", "is_set", "is_blank"];

pub(super) fn ops_for(t: FieldType) -> (&'static [&'static str], &'static [&'static str]) {
    // (scalar ops, list ops)
    match t {
        FieldType::Picklist | FieldType::Lookup => (&["eq", "ne"], &["in", "not_in"]),
        FieldType::Number | FieldType::Currency | FieldType::Date | FieldType::Datetime => {
            (&["eq", "ne", "lt", "lte", "gt", "gte"], &[])
        }
        FieldType::Boolean => (&["eq"], &[]),
        FieldType::LongText => (&["contains"], &[]),
        _ => (&["eq", "ne", "contains"], &["in", "not_in"]),
    }
}

pub(super) fn value_schema(f: &ProjectedField) -> Value {
    let values: Vec<String> = f.values.iter().map(|(v, _)| v.clone()).collect();
    crate::ai::contract::value_schema(f.field_type, &values, 200)
}

pub(super) fn item(path: &str, ops: &[&str], value: Value) -> Value {
    json!({
        "type": "object",
        "properties": {"field": {"const": path}, "op": {"enum": ops}, "value": value},
        "required": ["field", "op", "value"],
        "additionalProperties": false
    })
}

/// The output contract for one request: one alternative per object in scope, each with its
/// own field paths, ops by type and picklist enums — plus the refusal. With `dates` (prompt
/// version 2), a date field is filtered only with `during` one of those phrases, and not at all
/// when the question names no date.
pub fn output_schema(
    projection: &Projection,
    objects: &[String],
    refusal: bool,
    dates: Option<&[String]>,
    terms: Option<&[SaidTerm]>,
    unasked: &[String],
    values_said: &[(String, String)],
) -> Value {
    let mut alternatives = vec![];
    for key in objects {
        let paths = projection.paths(key);
        let mut items = vec![];
        let mut all_paths = vec![];
        let mut sortable = vec![];
        // A picklist a said term constrains ("still in play" sets the stage) takes no filter of
        // its own — a small model otherwise lists the term's values again, or wrong ones —
        // unless the question also says values of it outside the term's words ("unpaid (sent
        // or overdue)").
        let said: Vec<String> =
            terms.into_iter().flatten().filter(|t| &t.object == key).map(|t| t.key.clone()).collect();
        let covered: Vec<String> = projection
            .terms(key)
            .into_iter()
            .filter(|(k, _, _)| said.contains(k))
            .flat_map(|(_, _, c)| c.fields().into_iter().map(String::from).collect::<Vec<_>>())
            .filter(|path| !values_said.iter().any(|(o, f)| o == key && f == path))
            .collect();
        for (path, f) in &paths {
            let (scalar, list) = ops_for(f.field_type);
            if f.field_type == FieldType::Picklist && (f.values.is_empty() || covered.contains(path)) {
                continue;
            }
            if evidence::name_root(projection, key, path).is_some_and(|root| unasked.contains(&root))
                || unasked.contains(path)
            {
                if !matches!(f.field_type, FieldType::LongText | FieldType::Lookup) {
                    sortable.push(path.clone());
                }
                continue;
            }
            match (dates, matches!(f.field_type, FieldType::Date | FieldType::Datetime)) {
                (Some(phrases), true) => {
                    if !phrases.is_empty() {
                        items.push(item(path, &["during"], json!({ "enum": phrases })));
                    }
                }
                _ => items.push(item(path, scalar, value_schema(f))),
            }
            if !list.is_empty() {
                items.push(item(
                    path,
                    list,
                    json!({"type": "array", "items": value_schema(f), "minItems": 1, "maxItems": 20}),
                ));
            }
            all_paths.push(path.clone());
            if !matches!(f.field_type, FieldType::LongText | FieldType::Lookup) {
                sortable.push(path.clone());
            }
        }
        items.push(json!({
            "type": "object",
            "properties": {"field": {"enum": all_paths}, "op": {"enum": ["is_set", "is_blank"]}},
            "required": ["field", "op"],
            "additionalProperties": false
        }));
        let mut properties = Map::new();
        properties.insert("object".into(), json!({"const": key}));
        let mut required = vec!["object"];
        if let Some(terms) = terms {
            let keys: Vec<&str> = terms.iter().filter(|t| &t.object == key).map(|t| t.key.as_str()).collect();
            properties.insert(
                "terms".into(),
                if keys.is_empty() {
                    // (llama.cpp's grammar ignores `maxItems: 0` without `items`; a const holds.)
                    json!({"const": []})
                } else {
                    json!({"type": "array", "items": {"enum": keys}, "maxItems": 4, "uniqueItems": true})
                },
            );
            required.push("terms");
        }
        properties
            .insert("filters".into(), json!({"type": "array", "items": {"anyOf": items}, "maxItems": 8}));
        properties.insert(
            "sort".into(),
            json!({"type": "array", "maxItems": 3, "items": {
                "type": "object",
                "properties": {"field": {"enum": sortable}, "direction": {"enum": ["asc", "desc"]}},
                "required": ["field", "direction"],
                "additionalProperties": false
            }}),
        );
        properties.insert(
            "limit".into(),
            json!({"anyOf": [{"type": "integer", "minimum": 1, "maximum": 1000}, {"type": "null"}]}),
        );
        required.extend(["filters", "sort", "limit"]);
        alternatives.push(json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }));
    }
    if refusal {
        alternatives.push(refusal_alternative());
    }
    json!({"anyOf": alternatives})
}

/// The refusal a contract offers beside its answers: `{"refusal": {"reason": …}}`.
pub(super) fn refusal_alternative() -> Value {
    json!({
        "type": "object",
        "properties": {"refusal": {
            "type": "object",
            "properties": {"reason": {"type": "string", "minLength": 1, "maxLength": 200}},
            "required": ["reason"],
            "additionalProperties": false
        }},
        "required": ["refusal"],
        "additionalProperties": false
    })
}

/// Why an answer broke the contract: the exact message the repair carries, and whether the
/// repair may refuse (not when the question is known to be answerable from the schema).
pub(super) struct Violation {
    pub(super) message: String,
    pub(super) refusal_allowed: bool,
    /// A filter field the question does not ask for (left out of the repair's contract).
    pub(super) unasked: Option<String>,
}

impl Violation {
    pub(super) fn answerable(message: String) -> Violation {
        Violation { message, refusal_allowed: false, unasked: None }
    }
}

impl From<String> for Violation {
    fn from(message: String) -> Violation {
        Violation { message, refusal_allowed: true, unasked: None }
    }
}

pub(super) enum Constrained {
    Plan(Box<Planned>),
    Refusal(String),
}
