//! Output contracts' building blocks: the JSON Schema of one field's value as a model must
//! write it, by the field's type. Capabilities build each request's contract from these (Ask:
//! one filter per field path; Extract: one property per editable field), so a value a model
//! writes has its field's shape at decode time and is checked against the projection after.

use crate::metadata::definition::FieldType;
use serde_json::{json, Value};

/// A real calendar date's shape (`YYYY-MM-DD`; no 0000-00-00 placeholders).
pub const DATE_PATTERN: &str = "^(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

/// The schema of a value of type `field_type`: a picklist's values are the active ones given;
/// text is at least one character and at most `max_text` (a cap keeps a model that starts
/// repeating itself from running to its output limit).
pub fn value_schema(field_type: FieldType, picklist: &[String], max_text: u32) -> Value {
    match field_type {
        FieldType::Picklist => json!({ "enum": picklist }),
        FieldType::Number | FieldType::Currency => json!({"type": "number"}),
        FieldType::Date => json!({"type": "string", "pattern": DATE_PATTERN}),
        FieldType::Boolean => json!({"type": "boolean"}),
        _ => json!({"type": "string", "minLength": 1, "maxLength": max_text}),
    }
}

/// A model's JSON answer. A small model sometimes writes a raw line break or tab inside a
/// string (JSON wants it escaped); such an answer is read with those characters as spaces,
/// since nothing is lost but layout. Anything else that does not parse is the caller's error.
pub fn parse_answer(content: &str) -> serde_json::Result<Value> {
    let content = content.trim();
    serde_json::from_str(content).or_else(|e| {
        if content.chars().any(|c| c.is_control()) {
            let spaced: String = content.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            serde_json::from_str(&spaced)
        } else {
            Err(e)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_their_field_type() {
        let open = ["open".to_string(), "won".to_string()];
        assert_eq!(value_schema(FieldType::Picklist, &open, 80), json!({"enum": ["open", "won"]}));
        assert_eq!(value_schema(FieldType::Currency, &[], 80), json!({"type": "number"}));
        assert_eq!(value_schema(FieldType::Text, &[], 80)["maxLength"], json!(80));
        let date = regex_lite_match(DATE_PATTERN);
        assert!(date("2026-06-30") && !date("0000-00-00") && !date("2026-13-01"));
    }

    /// The date pattern as a JSON Schema validator applies it.
    fn regex_lite_match(pattern: &str) -> impl Fn(&str) -> bool {
        let schema = json!({"type": "string", "pattern": pattern});
        let validator = jsonschema::validator_for(&schema).unwrap();
        move |s| validator.is_valid(&json!(s))
    }

    #[test]
    fn a_raw_line_break_in_a_string_is_read_as_a_space() {
        assert_eq!(parse_answer("{\"a\": \"one\ntwo\"}").unwrap(), json!({"a": "one two"}));
        assert!(parse_answer("{\"a\": ").is_err());
    }
}
