//! The condition tree shared by validation rules (`assert`) and query specs (`filters`):
//! `{"all": […]}`, `{"any": […]}`, `{"not": …}`, `{"field", "op", "value" | "otherField"}`.
//!
//! A tree is compiled against an object (fields resolved, operands coerced to the field's
//! type) into a [`Predicate`], which can be evaluated in memory (validation rules, on the
//! record about to be saved) or rendered as SQL (queries). Both use the same two-valued logic,
//! so a filter selects exactly the records for which the same tree holds in memory:
//! a comparison with a blank side is false (`eq`, `lt`, …, `in`, `contains`), `ne` is
//! `not eq`, `is_blank`/`is_set` test for blank. `contains` is case-insensitive for ASCII.

use crate::error::{Code, Error, Result};
use crate::metadata::types::{FieldDef, FieldType, Has, Related};
use crate::metadata::value::{coerce, Scalar};
use serde_json::Value;
use std::cmp::Ordering;

pub use crate::metadata::types::{AllOf, AnyOf, Comparison, Condition, NotOf, Op};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Textual,
    Numeric,
    Date,
    Datetime,
    Boolean,
}

fn family(t: FieldType) -> Family {
    match t {
        FieldType::Number | FieldType::Currency => Family::Numeric,
        FieldType::Date => Family::Date,
        FieldType::Datetime => Family::Datetime,
        FieldType::Boolean => Family::Boolean,
        _ => Family::Textual,
    }
}

/// Whether `op` applies to a field of type `t`.
pub fn check_op(t: FieldType, op: Op) -> Result<()> {
    use FieldType as T;
    let ok = match op {
        Op::Eq | Op::Ne | Op::IsSet | Op::IsBlank => true,
        Op::In => t != T::Boolean,
        Op::Lt | Op::Lte | Op::Gt | Op::Gte => !matches!(t, T::Boolean | T::Picklist | T::Lookup),
        Op::Contains => t.is_textual(),
        Op::Matches => t == T::LongText,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            Code::InvalidQuery,
            format!("the operator `{}` does not apply to a {} field", op.as_str(), type_name(t)),
        ))
    }
}

/// Whether two fields can be compared with `otherField`.
pub fn check_comparable(a: FieldType, b: FieldType) -> Result<()> {
    if family(a) == family(b) {
        Ok(())
    } else {
        Err(Error::new(
            Code::InvalidQuery,
            format!("a {} field cannot be compared with a {} field", type_name(a), type_name(b)),
        ))
    }
}

pub fn type_name(t: FieldType) -> &'static str {
    match t {
        FieldType::Text => "text",
        FieldType::LongText => "long text",
        FieldType::Number => "number",
        FieldType::Currency => "currency",
        FieldType::Date => "date",
        FieldType::Datetime => "date/time",
        FieldType::Boolean => "boolean",
        FieldType::Picklist => "picklist",
        FieldType::Lookup => "lookup",
        FieldType::Email => "e-mail",
        FieldType::Phone => "phone",
        FieldType::Url => "URL",
    }
}

/// A field as a condition sees it: its SQL expression, its slot in an in-memory record, and
/// its definition.
#[derive(Debug, Clone)]
pub struct Operand {
    pub expr: String,
    pub slot: usize,
    pub def: Box<FieldDef>,
    /// In a query: the object and table alias of the row the field is read from (a full-text
    /// `matches` finds that row's id in the corpus). `None` where a condition is evaluated on
    /// one record in memory (validation rules).
    pub row: Option<(String, String)>,
    /// An FTS5 trigram index holding this column (as `f_{key}`), whose rowids are the row's (a
    /// short text field's: `records::text_index`): a `contains` of three or more characters
    /// reads its matches from it instead of every row.
    pub text_index: Option<String>,
}

#[derive(Debug, Clone)]
pub enum Rhs {
    None,
    Value(Scalar),
    Values(Vec<Scalar>),
    Field(Operand),
}

