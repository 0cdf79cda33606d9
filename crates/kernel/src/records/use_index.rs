//! Indexes that follow use. Every first page a user asks for (a list's column sort, a saved
//! view, an Ask answer, a related list) has a *shape*: the object's fields it holds equal to a
//! value, then the fields it sorts by, with their directions. Shapes are counted in memory as
//! queries run, written to `index_use` when the workspace is tuned, and `tune` creates a
//! composite index for each shape used often enough that no index serves yet (the plan of its
//! first page still sorts), within a budget per object; it drops the indexes it made whose
//! shape has not been used for `idle_days`, unless an admin pinned them. Each index it made is
//! metadata in `use_index`, with its cost (rows and milliseconds to build). Deploys keep them
//! (an index on a column a deploy removes goes with the column).

use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::metadata::catalog::{column, ObjectMeta};
use crate::metadata::condition::Condition;
use crate::metadata::definition::FieldType;
use crate::metadata::types::{Comparison, Op};
use crate::records::access::Session;
use crate::records::query::{system_field, Direction, QuerySpec};
use crate::records::save::table_of;
use crate::records::workspace::Workspace;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;
use ts_rs::TS;

/// What a query asks of an object's rows that an index can serve.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    pub object: String,
    /// Fields held equal to a value (sorted by key).
    pub equal: Vec<String>,
    pub sort: Vec<(String, Direction)>,
}

impl Shape {
    /// The shape of a spec's first page, when an index could serve part of it: the top-level
    /// equalities on the object's own fields, and its sort keys up to the first that is not an
    /// own field.
    pub fn of(spec: &QuerySpec) -> Option<Shape> {
        let mut equal = Vec::new();
        let mut add = |c: &Condition| {
            if let Condition::Compare(Comparison { field, op: Op::Eq, value: Some(_), other_field: None }) = c
            {
                if !field.contains('.') && !equal.contains(field) {
                    equal.push(field.clone());
                }
            }
        };
        match &spec.filters {
            Some(Condition::All(all)) => all.all.iter().for_each(&mut add),
            Some(c) => add(c),
            None => {}
        }
        equal.sort();
        let sort: Vec<(String, Direction)> = spec
            .sort
            .iter()
            .take_while(|k| !k.field.contains('.'))
            .map(|k| (k.field.clone(), k.direction))
            .collect();
        (!sort.is_empty() || !equal.is_empty()).then(|| Shape { object: spec.object.clone(), equal, sort })
    }

    /// Its fields: the equal ones, then the sorted ones.
    fn fields(&self) -> impl Iterator<Item = &str> {
        self.equal.iter().map(String::as_str).chain(self.sort.iter().map(|(f, _)| f.as_str()))
    }

    /// The canonical text of a shape: `status=|issue_date desc`.
    pub fn key(&self) -> String {
        let eq: Vec<String> = self.equal.iter().map(|f| format!("{f}=")).collect();
        let sort: Vec<String> = self
            .sort
            .iter()
            .map(|(f, d)| format!("{f} {}", if *d == Direction::Desc { "desc" } else { "asc" }))
            .collect();
        [eq.join(","), sort.join(",")].join("|")
    }

    fn parse(object: &str, key: &str) -> Option<Shape> {
        let (eq, sort) = key.split_once('|')?;
        let equal =
            eq.split(',').filter(|s| !s.is_empty()).map(|s| s.trim_end_matches('=').to_string()).collect();
        let sort = sort
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| {
                let (f, d) = s.split_once(' ').unwrap_or((s, "asc"));
                (f.to_string(), if d == "desc" { Direction::Desc } else { Direction::Asc })
            })
            .collect();
        Some(Shape { object: object.to_string(), equal, sort })
    }

    /// The spec of this shape's first page (values are placeholders of the fields' types:
    /// only the plan matters).
    fn spec(&self, meta: &ObjectMeta) -> QuerySpec {
        let placeholder = |key: &str| -> serde_json::Value {
            let def = meta.def.fields.iter().find(|f| f.key == key);
            match def.map(|f| (f.field_type, f.values.as_deref())) {
                Some((FieldType::Picklist, Some([first, ..]))) => first.value.clone().into(),
                Some((FieldType::Number | FieldType::Currency, _)) => 0.into(),
                Some((FieldType::Boolean, _)) => true.into(),
                Some((FieldType::Date, _)) => "2000-01-01".into(),
                Some((FieldType::Datetime, _)) => "2000-01-01T00:00:00Z".into(),
                _ if matches!(key, "created_at" | "updated_at") => "2000-01-01T00:00:00Z".into(),
                _ if key == "version" => 1.into(),
                _ => "x".into(),
            }
        };
        let equal: Vec<Condition> =
            self.equal.iter().map(|f| Condition::compare(f.clone(), Op::Eq, placeholder(f))).collect();
        QuerySpec {
            search: None,
            object: self.object.clone(),
            fields: vec!["id".into()],
            filters: match equal.len() {
                0 => None,
                1 => equal.into_iter().next(),
                _ => Some(Condition::All(crate::metadata::types::AllOf { all: equal })),
            },
            sort: self
                .sort
                .iter()
                .map(|(f, d)| crate::records::query::SortKey { field: f.clone(), direction: *d })
                .collect(),
            limit: Some(100),
            offset: None,
            after: None,
        }
    }
}

