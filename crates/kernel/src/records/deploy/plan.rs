//! The data side of a deploy: the record tables brought in line with the new definition inside
//! the deploy's transaction, and every problem that finds in the data.

use super::{DeployProblem, ProblemKind, ROWS_NAMED};
use crate::error::{Code, Error, Result};
use crate::metadata::catalog::{column, table, Catalog};
use crate::metadata::definition::{FieldDef, FieldType, ObjectDef, WorkspaceDefinition};
use crate::metadata::value::{coerce, Scalar};
use rusqlite::{params, Connection};
use serde_json::Value;

fn count(conn: &Connection, sql: &str) -> Result<i64> {
    Ok(conn.query_row(sql, [], |r| r.get(0))?)
}

/// The rows of table `t` that `filter` holds for (with `params`): how many, and the ids of the
/// first [`ROWS_NAMED`] in `order`.
fn rows_where(
    conn: &Connection,
    t: &str,
    filter: &str,
    order: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<(i64, Vec<String>)> {
    let n: i64 = conn.query_row(&format!("SELECT count(*) FROM {t} WHERE {filter}"), params, |r| r.get(0))?;
    if n == 0 {
        return Ok((0, vec![]));
    }
    let sql = format!("SELECT id FROM {t} WHERE {filter} ORDER BY {order} LIMIT {ROWS_NAMED}");
    let mut stmt = conn.prepare(&sql)?;
    let ids = stmt.query_map(params, |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    Ok((n, ids))
}

pub(super) struct Plan {
    pub(super) problems: Vec<DeployProblem>,
    /// Who deploys, when, and the correlation id of the history rows for the values it changes.
    actor: String,
    at: String,
    correlation: String,
}

impl Plan {
    pub(super) fn new(actor: &str, at: String, generation: i64) -> Plan {
        Plan { problems: vec![], actor: actor.to_string(), at, correlation: format!("deploy-{generation}") }
    }

    /// Bring the record tables from `old` to `new` (inside the caller's transaction), noting
    /// every problem on the way.
    pub(super) fn apply(
        &mut self,
        tx: &Connection,
        old: Option<&WorkspaceDefinition>,
        new: &WorkspaceDefinition,
        catalog: &Catalog,
    ) -> Result<()> {
        for o in &new.objects {
            match old.and_then(|d| d.object(&o.key)) {
                None => self.create_object(tx, o)?,
                Some(prev) => self.alter_object(tx, prev, o, catalog)?,
            }
        }
        let Some(prev) = old else { return Ok(()) };
        for o in prev.objects.iter().filter(|o| new.object(&o.key).is_none()) {
            let t = table(&o.key);
            let (n, rows) = rows_where(tx, &t, "1", "id", &[])?;
            if n > 0 {
                let message = format!("object `{}` has {n} record(s); retire it to keep them", o.key);
                self.problem(ProblemKind::Loss, format!("/objects/{}", o.key), message, rows, n);
            }
            tx.execute_batch(&format!("DROP TABLE {t}"))?;
        }
        let kept: Vec<&str> = new.users.iter().map(|u| u.key.as_str()).collect();
        for u in prev.users.iter().filter(|u| !kept.contains(&u.key.as_str())) {
            for o in &new.objects {
                let t = table(&o.key);
                let (n, rows) = rows_where(tx, &t, "owner = ?1", "id", &[&u.key])?;
                if n > 0 {
                    let message = format!(
                        "user `{}` owns {n} {} record(s); make them inactive to keep them",
                        u.key, o.key
                    );
                    self.problem(ProblemKind::Loss, format!("/users/{}", u.key), message, rows, n);
                }
            }
        }
        Ok(())
    }

    pub(super) fn problem(
        &mut self,
        kind: ProblemKind,
        path: String,
        message: String,
        rows: Vec<String>,
        count: i64,
    ) {
        self.problems.push(DeployProblem { kind, path, message, rows, count: count.max(0) as u64 });
    }

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
            let c = column(&f.key);
            let (n, rows) = rows_where(conn, &t, &format!("{c} IS NOT NULL"), "id", &[])?;
            if n > 0 {
                let message =
                    format!("field `{}.{}` holds {n} value(s); retire it to keep them", o.key, f.key);
                self.problem(
                    ProblemKind::Loss,
                    format!("/objects/{}/fields/{}", o.key, f.key),
                    message,
                    rows,
                    n,
                );
            }
            drop_indexes(conn, &o.key, &f.key)?;
            crate::records::use_index::forget_column(conn, &o.key, &f.key)?;
            crate::records::text_index::forget_column(conn, &o.key, &f.key)?;
            conn.execute_batch(&format!("ALTER TABLE {t} DROP COLUMN {c}"))?;
        }
        for f in &o.fields {
            // What the data must now satisfy: a live field newly required (or restored).
            let live = !o.retired && !f.retired;
            match prev.fields.iter().find(|p| p.key == f.key) {
                None => {
                    conn.execute_batch(&format!("ALTER TABLE {t} ADD COLUMN {}", column(&f.key)))?;
                    self.fill_blanks(conn, o, f)?;
                    if live && f.required {
                        self.check_required(conn, o, f)?;
                    }
                    if self.check_unique(conn, &o.key, f)? {
                        index_field(conn, o, f)?;
                    }
                }
                Some(p) if p != f => {
                    if storage_changed(p, f) {
                        crate::records::use_index::forget_column(conn, &o.key, &f.key)?;
                        self.convert_values(conn, &o.key, f, catalog)?;
                    }
                    let newly_required = f.required && (!p.required || p.retired || prev.retired);
                    if live && newly_required {
                        self.fill_blanks(conn, o, f)?;
                        self.check_required(conn, o, f)?;
                    }
                    drop_indexes(conn, &o.key, &f.key)?;
                    if self.check_unique(conn, &o.key, f)? {
                        index_field(conn, o, f)?;
                    }
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

    /// Fill the blanks of `f` with its default, if it has one (each a recorded change).
    fn fill_blanks(&mut self, conn: &Connection, o: &ObjectDef, f: &FieldDef) -> Result<()> {
        let Some(d) = &f.default else { return Ok(()) };
        let v = coerce(f, d).map_err(|m| Error::new(Code::InvalidDefinition, m))?;
        let (t, c) = (table(&o.key), column(&f.key));
        // Set-wise, as `changed_value` does row by row: the history entry (at the version the
        // fill makes), the corpus entry of a long text (a blank has none), then the rows.
        let new = v.to_json(Some(f)).to_string();
        conn.execute(
            &format!(
                "INSERT INTO data_history (object, record_id, op, field, old_value, new_value, actor, proposed_by, correlation_id, at, record_version)
                 SELECT ?1, id, 'update', ?2, NULL, ?3, ?4, NULL, ?5, ?6, version + 1 FROM {t} WHERE {c} IS NULL"
            ),
            params![o.key, f.key, new, self.actor, self.correlation, self.at],
        )?;
        let text = match &v {
            Scalar::Text(t) if f.field_type == FieldType::LongText && !t.trim().is_empty() => Some(t),
            _ => None,
        };
        if let Some(text) = text {
            conn.execute(
                &format!(
                    "INSERT INTO corpus (object, record_id, field, body) SELECT ?1, id, ?2, ?3 FROM {t} WHERE {c} IS NULL"
                ),
                params![o.key, f.key, text],
            )?;
        }
        conn.execute(
            &format!("UPDATE {t} SET {c} = ?1, version = version + 1, updated_at = ?2 WHERE {c} IS NULL"),
            params![v, self.at],
        )?;
        Ok(())
    }

    /// A required field must hold a value on every row.
    fn check_required(&mut self, conn: &Connection, o: &ObjectDef, f: &FieldDef) -> Result<()> {
        let (t, c) = (table(&o.key), column(&f.key));
        let (n, rows) = rows_where(conn, &t, &format!("{c} IS NULL"), "id", &[])?;
        if n > 0 {
            let message = format!(
                "`{}.{}` cannot be required: {n} record(s) leave it blank (give it a default, or fill them first)",
                o.key, f.key
            );
            self.problem(
                ProblemKind::RequiredBlanks,
                format!("/objects/{}/fields/{}", o.key, f.key),
                message,
                rows,
                n,
            );
        }
        Ok(())
    }

    /// A unique field's values must not repeat. False (and a problem noted) when they do.
    fn check_unique(&mut self, conn: &Connection, object: &str, f: &FieldDef) -> Result<bool> {
        if !f.unique {
            return Ok(true);
        }
        let (t, c) = (table(object), column(&f.key));
        let repeated = format!("SELECT {c} FROM {t} WHERE {c} IS NOT NULL GROUP BY {c} HAVING count(*) > 1");
        let values = count(conn, &format!("SELECT count(*) FROM ({repeated})"))?;
        if values == 0 {
            return Ok(true);
        }
        let (n, rows) = rows_where(conn, &t, &format!("{c} IN ({repeated})"), &format!("{c}, id"), &[])?;
        let message = format!(
            "`{object}.{}` cannot be made unique: {values} value(s) occur more than once, on {n} record(s)",
            f.key
        );
        self.problem(
            ProblemKind::Duplicates,
            format!("/objects/{object}/fields/{}", f.key),
            message,
            rows,
            n,
        );
        Ok(false)
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
        let mut lost = 0i64;
        let mut lost_rows = Vec::new();
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
                        if lost_rows.len() < ROWS_NAMED {
                            lost_rows.push(id.clone());
                        }
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
            let message = format!(
                "{lost} value(s) of `{object}.{}` do not fit the new definition (e.g. {})",
                f.key,
                example.unwrap_or_default()
            );
            self.problem(
                ProblemKind::Loss,
                format!("/objects/{object}/fields/{}", f.key),
                message,
                lost_rows,
                lost,
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

/// Indexes of a field: unique fields get a unique index; lookups, picklists, dates and the
/// name field an index, for filters and for sorting (keyset pages are ranges of it). Indexes
/// for other sorts and filters follow use (`use_index`).
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
    Ok(())
}

fn drop_indexes(conn: &Connection, object: &str, field: &str) -> Result<()> {
    conn.execute_batch(&format!(
        "DROP INDEX IF EXISTS \"ux_{object}_{field}\"; DROP INDEX IF EXISTS \"ix_{object}_{field}\";
         DROP INDEX IF EXISTS \"sx_{object}_{field}\";"
    ))?;
    Ok(())
}
