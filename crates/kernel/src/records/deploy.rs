//! Deploying a definition: one IMMEDIATE transaction that brings the record tables in line
//! with the new definition and appends a metadata generation.
//!
//! Every change that would lose data is found by looking at the data itself: dropping an
//! object or field that holds values, a type change or narrowing (shorter `maxLength`, smaller
//! precision or scale, a removed picklist value, a new lookup target) that existing values do
//! not survive, removing a user who owns records. Such a deploy is refused with every loss
//! listed, unless forced; forced, the values that do not survive are cleared (and listed).

use crate::clock::timestamp;
use crate::error::{Code, Detail, Error, Result};
use crate::metadata::catalog::{column, table, Catalog};
use crate::metadata::definition::{FieldDef, FieldType, ObjectDef, WorkspaceDefinition};
use crate::metadata::value::{coerce, Scalar};
use crate::store;
use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Default)]
pub struct DeployOptions {
    /// Apply even if data would be lost.
    pub force: bool,
    /// Who deploys: a user key of the current generation with the `metadata.deploy`
    /// permission (recorded with the generation). The first deploy into an empty workspace
    /// (the bootstrap `init`) needs none and is recorded as `system`.
    pub user: Option<String>,
}

impl DeployOptions {
    /// Deploy as `user` (not forced).
    pub fn by(user: &str) -> DeployOptions {
        DeployOptions { force: false, user: Some(user.to_string()) }
    }
}

/// The system permission a user needs to deploy a new definition to an initialized workspace.
pub use crate::metadata::permissions::METADATA_DEPLOY as DEPLOY_PERMISSION;

#[derive(Debug, Clone, Serialize)]
pub struct DeployReport {
    pub generation: i64,
    /// One line per schema change applied.
    pub changes: Vec<String>,
    /// Values cleared by a forced deploy.
    pub lost: Vec<Detail>,
}

pub(crate) fn apply(
    conn: &Connection,
    old: Option<&Catalog>,
    new: &WorkspaceDefinition,
    opts: &DeployOptions,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<(DeployReport, Catalog)> {
    let generation = old.map_or(0, |c| c.generation) + 1;
    let catalog = Catalog::compile(generation, new.clone())?;
    let tx = store::immediate(conn)?;
    let mut plan = Plan {
        changes: vec![],
        lost: vec![],
        actor: actor.to_string(),
        at: timestamp(now),
        correlation: format!("deploy-{generation}"),
    };
    let old_def = old.map(|c| &c.definition);
    for o in &new.objects {
        match old_def.and_then(|d| d.object(&o.key)) {
            None => plan.create_object(&tx, o)?,
            Some(prev) => plan.alter_object(&tx, prev, o, &catalog)?,
        }
    }
    if let Some(prev) = old_def {
        for o in prev.objects.iter().filter(|o| new.object(&o.key).is_none()) {
            let n = count(&tx, &format!("SELECT count(*) FROM {}", table(&o.key)))?;
            if n > 0 {
                plan.loss(format!("/objects/{}", o.key), format!("object `{}` has {n} record(s)", o.key));
            }
            tx.execute_batch(&format!("DROP TABLE {}", table(&o.key)))?;
            plan.changes.push(format!("dropped object {}", o.key));
        }
        let kept: Vec<&str> = new.users.iter().map(|u| u.key.as_str()).collect();
        for u in prev.users.iter().filter(|u| !kept.contains(&u.key.as_str())) {
            for o in &new.objects {
                let n: i64 = tx.query_row(
                    &format!("SELECT count(*) FROM {} WHERE owner = ?1", table(&o.key)),
                    [&u.key],
                    |r| r.get(0),
                )?;
                if n > 0 {
                    plan.loss(
                        format!("/users/{}", u.key),
                        format!("user `{}` owns {n} {} record(s)", u.key, o.key),
                    );
                }
            }
            plan.changes.push(format!("removed user {}", u.key));
        }
    }
    if !plan.lost.is_empty() && !opts.force {
        return Err(Error::new(
            Code::DestructiveChange,
            format!(
                "this deploy would lose data in {} place(s); nothing was changed. Deploy with force to accept the loss.",
                plan.lost.len()
            ),
        )
        .with_details(plan.lost));
    }
    crate::records::value_index::follow_deploy(&tx, old, &catalog)?;
    let definition = serde_json::to_string(new).map_err(|e| Error::internal(e.to_string()))?;
    tx.execute(
        "INSERT INTO metadata_generation (generation, definition, deployed_at, deployed_by, forced, summary)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            generation,
            definition,
            timestamp(now),
            actor,
            opts.force && !plan.lost.is_empty(),
            serde_json::to_string(&plan.changes).unwrap_or_default()
        ],
    )?;
    tx.commit()?;
    Ok((DeployReport { generation, changes: plan.changes, lost: plan.lost }, catalog))
}

