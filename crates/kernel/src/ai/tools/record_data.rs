//! Record data in a tool's output, as the asking user may see it. A tool from outside may
//! answer with this workspace's records (another app reading it with more rights, Countersign's
//! own MCP server run as an admin): before the output is stored or a model reads it, what the
//! asking user could not read through their own session is taken out, as a read would leave it
//! out — a record they cannot see is absent, a field they (or a model acting for them) may not
//! read is absent.
//!
//! Record data is recognised by its shape: a JSON object whose `object` names one of this
//! workspace's objects. Its `id` must be a record the user can read; its keys that are that
//! object's field keys, its `fields` (field keys, `{field|key: …}` entries, or a map by field
//! key) and its `records` (rows by field key, each with its `id`) keep only the fields the
//! user's level lets a model read. An object the user cannot read at all is absent.

use crate::metadata::catalog::ObjectMeta;
use crate::metadata::definition::FieldLevel;
use crate::records::access::Session;
use serde_json::{Map, Value};

/// `output` with what `session`'s user could not read taken out (`Null` if nothing is left).
pub fn as_user_sees(session: &Session<'_>, output: Value) -> Value {
    walk(session, output).unwrap_or(Value::Null)
}

fn walk(s: &Session<'_>, v: Value) -> Option<Value> {
    match v {
        Value::Object(map) => {
            let named = map.get("object").and_then(Value::as_str).map(String::from);
            match named {
                Some(o) if s.catalog.object_meta(&o).is_ok() => match s.readable_object(&o) {
                    Ok((meta, _)) => record_data(s, meta, map),
                    Err(_) => None,
                },
                _ => {
                    Some(Value::Object(map.into_iter().filter_map(|(k, x)| Some((k, walk(s, x)?))).collect()))
                }
            }
        }
        Value::Array(items) => Some(Value::Array(items.into_iter().filter_map(|x| walk(s, x)).collect())),
        other => Some(other),
    }
}

/// Whether `key` may be kept in `meta`'s record data: not a field, or a field a model acting
/// for the user may read.
fn readable(s: &Session<'_>, meta: &ObjectMeta, key: &str) -> bool {
    meta.field_index(key).is_none_or(|i| s.ai_field_level(meta, i) != FieldLevel::None)
}

fn visible_record(s: &Session<'_>, meta: &ObjectMeta, map: &Map<String, Value>) -> bool {
    match map.get("id").and_then(Value::as_str) {
        Some(id) => s.get(meta.key(), id).is_ok(),
        None => true,
    }
}

fn record_data(s: &Session<'_>, meta: &ObjectMeta, map: Map<String, Value>) -> Option<Value> {
    if !visible_record(s, meta, &map) {
        return None;
    }
    let mut out = Map::new();
    for (k, v) in map {
        let kept = match k.as_str() {
            "fields" => Some(fields(s, meta, v)),
            "records" => Some(records(s, meta, v)),
            "object" | "id" => Some(v),
            key if !readable(s, meta, key) => None,
            _ => walk(s, v),
        };
        if let Some(v) = kept {
            out.insert(k, v);
        }
    }
    Some(Value::Object(out))
}

/// A record's `fields`: field keys, entries naming their field, or values by field key.
fn fields(s: &Session<'_>, meta: &ObjectMeta, v: Value) -> Value {
    match v {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .filter(|x| {
                    let key = x
                        .as_str()
                        .or_else(|| x.get("field").or_else(|| x.get("key")).and_then(Value::as_str));
                    key.is_none_or(|k| readable(s, meta, k))
                })
                .collect(),
        ),
        Value::Object(map) => Value::Object(map.into_iter().filter(|(k, _)| readable(s, meta, k)).collect()),
        other => other,
    }
}

/// A list's rows of `meta`'s records: rows the user cannot see are absent, unreadable fields too.
fn records(s: &Session<'_>, meta: &ObjectMeta, v: Value) -> Value {
    let Value::Array(rows) = v else { return v };
    Value::Array(
        rows.into_iter()
            .filter_map(|row| match row {
                Value::Object(map) => record_data(s, meta, map),
                other => walk(s, other),
            })
            .collect(),
    )
}
