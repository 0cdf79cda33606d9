//! Query specs: `{object, fields, filters, sort, limit, offset | after}` run as parameterized
//! SQL through the user's session: one statement, or for a page of a sorted list the few
//! statements of keyset paging (`keyset`), each a range of the sort's index.
//!
//! Fields, filters and sort keys may name one-hop parent paths (`account.name`): each lookup
//! used becomes a LEFT JOIN whose ON clause carries the user's row filter for the parent, so a
//! parent the user cannot read contributes blanks, exactly as if it were absent. Unknown and
//! unreadable fields are the same typed error. `filters` is the condition tree of validation
//! rules (see `condition`), with the same semantics.

use crate::error::{Code, Detail, Error, Result};
use crate::metadata::catalog::{column, ObjectMeta};
use crate::metadata::condition::{trigram_match, Condition, Operand, CORPUS_MATCH};
use crate::metadata::definition::{FieldDef, FieldType};
use crate::metadata::limits;
use crate::metadata::value::Scalar;
use crate::records::access::{RowAccess, Session};
use crate::records::keyset::{self, Cursor, Key};
use crate::records::text_index;
use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::OnceLock;
use ts_rs::TS;

pub const DEFAULT_LIMIT: u32 = 100;
pub const MAX_LIMIT: u32 = 10_000;
pub const SCHEMA_TEXT: &str = include_str!("../../../../schemas/query-spec.schema.json");

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields)]
pub struct QuerySpec {
    pub object: String,
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub fields: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub filters: Option<Condition>,
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<SortKey>>")]
    pub sort: Vec<SortKey>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub offset: Option<u32>,
    /// Keyset paging: the page starts after this row (a previous page's `next`), or at the
    /// first row reaching these sort values. Not with `offset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub after: Option<Cursor>,
    /// Text to find in every text field the user can read: a short text field (and a parent's
    /// name shown through a lookup) containing it, case-insensitively, or a long text holding
    /// all its words (the last may be the start of a word). Combined with `filters` by AND.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub search: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields)]
pub struct SortKey {
    pub field: String,
    #[serde(default)]
    #[ts(optional, as = "Option<Direction>")]
    pub direction: Direction,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, Default, TS)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    #[default]
    Asc,
    Desc,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct QueryResult {
    pub object: String,
    /// The selected paths, in order; every record has `id` plus these keys, plus the paths
    /// `currency_of` names.
    pub fields: Vec<String>,
    /// For each selected currency field, the path of its record's currency (the record's own
    /// currency picklist, or its parent's): an amount is shown in the currency its record
    /// states, not the workspace's. A field absent here is in the workspace's currency.
    pub currency_of: std::collections::BTreeMap<String, String>,
    pub records: Vec<Map<String, Value>>,
    /// More records match beyond `offset + limit`.
    pub has_more: bool,
    pub limit: u32,
    pub offset: u32,
    /// Where the next page starts (`after`), when there is one; a ranked full-text query
    /// without a sort pages with `offset` only.
    #[ts(optional)]
    pub next: Option<Cursor>,
}

fn spec_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA_TEXT).expect("query-spec schema is JSON");
        jsonschema::validator_for(&schema).expect("query-spec schema compiles")
    })
}

impl QuerySpec {
    /// Parse a spec from JSON, checking it against `schemas/query-spec.schema.json` first so
    /// that every shape problem is reported with its path.
    ///
    /// A spec over one of the kernel's size limits (see `limits`) is refused with those
    /// problems first, each naming the limit and its JSON pointer.
    pub fn from_json(doc: &Value) -> Result<QuerySpec> {
        let details: Vec<Detail> = spec_validator()
            .iter_errors(doc)
            .take(crate::metadata::limits::MAX_REPORTED_PROBLEMS)
            .map(|e| crate::metadata::definition::schema_problem(&e))
            .collect();
        let parsed = serde_json::from_value::<QuerySpec>(doc.clone());
        if let Ok(spec) = &parsed {
            let mut problems = spec.limit_problems();
            if !problems.is_empty() {
                problems.extend(details);
                return Err(over_limit(problems));
            }
        }
        if let Some(first) = details.first() {
            return Err(Error::new(
                Code::InvalidQuery,
                format!("the query spec is malformed: {}: {}", first.path, first.message),
            )
            .with_details(details));
        }
        parsed.map_err(|e| Error::new(Code::InvalidQuery, format!("the query spec is malformed: {e}")))
    }

    /// Every size limit this spec breaks (`limits`), with its JSON pointer. Checked by the
    /// compiler for every spec, however it was built.
    pub fn limit_problems(&self) -> Vec<Detail> {
        let mut out = Vec::new();
        limits::check_len(self.fields.len(), limits::MAX_SPEC_FIELDS, "/fields", "fields", &mut out);
        limits::check_len(self.sort.len(), limits::MAX_SORT_KEYS, "/sort", "sort keys", &mut out);
        if let Some(c) = &self.filters {
            out.extend(limits::condition_problems(c, "/filters"));
        }
        out
    }