/// Load the newest generation, if any.
pub(crate) fn load_latest(conn: &Connection) -> Result<Option<Catalog>> {
    let row: Option<(i64, String)> = conn
        .query_row(
            "SELECT generation, definition FROM metadata_generation ORDER BY generation DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    match row {
        None => Ok(None),
        Some((generation, text)) => {
            let def: WorkspaceDefinition = serde_json::from_str(&text).map_err(|e| {
                Error::internal(format!("stored generation {generation} does not parse: {e}"))
            })?;
            Ok(Some(Catalog::compile(generation, def)?))
        }
    }
}

fn count(conn: &Connection, sql: &str) -> Result<i64> {
    Ok(conn.query_row(sql, [], |r| r.get(0))?)
}

#[derive(Default)]
struct Plan {
    changes: Vec<String>,
    lost: Vec<Detail>,
    /// Who deploys, when, and the correlation id of the history rows for the values it changes.
    actor: String,
    at: String,
    correlation: String,
}

impl Plan {
    /// Record that the deploy changed `field` of record `id` from `old` to `new`, as any save
    /// would: the record's version moves on (a proposal computed before is now stale) and data
    /// history keeps the old value, with the deploying user as actor.
    fn changed_value(
        &self,
        conn: &Connection,
        object: &str,
        id: &str,
        f: &FieldDef,
        old: &Scalar,
        new: &Scalar,
    ) -> Result<()> {
        let t = table(object);
        conn.prepare_cached(&format!("UPDATE {t} SET version = version + 1, updated_at = ?2 WHERE id = ?1"))?
            .execute(params![id, self.at])?;
        let json = |s: &Scalar| -> Option<String> { (!s.is_null()).then(|| s.to_json(Some(f)).to_string()) };
        conn.prepare_cached(&format!(
            "INSERT INTO data_history (object, record_id, op, field, old_value, new_value, actor, proposed_by, correlation_id, at, record_version)
             SELECT ?1, id, 'update', ?2, ?3, ?4, ?5, NULL, ?6, ?7, version FROM {t} WHERE id = ?8"
        ))?
        .execute(params![object, f.key, json(old), json(new), self.actor, self.correlation, self.at, id])?;
        if f.field_type == FieldType::LongText {
            let text = match new {
                Scalar::Text(t) => Some(t.as_str()),
                _ => None,
            };
            crate::records::corpus::index_field(conn, object, id, &f.key, text)?;
        }
        Ok(())
    }

    fn loss(&mut self, path: String, message: String) {
        self.lost.push(Detail { path, message });
    }

    fn create_object(&mut self, conn: &Connection, o: &ObjectDef) -> Result<()> {
        let cols: Vec<String> = o.fields.iter().map(|f| column(&f.key)).collect();
        let mut sql = format!(
            "CREATE TABLE {} (id TEXT PRIMARY KEY NOT NULL, owner TEXT NOT NULL, version INTEGER NOT NULL, \
             created_at TEXT NOT NULL, updated_at TEXT NOT NULL",
            table(&o.key)
        );
        for c in &cols {
            sql.push_str(", ");
            sql.push_str(c);
        }
        sql.push_str(");");
        conn.execute_batch(&sql)?;
        conn.execute_batch(&format!(
            "CREATE INDEX \"ix_{k}__owner\" ON {t} (owner);",
            k = o.key,
            t = table(&o.key)
        ))?;
        for f in &o.fields {
            index_field(conn, o, f)?;
        }
        self.changes.push(format!("created object {}", o.key));
        Ok(())
    }

