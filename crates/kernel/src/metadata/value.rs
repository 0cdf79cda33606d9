//! Typed field values: coercion from JSON or CSV text into the stored form, and back.
//!
//! Storage forms (columns have no declared type, so SQLite never converts behind our back):
//! text-like, picklist, lookup, date (`YYYY-MM-DD`) and datetime (`YYYY-MM-DDTHH:MM:SSZ`, UTC)
//! as TEXT; number and currency as REAL after an exact decimal check against precision and
//! scale (no rounding, ever); boolean as INTEGER 0/1; blank as NULL (an empty string is blank).

use crate::metadata::types::{FieldDef, FieldType};
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, SecondsFormat, Utc};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::ToSql;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Null,
    Text(String),
    Num(f64),
    Bool(bool),
}

impl Scalar {
    pub fn is_null(&self) -> bool {
        matches!(self, Scalar::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Text(s) => Some(s),
            _ => None,
        }
    }

    /// Read a stored column back. Unexpected storage classes become their closest form.
    pub fn from_sql(v: ValueRef<'_>) -> Scalar {
        match v {
            ValueRef::Null => Scalar::Null,
            ValueRef::Integer(i) => Scalar::Num(i as f64),
            ValueRef::Real(f) => Scalar::Num(f),
            ValueRef::Text(t) | ValueRef::Blob(t) => Scalar::Text(String::from_utf8_lossy(t).into_owned()),
        }
    }

    /// Read a stored column of a known field type.
    pub fn from_column(t: FieldType, v: ValueRef<'_>) -> Scalar {
        match (t, v) {
            (FieldType::Boolean, ValueRef::Integer(i)) => Scalar::Bool(i != 0),
            (_, v) => Scalar::from_sql(v),
        }
    }

    /// The JSON form shown to callers. Whole numbers of scale-0 fields are integers.
    pub fn to_json(&self, t: Option<&FieldDef>) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Text(s) => Value::String(s.clone()),
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Num(n) => {
                let whole = t.is_some_and(|f| f.scale == Some(0)) || n.fract() == 0.0;
                if whole && n.abs() < 9.0e15 {
                    Value::from(*n as i64)
                } else {
                    serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number)
                }
            }
        }
    }

    /// The text form used in CSV export: numbers with exactly the field's scale.
    pub fn to_text(&self, f: Option<&FieldDef>) -> String {
        match self {
            Scalar::Null => String::new(),
            Scalar::Text(s) => s.clone(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Num(n) => match f.and_then(|f| f.scale) {
                Some(scale) => format!("{:.*}", scale as usize, n),
                None => n.to_string(),
            },
        }
    }
}

impl ToSql for Scalar {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Scalar::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Scalar::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Scalar::Num(n) => ToSqlOutput::Owned(rusqlite::types::Value::Real(*n)),
            Scalar::Bool(b) => ToSqlOutput::Owned(rusqlite::types::Value::Integer(*b as i64)),
        })
    }
}