#[derive(Debug, Clone)]
pub enum Predicate {
    All(Vec<Predicate>),
    Any(Vec<Predicate>),
    Not(Box<Predicate>),
    Cmp {
        lhs: Operand,
        op: Op,
        rhs: Rhs,
    },
    /// A condition on related records, compiled by the query to SQL (`EXISTS …`) with its
    /// parameters. Never in memory: validation rules cannot hold one.
    Sql {
        sql: String,
        params: Vec<Scalar>,
    },
}

/// Coerce a comparison operand: the field's type, but without the precision, scale and
/// length limits of a stored value (`amount > 1000.5` is a fine filter on a whole-number field).
fn coerce_operand(def: &FieldDef, v: &Value) -> Result<Scalar> {
    let mut relaxed = def.clone();
    relaxed.precision = relaxed.precision.map(|_| 36);
    relaxed.scale = relaxed.scale.map(|_| 18);
    relaxed.max_length = Some(1_000_000);
    if matches!(def.field_type, FieldType::Email | FieldType::Phone | FieldType::Url) {
        // `email contains "acme"` is a fine filter; formats bind stored values, not searches.
        relaxed.field_type = FieldType::Text;
    }
    match coerce(&relaxed, v) {
        Ok(Scalar::Null) => Err(Error::on_field(
            Code::InvalidQuery,
            def.key.clone(),
            "a comparison needs a value; use is_blank / is_set to test for blank",
        )),
        Ok(s) => Ok(s),
        Err(m) => Err(Error::on_field(Code::InvalidQuery, def.key.clone(), m)),
    }
}

impl Condition {
    /// `field op value`: a comparison with a value (not another field).
    pub fn compare(field: impl Into<String>, op: Op, value: Value) -> Condition {
        Condition::Compare(Comparison { field: field.into(), op, value: Some(value), other_field: None })
    }

    /// A comparison that takes no value: `is_set`, `is_blank`.
    pub fn unary(field: impl Into<String>, op: Op) -> Condition {
        Condition::Compare(Comparison { field: field.into(), op, value: None, other_field: None })
    }

    /// Every field path the condition reads (`field` and `otherField`).
    pub fn fields(&self) -> Vec<&str> {
        match self {
            Condition::All(a) => a.all.iter().flat_map(Condition::fields).collect(),
            Condition::Any(a) => a.any.iter().flat_map(Condition::fields).collect(),
            Condition::Not(n) => n.not.fields(),
            // Its fields are the related object's, not this one's.
            Condition::Related(_) => vec![],
            Condition::Compare(c) => {
                std::iter::once(c.field.as_str()).chain(c.other_field.as_deref()).collect()
            }
        }
    }

    /// The same condition read through a lookup: every path gets `lookup.` in front (a
    /// parent's term on a child: `account.` + `type`).
    pub fn through(&self, lookup: &str) -> Condition {
        let path = |f: &str| format!("{lookup}.{f}");
        match self {
            Condition::All(a) => {
                Condition::All(AllOf { all: a.all.iter().map(|c| c.through(lookup)).collect() })
            }
            Condition::Any(a) => {
                Condition::Any(AnyOf { any: a.any.iter().map(|c| c.through(lookup)).collect() })
            }
            Condition::Not(n) => Condition::Not(NotOf { not: Box::new(n.not.through(lookup)) }),
            // Related records are one hop down from the record itself; a query names them
            // only on that record's own object.
            Condition::Related(r) => Condition::Related(r.clone()),
            Condition::Compare(c) => Condition::Compare(Comparison {
                field: path(&c.field),
                op: c.op,
                value: c.value.clone(),
                other_field: c.other_field.as_deref().map(path),
            }),
        }
    }

    /// Compile against an object. `resolve` maps a field path to its operand, or fails with a
    /// typed error (unknown or unreadable fields are the same error: absent).
    pub fn compile(&self, resolve: &mut dyn FnMut(&str) -> Result<Operand>) -> Result<Predicate> {
        self.compile_with(resolve, &mut |_| {
            Err(Error::new(Code::InvalidQuery, "a condition on related records cannot be used here"))
        })
    }

