//! Records and the one save path.
//!
//! Every record write — a UI edit, an import row, demo loading, and later a proposal accept,
//! an undo or an auto-apply — goes through [`Session::save`] (or, inside an import's
//! transaction, [`Session::save_within`]), which runs in this order:
//!
//! 1. object and field access for the acting user;
//! 2. type coercion (precision/scale, length, formats, active picklist values for new values,
//!    lookups that resolve to a record the user can read, `unique`, `required`);
//! 3. validation rules on the record as it would be after the save;
//! 4. the write, guarded by the record version;
//! 5. one data-history entry per changed field (old, new, actor, proposedBy, correlation id,
//!    time) — a create or a delete writes one entry that holds every value;
//! 6. the version bump.
//!
//! Each save is one IMMEDIATE transaction: it is written whole or not at all.

use crate::clock::timestamp;
use crate::error::{Code, Detail, Error, Result};
use crate::metadata::catalog::{column, table, ObjectMeta};
use crate::metadata::definition::{FieldDef, FieldLevel, FieldType, SYSTEM_USER};
use crate::metadata::value::{coerce, Scalar};
use crate::records::access::{RowAccess, Session};
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

mod checks;
mod history;

use checks::*;
pub use history::HistoryEntry;

/// A record as a user sees it: only the fields they can read.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct Record {
    pub object: String,
    pub id: String,
    pub owner: String,
    #[ts(type = "number")]
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
    pub fields: Map<String, Value>,
}

/// A write. Serialized with an `op` tag: `{"op": "update", "object", "id", "changes", …}`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(tag = "op", rename_all = "snake_case", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum SaveRequest {
    Create {
        object: String,
        values: Map<String, Value>,
        /// Keep a given id (imports); a new one is made otherwise.
        #[serde(default)]
        #[ts(optional)]
        id: Option<String>,
        /// Owner other than the acting user (needs `viewAll` on the object).
        #[serde(default)]
        #[ts(optional)]
        owner: Option<String>,
    },
    Update {
        object: String,
        id: String,
        /// Field key → new value; the key `owner` transfers the record.
        changes: Map<String, Value>,
        /// Refuse with `conflict` unless the record is still at this version.
        #[serde(default)]
        #[ts(optional, type = "number")]
        expected_version: Option<i64>,
    },
    Delete {
        object: String,
        id: String,
        #[serde(default)]
        #[ts(optional, type = "number")]
        expected_version: Option<i64>,
    },
}

/// Who else is behind a save (a proposal, a capability) and how it is grouped.
#[derive(Debug, Clone, Default)]
pub struct SaveContext {
    pub proposed_by: Option<String>,
    pub correlation_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct SaveOutcome {
    pub object: String,
    pub id: String,
    /// The record's version after the save (for a delete, the version it had).
    #[ts(type = "number")]
    pub version: i64,
    pub operation: &'static str,
    /// Field keys whose values changed.
    pub changed: Vec<String>,
    pub correlation_id: String,
}

/// A stored row: system columns and every field's value by field index.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub id: String,
    pub owner: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
    pub values: Vec<Scalar>,
}

fn select_row_sql(o: &ObjectMeta) -> String {
    let mut sql = String::from("SELECT t.id, t.owner, t.version, t.created_at, t.updated_at");
    for f in o.fields() {
        sql.push_str(", t.");
        sql.push_str(&column(&f.key));
    }
    sql.push_str(&format!(" FROM {} t WHERE t.id = ?", o.table));
    sql
}