/// Coerce a caller's value for `field` into its stored form. The error is a sentence for the
/// user; the caller attaches the field. Picklist activity and lookup resolution are the save
/// path's business (they depend on the record and the user), not this function's.
pub fn coerce(field: &FieldDef, v: &Value) -> Result<Scalar, String> {
    let text: Option<String> = match v {
        Value::Null => return Ok(Scalar::Null),
        Value::String(s) if s.trim().is_empty() => return Ok(Scalar::Null),
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(_) | Value::Object(_) => {
            return Err(format!("{} expects a single value, not a list or object", field.label))
        }
    };
    let s = text.unwrap_or_default();
    let expect_string = |what: &str| -> Result<(), String> {
        if v.is_string() {
            Ok(())
        } else {
            Err(format!("{} expects {what}", field.label))
        }
    };
    match field.field_type {
        FieldType::Text | FieldType::LongText => {
            check_length(field, &s)?;
            check_chars(field, &s, field.field_type == FieldType::LongText)?;
            Ok(Scalar::Text(s))
        }
        FieldType::Email => {
            let s = s.trim().to_string();
            check_length(field, &s)?;
            check_chars(field, &s, false)?;
            if !is_email(&s) {
                return Err(format!("`{s}` is not an e-mail address"));
            }
            Ok(Scalar::Text(s))
        }
        FieldType::Phone => {
            let s = s.trim().to_string();
            check_length(field, &s)?;
            let digits = s.chars().filter(char::is_ascii_digit).count();
            let allowed = s.chars().all(|c| c.is_ascii_digit() || " +-().x/".contains(c));
            if !allowed || !(3..=20).contains(&digits) {
                return Err(format!("`{s}` is not a phone number"));
            }
            Ok(Scalar::Text(s))
        }
        FieldType::Url => {
            let s = s.trim().to_string();
            check_length(field, &s)?;
            check_chars(field, &s, false)?;
            let rest = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://"));
            match rest {
                Some(r) if !r.is_empty() && !r.starts_with('/') && !s.contains(char::is_whitespace) => {
                    Ok(Scalar::Text(s))
                }
                _ => Err(format!("`{s}` is not an http(s) URL")),
            }
        }
        FieldType::Number | FieldType::Currency => {
            let precision = field.precision.unwrap_or(18);
            let scale = field.scale.unwrap_or(0);
            let n = parse_decimal(s.trim(), precision, scale).map_err(|e| format!("{}: {e}", field.label))?;
            Ok(Scalar::Num(n))
        }
        FieldType::Boolean => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(Scalar::Bool(true)),
            "false" | "0" | "no" => Ok(Scalar::Bool(false)),
            _ => Err(format!("{} expects true or false, not `{s}`", field.label)),
        },
        FieldType::Date => {
            expect_string("a date (YYYY-MM-DD)")?;
            parse_date(s.trim())
                .map(Scalar::Text)
                .ok_or_else(|| format!("`{s}` is not a date (YYYY-MM-DD, years {MIN_YEAR:04}–{MAX_YEAR})"))
        }
        FieldType::Datetime => {
            expect_string("a date and time (RFC 3339)")?;
            match datetime_utc(s.trim()) {
                Some(utc) if (MIN_YEAR..=MAX_YEAR).contains(&utc.year()) => {
                    Ok(Scalar::Text(utc.to_rfc3339_opts(SecondsFormat::Secs, true)))
                }
                Some(utc) => Err(format!(
                    "`{s}` is {} in UTC, outside the years {MIN_YEAR:04}–{MAX_YEAR} a date and time may have",
                    utc.format("%Y-%m-%dT%H:%M:%SZ")
                )),
                None => Err(format!("`{s}` is not a date and time (e.g. 2026-01-31T09:30:00Z)")),
            }
        }
        FieldType::Picklist => {
            expect_string("one of its picklist values")?;
            let values = field.values.as_deref().unwrap_or_default();
            let t = s.trim();
            values
                .iter()
                .find(|pv| pv.value == t)
                .or_else(|| {
                    values
                        .iter()
                        .find(|pv| pv.value.eq_ignore_ascii_case(t) || pv.label.eq_ignore_ascii_case(t))
                })
                .map(|pv| Scalar::Text(pv.value.clone()))
                .ok_or_else(|| {
                    let active: Vec<&str> =
                        values.iter().filter(|v| v.active).map(|v| v.value.as_str()).collect();
                    format!("`{t}` is not a value of {}; use one of: {}", field.label, active.join(", "))
                })
        }
        FieldType::Lookup => {
            expect_string("a record id")?;
            Ok(Scalar::Text(s.trim().to_string()))
        }
    }
}

fn check_length(field: &FieldDef, s: &str) -> Result<(), String> {
    let max = field.max_length.unwrap_or(match field.field_type {
        FieldType::LongText => 131_072,
        _ => 255,
    }) as usize;
    let n = s.chars().count();
    if n > max {
        return Err(format!("{} is at most {max} characters (got {n})", field.label));
    }
    Ok(())
}

/// Whether `c` may not be stored in text: a control character (C0, DEL, C1 such as U+0085), a
/// line or paragraph separator (U+2028, U+2029), or a bidirectional embedding, override or
/// isolate (U+202A–U+202E, U+2066–U+2069), which can make text display as something else.
/// Multi-line text (`multiline`) may hold line feeds, tabs and a carriage return that starts a
/// CRLF line break. Returns the first such character.
pub fn unsafe_char(s: &str, multiline: bool) -> Option<char> {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let allowed = multiline && (c == '\n' || c == '\t' || (c == '\r' && chars.peek() == Some(&'\n')));
        if !allowed && is_unsafe_char(c) {
            return Some(c);
        }
    }
    None
}

