//! Finding text in a list without reading every row: each object's short text fields (text,
//! e-mail, phone, URL) are indexed by one FTS5 trigram index (`search_{object}`, one column per
//! field, external content: the record table itself, so the text is stored once), kept by
//! triggers on the record table. A `contains` of three or more characters on one of them, and a
//! query's `search` over all of them, read the rows the index finds (`MATCH` alone, nothing else
//! in that subquery) and then check them as always (`condition`); shorter ones read every row.
//! Long texts are in the corpus (`corpus`). Made on open or deploy for an object whose index
//! does not index exactly its short text fields (a new object, a field added or retired), from
//! the rows then.

use crate::error::Result;
use crate::metadata::catalog::{column, Catalog};
use crate::metadata::definition::{FieldType, ObjectDef};
use crate::records::save::table_of;
use rusqlite::{Connection, OptionalExtension};

/// The index of one object's short text fields.
pub(crate) fn table(object: &str) -> String {
    format!("search_{object}")
}

/// Whether a field of this type is in its object's index.
pub(crate) fn indexes(t: FieldType) -> bool {
    matches!(t, FieldType::Text | FieldType::Email | FieldType::Phone | FieldType::Url)
}

/// The columns an object's index should hold: its live short text fields, the name field first.
fn wanted_columns(o: &ObjectDef) -> Vec<String> {
    let mut fields: Vec<&str> =
        o.fields.iter().filter(|f| !f.retired && indexes(f.field_type)).map(|f| f.key.as_str()).collect();
    fields.sort_by_key(|k| *k != o.name_field);
    fields.into_iter().map(column).collect()
}

/// Make sure every stored object's index holds its short text fields, built from the rows now
/// when new or changed; indexes of objects no longer stored are dropped.
pub(crate) fn follow(conn: &Connection, catalog: &Catalog) -> Result<()> {
    let mut wanted = Vec::new();
    for o in &catalog.stored.objects {
        wanted.push(table(&o.key));
        let cols = wanted_columns(o);
        if columns(conn, &o.key)? == cols {
            continue;
        }
        conn.execute_batch(&drop_sql(&o.key))?;
        if !cols.is_empty() {
            install(conn, &o.key, &cols)?;
        }
    }
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'search\\_%' ESCAPE '\\' AND sql LIKE '%fts5%'",
    )?;
    let present: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    for gone in present.iter().filter(|n| !wanted.contains(n)) {
        conn.execute_batch(&format!("DROP TABLE IF EXISTS \"{gone}\""))?;
    }
    Ok(())
}

fn install(conn: &Connection, object: &str, cols: &[String]) -> Result<()> {
    // Object keys are `[a-z][a-z0-9_]*` and columns are quoted (`column`): safe in SQL text.
    let (s, t) = (table(object), table_of(object));
    let content = t.trim_matches('"');
    let list = cols.join(", ");
    let old = prefixed("OLD.", cols);
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE \"{s}\" USING fts5({list}, content='{content}', content_rowid='rowid', tokenize='trigram');
         {}
         CREATE TRIGGER \"ns_{object}_delete\" AFTER DELETE ON {t} BEGIN
             INSERT INTO \"{s}\" (\"{s}\", rowid, {list}) VALUES ('delete', OLD.rowid, {old});
         END;
         CREATE TRIGGER \"ns_{object}_update\" AFTER UPDATE OF {list} ON {t} BEGIN
             INSERT INTO \"{s}\" (\"{s}\", rowid, {list}) VALUES ('delete', OLD.rowid, {old});
             INSERT INTO \"{s}\" (rowid, {list}) VALUES (NEW.rowid, {});
         END;
         INSERT INTO \"{s}\" (\"{s}\") VALUES ('rebuild');",
        insert_trigger_sql(object, cols),
        prefixed("NEW.", cols),
    ))?;
    Ok(())
}

fn prefixed(prefix: &str, cols: &[String]) -> String {
    cols.iter().map(|c| format!("{prefix}{c}")).collect::<Vec<_>>().join(", ")
}

fn insert_trigger_sql(object: &str, cols: &[String]) -> String {
    let (s, t) = (table(object), table_of(object));
    format!(
        "CREATE TRIGGER \"ns_{object}_insert\" AFTER INSERT ON {t} BEGIN
             INSERT INTO \"{s}\" (rowid, {}) VALUES (NEW.rowid, {});
         END;",
        cols.join(", "),
        prefixed("NEW.", cols)
    )
}

/// Rows a batch of saves creates reach the index together, not one statement each (a
/// statement that writes to an FTS5 table flushes its pending terms, so one row per statement
/// makes one index segment per row). `pause` drops the insert trigger inside the batch's
/// transaction and says which columns the index reads; `resume` indexes the rows after
/// `after_rowid` and puts the trigger back, in the same transaction.
pub(crate) fn pause(conn: &Connection, object: &str) -> Result<Vec<String>> {
    let cols = columns(conn, object)?;
    if !cols.is_empty() {
        conn.execute_batch(&format!("DROP TRIGGER IF EXISTS \"ns_{object}_insert\""))?;
    }
    Ok(cols)
}

/// See [`pause`].
pub(crate) fn resume(conn: &Connection, object: &str, cols: &[String], after_rowid: i64) -> Result<()> {
    let (s, t) = (table(object), table_of(object));
    let list = cols.join(", ");
    conn.prepare(&format!(
        "INSERT INTO \"{s}\" (rowid, {list}) SELECT rowid, {list} FROM {t} WHERE rowid > ?1"
    ))?
    .execute([after_rowid])?;
    conn.execute_batch(&insert_trigger_sql(object, cols))?;
    Ok(())
}

/// Before a deploy drops a column: if an object's index reads it, the index and its triggers
/// go first (SQLite refuses to drop a column a trigger names); the deploy's `follow` makes the
/// index again.
pub(crate) fn forget_column(conn: &Connection, object: &str, field: &str) -> Result<()> {
    if columns(conn, object)?.contains(&column(field)) {
        conn.execute_batch(&drop_sql(object))?;
    }
    Ok(())
}

/// The columns an object's index reads, in order (none when there is no index), from how it
/// was made: `fts5("f_a", "f_b", content=…)`.
fn columns(conn: &Connection, object: &str) -> Result<Vec<String>> {
    let sql = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1";
    let made: Option<String> = conn.query_row(sql, [table(object)], |r| r.get(0)).optional()?;
    let Some(args) = made.as_deref().and_then(|m| m.split_once("fts5(")).map(|(_, rest)| rest) else {
        return Ok(vec![]);
    };
    Ok(args.split(',').map(str::trim).take_while(|a| !a.contains('=')).map(String::from).collect())
}

/// The SQL that drops an object's index and its triggers.
fn drop_sql(object: &str) -> String {
    let s = table(object);
    format!(
        "DROP TRIGGER IF EXISTS \"ns_{object}_insert\"; DROP TRIGGER IF EXISTS \"ns_{object}_delete\";
         DROP TRIGGER IF EXISTS \"ns_{object}_update\"; DROP TABLE IF EXISTS \"{s}\";"
    )
}