    /// The text of `search`, trimmed, when there is any.
    pub fn search_text(&self) -> Option<&str> {
        self.search.as_deref().map(str::trim).filter(|t| !t.is_empty())
    }

    pub fn parse(text: &str) -> Result<QuerySpec> {
        let doc: Value = serde_json::from_str(text).map_err(|e| {
            // serde_json stops at 128 levels of nesting, long before a stack could overflow.
            let what = if e.to_string().starts_with("recursion limit exceeded") {
                format!(
                    "the query spec is nested too deeply to read ({e}); `all`, `any` and `not` may be nested at most {} deep",
                    limits::MAX_DEPTH
                )
            } else {
                format!("the query spec is not JSON: {e}")
            };
            Error::new(Code::InvalidQuery, what)
        })?;
        Self::from_json(&doc)
    }
}

fn over_limit(details: Vec<Detail>) -> Error {
    let first = details.first().map(|d| format!("{}: {}", d.path, d.message)).unwrap_or_default();
    Error::new(Code::InvalidQuery, format!("the query spec is too large: {first}")).with_details(details)
}

/// A spec turned into SQL for one session.
pub(crate) struct CompiledQuery {
    /// Run in turn, each continuing the order where the one before ended, until `limit + 1`
    /// rows are read (one statement unless the page is a keyset page).
    pub statements: Vec<Statement>,
    pub columns: Vec<Column>,
    /// The sort keys read after the columns (and then the rowid), to make the next cursor.
    pub keys: Vec<FieldDef>,
    /// The rows the spec selects (every page's).
    pub selection: Selection,
    /// The sort keys as SQL.
    pub key_exprs: Vec<Key>,
    /// (currency column, the path of its record's currency).
    pub currency_of: Vec<(String, String)>,
    pub limit: u32,
    pub offset: u32,
}

/// `FROM … WHERE …` of the rows a spec selects, and its parameters.
pub(crate) struct Selection {
    from: String,
    wheres: Vec<String>,
    pub params: Vec<Scalar>,
}

impl Selection {
    /// The `FROM … WHERE …` text, with one more condition if given.
    pub fn sql(&self, and: Option<&str>) -> String {
        let mut sql = self.from.clone();
        let conds: Vec<&str> = self.wheres.iter().map(String::as_str).chain(and).collect();
        if !conds.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conds.join(" AND "));
        }
        sql
    }
}

pub(crate) struct Statement {
    pub sql: String,
    pub params: Vec<Scalar>,
    /// Ends with `LIMIT ?`: the rows still wanted are bound at run time.
    pub paged: bool,
}

pub(crate) struct Column {
    pub path: String,
    pub def: FieldDef,
    /// Selected only for `currency_of`, not asked for (not a column of the answer).
    pub hidden: bool,
}

struct Join {
    lookup: String,
    alias: String,
    sql: String,
}

struct Builder<'s, 'w> {
    session: &'s Session<'w>,
    meta: &'s ObjectMeta,
    joins: Vec<Join>,
    join_params: Vec<Scalar>,
}

/// A column every record table has (`id`, `owner`, `version`, `created_at`, `updated_at`), as
/// a field.
pub(crate) fn system_field(key: &str) -> Option<FieldDef> {
    let (label, t) = match key {
        "id" => ("Id", FieldType::Text),
        "owner" => ("Owner", FieldType::Text),
        "version" => ("Version", FieldType::Number),
        "created_at" => ("Created", FieldType::Datetime),
        "updated_at" => ("Last Modified", FieldType::Datetime),
        _ => return None,
    };
    Some(FieldDef {
        key: key.into(),
        label: label.into(),
        field_type: t,
        required: false,
        unique: false,
        max_length: None,
        precision: (t == FieldType::Number).then_some(18),
        scale: (t == FieldType::Number).then_some(0),
        values: None,
        target: None,
        master_detail: false,
        default: None,
        help_text: None,
        ai_visibility: Default::default(),
        retired: false,
        additive: false,
        labels: Default::default(),
    })
}