fn is_unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Text a model wrote, made safe to show and to check: the characters [`unsafe_char`] refuses
/// are removed, and those that break a line or space words (tab, line feed, carriage return,
/// U+0085, U+2028, U+2029) become a space so words do not run together.
pub fn strip_unsafe_chars(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .filter_map(|c| match c {
                '\t' | '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' => Some(' '),
                c if is_unsafe_char(c) => None,
                c => Some(c),
            })
            .collect(),
    )
}

fn check_chars(field: &FieldDef, s: &str, multiline: bool) -> Result<(), String> {
    match unsafe_char(s, multiline) {
        None => Ok(()),
        Some(c) => Err(format!(
            "{} cannot hold the character U+{:04X} ({}){}",
            field.label,
            c as u32,
            char_kind(c),
            if multiline { "" } else { "; it is a single line of text" }
        )),
    }
}

fn char_kind(c: char) -> &'static str {
    match c {
        '\t' => "a tab",
        '\n' => "a line feed",
        '\r' => "a carriage return",
        '\u{2028}' | '\u{2029}' | '\u{85}' => "a line break",
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => "a bidirectional text control",
        _ => "a control character",
    }
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.contains(char::is_whitespace)
}

/// The years a stored date or date and time (in UTC) may have: the stored text forms sort and
/// compare as text only with four-digit years.
pub const MIN_YEAR: i32 = 1;
pub const MAX_YEAR: i32 = 9999;

pub fn parse_date(s: &str) -> Option<String> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|d| s.len() == 10 && (MIN_YEAR..=MAX_YEAR).contains(&d.year()))
        .map(|d| d.format("%Y-%m-%d").to_string())
}

/// Datetimes are stored in UTC with seconds. A time without a zone is read as UTC; a bare
/// date is midnight UTC. `None` also when the UTC form falls outside years 0001–9999 (an
/// extreme offset can move `9999-12-31T23:59:59-23:59` into year 10000).
pub fn parse_datetime(s: &str) -> Option<String> {
    datetime_utc(s)
        .filter(|utc| (MIN_YEAR..=MAX_YEAR).contains(&utc.year()))
        .map(|utc| utc.to_rfc3339_opts(SecondsFormat::Secs, true))
}

fn datetime_utc(s: &str) -> Option<DateTime<Utc>> {
    Some(if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        t.with_timezone(&Utc)
    } else if let Ok(t) = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S") {
        t.and_utc()
    } else if let Ok(t) = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S") {
        t.and_utc()
    } else if let Some(d) = parse_date(s) {
        NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok()?.and_hms_opt(0, 0, 0)?.and_utc()
    } else {
        return None;
    })
}

