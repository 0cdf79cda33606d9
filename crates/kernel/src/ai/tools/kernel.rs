//! Kernel tools: reading a record, listing its related records and searching
//! the corpus, run on a user's session (so the one read-enforcement path applies). Inputs are
//! closed (`deny_unknown_fields`, the JSON Schemas of `specs()` have `additionalProperties:
//! false`); outputs are bounded; every value is labelled with its field key and type; a failure
//! is a typed `ToolFailure` (`invalid_input`, `configuration_error`, `execution_error`) that
//! goes back to the model while the run continues.

use crate::metadata::definition::FieldType;
use crate::records::access::Session;
use crate::records::query::QuerySpec;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The cap on one tool output (characters of its JSON).
pub const MAX_OUTPUT_CHARS: usize = 131_072;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "tool", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolCall {
    ReadRecord { object: String, id: String },
    ListRelated { object: String, id: String, limit: Option<u32> },
    SearchCorpus { text: String, limit: Option<u32> },
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolFailure {
    /// `invalid_input`, `configuration_error` or `execution_error`.
    pub kind: String,
    pub message: String,
}

/// What each tool is, for a model that calls tools: name, closed input schema, declared effect,
/// what it does.
pub fn specs() -> Value {
    json!([
        {"name": "read_record", "effect": "reads_workspace", "description": "Read one record's fields the user may read.",
         "input": {"type": "object", "properties": {"object": {"type": "string"}, "id": {"type": "string"}},
                   "required": ["object", "id"], "additionalProperties": false}},
        {"name": "list_related", "effect": "reads_workspace", "description": "List a record's related records the user may read.",
         "input": {"type": "object", "properties": {"object": {"type": "string"}, "id": {"type": "string"},
                   "limit": {"type": "integer", "minimum": 1, "maximum": 20}},
                   "required": ["object", "id"], "additionalProperties": false}},
        {"name": "search_corpus", "effect": "reads_workspace", "description": "Search notes and long texts the user may read.",
         "input": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 500},
                   "limit": {"type": "integer", "minimum": 1, "maximum": 20}},
                   "required": ["text"], "additionalProperties": false}}
    ])
}

/// Parse a tool call from a model (`{"tool": name, …input}`): unknown tools and inputs are
/// `invalid_input`.
pub fn parse_call(v: &Value) -> Result<ToolCall, ToolFailure> {
    serde_json::from_value(v.clone()).map_err(|e| failure("invalid_input", e.to_string()))
}

fn failure(kind: &str, message: impl Into<String>) -> ToolFailure {
    ToolFailure { kind: kind.into(), message: message.into() }
}

/// Run one tool on the session.
pub fn run_tool(session: &Session<'_>, call: &ToolCall) -> Result<Value, ToolFailure> {
    let out = match call {
        ToolCall::ReadRecord { object, id } => read_record(session, object, id),
        ToolCall::ListRelated { object, id, limit } => {
            list_related(session, object, id, limit.unwrap_or(5).clamp(1, 20) as usize)
        }
        ToolCall::SearchCorpus { text, limit } => {
            if text.chars().count() > 500 {
                return Err(failure("invalid_input", "the search text is longer than 500 characters"));
            }
            session
                .search_corpus(text, limit.unwrap_or(5).clamp(1, 20) as usize)
                .map(|hits| json!({"hits": hits}))
                .map_err(|e| failure("execution_error", e.message))
        }
    }?;
    Ok(bounded(out))
}

/// Keep an output under the cap by dropping list entries from the end (marked `truncated`).
fn bounded(mut out: Value) -> Value {
    for key in ["records", "hits", "fields"] {
        while out.to_string().chars().count() > MAX_OUTPUT_CHARS {
            let Some(list) = out.get_mut(key).and_then(Value::as_array_mut) else { break };
            if list.pop().is_none() {
                break;
            }
            out["truncated"] = json!(true);
        }
    }
    out
}

fn read_record(s: &Session<'_>, object: &str, id: &str) -> Result<Value, ToolFailure> {
    let (meta, _) = s.readable_object(object).map_err(|e| failure("invalid_input", e.message))?;
    let record = s.get(object, id).map_err(|e| failure("invalid_input", e.message))?;
    let mut fields = vec![];
    let language = s.locale().language();
    for (i, f) in meta.fields().iter().enumerate() {
        if s.ai_field_level(meta, i) == crate::metadata::definition::FieldLevel::None {
            continue;
        }
        let value = record.fields.get(&f.key).cloned().unwrap_or(Value::Null);
        let display = match (f.field_type, &value) {
            (FieldType::Picklist, Value::String(v)) => {
                f.values.iter().flatten().find(|p| &p.value == v).map(|p| p.label_in(language).to_string())
            }
            (FieldType::Lookup, Value::String(target_id)) => {
                f.target.as_deref().and_then(|t| name_of(s, t, target_id))
            }
            _ => None,
        };
        let mut entry = Map::new();
        entry.insert("field".into(), json!(f.key));
        entry.insert("label".into(), json!(f.label_in(language)));
        entry.insert("type".into(), Value::String(f.field_type.key()));
        entry.insert("value".into(), value);
        if let Some(d) = display {
            entry.insert("display".into(), json!(d));
        }
        fields.push(Value::Object(entry));
    }
    let name = record.fields.get(&meta.def.name_field).and_then(|v| v.as_str()).unwrap_or(id);
    Ok(json!({"object": object, "id": id, "name": name, "fields": fields}))
}

