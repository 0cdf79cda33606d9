//! Searching a list by name without reading every row: each object's name field is indexed by
//! an FTS5 trigram index (`search_{object}`, external content: the record table itself, so the
//! text is stored once), kept by triggers on the record table. A `contains` of three or more
//! characters on the name field reads the rows the index finds and checks them as always
//! (`condition`); shorter ones read every row. Made on open or deploy for a table without it,
//! and made again when the object's name field changes.

use crate::error::Result;
use crate::metadata::catalog::{column, Catalog};
use crate::records::save::table_of;
use rusqlite::{Connection, OptionalExtension};

/// The index of one object's name field.
pub(crate) fn table(object: &str) -> String {
    format!("search_{object}")
}

/// Make sure every live object's name field has its index, built from the rows now when new
/// (or when the name field changed); indexes of objects no longer stored are dropped.
pub(crate) fn follow(conn: &Connection, catalog: &Catalog) -> Result<()> {
    let mut wanted = Vec::new();
    for o in &catalog.stored.objects {
        let name = table(&o.key);
        wanted.push(name.clone());
        let col = column(&o.name_field);
        if index_sql(conn, &o.key)?.is_some_and(|s| s.contains(&col)) {
            continue;
        }
        install(conn, &o.key, &col)?;
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

fn install(conn: &Connection, object: &str, col: &str) -> Result<()> {
    // Object keys are `[a-z][a-z0-9_]*` and columns are quoted (`column`): safe in SQL text.
    let (s, t) = (table(object), table_of(object));
    let content = t.trim_matches('"');
    conn.execute_batch(&format!(
        "{}
         CREATE VIRTUAL TABLE \"{s}\" USING fts5({col}, content='{content}', content_rowid='rowid', tokenize='trigram');
         {}
         CREATE TRIGGER \"ns_{object}_delete\" AFTER DELETE ON {t} BEGIN
             INSERT INTO \"{s}\" (\"{s}\", rowid, {col}) VALUES ('delete', OLD.rowid, OLD.{col});
         END;
         CREATE TRIGGER \"ns_{object}_update\" AFTER UPDATE OF {col} ON {t} BEGIN
             INSERT INTO \"{s}\" (\"{s}\", rowid, {col}) VALUES ('delete', OLD.rowid, OLD.{col});
             INSERT INTO \"{s}\" (rowid, {col}) VALUES (NEW.rowid, NEW.{col});
         END;
         INSERT INTO \"{s}\" (\"{s}\") VALUES ('rebuild');",
        drop_sql(object),
        insert_trigger_sql(object, col),
    ))?;
    Ok(())
}

fn insert_trigger_sql(object: &str, col: &str) -> String {
    let (s, t) = (table(object), table_of(object));
    format!(
        "CREATE TRIGGER \"ns_{object}_insert\" AFTER INSERT ON {t} BEGIN
             INSERT INTO \"{s}\" (rowid, {col}) VALUES (NEW.rowid, NEW.{col});
         END;"
    )
}

/// Rows a batch of saves creates reach the name index together, not one statement each (a
/// statement that writes to an FTS5 table flushes its pending terms, so one row per statement
/// makes one index segment per row). `pause` drops the insert trigger inside the batch's
/// transaction and says which column the index reads; `resume` indexes the rows after
/// `after_rowid` and puts the trigger back, in the same transaction.
pub(crate) fn pause(conn: &Connection, object: &str) -> Result<Option<String>> {
    let Some(sql) = index_sql(conn, object)? else { return Ok(None) };
    // `fts5("f_name", content=…)`: the indexed column is the first argument.
    let col =
        sql.split_once("fts5(").and_then(|(_, rest)| rest.split_once(',')).map(|(c, _)| c.trim().to_string());
    if col.is_some() {
        conn.execute_batch(&format!("DROP TRIGGER IF EXISTS \"ns_{object}_insert\""))?;
    }
    Ok(col)
}

/// See [`pause`].
pub(crate) fn resume(conn: &Connection, object: &str, col: &str, after_rowid: i64) -> Result<()> {
    let (s, t) = (table(object), table_of(object));
    conn.prepare(&format!(
        "INSERT INTO \"{s}\" (rowid, {col}) SELECT rowid, {col} FROM {t} WHERE rowid > ?1"
    ))?
    .execute([after_rowid])?;
    conn.execute_batch(&insert_trigger_sql(object, col))?;
    Ok(())
}

/// Before a deploy drops a column: if it is the one an object's index reads, the index and its
/// triggers go first (SQLite refuses to drop a column a trigger names); the deploy's `follow`
/// makes the index of the new name field.
pub(crate) fn forget_column(conn: &Connection, object: &str, field: &str) -> Result<()> {
    if index_sql(conn, object)?.is_some_and(|q| q.contains(&column(field))) {
        conn.execute_batch(&drop_sql(object))?;
    }
    Ok(())
}

/// How an object's name index was made (`CREATE VIRTUAL TABLE …`), if it exists.
fn index_sql(conn: &Connection, object: &str) -> Result<Option<String>> {
    let sql = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1";
    Ok(conn.query_row(sql, [table(object)], |r| r.get(0)).optional()?)
}

/// The SQL that drops an object's name index and its triggers.
fn drop_sql(object: &str) -> String {
    let s = table(object);
    format!(
        "DROP TRIGGER IF EXISTS \"ns_{object}_insert\"; DROP TRIGGER IF EXISTS \"ns_{object}_delete\";
         DROP TRIGGER IF EXISTS \"ns_{object}_update\"; DROP TABLE IF EXISTS \"{s}\";"
    )
}