impl Builder<'_, '_> {
    /// Resolve a field path to its SQL expression, adding a join for a parent path.
    fn resolve(&mut self, path: &str) -> Result<Operand> {
        let unknown = |msg: String| Error::on_field(Code::UnknownField, path.to_string(), msg);
        let parts: Vec<&str> = path.split('.').collect();
        if parts.len() == 1 {
            return self.own_field(self.meta, "t", path).map_err(|e| e.with_field(path.to_string()));
        }
        if parts.len() > 3 {
            return Err(Error::on_field(
                Code::InvalidQuery,
                path.to_string(),
                "paths may go two hops up (`invoice.account.name`), not further",
            ));
        }
        // Each hop joins the parent under its own row access: a parent the user cannot read
        // leaves the path blank, as a field the user cannot read is absent.
        let (mut meta, mut alias) = (self.meta, "t".to_string());
        for k in 0..parts.len() - 1 {
            let lookup = parts[k];
            let (_, f) =
                self.session.readable_field(meta, lookup).map_err(|e| e.with_field(path.to_string()))?;
            if f.field_type != FieldType::Lookup {
                return Err(unknown(format!("`{lookup}` is not a lookup; `{path}` does not exist")));
            }
            let target_key = f.target.clone().unwrap_or_default();
            let (target, _) = self
                .session
                .readable_object(&target_key)
                .map_err(|_| unknown(format!("no field `{path}` on {}", self.meta.def.label)))?;
            let prefix = parts[..=k].join(".");
            let next = match self.joins.iter().find(|j| j.lookup == prefix) {
                Some(j) => j.alias.clone(),
                None => {
                    let next = format!("p{}", self.joins.len());
                    let mut on = format!("{next}.id = {alias}.{}", column(lookup));
                    if let Some(filter) =
                        self.session.row_filter(target, &next, RowAccess::Read, &mut self.join_params)
                    {
                        on.push_str(" AND ");
                        on.push_str(&filter);
                    }
                    self.joins.push(Join {
                        lookup: prefix,
                        alias: next.clone(),
                        sql: format!(" LEFT JOIN {} {next} ON {on}", target.table),
                    });
                    next
                }
            };
            meta = target;
            alias = next;
        }
        let last = parts[parts.len() - 1];
        self.own_field(meta, &alias, last).map_err(|e| {
            Error::on_field(e.code, path.to_string(), format!("no field `{path}` on {}", self.meta.def.label))
        })
    }

    fn own_field(&self, meta: &ObjectMeta, alias: &str, key: &str) -> Result<Operand> {
        if let Some(def) = system_field(key) {
            return Ok(Operand {
                expr: format!("{alias}.{key}"),
                slot: 0,
                def: Box::new(def),
                row: None,
                text_index: None,
            });
        }
        let (_, f) = self.session.readable_field(meta, key)?;
        Ok(Operand {
            expr: format!("{alias}.{}", column(key)),
            slot: 0,
            def: Box::new(f.clone()),
            row: Some((meta.key().to_string(), alias.to_string())),
            text_index: text_index::indexes(f.field_type).then(|| text_index::table(meta.key())),
        })
    }
}

/// Some of `fields` (short text fields of `object`, read as `alias`) contains `text`, as a
/// `contains` checks it; with three characters or more, only the rows the object's trigram index
/// finds in those columns are checked (`MATCH` alone in its subquery, every other condition
/// outside it).
fn contains_any(
    object: &str,
    alias: &str,
    fields: &[&FieldDef],
    text: &str,
    params: &mut Vec<Scalar>,
) -> String {
    let checks: Vec<String> = fields
        .iter()
        .map(|f| {
            params.push(Scalar::Text(text.to_string()));
            format!("instr(lower({alias}.{}), lower(?)) > 0", column(&f.key))
        })
        .collect();
    let checks = checks.join(" OR ");
    if text.chars().count() < 3 {
        return format!("({checks})");
    }
    let index = text_index::table(object);
    let cols: Vec<String> = fields.iter().map(|f| format!("f_{}", f.key)).collect();
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    // The MATCH's parameter goes before the checks' (its `?` comes first in the text).
    params.insert(params.len() - fields.len(), Scalar::Text(trigram_match(&cols, text)));
    format!("({alias}.rowid IN (SELECT rowid FROM \"{index}\" WHERE \"{index}\" MATCH ?) AND ({checks}))")
}

/// Every word of `text` as an FTS5 query of the corpus: all must be there, the last as the
/// start of a word (it may be still being typed). `None` without a word.
fn all_words(text: &str) -> Option<String> {
    crate::metadata::condition::full_text_query(text).map(|q| format!("{q}*"))
}

