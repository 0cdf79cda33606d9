//! The value index: the distinct values of every short text field (a name, a city, a title, a
//! product code), each with how many records hold it and the **probes** it is found by — the
//! first four letters of each of its words, or the whole word when the word has a digit
//! ("po", "1234"). Ask's question reader looks a question's words up here instead of scanning
//! the record tables, so a word only the data knows reaches its field at any size.
//!
//! Kept by the save path (each history row of a short text field moves one use from the old
//! value to the new), rebuilt for a field a deploy adds or changes, and built once for a file
//! from before the index. Like the corpus, the index is not access-aware: a read runs on a
//! user's session, and a value comes back only with the ids of records the session can read
//! that hold it (each value checked by a query through the session), so a value only another
//! user can see is never returned.

use crate::error::Result;
use crate::metadata::catalog::{column, Catalog};
use crate::metadata::condition::{Condition, Op};
use crate::metadata::definition::FieldType;
use crate::records::access::Session;
use crate::records::query::QuerySpec;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;
use std::collections::BTreeSet;

/// A value of more words than this is not indexed: no question says it as a run of words.
pub const MAX_WORDS: usize = 16;

/// At most this many values are read per probe (the first in value order), so a probe that
/// many values share ("inc") cannot crowd out one that few share.
const VALUES_PER_PROBE: usize = 500;

/// At most this many values a caller keeps are checked against the session (one query each).
const VALUES_CHECKED: usize = 50;

