//! Record counts kept as rows come and go: how many records each owner holds in each object,
//! in `record_count`, moved by triggers on the record tables. Every write path (the save path,
//! imports, deletes, undo, a restore's copy) changes rows through SQL, so the triggers see all
//! of them and a count never drifts; an unfiltered list's count is then one small read instead
//! of a scan. A filtered count reads the matching rows, up to a cap unless asked for exactly.

use crate::error::Result;
use crate::metadata::catalog::Catalog;
use crate::records::access::{RowAccess, RowScope, Session};
use crate::records::query::QuerySpec;
use crate::records::save::table_of;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use ts_rs::TS;

/// Counts of filtered lists stop here ("10,000+") unless the exact number is asked for.
pub const COUNT_CAP: u64 = 10_000;

/// Make sure every record table has its counting triggers and its counts, after a deploy or
/// on open: a table made (or made again) since gets them now, counted once. Counts of
/// objects no longer stored are dropped.
pub(crate) fn follow(conn: &Connection, catalog: &Catalog) -> Result<()> {
    let mut keys = Vec::new();
    for o in &catalog.stored.objects {
        keys.push(o.key.clone());
        let trigger = format!("cnt_{}_insert", o.key);
        let present: Option<i64> = conn
            .query_row("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?1", [&trigger], |r| {
                r.get(0)
            })
            .optional()?;
        if present.is_some() {
            continue;
        }
        install(conn, &o.key)?;
    }
    let mut stmt = conn.prepare("SELECT DISTINCT object FROM record_count")?;
    let counted: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    for gone in counted.iter().filter(|k| !keys.contains(k)) {
        conn.execute("DELETE FROM record_count WHERE object = ?1", [gone])?;
    }
    Ok(())
}

/// The triggers of one object's table, and its counts as they are now.
fn install(conn: &Connection, key: &str) -> Result<()> {
    // Object keys are `[a-z][a-z0-9_]*` (the definition schema), safe inside SQL text.
    let t = table_of(key);
    let add = |who: &str| {
        format!(
            "INSERT INTO record_count (object, owner, n) VALUES ('{key}', {who}.owner, 1)
             ON CONFLICT (object, owner) DO UPDATE SET n = n + 1;"
        )
    };
    let take = |who: &str| {
        format!("UPDATE record_count SET n = n - 1 WHERE object = '{key}' AND owner = {who}.owner;")
    };
    conn.execute_batch(&format!(
        "DROP TRIGGER IF EXISTS \"cnt_{key}_insert\";
         DROP TRIGGER IF EXISTS \"cnt_{key}_delete\";
         DROP TRIGGER IF EXISTS \"cnt_{key}_owner\";
         CREATE TRIGGER \"cnt_{key}_insert\" AFTER INSERT ON {t} BEGIN {} END;
         CREATE TRIGGER \"cnt_{key}_delete\" AFTER DELETE ON {t} BEGIN {} END;
         CREATE TRIGGER \"cnt_{key}_owner\" AFTER UPDATE OF owner ON {t} WHEN OLD.owner IS NOT NEW.owner
             BEGIN {} {} END;
         DELETE FROM record_count WHERE object = '{key}';
         INSERT INTO record_count (object, owner, n) SELECT '{key}', owner, count(*) FROM {t} GROUP BY owner;",
        add("NEW"),
        take("OLD"),
        take("OLD"),
        add("NEW"),
    ))?;
    Ok(())
}

/// Records of `object` in all, or those one owner holds.
pub(crate) fn kept(conn: &Connection, object: &str, owner: Option<&str>) -> Result<u64> {
    let n: i64 = match owner {
        None => {
            conn.query_row("SELECT coalesce(sum(n), 0) FROM record_count WHERE object = ?1", [object], |r| {
                r.get(0)
            })?
        }
        Some(o) => conn
            .query_row(
                "SELECT n FROM record_count WHERE object = ?1 AND owner = ?2",
                params![object, o],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0),
    };
    Ok(n.max(0) as u64)
}

/// How many records a list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
pub struct RecordCount {
    #[ts(type = "number")]
    pub n: u64,
    /// False: at least `n` (the count stopped at `COUNT_CAP`).
    pub exact: bool,
}

impl Session<'_> {
    /// How many records of the spec's object this user reads that meet its filters and search
    /// (its fields, sort and page do not matter). Unfiltered, from the kept counts when the user
    /// reads all rows or their own; otherwise counted, stopping past `COUNT_CAP` unless
    /// `exact`.
    pub fn count_records(&self, spec: &QuerySpec, exact: bool) -> Result<RecordCount> {
        let (meta, _) = self.readable_object(&spec.object)?;
        if spec.filters.is_none() && spec.search_text().is_none() {
            let kept = match self.row_scope(meta, RowAccess::Read) {
                RowScope::All => Some(kept(self.ws.conn(), meta.key(), None)?),
                RowScope::Owned => Some(kept(self.ws.conn(), meta.key(), Some(&self.user.key))?),
                RowScope::Nothing => Some(0),
                RowScope::Master => None,
            };
            if let Some(n) = kept {
                return Ok(RecordCount { n, exact: true });
            }
        }
        let unpaged = QuerySpec {
            fields: vec!["id".into()],
            sort: vec![],
            limit: None,
            offset: None,
            after: None,
            ..spec.clone()
        };
        let q = self.compile_query(&unpaged, true)?;
        let mut params: Vec<&dyn rusqlite::ToSql> =
            q.selection.params.iter().map(|p| p as &dyn rusqlite::ToSql).collect();
        let cap = (COUNT_CAP + 1) as i64;
        let sql = if exact {
            format!("SELECT count(*){}", q.selection.sql(None))
        } else {
            params.push(&cap);
            format!("SELECT count(*) FROM (SELECT 1{} LIMIT ?)", q.selection.sql(None))
        };
        let n: i64 = self.ws.conn().prepare_cached(&sql)?.query_row(params.as_slice(), |r| r.get(0))?;
        let n = n.max(0) as u64;
        Ok(if !exact && n > COUNT_CAP {
            RecordCount { n: COUNT_CAP, exact: false }
        } else {
            RecordCount { n, exact: true }
        })
    }
}
