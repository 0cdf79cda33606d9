//! Keyset paging: a page starts where the last one ended, found through the sort's index
//! instead of counted off from the first row (`OFFSET` reads every row it skips).
//!
//! A sorted list orders rows by its sort keys, blanks last in both directions, then by `rowid`
//! (the row's place in its table, unique and stable while the list is paged). A page after the
//! row with sort values `v1…vn` and rowid `r` holds, in order:
//!
//! 1. rows equal on every key, `rowid > r`;
//! 2. for `i = n … 1`: rows equal on keys `1…i-1`, key `i` strictly after `vi` — first the
//!    non-blank ones (`ki > vi`, or `<` descending), then the blank ones (when `vi` is not blank:
//!    blanks come last).
//!
//! Each part is one statement whose condition is a range or an equality on the sort columns, so
//! SQLite seeks an index on them instead of walking from the first row. The parts run in turn
//! until the page is full. A row-value comparison over all keys would be one statement, but it
//! cannot say "blanks last", and SQLite does not seek expression indexes with it.

use crate::metadata::value::Scalar;
use crate::records::query::Direction;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// Where a page of a sorted list starts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields)]
pub struct Cursor {
    /// The sort keys' values of the row the page starts after; without `row`, the values of
    /// the leading keys the page starts from (jump to a value: the first row reaching them).
    #[ts(as = "Vec<Value>")]
    pub values: Vec<Value>,
    /// The row the page starts after, among rows with the same values (from `next`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub row: Option<i64>,
}

/// One sort key as SQL.
#[derive(Debug, Clone)]
pub(crate) struct Key {
    pub expr: String,
    pub direction: Direction,
}

/// One statement of a keyset page: a condition added to the query's own, and its order.
#[derive(Debug, PartialEq)]
pub(crate) struct Part {
    pub condition: Option<String>,
    pub params: Vec<Scalar>,
    pub order: String,
}

/// How the whole list is ordered, as one `ORDER BY` (for `OFFSET` paging and unpaged reads):
/// the same order the parts give, one after another.
pub(crate) fn order_by(keys: &[Key], rowid: &str) -> String {
    let mut out: Vec<String> = keys.iter().map(blanks_last).collect();
    out.push(format!("{rowid} ASC"));
    out.join(", ")
}

fn blanks_last(k: &Key) -> String {
    // SQLite sorts NULL lowest, so descending already puts blanks last.
    match k.direction {
        Direction::Asc => format!("({e} IS NULL), {e} ASC", e = k.expr),
        Direction::Desc => format!("{} DESC", k.expr),
    }
}

/// The statements of one page, in order. `from` holds the cursor's values, already checked
/// against the keys' types (at most one per key); `after` the row it starts after.
pub(crate) fn parts(keys: &[Key], rowid: &str, from: &[Scalar], after: Option<i64>) -> Vec<Part> {
    let mut out = Vec::new();
    // Rows equal on the first `held` keys.
    let equal = |held: usize| -> (Vec<String>, Vec<Scalar>) {
        let mut conds = Vec::new();
        let mut params = Vec::new();
        for (k, v) in keys.iter().zip(from).take(held) {
            if v.is_null() {
                conds.push(format!("{} IS NULL", k.expr));
            } else {
                conds.push(format!("{} = ?", k.expr));
                params.push(v.clone());
            }
        }
        (conds, params)
    };
    let finish = |conds: Vec<String>, params: Vec<Scalar>, order: Vec<String>| Part {
        condition: (!conds.is_empty()).then(|| conds.join(" AND ")),
        params,
        order: order.join(", "),
    };
    // The rest of the order after `key` keys are fixed.
    let rest = |from_key: usize| -> Vec<String> {
        let mut order: Vec<String> = keys[from_key..].iter().map(blanks_last).collect();
        order.push(format!("{rowid} ASC"));
        order
    };
    let held = from.len().min(keys.len());
    match (after, held == keys.len()) {
        (Some(r), true) => {
            let (mut conds, mut params) = equal(held);
            conds.push(format!("{rowid} > ?"));
            params.push(Scalar::Num(r as f64));
            out.push(finish(conds, params, vec![format!("{rowid} ASC")]));
        }
        // Every row equal on the held keys, from the first: split on the next key's blanks
        // so that the non-blank ones are a range of its index.
        _ => {
            let (conds, params) = equal(held);
            match keys.get(held) {
                None => out.push(finish(conds, params, rest(held))),
                Some(k) => {
                    let mut set = conds.clone();
                    set.push(format!("{} IS NOT NULL", k.expr));
                    let mut order = vec![plain(k)];
                    order.extend(rest(held + 1));
                    out.push(finish(set, params.clone(), order));
                    let mut blank = conds;
                    blank.push(format!("{} IS NULL", k.expr));
                    out.push(finish(blank, params, rest(held + 1)));
                }
            }
        }
    }
    // Then, key by key from the last held one, the rows strictly after its value.
    for i in (0..held).rev() {
        let v = &from[i];
        if v.is_null() {
            continue; // nothing sorts after a blank but blanks, already covered
        }
        let k = &keys[i];
        let (conds, params) = equal(i);
        let mut after_conds = conds.clone();
        let op = match k.direction {
            Direction::Asc => ">",
            Direction::Desc => "<",
        };
        after_conds.push(format!("{} {op} ?", k.expr));
        let mut after_params = params.clone();
        after_params.push(v.clone());
        let mut order = vec![plain(k)];
        order.extend(rest(i + 1));
        out.push(finish(after_conds, after_params, order));
        let mut blank = conds;
        blank.push(format!("{} IS NULL", k.expr));
        out.push(finish(blank, params, rest(i + 1)));
    }
    out
}

/// A key's order among its non-blank values.
fn plain(k: &Key) -> String {
    match k.direction {
        Direction::Asc => format!("{} ASC", k.expr),
        Direction::Desc => format!("{} DESC", k.expr),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(e: &str, d: Direction) -> Key {
        Key { expr: e.into(), direction: d }
    }

    #[test]
    fn a_first_page_is_the_non_blank_range_then_the_blanks() {
        let p = parts(&[key("t.a", Direction::Desc)], "t.rowid", &[], None);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].condition.as_deref(), Some("t.a IS NOT NULL"));
        assert_eq!(p[0].order, "t.a DESC, t.rowid ASC");
        assert_eq!(p[1].condition.as_deref(), Some("t.a IS NULL"));
        assert_eq!(p[1].order, "t.rowid ASC");
    }

    #[test]
    fn after_a_blank_only_blanks_follow() {
        let keys = [key("t.a", Direction::Asc), key("t.b", Direction::Asc)];
        let p = parts(&keys, "t.rowid", &[Scalar::Num(1.0), Scalar::Null], Some(7));
        let conds: Vec<_> = p.iter().map(|p| p.condition.clone().unwrap_or_default()).collect();
        assert_eq!(conds, ["t.a = ? AND t.b IS NULL AND t.rowid > ?", "t.a > ?", "t.a IS NULL"], "{p:?}");
    }
}