impl Session<'_> {
    /// Read one record. Absent if it does not exist or the user cannot read it.
    pub fn get(&self, object: &str, id: &str) -> Result<Record> {
        let (meta, _) = self.readable_object(object)?;
        let row =
            self.load_row(self.ws.conn(), meta, id, RowAccess::Read)?.ok_or_else(|| not_found(meta, id))?;
        Ok(self.to_record(meta, &row))
    }

    pub(crate) fn to_record(&self, meta: &ObjectMeta, row: &Row) -> Record {
        let mut fields = Map::new();
        for (i, f) in meta.fields().iter().enumerate() {
            if self.field_level(meta, i) >= FieldLevel::Read {
                fields.insert(f.key.clone(), row.values[i].to_json(Some(f)));
            }
        }
        Record {
            object: meta.key().to_string(),
            id: row.id.clone(),
            owner: row.owner.clone(),
            version: row.version,
            created_at: row.created_at.clone(),
            updated_at: row.updated_at.clone(),
            fields,
        }
    }

    pub(crate) fn load_row(
        &self,
        conn: &Connection,
        meta: &ObjectMeta,
        id: &str,
        mode: RowAccess,
    ) -> Result<Option<Row>> {
        let mut sql = select_row_sql(meta);
        let mut params = vec![Scalar::Text(id.to_string())];
        if let Some(filter) = self.row_filter(meta, "t", mode, &mut params) {
            sql.push_str(" AND ");
            sql.push_str(&filter);
        }
        let mut stmt = conn.prepare_cached(&sql)?;
        let n = meta.fields().len();
        Ok(stmt
            .query_row(params_from_iter(params.iter()), |r| {
                let mut values = Vec::with_capacity(n);
                for (i, f) in meta.fields().iter().enumerate() {
                    values.push(Scalar::from_column(f.field_type, r.get_ref(5 + i)?));
                }
                Ok(Row {
                    id: r.get(0)?,
                    owner: r.get(1)?,
                    version: r.get(2)?,
                    created_at: r.get(3)?,
                    updated_at: r.get(4)?,
                    values,
                })
            })
            .optional()?)
    }

    /// The one save path, as its own transaction.
    pub fn save(&self, req: SaveRequest, ctx: &SaveContext) -> Result<SaveOutcome> {
        let started = std::time::Instant::now();
        let out = self.begin_write().and_then(|tx| {
            let out = self.save_within(&tx, req, ctx)?;
            tx.commit()?;
            Ok(out)
        });
        match &out {
            Ok(o) => tracing::info!(
                object = %o.object,
                id = %o.id,
                operation = o.operation,
                fields = ?o.changed,
                version = o.version,
                user = %self.user.key,
                ms = crate::logging::ms_since(started),
                "record saved"
            ),
            Err(e) => tracing::info!(
                user = %self.user.key,
                code = e.code.as_str(),
                field = e.field.as_deref().unwrap_or(""),
                ms = crate::logging::ms_since(started),
                "save refused"
            ),
        }
        out
    }

    pub fn create(&self, object: &str, values: Map<String, Value>) -> Result<SaveOutcome> {
        self.save(
            SaveRequest::Create { object: object.into(), values, id: None, owner: None },
            &SaveContext::default(),
        )
    }

    pub fn update(
        &self,
        object: &str,
        id: &str,
        changes: Map<String, Value>,
        expected_version: Option<i64>,
    ) -> Result<SaveOutcome> {
        self.save(
            SaveRequest::Update { object: object.into(), id: id.into(), changes, expected_version },
            &SaveContext::default(),
        )
    }

    pub fn delete(&self, object: &str, id: &str, expected_version: Option<i64>) -> Result<SaveOutcome> {
        self.save(
            SaveRequest::Delete { object: object.into(), id: id.into(), expected_version },
            &SaveContext::default(),
        )
    }

    /// The one save path inside a caller's transaction (imports group many saves in one).
    /// A create refused with any code but `storage` has written nothing (its checks run
    /// before its first write, which is one statement); other refusals may leave part of the
    /// save in the transaction, so the caller rolls back, as [`Session::save`] does.
    pub fn save_within(&self, conn: &Connection, req: SaveRequest, ctx: &SaveContext) -> Result<SaveOutcome> {
        self.save_in(conn, req, ctx, None)
    }

    /// [`Session::save_within`] as part of `batch`, whose [`Batch::finish`] the caller runs
    /// before the commit.
    pub fn save_batched(
        &self,
        batch: &Batch,
        conn: &Connection,
        req: SaveRequest,
        ctx: &SaveContext,
    ) -> Result<SaveOutcome> {
        let out = self.save_in(conn, req, ctx, Some(batch))?;
        batch.written_if_full(conn)?;
        Ok(out)
    }

    fn save_in(
        &self,
        conn: &Connection,
        req: SaveRequest,
        ctx: &SaveContext,
        batch: Option<&Batch>,
    ) -> Result<SaveOutcome> {
        let correlation_id = ctx.correlation_id.clone().unwrap_or_else(|| self.correlation_id());
        let w = Write { conn, ctx, correlation_id, at: timestamp(self.ws.clock.now()), batch };
        let out = match req {
            SaveRequest::Create { object, values, id, owner } => {
                self.create_within(&w, &object, values, id, owner)
            }
            SaveRequest::Update { object, id, changes, expected_version } => {
                self.update_within(&w, &object, &id, changes, expected_version)
            }
            SaveRequest::Delete { object, id, expected_version } => {
                self.delete_within(&w, &object, &id, expected_version)
            }
        };
        if let Ok(o) = &out {
            tracing::debug!(
                object = %o.object,
                id = %o.id,
                operation = o.operation,
                fields = ?o.changed,
                version = o.version,
                proposed_by = ctx.proposed_by.as_deref().unwrap_or(""),
                correlation = %o.correlation_id,
                "record written"
            );
        }
        out
    }

    fn create_within(
        &self,
        w: &Write<'_>,
        object: &str,
        values: Map<String, Value>,
        id: Option<String>,
        owner: Option<String>,
    ) -> Result<SaveOutcome> {
        let (meta, acc) = self.readable_object(object)?;
        if !acc.create {
            return Err(Error::new(Code::Permission, format!("you cannot create {}", meta.def.plural_label)));
        }
        let owner = match owner {
            None => self.user.key.clone(),
            Some(o) => self.check_new_owner(meta, &o, None)?,
        };
        let mut slots = vec![Scalar::Null; meta.fields().len()];
        let mut given = vec![false; slots.len()];
        for (key, v) in &values {
            let i = self.editable_field(meta, key)?;
            slots[i] = self.coerce_new(w.conn, meta, i, v, None)?;
            given[i] = true;
        }
        for (i, f) in meta.fields().iter().enumerate() {
            if !given[i] {
                if let Some(d) = &f.default {
                    slots[i] =
                        coerce(f, d).map_err(|m| Error::internal(format!("default of {}: {m}", f.key)))?;
                }
            }
            if f.required && slots[i].is_null() {
                return Err(required(f));
            }
        }
        if let Some((md, _)) = &meta.master {
            if let Scalar::Text(parent) = &slots[*md] {
                self.check_master_writable(w.conn, meta, *md, parent)?;
            }
        }
        let id = match id {
            Some(id) => {
                check_id(&id)?;
                self.check_chosen_id(meta, &id)?;
                id
            }
            None => self.ws.ids.record_id(object),
        };
        self.check_unique(w.conn, meta, &slots, &id, None)?;
        check_rules(meta, &slots)?;

        let mut sql = format!("INSERT INTO {} (id, owner, version, created_at, updated_at", meta.table);
        for f in meta.fields() {
            sql.push_str(", ");
            sql.push_str(&column(&f.key));
        }
        sql.push_str(") VALUES (?, ?, 1, ?, ?");
        sql.push_str(&", ?".repeat(slots.len()));
        sql.push(')');
        if let Some(b) = w.batch {
            b.creating(w.conn, meta)?;
        }
        let mut p: Vec<Scalar> = vec![
            Scalar::Text(id.clone()),
            Scalar::Text(owner.clone()),
            Scalar::Text(w.at.clone()),
            Scalar::Text(w.at.clone()),
        ];
        p.extend(slots.iter().cloned());
        w.conn.prepare_cached(&sql)?.execute(params_from_iter(p.iter())).map_err(|e| {
            if matches!(&e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation) {
                Error::new(Code::Duplicate, format!("a {} with id `{id}` already exists", meta.def.label))
            } else {
                e.into()
            }
        })?;
        self.history_whole(w, meta, &id, true, &owner, &slots, 1)?;
        let changed = meta
            .fields()
            .iter()
            .zip(&slots)
            .filter(|(_, v)| !v.is_null())
            .map(|(f, _)| f.key.clone())
            .collect();
        Ok(SaveOutcome {
            object: object.into(),
            id,
            version: 1,
            operation: "create",
            changed,
            correlation_id: w.correlation_id.clone(),
        })
    }

    fn update_within(
        &self,
        w: &Write<'_>,
        object: &str,
        id: &str,
        changes: Map<String, Value>,
        expected_version: Option<i64>,
    ) -> Result<SaveOutcome> {
        let (meta, acc) = self.readable_object(object)?;
        let row = self.load_row(w.conn, meta, id, RowAccess::Read)?.ok_or_else(|| not_found(meta, id))?;
        if !acc.edit {
            return Err(Error::new(Code::Permission, format!("you cannot edit {}", meta.def.plural_label)));
        }
        self.check_row_writable(w.conn, meta, id)?;
        if let Some(v) = expected_version {
            if v != row.version {
                return Err(conflict(meta, id, v, row.version));
            }
        }
        let mut slots = row.values.clone();
        let mut changed: Vec<usize> = Vec::new();
        let mut new_owner = None;
        for (key, v) in &changes {
            if key == "owner" {
                let o = v
                    .as_str()
                    .ok_or_else(|| Error::on_field(Code::InvalidValue, "owner", "the owner is a user key"))?;
                if o != row.owner {
                    new_owner = Some(self.check_new_owner(meta, o, Some(&row.owner))?);
                }
                continue;
            }
            let i = self.editable_field(meta, key)?;
            let value = self.coerce_new(w.conn, meta, i, v, Some(&row.values[i]))?;
            let f = &meta.fields()[i];
            if value != row.values[i] {
                if f.required && value.is_null() {
                    return Err(required(f));
                }
                slots[i] = value;
                changed.push(i);
            }
        }
        changed.sort_unstable();
        if changed.is_empty() && new_owner.is_none() {
            return Ok(SaveOutcome {
                object: object.into(),
                id: id.into(),
                version: row.version,
                operation: "update",
                changed: vec![],
                correlation_id: w.correlation_id.clone(),
            });
        }
        if let Some((md, _)) = &meta.master {
            if changed.contains(md) {
                if let Scalar::Text(parent) = &slots[*md] {
                    self.check_master_writable(w.conn, meta, *md, parent)?;
                }
            }
        }
        let unique_changed: Vec<usize> =
            changed.iter().copied().filter(|i| meta.fields()[*i].unique).collect();
        self.check_unique(w.conn, meta, &slots, id, Some(&unique_changed))?;
        check_rules(meta, &slots)?;

        let version = row.version + 1;
        let mut sql = format!("UPDATE {} SET version = ?, updated_at = ?", meta.table);
        let mut p = vec![Scalar::Num(version as f64), Scalar::Text(w.at.clone())];
        if let Some(o) = &new_owner {
            sql.push_str(", owner = ?");
            p.push(Scalar::Text(o.clone()));
        }
        for i in &changed {
            sql.push_str(&format!(", {} = ?", column(&meta.fields()[*i].key)));
            p.push(slots[*i].clone());
        }
        sql.push_str(" WHERE id = ? AND version = ?");
        p.push(Scalar::Text(id.into()));
        p.push(Scalar::Num(row.version as f64));
        let n = w.conn.prepare_cached(&sql)?.execute(params_from_iter(p.iter()))?;
        if n != 1 {
            return Err(conflict(meta, id, row.version, -1));
        }
        if let Some(o) = &new_owner {
            let old = Scalar::Text(row.owner.clone());
            self.history(w, meta, id, "update", "owner", &old, &Scalar::Text(o.clone()), None, version)?;
        }
        let mut keys = Vec::new();
        for i in changed {
            let f = &meta.fields()[i];
            self.history(w, meta, id, "update", &f.key, &row.values[i], &slots[i], Some(f), version)?;
            keys.push(f.key.clone());
        }
        if new_owner.is_some() {
            keys.push("owner".into());
        }
        Ok(SaveOutcome {
            object: object.into(),
            id: id.into(),
            version,
            operation: "update",
            changed: keys,
            correlation_id: w.correlation_id.clone(),
        })
    }

    fn delete_within(
        &self,
        w: &Write<'_>,
        object: &str,
        id: &str,
        expected_version: Option<i64>,
    ) -> Result<SaveOutcome> {
        let (meta, acc) = self.readable_object(object)?;
        let row = self.load_row(w.conn, meta, id, RowAccess::Read)?.ok_or_else(|| not_found(meta, id))?;
        if !acc.delete {
            return Err(Error::new(Code::Permission, format!("you cannot delete {}", meta.def.plural_label)));
        }
        self.check_row_writable(w.conn, meta, id)?;
        if let Some(v) = expected_version {
            if v != row.version {
                return Err(conflict(meta, id, v, row.version));
            }
        }
        self.remove_row(w, meta, &row)?;
        Ok(SaveOutcome {
            object: object.into(),
            id: id.into(),
            version: row.version,
            operation: "delete",
            changed: vec![],
            correlation_id: w.correlation_id.clone(),
        })
    }

    /// Delete a row: master-detail children go with it; optional lookups pointing at it are
    /// cleared (with history); a required lookup pointing at it refuses the delete.
    fn remove_row(&self, w: &Write<'_>, meta: &ObjectMeta, row: &Row) -> Result<()> {
        for r in &meta.referenced_by {
            let child = self.catalog.object_meta(&r.object)?;
            let (fi, f) =
                child.field_index(&r.field).map(|i| (i, &child.fields()[i])).expect("reference field");
            let ids: Vec<String> = {
                let mut stmt = w.conn.prepare_cached(&format!(
                    "SELECT id FROM {} WHERE {} = ?1",
                    child.table,
                    column(&r.field)
                ))?;
                let rows = stmt.query_map([&row.id], |r| r.get(0))?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            if ids.is_empty() {
                continue;
            }
            if r.master_detail {
                for cid in ids {
                    let crow = self.load_row(w.conn, child, &cid, RowAccess::Read)?;
                    let crow = match crow {
                        Some(c) => c,
                        None => self.system_row(w.conn, child, &cid)?,
                    };
                    self.remove_row(w, child, &crow)?;
                }
            } else if f.required {
                return Err(Error::new(
                    Code::InUse,
                    format!(
                        "{} `{}` cannot be deleted: {} {} record(s) need it in `{}`",
                        meta.def.label,
                        row.id,
                        ids.len(),
                        child.def.label,
                        f.label
                    ),
                ));
            } else {
                for cid in ids {
                    let crow = self.system_row(w.conn, child, &cid)?;
                    let v = crow.version + 1;
                    w.conn
                        .prepare_cached(&format!(
                            "UPDATE {} SET {} = NULL, version = ?1, updated_at = ?2 WHERE id = ?3",
                            child.table,
                            column(&f.key)
                        ))?
                        .execute(params![v, w.at, cid])?;
                    self.history(
                        w,
                        child,
                        &cid,
                        "update",
                        &f.key,
                        &crow.values[fi],
                        &Scalar::Null,
                        Some(f),
                        v,
                    )?;
                }
            }
        }
        w.conn.prepare_cached(&format!("DELETE FROM {} WHERE id = ?1", meta.table))?.execute([&row.id])?;
        self.history_whole(w, meta, &row.id, false, &row.owner, &row.values, row.version)?;
        Ok(())
    }
}