/// Parse a decimal exactly and check it fits `precision` digits with at most `scale` after
/// the point. Nothing is rounded: `12.345` does not fit scale 2.
pub fn parse_decimal(s: &str, precision: u8, scale: u8) -> Result<f64, String> {
    let bad = || format!("`{s}` is not a number");
    let (sign, body) = match s.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", s.strip_prefix('+').unwrap_or(s)),
    };
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().map_err(|_| bad())?),
        None => (body, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
        || exp.abs() > 400
    {
        return Err(bad());
    }
    // Shift the decimal point by the exponent, on the digit string.
    let digits: String = format!("{int_part}{frac_part}");
    let point = int_part.len() as i64 + exp as i64;
    let (int_digits, frac_digits): (String, String) = if point <= 0 {
        (String::new(), format!("{}{}", "0".repeat((-point) as usize), digits))
    } else if point as usize >= digits.len() {
        (format!("{digits}{}", "0".repeat(point as usize - digits.len())), String::new())
    } else {
        (digits[..point as usize].to_string(), digits[point as usize..].to_string())
    };
    let int_sig = int_digits.trim_start_matches('0');
    let frac_sig = frac_digits.trim_end_matches('0');
    if frac_sig.len() > scale as usize {
        return Err(format!("`{s}` has {} decimal places; at most {scale} allowed", frac_sig.len()));
    }
    let max_int = precision.saturating_sub(scale) as usize;
    if int_sig.len() > max_int {
        return Err(format!("`{s}` is too large: at most {max_int} digit(s) before the decimal point"));
    }
    let canonical = format!(
        "{sign}{}.{}",
        if int_sig.is_empty() { "0" } else { int_sig },
        if frac_sig.is_empty() { "0" } else { frac_sig }
    );
    let n: f64 = canonical.parse().map_err(|_| bad())?;
    Ok(if n == 0.0 { 0.0 } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_fit_precision_and_scale_exactly() {
        assert_eq!(parse_decimal("16800.00", 12, 2), Ok(16800.0));
        assert_eq!(parse_decimal("-0.5", 3, 1), Ok(-0.5));
        assert_eq!(parse_decimal("1e3", 4, 0), Ok(1000.0));
        assert_eq!(parse_decimal("1.50e1", 3, 0), Ok(15.0));
        assert!(parse_decimal("12.345", 12, 2).unwrap_err().contains("3 decimal places"));
        assert!(parse_decimal("1000", 5, 2).unwrap_err().contains("too large"));
        assert_eq!(parse_decimal("999.99", 5, 2), Ok(999.99));
        assert!(parse_decimal("12a", 5, 2).is_err());
        assert!(parse_decimal("", 5, 2).is_err());
        assert!(parse_decimal(".", 5, 2).is_err());
        assert!(parse_decimal("1.5e-400", 5, 2).is_err());
    }

    #[test]
    fn datetimes_normalise_to_utc() {
        assert_eq!(parse_datetime("2026-11-22T19:03:00+01:00").as_deref(), Some("2026-11-22T18:03:00Z"));
        assert_eq!(parse_datetime("2026-11-22").as_deref(), Some("2026-11-22T00:00:00Z"));
        assert_eq!(parse_datetime("22/11/2026"), None);
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("2026-2-3"), None);
    }

    #[test]
    fn dates_and_datetimes_stay_within_years_0001_to_9999_in_utc() {
        assert_eq!(parse_datetime("9999-12-31T23:59:59-23:59"), None);
        assert_eq!(parse_datetime("0001-01-01T00:00:00+23:59"), None);
        assert_eq!(parse_datetime("9999-12-31T23:59:59Z").as_deref(), Some("9999-12-31T23:59:59Z"));
        assert_eq!(parse_datetime("0001-01-01T23:59:00+23:59").as_deref(), Some("0001-01-01T00:00:00Z"));
        assert_eq!(parse_datetime("+10000-01-01T00:00:00"), None);
        assert_eq!(parse_date("0000-01-01"), None);
        assert_eq!(parse_date("-001-01-01"), None);
        assert_eq!(parse_date("0001-01-01").as_deref(), Some("0001-01-01"));
    }

    #[test]
    fn unsafe_characters_are_found_and_stripped() {
        for c in [
            '\u{1b}', '\u{1}', '\u{7f}', '\u{85}', '\u{2028}', '\u{2029}', '\u{202A}', '\u{202E}',
            '\u{2066}', '\u{2069}',
        ] {
            let s = format!("a{c}b");
            assert_eq!(unsafe_char(&s, false), Some(c), "{c:?}");
            assert_eq!(unsafe_char(&s, true), Some(c), "{c:?}");
            assert_eq!(strip_unsafe_chars(&s).chars().filter(|&x| x == c).count(), 0);
        }
        assert_eq!(unsafe_char("a\tb", false), Some('\t'));
        assert_eq!(unsafe_char("a\nb", false), Some('\n'));
        assert_eq!(unsafe_char("a\tb\nc\r\nd", true), None);
        assert_eq!(unsafe_char("a\rb", true), Some('\r'));
        // Marks that right-to-left text needs are not controls.
        assert_eq!(unsafe_char("\u{200F}שלום\u{200E}", false), None);
        assert!(matches!(strip_unsafe_chars("Acme owes 5 [F1]."), Cow::Borrowed(_)));
        assert_eq!(
            strip_unsafe_chars("Acme\u{202E}321\u{202C} owes\u{2028}5\u{1b}[31m"),
            "Acme321 owes 5[31m"
        );
    }
}