    /// [`compile`](Self::compile), with `related` compiling a condition on related records
    /// (the query does, with the child's row access).
    pub fn compile_with(
        &self,
        resolve: &mut dyn FnMut(&str) -> Result<Operand>,
        related: &mut dyn FnMut(&Related) -> Result<Predicate>,
    ) -> Result<Predicate> {
        Ok(match self {
            Condition::All(a) => {
                Predicate::All(a.all.iter().map(|c| c.compile_with(resolve, related)).collect::<Result<_>>()?)
            }
            Condition::Any(a) => {
                Predicate::Any(a.any.iter().map(|c| c.compile_with(resolve, related)).collect::<Result<_>>()?)
            }
            Condition::Not(n) => Predicate::Not(Box::new(n.not.compile_with(resolve, related)?)),
            Condition::Related(r) => {
                if (r.related.has == Has::AtLeast) != r.related.count.is_some() {
                    return Err(Error::new(
                        Code::InvalidQuery,
                        "`count` goes with `has: at_least`, and only with it",
                    ));
                }
                related(&r.related)?
            }
            Condition::Compare(c) => {
                let lhs = resolve(&c.field)?;
                let t = lhs.def.field_type;
                check_op(t, c.op).map_err(|e| e.with_field(c.field.clone()))?;
                let rhs = match (c.op, &c.value, &c.other_field) {
                    (Op::IsSet | Op::IsBlank, None, None) => Rhs::None,
                    (Op::IsSet | Op::IsBlank, _, _) => {
                        return Err(Error::on_field(
                            Code::InvalidQuery,
                            c.field.clone(),
                            format!("`{}` takes no value", c.op.as_str()),
                        ))
                    }
                    (_, Some(_), Some(_)) => {
                        return Err(Error::on_field(
                            Code::InvalidQuery,
                            c.field.clone(),
                            "give either `value` or `otherField`, not both",
                        ))
                    }
                    (Op::In, Some(Value::Array(items)), None) if !items.is_empty() => Rhs::Values(
                        items
                            .iter()
                            .map(|v| coerce_operand(&lhs.def, v).map_err(|e| e.with_field(c.field.clone())))
                            .collect::<Result<_>>()?,
                    ),
                    (Op::In, _, _) => {
                        return Err(Error::on_field(
                            Code::InvalidQuery,
                            c.field.clone(),
                            "`in` needs a non-empty list `value`",
                        ))
                    }
                    (_, Some(Value::Array(_)), None) => {
                        return Err(Error::on_field(
                            Code::InvalidQuery,
                            c.field.clone(),
                            format!("`{}` takes one value, not a list", c.op.as_str()),
                        ))
                    }
                    (Op::Matches, Some(v), None) => {
                        if lhs.row.is_none() {
                            return Err(Error::on_field(
                                Code::InvalidQuery,
                                c.field.clone(),
                                "`matches` (full-text) is for queries, not for rules",
                            ));
                        }
                        let words = v.as_str().and_then(full_text_query).ok_or_else(|| {
                            Error::on_field(
                                Code::InvalidQuery,
                                c.field.clone(),
                                "`matches` needs a text value with at least one word",
                            )
                        })?;
                        Rhs::Value(Scalar::Text(words))
                    }
                    (_, Some(v), None) => {
                        Rhs::Value(coerce_operand(&lhs.def, v).map_err(|e| e.with_field(c.field.clone()))?)
                    }
                    (_, None, Some(other)) => {
                        let o = resolve(other)?;
                        check_comparable(t, o.def.field_type).map_err(|e| e.with_field(c.field.clone()))?;
                        Rhs::Field(o)
                    }
                    (_, None, None) => {
                        return Err(Error::on_field(
                            Code::InvalidQuery,
                            c.field.clone(),
                            format!("`{}` needs a `value` or an `otherField`", c.op.as_str()),
                        ))
                    }
                };
                Predicate::Cmp { lhs, op: c.op, rhs }
            }
        })
    }
}