/// Shapes counted since the last `tune` (kept on the workspace, in memory).
#[derive(Default)]
pub struct Usage(Mutex<HashMap<Shape, u64>>);

impl Usage {
    pub(crate) fn record(&self, shape: Shape) {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *m.entry(shape).or_default() += 1;
    }

    fn take(&self) -> HashMap<Shape, u64> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// How `tune` decides.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    /// A shape is worth an index once used this many times.
    pub min_uses: u64,
    /// Objects with fewer rows are read fast without one.
    pub min_rows: u64,
    /// At most this many indexes made by `tune` per object.
    pub per_object: usize,
    /// An index whose shape was not used for this many days is dropped (unless pinned).
    pub idle_days: i64,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions { min_uses: 3, min_rows: 20_000, per_object: 6, idle_days: 30 }
    }
}

/// An index `tune` made.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct UseIndex {
    pub name: String,
    pub object: String,
    /// The shape it serves (`status=|issue_date desc`).
    pub shape: String,
    #[ts(type = "number")]
    pub uses: u64,
    pub last_used: String,
    pub created_at: String,
    /// Its cost: the rows it covered when made, and how long making it took.
    #[ts(type = "number")]
    pub rows: u64,
    #[ts(type = "number")]
    pub build_ms: u64,
    pub pinned: bool,
}

/// What one `tune` did.
#[derive(Debug, Clone, Default, Serialize, TS)]
pub struct TuneReport {
    pub created: Vec<UseIndex>,
    pub dropped: Vec<String>,
    /// Shapes used often enough that an index already serves.
    pub served: Vec<String>,
}

impl Session<'_> {
    /// Count a first page's shape for `tune`.
    pub(crate) fn note_use(&self, spec: &QuerySpec) {
        if spec.after.is_some() || spec.offset.is_some() {
            return;
        }
        if let Some(shape) = Shape::of(spec) {
            self.ws.extension::<Usage>().record(shape);
        }
    }

    /// The index `tune` made for exactly this spec's shape (its equalities and every sort key),
    /// if there is one: the query reads its rows through it (`INDEXED BY`). SQLite's planner,
    /// which does not weigh a `LIMIT`, may otherwise prefer an index on a filter's range and
    /// sort every match (190 ms instead of 2 on a million invoices); the index was made
    /// because this shape is used, and it returns the page in order.
    pub(crate) fn serving_index(&self, spec: &QuerySpec) -> Result<Option<String>> {
        let Some(shape) = Shape::of(spec).filter(|s| s.sort.len() == spec.sort.len()) else {
            return Ok(None);
        };
        let sql =
            "SELECT u.name FROM use_index u JOIN sqlite_master m ON m.type = 'index' AND m.name = u.name
                   WHERE u.object = ?1 AND u.shape = ?2";
        Ok(self
            .ws
            .conn()
            .prepare_cached(sql)?
            .query_row(params![shape.object, shape.key()], |r| r.get(0))
            .optional()?)
    }
}

impl Workspace {
    /// Write the shapes counted in memory to `index_use` (quick; the rest of `tune` may run on
    /// another connection to the same file). Returns how many shapes were written.
    pub fn flush_index_use(&self) -> Result<usize> {
        let counted = self.extension::<Usage>().take();
        if counted.is_empty() {
            return Ok(0);
        }
        let shapes = counted.len();
        let now = timestamp(self.clock.now());
        let tx = crate::store::immediate(self.conn())?;
        for (shape, n) in counted {
            tx.prepare_cached(
                "INSERT INTO index_use (object, shape, uses, last_used) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (object, shape) DO UPDATE SET uses = uses + ?3, last_used = ?4",
            )?
            .execute(params![shape.object, shape.key(), n as i64, now])?;
        }
        tx.commit()?;
        Ok(shapes)
    }