/// A condition on related records as SQL: the children of `parent`'s row `t` through the
/// child's lookup, only the child rows the session may read (its row filter), and only those
/// meeting the filter on the child's own readable fields.
fn related_sql(
    session: &Session<'_>,
    parent: &ObjectMeta,
    r: &crate::metadata::types::Related,
    n: usize,
) -> Result<crate::metadata::condition::Predicate> {
    use crate::metadata::types::Has;
    let (child, _) = session.readable_object(&r.object)?;
    let (_, via) = session.readable_field(child, &r.via)?;
    if via.field_type != FieldType::Lookup || via.target.as_deref() != Some(parent.key()) {
        return Err(Error::on_field(
            Code::InvalidQuery,
            r.via.clone(),
            format!("`{}` of {} is not a lookup to {}", r.via, r.object, parent.key()),
        ));
    }
    let alias = format!("r{n}");
    let mut params = vec![];
    let mut wheres = vec![format!("{alias}.{} = t.id", column(&r.via))];
    if let Some(filter) = session.row_filter(child, &alias, RowAccess::Read, &mut params) {
        wheres.push(filter);
    }
    if let Some(filter) = &r.filter {
        let b = Builder { session, meta: child, joins: Vec::new(), join_params: Vec::new() };
        let pred = filter.compile(&mut |p| {
            if p.contains('.') {
                return Err(Error::on_field(
                    Code::InvalidQuery,
                    p.to_string(),
                    "a filter on related records uses their own fields",
                ));
            }
            b.own_field(child, &alias, p)
        })?;
        let mut s = String::new();
        pred.to_sql(&mut s, &mut params);
        wheres.push(s);
    }
    let inner = format!("SELECT 1 FROM {} {alias} WHERE {}", child.table, wheres.join(" AND "));
    let sql = match r.has {
        Has::Some => format!("(EXISTS ({inner}))"),
        Has::None => format!("(NOT EXISTS ({inner}))"),
        Has::AtLeast => {
            let count = r.count.unwrap_or(1);
            params.push(Scalar::Num(f64::from(count)));
            params.push(Scalar::Num(f64::from(count)));
            format!("((SELECT count(*) FROM ({inner} LIMIT ?)) >= ?)")
        }
    };
    Ok(crate::metadata::condition::Predicate::Sql { sql, params })
}