/// The words of a full-text value as an FTS5 query: each word quoted (so nothing in it is
/// query syntax), all of them required, at most 16. `None` when it has no word.
pub fn full_text_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(16)
        .map(|w| format!("\"{w}\""))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

fn equal(a: &Scalar, b: &Scalar) -> bool {
    !a.is_null() && !b.is_null() && a == b
}

fn order(a: &Scalar, b: &Scalar) -> Option<Ordering> {
    match (a, b) {
        (Scalar::Num(x), Scalar::Num(y)) => x.partial_cmp(y),
        (Scalar::Text(x), Scalar::Text(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Scalar::Bool(x), Scalar::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// The corpus rows of one long text field a full-text query matches (records/corpus.rs holds
/// every long text, stemmed); its parameters are the words, the object and the field.
pub const CORPUS_MATCH: &str = "corpus MATCH ? AND object = ? AND field = ?";

/// A `MATCH` for `needle` in the given columns (bare names, `f_key`) of a trigram index
/// (`records::text_index`): a phrase, quoted, so the needle's own characters are never
/// operators.
pub(crate) fn trigram_match(cols: &[&str], needle: &str) -> String {
    let phrase = format!("\"{}\"", needle.replace('"', "\"\""));
    match cols {
        [] => phrase,
        [one] => format!("{one} : {phrase}"),
        many => format!("{{{}}} : {phrase}", many.join(" ")),
    }
}

/// A full-text comparison that every matching row satisfies: the row alias, object and field
/// it searches, and its words (the query ranks its rows by it).
pub struct Ranking {
    pub alias: String,
    pub object: String,
    pub field: String,
    pub words: Scalar,
}

impl Predicate {
    /// The first `matches` that every row the predicate selects satisfies (one on its own or
    /// a member of a top-level `all`), if there is one.
    pub fn ranking(&self) -> Option<Ranking> {
        match self {
            Predicate::All(ps) => ps.iter().find_map(Predicate::ranking),
            Predicate::Cmp { lhs, op: Op::Matches, rhs: Rhs::Value(words) } => {
                let (object, alias) = lhs.row.clone()?;
                Some(Ranking { alias, object, field: lhs.def.key.clone(), words: words.clone() })
            }
            _ => None,
        }
    }

    /// Evaluate on an in-memory record whose values are indexed by operand slot.
    pub fn eval(&self, record: &[Scalar]) -> bool {
        match self {
            Predicate::All(ps) => ps.iter().all(|p| p.eval(record)),
            Predicate::Any(ps) => ps.iter().any(|p| p.eval(record)),
            Predicate::Not(p) => !p.eval(record),
            Predicate::Sql { .. } => false,
            Predicate::Cmp { lhs, op, rhs } => {
                let l = &record[lhs.slot];
                let r = match rhs {
                    Rhs::None | Rhs::Values(_) => &Scalar::Null,
                    Rhs::Value(v) => v,
                    Rhs::Field(o) => &record[o.slot],
                };
                match op {
                    Op::IsSet => !l.is_null(),
                    Op::IsBlank => l.is_null(),
                    Op::Eq => equal(l, r),
                    Op::Ne => !equal(l, r),
                    Op::In => match rhs {
                        Rhs::Values(vs) => vs.iter().any(|v| equal(l, v)),
                        _ => false,
                    },
                    // Refused when compiled for a record in memory.
                    Op::Matches => false,
                    Op::Contains => match (l, r) {
                        (Scalar::Text(h), Scalar::Text(n)) => {
                            h.to_ascii_lowercase().contains(&n.to_ascii_lowercase())
                        }
                        _ => false,
                    },
                    Op::Lt | Op::Lte | Op::Gt | Op::Gte => {
                        if l.is_null() || r.is_null() {
                            return false;
                        }
                        match order(l, r) {
                            Some(o) => match op {
                                Op::Lt => o == Ordering::Less,
                                Op::Lte => o != Ordering::Greater,
                                Op::Gt => o == Ordering::Greater,
                                _ => o != Ordering::Less,
                            },
                            None => false,
                        }
                    }
                }
            }
        }
    }

    /// Render as a SQL boolean expression that is never NULL, pushing parameters in order.
    pub fn to_sql(&self, sql: &mut String, params: &mut Vec<Scalar>) {
        match self {
            Predicate::All(ps) | Predicate::Any(ps) => {
                let joiner = if matches!(self, Predicate::All(_)) { " AND " } else { " OR " };
                sql.push('(');
                for (i, p) in ps.iter().enumerate() {
                    if i > 0 {
                        sql.push_str(joiner);
                    }
                    p.to_sql(sql, params);
                }
                sql.push(')');
            }
            Predicate::Not(p) => {
                sql.push_str("(NOT ");
                p.to_sql(sql, params);
                sql.push(')');
            }
            Predicate::Sql { sql: s, params: p } => {
                sql.push_str(s);
                params.extend(p.iter().cloned());
            }
            Predicate::Cmp { lhs, op, rhs } => {
                let l = &lhs.expr;
                if *op == Op::Ne {
                    sql.push_str("(NOT ");
                    Predicate::Cmp { lhs: lhs.clone(), op: Op::Eq, rhs: rhs.clone() }.to_sql(sql, params);
                    sql.push(')');
                    return;
                }
                match op {
                    Op::IsSet => return sql.push_str(&format!("({l} IS NOT NULL)")),
                    Op::IsBlank => return sql.push_str(&format!("({l} IS NULL)")),
                    Op::Matches => {
                        // The corpus (records/corpus.rs) holds every long text, stemmed.
                        let (Some((object, alias)), Rhs::Value(words)) = (&lhs.row, rhs) else {
                            return sql.push_str("(0)");
                        };
                        sql.push_str(&format!(
                            "({alias}.id IN (SELECT record_id FROM corpus WHERE {CORPUS_MATCH}))"
                        ));
                        params.push(words.clone());
                        params.push(Scalar::Text(object.clone()));
                        params.push(Scalar::Text(lhs.def.key.clone()));
                        return;
                    }
                    _ => {}
                }
                // Narrowed by the trigram index, then checked as always (the index folds case
                // beyond ASCII; `lower` does not).
                let narrowed = match (op, rhs, &lhs.text_index, &lhs.row) {
                    (Op::Contains, Rhs::Value(Scalar::Text(n)), Some(index), Some((_, alias)))
                        if n.chars().count() >= 3 =>
                    {
                        sql.push_str(&format!(
                            "({alias}.rowid IN (SELECT rowid FROM \"{index}\" WHERE \"{index}\" MATCH ?) AND "
                        ));
                        params.push(Scalar::Text(trigram_match(&[&format!("f_{}", lhs.def.key)], n)));
                        true
                    }
                    _ => false,
                };
                let r = match rhs {
                    Rhs::Field(o) => {
                        sql.push_str(&format!("({l} IS NOT NULL AND {} IS NOT NULL AND ", o.expr));
                        o.expr.clone()
                    }
                    Rhs::Value(v) => {
                        sql.push_str(&format!("({l} IS NOT NULL AND "));
                        params.push(v.clone());
                        "?".to_string()
                    }
                    Rhs::Values(vs) => {
                        sql.push_str(&format!("({l} IS NOT NULL AND "));
                        params.extend(vs.iter().cloned());
                        format!("({})", vec!["?"; vs.len()].join(", "))
                    }
                    Rhs::None => "NULL".to_string(),
                };
                let cmp = match op {
                    Op::Eq => format!("{l} = {r}"),
                    Op::Lt => format!("{l} < {r}"),
                    Op::Lte => format!("{l} <= {r}"),
                    Op::Gt => format!("{l} > {r}"),
                    Op::Gte => format!("{l} >= {r}"),
                    Op::In => format!("{l} IN {r}"),
                    Op::Contains => format!("instr(lower({l}), lower({r})) > 0"),
                    Op::Ne | Op::IsSet | Op::IsBlank | Op::Matches => unreachable!("handled above"),
                };
                sql.push_str(&cmp);
                sql.push(')');
                if narrowed {
                    sql.push(')');
                }
            }
        }
    }
}