    /// Create the indexes used shapes need and drop the idle ones (see the module's text).
    pub fn tune_indexes(&self, opts: &TuneOptions) -> Result<TuneReport> {
        self.flush_index_use()?;
        let mut report = TuneReport::default();
        let now = self.clock.now();
        let idle_since = timestamp(now - chrono::Duration::days(opts.idle_days));
        // Idle ones first, so that their budget is free.
        let idle: Vec<String> = self
            .conn()
            .prepare(
                "SELECT u.name FROM use_index u LEFT JOIN index_use s ON s.object = u.object AND s.shape = u.shape
                 WHERE NOT u.pinned AND coalesce(s.last_used, u.created_at) < ?1",
            )?
            .query_map([&idle_since], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for name in idle {
            self.drop_use_index(&name)?;
            report.dropped.push(name);
        }
        let catalog = self.catalog()?.clone();
        let wanted: Vec<(String, String, i64)> = self
            .conn()
            .prepare(
                "SELECT s.object, s.shape, s.uses FROM index_use s
                 WHERE s.uses >= ?1 AND s.last_used >= ?2
                   AND NOT EXISTS (SELECT 1 FROM use_index u WHERE u.object = s.object AND u.shape = s.shape)
                 ORDER BY s.uses DESC",
            )?
            .query_map(params![opts.min_uses as i64, idle_since], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let system = self.system_session()?;
        for (object, key, _) in wanted {
            let Some(shape) = Shape::parse(&object, &key) else { continue };
            let Ok(meta) = catalog.object_meta(&object) else { continue };
            // Every field of the shape must still be a live field of the object.
            if !shape
                .fields()
                .all(|f| system_field(f).is_some() || meta.def.fields.iter().any(|d| d.key == f))
            {
                continue;
            }
            let rows = crate::records::counts::kept(self.conn(), &object, None)?;
            if rows < opts.min_rows {
                continue;
            }
            let made: i64 = self.conn().query_row(
                "SELECT count(*) FROM use_index WHERE object = ?1",
                [&object],
                |r| r.get(0),
            )?;
            if made as usize >= opts.per_object {
                continue;
            }
            if served(&system, &shape.spec(meta))? {
                report.served.push(key);
                continue;
            }
            report.created.push(self.create_use_index(&shape, rows)?);
        }
        Ok(report)
    }

    fn create_use_index(&self, shape: &Shape, rows: u64) -> Result<UseIndex> {
        let key = shape.key();
        let digest = format!("{:x}", Sha256::digest(format!("{}:{key}", shape.object).as_bytes()));
        let name = format!("use_{}_{}", shape.object, &digest[..10]);
        let col = |f: &str| if system_field(f).is_some() { f.to_string() } else { column(f) };
        let mut cols: Vec<String> = shape.equal.iter().map(|f| col(f)).collect();
        cols.extend(
            shape
                .sort
                .iter()
                .map(|(f, d)| format!("{} {}", col(f), if *d == Direction::Desc { "DESC" } else { "ASC" })),
        );
        let t = Instant::now();
        let at = timestamp(self.clock.now());
        let tx = crate::store::immediate(self.conn())?;
        tx.execute_batch(&format!(
            "CREATE INDEX IF NOT EXISTS \"{name}\" ON {} ({})",
            table_of(&shape.object),
            cols.join(", ")
        ))?;
        let build_ms = t.elapsed().as_millis() as u64;
        tx.execute(
            "INSERT INTO use_index (name, object, shape, created_at, rows, build_ms, pinned) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
            params![name, shape.object, key, at, rows as i64, build_ms as i64],
        )?;
        tx.commit()?;
        tracing::info!(object = %shape.object, build_ms, rows, "use index created");
        self.use_index(&name)?.ok_or_else(|| Error::internal("the index just made is not recorded"))
    }

    fn drop_use_index(&self, name: &str) -> Result<()> {
        let tx = crate::store::immediate(self.conn())?;
        drop_index(&tx, name)?;
        tx.commit()?;
        tracing::info!("use index dropped");
        Ok(())
    }

    /// The indexes `tune` made, most used first, for a user who may deploy.
    pub fn use_indexes(&self, user: &str) -> Result<Vec<UseIndex>> {
        self.session(user)?.require(crate::records::deploy::DEPLOY_PERMISSION)?;
        let mut stmt =
            self.conn().prepare(&format!("{SELECT_USE_INDEX} ORDER BY coalesce(s.uses, 0) DESC, u.name"))?;
        let rows = stmt.query_map([], use_index_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn use_index(&self, name: &str) -> Result<Option<UseIndex>> {
        Ok(self
            .conn()
            .query_row(&format!("{SELECT_USE_INDEX} WHERE u.name = ?1"), [name], use_index_row)
            .optional()?)
    }

    /// Pin (kept however idle) or unpin an index `tune` made; with `drop`, drop it now. Needs
    /// `metadata.deploy`.
    pub fn change_use_index(
        &self,
        user: &str,
        name: &str,
        change: UseIndexChange,
    ) -> Result<Option<UseIndex>> {
        self.session(user)?.require(crate::records::deploy::DEPLOY_PERMISSION)?;
        if self.use_index(name)?.is_none() {
            return Err(Error::new(Code::NotFound, format!("no index `{name}` was made by use")));
        }
        match change {
            UseIndexChange::Drop => {
                self.drop_use_index(name)?;
                Ok(None)
            }
            UseIndexChange::Pin(p) => {
                self.conn().execute("UPDATE use_index SET pinned = ?2 WHERE name = ?1", params![name, p])?;
                self.use_index(name)
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub enum UseIndexChange {
    Pin(bool),
    Drop,
}

const SELECT_USE_INDEX: &str =
    "SELECT u.name, u.object, u.shape, coalesce(s.uses, 0), coalesce(s.last_used, u.created_at),
        u.created_at, u.rows, u.build_ms, u.pinned
     FROM use_index u LEFT JOIN index_use s ON s.object = u.object AND s.shape = u.shape";

fn use_index_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<UseIndex> {
    Ok(UseIndex {
        name: r.get(0)?,
        object: r.get(1)?,
        shape: r.get(2)?,
        uses: r.get::<_, i64>(3)?.max(0) as u64,
        last_used: r.get(4)?,
        created_at: r.get(5)?,
        rows: r.get::<_, i64>(6)?.max(0) as u64,
        build_ms: r.get::<_, i64>(7)?.max(0) as u64,
        pinned: r.get(8)?,
    })
}

/// Whether an index already serves a shape: the plan of its first page reads an index and
/// sorts nothing itself.
fn served(session: &Session<'_>, spec: &QuerySpec) -> Result<bool> {
    let plan = session.plan(spec)?;
    Ok(!plan.lines().any(|step| step.contains("USE TEMP B-TREE") || step == "SCAN t"))
}

/// Drop the records of indexes that went with a column or table a deploy removed.
pub(crate) fn follow_deploy(conn: &rusqlite::Connection) -> Result<()> {
    conn.execute(
        "DELETE FROM use_index WHERE name NOT IN (SELECT name FROM sqlite_master WHERE type = 'index')",
        [],
    )?;
    Ok(())
}

/// Drop the indexes made by use that name a column (before the column is dropped).
pub(crate) fn forget_column(conn: &rusqlite::Connection, object: &str, field: &str) -> Result<()> {
    let names: Vec<String> = conn
        .prepare("SELECT name, shape FROM use_index WHERE object = ?1")?
        .query_map([object], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?
        .into_iter()
        .filter(|(_, shape)| Shape::parse(object, shape).is_some_and(|s| s.fields().any(|f| f == field)))
        .map(|(n, _)| n)
        .collect();
    for n in names {
        drop_index(conn, &n)?;
    }
    Ok(())
}

/// Drop one index made by use, and its record.
fn drop_index(conn: &rusqlite::Connection, name: &str) -> Result<()> {
    conn.execute_batch(&format!("DROP INDEX IF EXISTS \"{}\"", name.replace('"', "")))?;
    conn.execute("DELETE FROM use_index WHERE name = ?1", [name])?;
    Ok(())
}

/// Drop the sort indexes on `((col IS NULL), col)` earlier versions made for every name,
/// unique and date field: no query reads them now, and every insert paid for them.
pub(crate) fn drop_blank_sort_indexes(conn: &rusqlite::Connection) -> Result<()> {
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'sx\\_%' ESCAPE '\\'")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for n in names {
        conn.execute_batch(&format!("DROP INDEX IF EXISTS \"{}\"", n.replace('"', "")))?;
    }
    Ok(())
}