impl Session<'_> {
    /// Where a currency field's record states its currency, as a path from `meta`: the
    /// record's own currency picklist, else a parent's through its lookup (an invoice line's
    /// amount is in its invoice's currency). For a parent's field (`account.credit_limit`), that
    /// parent's. `None`: the workspace's currency (or a path the user may not read).
    pub fn currency_path(&self, meta: &ObjectMeta, path: &str) -> Option<String> {
        let readable = |m: &ObjectMeta, key: &str| self.readable_field(m, key).is_ok();
        let parent = |lookup: &str| -> Option<String> {
            let (_, f) = self.readable_field(meta, lookup).ok()?;
            if f.field_type != FieldType::Lookup {
                return None;
            }
            let (target, _) = self.readable_object(f.target.as_deref()?).ok()?;
            let cf = target.currency_field()?;
            readable(target, cf).then(|| format!("{lookup}.{cf}"))
        };
        match path.split_once('.') {
            Some((lookup, _)) => parent(lookup),
            None => match meta.currency_field() {
                Some(cf) => readable(meta, cf).then(|| cf.to_string()),
                None => meta
                    .def
                    .fields
                    .iter()
                    .filter(|f| f.field_type == FieldType::Lookup)
                    .find_map(|f| parent(&f.key)),
            },
        }
    }

    pub(crate) fn compile_query(&self, spec: &QuerySpec, unlimited: bool) -> Result<CompiledQuery> {
        let problems = spec.limit_problems();
        if !problems.is_empty() {
            return Err(over_limit(problems));
        }
        let (meta, _) = self.readable_object(&spec.object)?;
        let limit = match spec.limit {
            Some(0) => return Err(Error::new(Code::InvalidQuery, "limit must be at least 1")),
            Some(n) if n > MAX_LIMIT && !unlimited => {
                return Err(Error::new(
                    Code::InvalidQuery,
                    format!("limit is at most {MAX_LIMIT}; page with offset"),
                ))
            }
            Some(n) => n,
            None if unlimited => u32::MAX,
            None => DEFAULT_LIMIT,
        };
        let mut b = Builder { session: self, meta, joins: Vec::new(), join_params: Vec::new() };
        let paths: Vec<String> = if spec.fields.is_empty() {
            self.readable_fields(&spec.object)?.iter().map(|f| f.key.clone()).collect()
        } else {
            spec.fields.clone()
        };
        let mut columns = Vec::new();
        let mut select = String::from("SELECT t.id");
        for p in &paths {
            if p == "id" || columns.iter().any(|c: &Column| &c.path == p) {
                continue;
            }
            let op = b.resolve(p)?;
            select.push_str(", ");
            select.push_str(&op.expr);
            columns.push(Column { path: p.clone(), def: *op.def, hidden: false });
        }
        // The record's currency beside each amount (selected, not shown as a column).
        let mut currency_of = Vec::new();
        let amounts: Vec<String> = columns
            .iter()
            .filter(|c| c.def.field_type == FieldType::Currency)
            .map(|c| c.path.clone())
            .collect();
        for amount in amounts {
            let Some(path) = self.currency_path(meta, &amount) else { continue };
            if !columns.iter().any(|x| x.path == path) {
                let Ok(op) = b.resolve(&path) else { continue };
                select.push_str(", ");
                select.push_str(&op.expr);
                columns.push(Column { path: path.clone(), def: *op.def, hidden: true });
            }
            currency_of.push((amount, path));
        }
        let mut where_params = Vec::new();
        let mut wheres = Vec::new();
        let mut ranking = None;
        if let Some(filter) = self.row_filter(meta, "t", RowAccess::Read, &mut where_params) {
            wheres.push(filter);
        }
        if let Some(cond) = &spec.filters {
            let (session, parent) = (b.session, b.meta);
            let mut subqueries = 0;
            let pred = cond.compile_with(&mut |p| b.resolve(p), &mut |r| {
                subqueries += 1;
                related_sql(session, parent, r, subqueries)
            })?;
            let mut s = String::new();
            pred.to_sql(&mut s, &mut where_params);
            wheres.push(s);
            ranking = pred.ranking();
        }
        if let Some(text) = spec.search_text() {
            wheres.push(self.search_sql(meta, text, &mut where_params)?);
        }
        // Rows a full-text condition selects come best match first (bm25, the corpus's `rank`)
        // unless the spec sorts them itself.
        let mut ranked = false;
        if let (Some(r), true) = (ranking, spec.sort.is_empty()) {
            b.joins.push(Join {
                lookup: String::new(),
                alias: "ft".into(),
                sql: format!(
                    " LEFT JOIN (SELECT record_id, min(rank) AS rank FROM corpus WHERE {CORPUS_MATCH} GROUP BY record_id) ft ON ft.record_id = {}.id",
                    r.alias
                ),
            });
            b.join_params.extend([r.words, Scalar::Text(r.object), Scalar::Text(r.field)]);
            ranked = true;
        }
        let mut keys = Vec::new();
        let mut key_defs = Vec::new();
        for k in &spec.sort {
            let op = b.resolve(&k.field)?;
            if op.def.field_type == FieldType::LongText {
                return Err(Error::on_field(
                    Code::InvalidQuery,
                    k.field.clone(),
                    "long text fields cannot be sorted",
                ));
            }
            keys.push(Key { expr: op.expr, direction: k.direction });
            key_defs.push(*op.def);
        }
        let mut from = String::from(" FROM ");
        from.push_str(&meta.table);
        from.push_str(" t");
        if !ranked && spec.search_text().is_none() && !unlimited && !spec.sort.is_empty() {
            if let Some(index) = self.serving_index(spec)? {
                from.push_str(&format!(" INDEXED BY \"{index}\""));
            }
        }
        for j in &b.joins {
            from.push_str(&j.sql);
        }
        let mut base_params = b.join_params;
        base_params.extend(where_params);
        let selection = Selection { from, wheres, params: base_params.clone() };
        let single = |tail: String, mut params: Vec<Scalar>| {
            let mut sql = select.clone();
            sql.push_str(&selection.sql(None));
            sql.push_str(&tail);
            let mut all = base_params.clone();
            all.append(&mut params);
            Statement { sql, params: all, paged: false }
        };
        if spec.after.is_some() && (spec.offset.is_some() || ranked || unlimited) {
            return Err(Error::new(
                Code::InvalidQuery,
                if ranked {
                    "a full-text query ranked by best match pages with offset; sort it to page with after"
                } else {
                    "a query pages with after or with offset, not both"
                },
            ));
        }
        // A page of a sorted list from its start or a cursor: the parts of keyset paging.
        if !ranked && !unlimited && limit != u32::MAX && spec.offset.is_none() {
            let (values, row) = match &spec.after {
                None => (Vec::new(), None),
                Some(c) => (self.cursor_values(c, &spec.sort, &key_defs)?, c.row),
            };
            let keyed = format!("{select}, {}", key_columns(&keys));
            let statements = keyset::parts(&keys, ROWID, &values, row)
                .into_iter()
                .map(|part| {
                    let mut sql = keyed.clone();
                    sql.push_str(&selection.sql(part.condition.as_deref()));
                    sql.push_str(" ORDER BY ");
                    sql.push_str(&part.order);
                    sql.push_str(" LIMIT ?");
                    let mut params = base_params.clone();
                    params.extend(part.params);
                    Statement { sql, params, paged: true }
                })
                .collect();
            return Ok(CompiledQuery {
                statements,
                columns,
                keys: key_defs,
                selection,
                key_exprs: keys,
                currency_of,
                limit,
                offset: 0,
            });
        }
        let mut order = if ranked { "ft.rank ASC, ".to_string() } else { String::new() };
        order.push_str(&keyset::order_by(&keys, ROWID));
        let offset = spec.offset.unwrap_or(0);
        let statement = if limit != u32::MAX {
            let fetch = (limit as f64) + if unlimited { 0.0 } else { 1.0 };
            single(
                format!(" ORDER BY {order} LIMIT ? OFFSET ?"),
                vec![Scalar::Num(fetch), Scalar::Num(offset as f64)],
            )
        } else if offset > 0 {
            single(format!(" ORDER BY {order} LIMIT -1 OFFSET ?"), vec![Scalar::Num(offset as f64)])
        } else {
            single(format!(" ORDER BY {order}"), vec![])
        };
        Ok(CompiledQuery {
            statements: vec![statement],
            columns,
            keys: Vec::new(),
            selection,
            key_exprs: keys,
            limit,
            offset,
            currency_of,
        })
    }

    /// A spec's `search` as SQL on the row `t`: any short text field the user can read contains
    /// `text` (its object's trigram index finds the rows, then each field is checked as a
    /// `contains` is), or a readable lookup's parent, one the user can read, has a name that
    /// does, or a readable long text holds its words (the corpus). Nothing searchable: no row.
    fn search_sql(&self, meta: &ObjectMeta, text: &str, params: &mut Vec<Scalar>) -> Result<String> {
        let readable = self.readable_fields(meta.key())?;
        let mut any = Vec::new();
        let short: Vec<&FieldDef> =
            readable.iter().copied().filter(|f| text_index::indexes(f.field_type)).collect();
        if !short.is_empty() {
            any.push(contains_any(meta.key(), "t", &short, text, params));
        }
        for lookup in readable.iter().filter(|f| f.field_type == FieldType::Lookup) {
            let Ok((target, _)) = self.readable_object(lookup.target.as_deref().unwrap_or_default()) else {
                continue;
            };
            let Ok((_, name)) = self.readable_field(target, &target.def.name_field) else { continue };
            if !text_index::indexes(name.field_type) {
                continue;
            }
            let alias = format!("s{}", any.len());
            let mut inner = contains_any(target.key(), &alias, &[name], text, params);
            if let Some(filter) = self.row_filter(target, &alias, RowAccess::Read, params) {
                inner = format!("{inner} AND {filter}");
            }
            any.push(format!(
                "t.{} IN (SELECT {alias}.id FROM {} {alias} WHERE {inner})",
                column(&lookup.key),
                target.table
            ));
        }
        let long: Vec<&FieldDef> =
            readable.iter().copied().filter(|f| f.field_type == FieldType::LongText).collect();
        if let (false, Some(words)) = (long.is_empty(), all_words(text)) {
            params.push(Scalar::Text(words));
            params.push(Scalar::Text(meta.key().to_string()));
            params.extend(long.iter().map(|f| Scalar::Text(f.key.clone())));
            any.push(format!(
                "t.id IN (SELECT record_id FROM corpus WHERE corpus MATCH ? AND object = ? AND field IN ({}))",
                vec!["?"; long.len()].join(", ")
            ));
        }
        if any.is_empty() {
            return Ok("0".into());
        }
        Ok(format!("({})", any.join(" OR ")))
    }

    /// A cursor's values as the sort keys' stored forms: one per key with `row`, at most one
    /// per key without it (the leading keys to jump to).
    fn cursor_values(&self, c: &Cursor, sort: &[SortKey], defs: &[FieldDef]) -> Result<Vec<Scalar>> {
        let whole = c.row.is_some();
        if c.values.len() > defs.len() || (whole && c.values.len() != defs.len()) {
            return Err(Error::new(
                Code::InvalidQuery,
                format!(
                    "after holds {} value(s) for {} sort key(s){}",
                    c.values.len(),
                    defs.len(),
                    if whole { "; with row it holds one per key" } else { "" }
                ),
            ));
        }
        c.values
            .iter()
            .zip(defs)
            .zip(sort)
            .map(|((v, def), k)| {
                crate::metadata::value::coerce(def, v)
                    .map_err(|m| Error::on_field(Code::InvalidQuery, k.field.clone(), format!("after: {m}")))
            })
            .collect()
    }

    /// Run a query spec as this user.
    pub fn query(&self, spec: &QuerySpec) -> Result<QueryResult> {
        let q = self.compile_query(spec, false)?;
        self.note_use(spec);
        let mut records = Vec::new();
        let mut has_more = false;
        let mut last = None;
        self.for_each_row(&q, |row| {
            if records.len() as u32 == q.limit {
                has_more = true;
                return Ok(false);
            }
            let mut m = Map::with_capacity(row.values.len() + 1);
            m.insert("id".into(), Value::String(row.id));
            for (c, v) in q.columns.iter().zip(row.values) {
                m.insert(c.path.clone(), v.to_json(Some(&c.def)));
            }
            records.push(m);
            last = row.key;
            Ok(true)
        })?;
        let next = match (has_more, last) {
            (true, Some((values, rowid))) => Some(Cursor {
                values: values.iter().zip(&q.keys).map(|(v, d)| v.to_json(Some(d))).collect(),
                row: Some(rowid),
            }),
            _ => None,
        };
        Ok(QueryResult {
            object: spec.object.clone(),
            fields: q.columns.iter().filter(|c| !c.hidden).map(|c| c.path.clone()).collect(),
            currency_of: q.currency_of.iter().cloned().collect(),
            records,
            has_more,
            limit: q.limit,
            offset: q.offset,
            next,
        })
    }

    /// Stream rows of a compiled query, statement after statement; `f` returns false to stop.
    pub(crate) fn for_each_row(
        &self,
        q: &CompiledQuery,
        mut f: impl FnMut(Row) -> Result<bool>,
    ) -> Result<()> {
        // The rows wanted in all: one more than the page shows tells whether more exist.
        let mut wanted = q.limit.saturating_add(1) as usize;
        for st in &q.statements {
            let mut stmt = self.ws.conn().prepare_cached(&st.sql)?;
            let mut params: Vec<&dyn rusqlite::ToSql> =
                st.params.iter().map(|p| p as &dyn rusqlite::ToSql).collect();
            let bound = wanted as i64;
            if st.paged {
                params.push(&bound);
            }
            let mut rows = stmt.query(params.as_slice())?;
            while let Some(r) = rows.next()? {
                let id: String = r.get(0)?;
                let n = q.columns.len();
                let mut values = Vec::with_capacity(n);
                for (i, c) in q.columns.iter().enumerate() {
                    values.push(Scalar::from_column(c.def.field_type, r.get_ref(i + 1)?));
                }
                let key = st.paged.then(|| -> Result<_> {
                    let mut ks = Vec::with_capacity(q.keys.len());
                    for (i, d) in q.keys.iter().enumerate() {
                        ks.push(Scalar::from_column(d.field_type, r.get_ref(n + 1 + i)?));
                    }
                    Ok((ks, r.get::<_, i64>(n + 1 + q.keys.len())?))
                });
                let key = key.transpose()?;
                if !f(Row { id, values, key })? {
                    return Ok(());
                }
                wanted = wanted.saturating_sub(1);
            }
            if st.paged && wanted == 0 {
                break;
            }
        }
        Ok(())
    }

    /// The cursor of the row at `position` (from 0) in the spec's order, for a page to start
    /// after it: where a scroll bar dragged that far down starts reading (`None` at 0, or past
    /// the end). Only the sort keys of the rows passed over are read, part by part of keyset
    /// paging (each a range of the sort's index), so no row itself is fetched.
    pub fn cursor_at(&self, spec: &QuerySpec, position: u64) -> Result<Option<Cursor>> {
        if position == 0 {
            return Ok(None);
        }
        let unpaged = QuerySpec { limit: Some(1), offset: None, after: None, ..spec.clone() };
        let q = self.compile_query(&unpaged, false)?;
        let keys = key_columns(&q.key_exprs);
        let mut left = position - 1;
        for part in keyset::parts(&q.key_exprs, ROWID, &[], None) {
            let selection = q.selection.sql(part.condition.as_deref());
            let mut params: Vec<Scalar> = q.selection.params.clone();
            params.extend(part.params);
            let found = self
                .ws
                .conn()
                .prepare_cached(&format!(
                    "SELECT {keys}{selection} ORDER BY {} LIMIT 1 OFFSET ?",
                    part.order
                ))?
                .query_row(
                    rusqlite::params_from_iter(params.iter().chain([&Scalar::Num(left as f64)])),
                    |r| {
                        let mut values = Vec::with_capacity(q.keys.len());
                        for (i, d) in q.keys.iter().enumerate() {
                            values.push(Scalar::from_column(d.field_type, r.get_ref(i)?).to_json(Some(d)));
                        }
                        Ok(Cursor { values, row: Some(r.get(q.keys.len())?) })
                    },
                )
                .optional()?;
            if found.is_some() {
                return Ok(found);
            }
            let n: i64 = self
                .ws
                .conn()
                .prepare_cached(&format!("SELECT count(*){selection}"))?
                .query_row(rusqlite::params_from_iter(params.iter()), |r| r.get(0))?;
            left = left.saturating_sub(n.max(0) as u64);
        }
        Ok(None)
    }

    /// How many rows sort before the first row reaching `values` (the leading sort keys'):
    /// the position a jump to those values scrolls to.
    pub fn position_of(&self, spec: &QuerySpec, values: &[Value]) -> Result<u64> {
        let from = Cursor { values: values.to_vec(), row: None };
        let unpaged = QuerySpec { limit: Some(1), offset: None, after: None, ..spec.clone() };
        let q = self.compile_query(&unpaged, false)?;
        let values = self.cursor_values(&from, &spec.sort, &q.keys)?;
        let count = |cond: Option<&str>, extra: Vec<Scalar>| -> Result<u64> {
            let mut params = q.selection.params.clone();
            params.extend(extra);
            let n: i64 = self
                .ws
                .conn()
                .prepare_cached(&format!("SELECT count(*){}", q.selection.sql(cond)))?
                .query_row(rusqlite::params_from_iter(params.iter()), |r| r.get(0))?;
            Ok(n.max(0) as u64)
        };
        let mut reaching = 0;
        for part in keyset::parts(&q.key_exprs, ROWID, &values, None) {
            reaching += count(part.condition.as_deref(), part.params)?;
        }
        Ok(count(None, vec![])?.saturating_sub(reaching))
    }

    /// How SQLite runs the first statement of a spec for this user (`EXPLAIN QUERY PLAN`, one
    /// step per line): what tells whether an index serves it.
    pub fn plan(&self, spec: &QuerySpec) -> Result<String> {
        let q = self.compile_query(spec, false)?;
        let st = &q.statements[0];
        let mut params: Vec<&dyn rusqlite::ToSql> =
            st.params.iter().map(|p| p as &dyn rusqlite::ToSql).collect();
        let limit = 1i64;
        if st.paged {
            params.push(&limit);
        }
        let mut stmt = self.ws.conn().prepare(&format!("EXPLAIN QUERY PLAN {}", st.sql))?;
        let steps = stmt.query_map(params.as_slice(), |r| r.get::<_, String>(3))?;
        Ok(steps.collect::<rusqlite::Result<Vec<_>>>()?.join("\n"))
    }

    /// The SQL a spec becomes for this user (for `explain` and tests): its statements, one
    /// per line.
    pub fn explain(&self, spec: &QuerySpec) -> Result<String> {
        let q = self.compile_query(spec, false)?;
        Ok(q.statements.iter().map(|s| s.sql.as_str()).collect::<Vec<_>>().join("\n"))
    }
}