/// The words of a text as the index and the question reader split it: letters and digits; a
/// `.` or `,` between digits stays in the number ("50,000", "2.5"), a `-` or `/` between
/// digits in the date; currency signs and `%` are words of their own.
pub fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = vec![];
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let digit_around = |i: usize| {
            i > 0 && chars[i - 1].is_ascii_digit() && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit())
        };
        if c.is_alphanumeric() || (matches!(c, '.' | ',' | '-' | '/') && digit_around(i)) {
            word.push(c);
        } else {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if matches!(c, '$' | '€' | '£' | '¥' | '%') {
                out.push(c.to_string());
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The probe a word is found by: the whole word (lower-cased) when it has a digit, else its
/// first four letters; none for a word without a letter or digit.
pub fn probe(word: &str) -> Option<String> {
    let lower = word.to_lowercase();
    if lower.chars().any(|c| c.is_ascii_digit()) {
        Some(lower)
    } else if lower.chars().any(char::is_alphabetic) {
        Some(lower.chars().take(4).collect())
    } else {
        None
    }
}

fn probes_of(value: &str) -> Option<BTreeSet<String>> {
    let words = words(value);
    (!words.is_empty() && words.len() <= MAX_WORDS).then(|| words.iter().filter_map(|w| probe(w)).collect())
}

/// Move one use of `object.field` from `old` to `new` (either may be none).
pub(crate) fn put(
    conn: &Connection,
    object: &str,
    field: &str,
    old: Option<&str>,
    new: Option<&str>,
) -> Result<()> {
    if old == new {
        return Ok(());
    }
    if let Some(old) = indexable(old) {
        remove(conn, object, field, old, 1)?;
    }
    if let Some(new) = indexable(new) {
        add(conn, object, field, new, 1)?;
    }
    Ok(())
}

fn indexable(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.trim().is_empty())
}

/// Uses summed in memory before they are written (a batch of saves): per value, the uses
/// gained less the uses lost.
#[derive(Debug, Default)]
pub(crate) struct Uses(std::collections::HashMap<(String, String, String), i64>);

impl Uses {
    /// [`put`], summed.
    pub fn put(&mut self, object: &str, field: &str, old: Option<&str>, new: Option<&str>) {
        if old == new {
            return;
        }
        for (value, n) in [(indexable(old), -1), (indexable(new), 1)] {
            if let Some(v) = value {
                *self.0.entry((object.to_string(), field.to_string(), v.to_string())).or_default() += n;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Write the sums, in key order (the index's own order), and forget them.
    pub fn write(&mut self, conn: &Connection) -> Result<()> {
        let mut sums: Vec<_> = std::mem::take(&mut self.0).into_iter().filter(|(_, n)| *n != 0).collect();
        sums.sort_unstable();
        for ((object, field, value), n) in sums {
            if n > 0 {
                add(conn, &object, &field, &value, n)?;
            } else {
                remove(conn, &object, &field, &value, -n)?;
            }
        }
        Ok(())
    }
}

/// Take `uses` uses from a value; a value left with none goes, with its probes.
fn remove(conn: &Connection, object: &str, field: &str, value: &str, uses: i64) -> Result<()> {
    let left: Option<i64> = conn
        .prepare_cached(
            "UPDATE value_index SET uses = uses - ?4 WHERE object = ?1 AND field = ?2 AND value = ?3 RETURNING uses",
        )?
        .query_row(params![object, field, value, uses], |r| r.get(0))
        .optional()?;
    if left.is_some_and(|n| n <= 0) {
        conn.prepare_cached("DELETE FROM value_index WHERE object = ?1 AND field = ?2 AND value = ?3")?
            .execute(params![object, field, value])?;
        // A value's probes follow from the value: each is deleted by its primary key.
        let mut delete = conn.prepare_cached(
            "DELETE FROM value_probe WHERE probe = ?1 AND object = ?2 AND field = ?3 AND value = ?4",
        )?;
        for p in probes_of(value).unwrap_or_default() {
            delete.execute(params![p, object, field, value])?;
        }
    }
    Ok(())
}

fn add(conn: &Connection, object: &str, field: &str, value: &str, uses: i64) -> Result<()> {
    let Some(probes) = probes_of(value) else { return Ok(()) };
    let total: i64 = conn
        .prepare_cached(
            "INSERT INTO value_index (object, field, value, uses) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (object, field, value) DO UPDATE SET uses = uses + excluded.uses RETURNING uses",
        )?
        .query_row(params![object, field, value, uses], |r| r.get(0))?;
    if total == uses {
        let mut insert = conn.prepare_cached(
            "INSERT OR IGNORE INTO value_probe (probe, object, field, value) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for p in probes {
            insert.execute(params![p, object, field, value])?;
        }
    }
    Ok(())
}

/// Refill one field's entries from its record table.
pub(crate) fn rebuild_field(conn: &Connection, table: &str, object: &str, field: &str) -> Result<()> {
    forget_field(conn, object, field)?;
    let col = column(field);
    let mut stmt = conn.prepare(&format!(
        "SELECT {col}, count(*) FROM {table} WHERE {col} IS NOT NULL AND typeof({col}) = 'text' GROUP BY {col}"
    ))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let value: String = row.get(0)?;
        if !value.trim().is_empty() {
            add(conn, object, field, &value, row.get(1)?)?;
        }
    }
    Ok(())
}

fn forget_field(conn: &Connection, object: &str, field: &str) -> Result<()> {
    conn.execute("DELETE FROM value_index WHERE object = ?1 AND field = ?2", params![object, field])?;
    conn.execute("DELETE FROM value_probe WHERE object = ?1 AND field = ?2", params![object, field])?;
    Ok(())
}

/// The short text fields of a catalog, as (object, table, field).
pub(crate) fn indexed_fields(catalog: &Catalog) -> Vec<(String, String, String)> {
    catalog
        .objects()
        .iter()
        .flat_map(|meta| {
            meta.fields()
                .iter()
                .filter(|f| f.field_type == FieldType::Text)
                .map(|f| (meta.key().to_string(), meta.table.clone(), f.key.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// After a deploy, inside its transaction: a field that is new, changed, or no longer short
/// text is rebuilt or forgotten; an unchanged field keeps its entries.
pub(crate) fn follow_deploy(conn: &Connection, old: Option<&Catalog>, new: &Catalog) -> Result<()> {
    let kept: Vec<(String, String)> = conn
        .prepare("SELECT DISTINCT object, field FROM value_index")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let now = indexed_fields(new);
    for (object, field) in &kept {
        if !now.iter().any(|(o, _, f)| o == object && f == field) {
            forget_field(conn, object, field)?;
        }
    }
    let same = |object: &str, field: &str| {
        let def = |c: &Catalog| {
            c.definition.object(object).and_then(|o| o.fields.iter().find(|f| f.key == field)).cloned()
        };
        old.is_some_and(|old| def(old).is_some() && def(old) == def(new))
    };
    for (object, table, field) in &now {
        if !same(object, field) {
            rebuild_field(conn, table, object, field)?;
        }
    }
    Ok(())
}

/// Fill the index from the record tables when it has not been built yet (a file from before
/// the index). One transaction.
pub(crate) fn build_if_new(conn: &Connection, catalog: &Catalog) -> Result<()> {
    crate::store::once(conn, "value_index_built", |tx| rebuild(tx, catalog))
}

/// Refill every field's entries from the record tables (rows written around the save path,
/// as the benchmark's generator writes them).
pub(crate) fn rebuild(conn: &Connection, catalog: &Catalog) -> Result<()> {
    for (object, table, field) in indexed_fields(catalog) {
        rebuild_field(conn, &table, &object, &field)?;
    }
    Ok(())
}

/// A stored value and the records holding it that the session can read (at most the number
/// asked for).
#[derive(Debug, Clone, PartialEq)]
pub struct HeldValue {
    pub value: String,
    pub ids: Vec<String>,
}

impl Session<'_> {
    /// The values of `object.field` found by any of `probes` that `keep` accepts, each with
    /// up to `ids_per_value` ids of readable records that hold it; a value no readable record
    /// holds is left out. The field must be readable by the session.
    pub fn values_by_probe(
        &self,
        object: &str,
        field: &str,
        probes: &BTreeSet<String>,
        keep: &mut dyn FnMut(&str) -> bool,
        ids_per_value: usize,
    ) -> Result<Vec<HeldValue>> {
        let (meta, _) = self.readable_object(object)?;
        self.readable_field(meta, field)?;
        let conn = self.workspace().conn();
        let mut stmt = conn.prepare_cached(
            "SELECT value FROM value_probe WHERE probe = ?1 AND object = ?2 AND field = ?3 ORDER BY value LIMIT ?4",
        )?;
        let mut values = BTreeSet::new();
        for p in probes {
            let found = stmt
                .query_map(params![p, object, field, VALUES_PER_PROBE as i64], |r| r.get::<_, String>(0))?;
            for v in found {
                values.insert(v?);
            }
        }
        let mut out = vec![];
        for value in values.into_iter().filter(|v| keep(v)).take(VALUES_CHECKED) {
            let held = self.query(&QuerySpec {
                search: None,
                object: object.to_string(),
                fields: vec![field.to_string()],
                filters: Some(Condition::compare(field.to_string(), Op::Eq, Value::String(value.clone()))),
                sort: vec![],
                limit: Some(ids_per_value.max(1) as u32),
                offset: None,
                after: None,
            })?;
            let ids: Vec<String> = held
                .records
                .iter()
                .filter_map(|r| r.get("id").and_then(Value::as_str).map(String::from))
                .collect();
            if !ids.is_empty() {
                out.push(HeldValue { value, ids });
            }
        }
        Ok(out)
    }
}
