//! The corpus (the grounding from long texts): every long-text value (notes, descriptions) in an
//! SQLite FTS5 index in the workspace file, kept by the save path (each history row of a long
//! text field updates its entry) and rebuilt when the index is new. A search runs on a user's
//! session: the index is not access-aware, so every hit is re-checked against the user's row
//! access and field level after retrieval, and a hit the user may not read is dropped.

use crate::error::Result;
use crate::metadata::catalog::{Catalog, ObjectMeta};
use crate::metadata::definition::{FieldLevel, FieldType};
use crate::records::access::Session;
use rusqlite::{params, Connection};
use serde::Serialize;
use ts_rs::TS;

/// Put (or, with `None`, remove) one field's text in the index.
pub(crate) fn index_field(
    conn: &Connection,
    object: &str,
    id: &str,
    field: &str,
    text: Option<&str>,
) -> Result<()> {
    conn.prepare_cached("DELETE FROM corpus WHERE object = ?1 AND record_id = ?2 AND field = ?3")?
        .execute(params![object, id, field])?;
    add_field(conn, object, id, field, text)
}

/// Put one field's text of a new record in the index (there is no entry to replace).
pub(crate) fn add_field(
    conn: &Connection,
    object: &str,
    id: &str,
    field: &str,
    text: Option<&str>,
) -> Result<()> {
    if let Some(t) = text.filter(|t| !t.trim().is_empty()) {
        conn.prepare_cached("INSERT INTO corpus (object, record_id, field, body) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![object, id, field, t])?;
    }
    Ok(())
}

/// Fill the index from the record tables when it has not been built yet (a workspace from
/// before the index, or a new one). One transaction.
pub(crate) fn build_if_new(conn: &Connection, catalog: &Catalog) -> Result<()> {
    crate::store::once(conn, "corpus_built", |tx| {
        tx.execute("DELETE FROM corpus", [])?;
        for meta in catalog.objects() {
            add_rows(tx, meta, 0)?;
        }
        Ok(())
    })
}

/// Put the long texts of `meta`'s rows after `after_rowid` in the index (rows with no entry
/// yet: a new index, or the rows a batch of saves created).
pub(crate) fn add_rows(conn: &Connection, meta: &ObjectMeta, after_rowid: i64) -> Result<()> {
    for f in meta.fields().iter().filter(|f| f.field_type == FieldType::LongText) {
        conn.execute(
            &format!(
                "INSERT INTO corpus (object, record_id, field, body) SELECT ?1, id, ?2, {col} FROM {table} WHERE rowid > ?3 AND {col} IS NOT NULL AND {col} <> ''",
                col = crate::metadata::catalog::column(&f.key),
                table = meta.table
            ),
            params![meta.key(), f.key, after_rowid],
        )?;
    }
    Ok(())
}

/// One passage found in the corpus that the user may read.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct CorpusHit {
    pub object: String,
    pub id: String,
    pub field: String,
    /// The record's name (its object's name field), when readable.
    pub name: String,
    /// The matching passage, with the matched words in [brackets].
    pub snippet: String,
}

/// The words of a search as an FTS5 query: each word quoted (no operators from the input),
/// any of them may match; ranked by bm25.
fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .take(16)
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

impl Session<'_> {
    /// Search the corpus for `text`; at most `limit` hits, each one the user may read (row and
    /// field), from AI-visible fields only. Hits the user may not read are dropped after
    /// retrieval (the index knows nothing of access).
    pub fn search_corpus(&self, text: &str, limit: usize) -> Result<Vec<CorpusHit>> {
        let Some(q) = fts_query(text) else { return Ok(vec![]) };
        let mut stmt = self.ws.conn().prepare_cached(
            "SELECT object, record_id, field, snippet(corpus, 3, '[', ']', '…', 16) FROM corpus
             WHERE corpus MATCH ?1 ORDER BY bm25(corpus) LIMIT ?2",
        )?;
        // Over-fetch: some of the best hits may be dropped below.
        let rows: Vec<(String, String, String, String)> = stmt
            .query_map(params![q, (limit * 5 + 20) as i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = vec![];
        for (object, id, field, snippet) in rows {
            if out.len() >= limit {
                break;
            }
            let Ok((meta, _)) = self.readable_object(&object) else { continue };
            let Some(i) = meta.field_index(&field) else { continue };
            if self.ai_field_level(meta, i) < FieldLevel::Read {
                continue;
            }
            let Ok(record) = self.get(&object, &id) else { continue };
            let name =
                record.fields.get(&meta.def.name_field).and_then(|v| v.as_str()).unwrap_or(&id).to_string();
            out.push(CorpusHit { object, id, field, name, snippet });
        }
        Ok(out)
    }
}