struct Write<'c> {
    conn: &'c Connection,
    ctx: &'c SaveContext,
    correlation_id: String,
    at: String,
    batch: Option<&'c Batch>,
}

/// Many saves in one caller's transaction (an import): each goes through the one save path,
/// but what is derived from the values is written together, not one statement per save —
/// the value index's uses summed in memory and written once per distinct value (when the sum
/// holds [`Batch::MAX_VALUES`] values, and at the end); the created rows' long texts and
/// names indexed by one statement per object at the end. The caller runs
/// [`Batch::finish`] before its commit, in the same transaction.
#[derive(Default)]
pub struct Batch {
    value_uses: std::cell::RefCell<crate::records::value_index::Uses>,
    created: std::cell::RefCell<Vec<Created>>,
}

/// An object the batch creates rows of: the rows after `after_rowid` are the batch's.
struct Created {
    object: String,
    after_rowid: i64,
    /// The columns its text index reads (none: no index), whose insert trigger is paused for
    /// the batch.
    indexed: Vec<String>,
}

impl Batch {
    /// Distinct values held in memory before they are written (bounds an import's memory).
    pub const MAX_VALUES: usize = 100_000;

    /// Before the batch's first row of `meta`: note where its rows start, pause its text index.
    fn creating(&self, conn: &Connection, meta: &ObjectMeta) -> Result<()> {
        if self.created.borrow().iter().any(|c| c.object == meta.key()) {
            return Ok(());
        }
        let after_rowid =
            conn.query_row(&format!("SELECT coalesce(max(rowid), 0) FROM {}", meta.table), [], |r| r.get(0))?;
        let indexed = crate::records::text_index::pause(conn, meta.key())?;
        self.created.borrow_mut().push(Created { object: meta.key().to_string(), after_rowid, indexed });
        Ok(())
    }

    fn written_if_full(&self, conn: &Connection) -> Result<()> {
        let mut uses = self.value_uses.borrow_mut();
        if uses.len() >= Self::MAX_VALUES {
            uses.write(conn)?;
        }
        Ok(())
    }

    /// Write what the batch still holds (inside the caller's transaction).
    pub fn finish(self, session: &Session<'_>, conn: &Connection) -> Result<()> {
        self.value_uses.into_inner().write(conn)?;
        for c in self.created.into_inner() {
            let meta = session.catalog.object_meta(&c.object)?;
            crate::records::corpus::add_rows(conn, meta, c.after_rowid)?;
            if !c.indexed.is_empty() {
                crate::records::text_index::resume(conn, &c.object, &c.indexed, c.after_rowid)?;
            }
        }
        Ok(())
    }
}

/// The table name of an object, for benchmarks that compare with hand-written SQL.
#[doc(hidden)]
pub fn table_of(object: &str) -> String {
    table(object)
}