/// Ties are broken by the row's place in its table, so that paging is stable.
const ROWID: &str = "t.rowid";

/// The sort keys and the rowid, as a select list.
fn key_columns(keys: &[Key]) -> String {
    let mut out: Vec<&str> = keys.iter().map(|k| k.expr.as_str()).collect();
    out.push(ROWID);
    out.join(", ")
}

/// One row read by a compiled query.
pub(crate) struct Row {
    pub id: String,
    pub values: Vec<Scalar>,
    /// For a keyset page: the sort keys' values and the rowid (what the next cursor holds).
    pub key: Option<(Vec<Scalar>, i64)>,
}

/// A saved list view: a named query spec of one user (Ask answers are saved as these).
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListView {
    pub object: String,
    pub name: String,
    pub spec: QuerySpec,
    /// The question it came from, when saved from Ask.
    #[ts(optional)]
    pub source: Option<String>,
    pub created_at: String,
}

impl Session<'_> {
    /// Save (or replace) one of the user's list views. The spec must run for this user now.
    pub fn save_list_view(&self, name: &str, spec: &QuerySpec, source: Option<&str>) -> Result<ListView> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 80 {
            return Err(Error::on_field(
                Code::InvalidValue,
                "name",
                "a view needs a name of 1 to 80 characters",
            ));
        }
        self.compile_query(spec, false)?;
        let mut spec = spec.clone();
        spec.offset = None;
        let text = serde_json::to_string(&spec).map_err(|e| Error::internal(e.to_string()))?;
        let now = crate::clock::timestamp(self.ws.clock.now());
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO list_view (owner, object, name, spec, source, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (owner, object, name) DO UPDATE SET spec = ?4, source = ?5, created_at = ?6",
            rusqlite::params![self.user.key, spec.object, name, text, source, now],
        )?;
        tx.commit()?;
        Ok(ListView {
            object: spec.object.clone(),
            name: name.to_string(),
            spec,
            source: source.map(String::from),
            created_at: now,
        })
    }

    /// The user's views of an object (views whose spec no longer compiles are left out).
    pub fn list_views(&self, object: &str) -> Result<Vec<ListView>> {
        self.readable_object(object)?;
        let mut stmt = self.ws.conn().prepare(
            "SELECT name, spec, source, created_at FROM list_view WHERE owner = ?1 AND object = ?2 ORDER BY name",
        )?;
        let rows = stmt.query_map(rusqlite::params![self.user.key, object], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut out = vec![];
        for row in rows {
            let (name, spec, source, created_at) = row?;
            let Ok(spec) = serde_json::from_str::<QuerySpec>(&spec) else { continue };
            if self.compile_query(&spec, false).is_ok() {
                out.push(ListView { object: object.to_string(), name, spec, source, created_at });
            }
        }
        Ok(out)
    }
}