/// The name of a record the user can read (its object's name field), if any.
fn name_of(s: &Session<'_>, object: &str, id: &str) -> Option<String> {
    let (meta, _) = s.readable_object(object).ok()?;
    s.readable_field(meta, &meta.def.name_field).ok()?;
    s.get(object, id).ok()?.fields.get(&meta.def.name_field)?.as_str().map(String::from)
}

fn list_related(s: &Session<'_>, object: &str, id: &str, limit: usize) -> Result<Value, ToolFailure> {
    let (meta, _) = s.readable_object(object).map_err(|e| failure("invalid_input", e.message))?;
    let record = s.get(object, id).map_err(|e| failure("invalid_input", e.message))?;
    let mut records = vec![];
    // Parents: the records this one's lookups point at.
    for (i, f) in meta.fields().iter().enumerate() {
        if f.field_type != FieldType::Lookup
            || s.field_level(meta, i) == crate::metadata::definition::FieldLevel::None
        {
            continue;
        }
        if let (Some(target), Some(Value::String(parent))) = (&f.target, record.fields.get(&f.key)) {
            if let Ok(r) = read_record(s, target, parent) {
                records.push(r);
            }
        }
    }
    // Children: records of other objects whose lookups point at this one (one hop).
    for reference in &meta.referenced_by {
        let spec = QuerySpec {
            search: None,
            object: reference.object.clone(),
            fields: vec![],
            filters: Some(crate::metadata::condition::Condition::compare(
                reference.field.clone(),
                crate::metadata::condition::Op::Eq,
                json!(id),
            )),
            sort: vec![],
            limit: Some(limit as u32),
            offset: None,
            after: None,
        };
        match s.query(&spec) {
            Ok(result) => {
                for r in &result.records {
                    if let Some(child) = r.get("id").and_then(|v| v.as_str()) {
                        if let Ok(c) = read_record(s, &reference.object, child) {
                            records.push(c);
                        }
                    }
                }
            }
            // A child object or field the user cannot read is simply not listed.
            Err(_) => continue,
        }
    }
    Ok(json!({"object": object, "id": id, "records": records}))
}

/// Who proposes, for [`propose_values`].
pub struct Proposing<'a> {
    pub capability: &'a str,
    /// What wrote the values (a model's id, or another app).
    pub model_id: &'a str,
    /// For the reviewer only.
    pub rationale: &'a str,
}

/// A proposal of `values` for fields of one record of `object` (an update of `id`, or a new
/// record) from something other than the person — another app, the assistant: each field must
/// be in the user's projection with `edit` access, each value of its type (a picklist's active
/// value), or the whole proposal is refused naming the field. The record's rules and lookups are
/// checked when the reviewer accepts, as for any proposal. Joins the session's correlation.
pub fn propose_values(
    s: &Session<'_>,
    by: &Proposing<'_>,
    object: &str,
    id: Option<String>,
    values: &Map<String, Value>,
) -> crate::error::Result<crate::proposals::Proposal> {
    use crate::error::{Code, Error};
    use crate::metadata::definition::FieldLevel;
    let grounding = s.whole_grounding();
    let Some(projected) = grounding.projection.object(object) else {
        return Err(Error::new(Code::NotFound, format!("no object `{object}`")));
    };
    if values.is_empty() {
        return Err(Error::on_field(Code::InvalidValue, "values", "give at least one field's value"));
    }
    let (meta, _) = s.readable_object(object)?;
    let mut fields = vec![];
    for (key, value) in values {
        let editable =
            projected.fields.iter().find(|f| &f.key == key).filter(|f| f.access == FieldLevel::Edit);
        let Some(field) = editable else {
            return Err(Error::on_field(
                Code::InvalidValue,
                key,
                format!("{} has no field `{key}` this person may edit", projected.label),
            ));
        };
        let def = meta
            .fields()
            .iter()
            .find(|f| &f.key == key)
            .ok_or_else(|| Error::internal("a projected field"))?;
        crate::metadata::value::coerce(def, value)
            .map_err(|m| Error::on_field(Code::InvalidValue, key, m))?;
        if field.field_type == FieldType::Picklist {
            let v = value.as_str().unwrap_or_default();
            if !v.is_empty() && field.values.iter().all(|(active, _)| active != v) {
                let allowed: Vec<&str> = field.values.iter().map(|(v, _)| v.as_str()).collect();
                return Err(Error::on_field(
                    Code::InvalidValue,
                    key,
                    format!("`{v}` is not a value of {}; use one of: {}", field.label, allowed.join(", ")),
                ));
            }
        }
        fields.push(crate::proposals::ProposedField {
            field: key.clone(),
            value: value.clone(),
            before: Value::Null,
            confidence: None,
            source: None,
            problem: None,
            candidates: vec![],
        });
    }
    let binding = s.capability(by.capability)?;
    let prompt = s.active_prompt(&binding.prompt)?;
    s.propose(crate::proposals::ProposalDraft {
        capability: by.capability.into(),
        object: object.into(),
        record_id: id,
        fields,
        rationale: by.rationale.chars().take(2000).collect(),
        grounding_hash: grounding.hash.clone(),
        prompt: prompt.prompt,
        prompt_version: prompt.version,
        model_id: by.model_id.into(),
        ..Default::default()
    })
}