    fn alter_object(
        &mut self,
        conn: &Connection,
        prev: &ObjectDef,
        o: &ObjectDef,
        catalog: &Catalog,
    ) -> Result<()> {
        let t = table(&o.key);
        for f in prev.fields.iter().filter(|f| !o.fields.iter().any(|n| n.key == f.key)) {
            let n = count(conn, &format!("SELECT count(*) FROM {t} WHERE {} IS NOT NULL", column(&f.key)))?;
            if n > 0 {
                self.loss(
                    format!("/objects/{}/fields/{}", o.key, f.key),
                    format!("field `{}.{}` holds {n} value(s)", o.key, f.key),
                );
            }
            drop_indexes(conn, &o.key, &f.key)?;
            conn.execute_batch(&format!("ALTER TABLE {t} DROP COLUMN {}", column(&f.key)))?;
            self.changes.push(format!("dropped field {}.{}", o.key, f.key));
        }
        for f in &o.fields {
            match prev.fields.iter().find(|p| p.key == f.key) {
                None => {
                    conn.execute_batch(&format!("ALTER TABLE {t} ADD COLUMN {}", column(&f.key)))?;
                    if let Some(d) = &f.default {
                        let v = coerce(f, d).map_err(|m| Error::new(Code::InvalidDefinition, m))?;
                        let ids: Vec<String> = conn
                            .prepare(&format!("SELECT id FROM {t}"))?
                            .query_map([], |r| r.get(0))?
                            .collect::<rusqlite::Result<_>>()?;
                        conn.execute(&format!("UPDATE {t} SET {} = ?1", column(&f.key)), [&v])?;
                        for id in &ids {
                            self.changed_value(conn, &o.key, id, f, &Scalar::Null, &v)?;
                        }
                    }
                    check_unique(conn, &o.key, f)?;
                    index_field(conn, o, f)?;
                    self.changes.push(format!("added field {}.{}", o.key, f.key));
                }
                Some(p) if p != f => {
                    if storage_changed(p, f) {
                        self.convert_values(conn, &o.key, f, catalog)?;
                    }
                    drop_indexes(conn, &o.key, &f.key)?;
                    check_unique(conn, &o.key, f)?;
                    index_field(conn, o, f)?;
                    self.changes.push(format!("changed field {}.{}", o.key, f.key));
                }
                Some(_)
                    if prev.name_field != o.name_field
                        && (f.key == o.name_field || f.key == prev.name_field) =>
                {
                    // The name field moved: its sort index follows it.
                    drop_indexes(conn, &o.key, &f.key)?;
                    index_field(conn, o, f)?;
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Re-coerce every stored value of `f` under its new definition; rewrite those whose
    /// stored form changes, clear (and record as lost) those that no longer fit.
    fn convert_values(
        &mut self,
        conn: &Connection,
        object: &str,
        f: &FieldDef,
        catalog: &Catalog,
    ) -> Result<()> {
        let t = table(object);
        let c = column(&f.key);
        let mut rewrites: Vec<(String, Scalar, Scalar)> = Vec::new();
        let mut lost = 0usize;
        let mut example = None;
        {
            let mut stmt = conn.prepare(&format!("SELECT id, {c} FROM {t} WHERE {c} IS NOT NULL"))?;
            let mut rows = stmt.query([])?;
            // For a lookup, the new target's table is checked once per value, by one statement.
            let exists_sql = match (f.field_type, f.target.as_deref()) {
                (FieldType::Lookup, Some(target)) => {
                    catalog.object_meta(target)?;
                    Some(format!("SELECT count(*) FROM {} WHERE id = ?1", table(target)))
                }
                _ => None,
            };
            let target_exists = |id: &str| -> Result<bool> {
                let Some(sql) = &exists_sql else { return Ok(true) };
                let n: i64 = conn.prepare_cached(sql)?.query_row([id], |r| r.get(0))?;
                Ok(n > 0)
            };
            while let Some(row) = rows.next()? {
                let id: String = row.get(0)?;
                let stored = Scalar::from_sql(row.get_ref(1)?);
                let as_json = match &stored {
                    Scalar::Num(n) => serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number),
                    other => other.to_json(None),
                };
                let converted = match coerce(f, &as_json) {
                    Ok(Scalar::Text(id)) if f.field_type == FieldType::Lookup && !target_exists(&id)? => {
                        Err(format!("no {} `{id}`", f.target.as_deref().unwrap_or_default()))
                    }
                    other => other,
                };
                match converted {
                    Ok(v) if v == stored => {}
                    Ok(v) => rewrites.push((id, stored, v)),
                    Err(m) => {
                        lost += 1;
                        example.get_or_insert(m);
                        rewrites.push((id, stored, Scalar::Null));
                    }
                }
            }
        }
        let mut stmt = conn.prepare(&format!("UPDATE {t} SET {c} = ?1 WHERE id = ?2"))?;
        for (id, old, new) in &rewrites {
            stmt.execute(params![new, id])?;
            self.changed_value(conn, object, id, f, old, new)?;
        }
        if lost > 0 {
            self.loss(
                format!("/objects/{object}/fields/{}", f.key),
                format!(
                    "{lost} value(s) of `{object}.{}` do not fit the new definition (e.g. {})",
                    f.key,
                    example.unwrap_or_default()
                ),
            );
        }
        Ok(())
    }
}

fn storage_changed(p: &FieldDef, f: &FieldDef) -> bool {
    let picklist_values =
        |d: &FieldDef| -> Vec<String> { d.values.iter().flatten().map(|v| v.value.clone()).collect() };
    p.field_type != f.field_type
        || p.max_length != f.max_length
        || p.precision != f.precision
        || p.scale != f.scale
        || p.target != f.target
        || picklist_values(p) != picklist_values(f)
}

fn check_unique(conn: &Connection, object: &str, f: &FieldDef) -> Result<()> {
    if !f.unique {
        return Ok(());
    }
    let c = column(&f.key);
    let dup = count(
        conn,
        &format!(
            "SELECT count(*) FROM (SELECT {c} FROM {} WHERE {c} IS NOT NULL GROUP BY {c} HAVING count(*) > 1)",
            table(object)
        ),
    )?;
    if dup > 0 {
        return Err(Error::new(
            Code::InvalidDefinition,
            format!("`{object}.{}` cannot be made unique: {dup} value(s) occur more than once", f.key),
        )
        .with_field(f.key.clone()));
    }
    Ok(())
}

/// Indexes of a field: unique fields get a unique index; lookups, picklists and dates an
/// index for filters; the name field, unique fields and dates also a sort index on
/// `((col IS NULL), col)`, which is how queries sort ascending with blanks last.
fn index_field(conn: &Connection, object: &ObjectDef, f: &FieldDef) -> Result<()> {
    let (o, t, c, k) = (&object.key, table(&object.key), column(&f.key), &f.key);
    if f.unique {
        conn.execute_batch(&format!("CREATE UNIQUE INDEX \"ux_{o}_{k}\" ON {t} ({c});"))?;
    } else if matches!(
        f.field_type,
        FieldType::Lookup | FieldType::Picklist | FieldType::Date | FieldType::Datetime
    ) || f.key == object.name_field
    {
        conn.execute_batch(&format!("CREATE INDEX \"ix_{o}_{k}\" ON {t} ({c});"))?;
    }
    let sorted_often = f.unique
        || f.key == object.name_field
        || matches!(f.field_type, FieldType::Date | FieldType::Datetime);
    if sorted_often {
        conn.execute_batch(&format!("CREATE INDEX \"sx_{o}_{k}\" ON {t} (({c} IS NULL), {c});"))?;
    }
    Ok(())
}

fn drop_indexes(conn: &Connection, object: &str, field: &str) -> Result<()> {
    conn.execute_batch(&format!(
        "DROP INDEX IF EXISTS \"ux_{object}_{field}\"; DROP INDEX IF EXISTS \"ix_{object}_{field}\";
         DROP INDEX IF EXISTS \"sx_{object}_{field}\";"
    ))?;
    Ok(())
}
