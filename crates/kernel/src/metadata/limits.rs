//! Size limits on what users and admins hand the kernel: query specs (and the condition trees
//! they share with validation rules) and workspace definitions.
//!
//! Each limit keeps the SQL the kernel writes comfortably inside SQLite's compiled-in defaults
//! (`SQLITE_MAX_VARIABLE_NUMBER` 32,766 bound values, `SQLITE_MAX_EXPR_DEPTH` 1,000,
//! `SQLITE_MAX_COLUMN` 2,000 columns per table and per result) and keeps the kernel's own
//! recursion over a condition tree shallow. The JSON Schemas state the same numbers where
//! JSON Schema can say them (`maxItems`; a test keeps them equal to these constants); the
//! kernel checks them again, because specs also reach the compiler without the schema (Ask's
//! plans, the UI's IPC). A spec or definition over a limit is a typed `query.invalid` /
//! `definition.invalid` naming the limit and the JSON pointer, never a storage failure.
//!
//! Budget of one query (worst case): at most [`MAX_CONDITION_VALUES`] values plus a handful
//! for row filters and paging are bound; SQLite nests `a OR b OR …` one level per term, so
//! the expression depth is about the number of conditions along one path plus a few levels
//! per comparison and per `not` — under [`MAX_CONDITION_NODES`] + 4 × [`MAX_DEPTH`], half of
//! SQLite's 1,000 (a test runs a tree at every limit at once); the result has at most
//! [`MAX_SPEC_FIELDS`] columns (or the object's fields, at most [`MAX_FIELDS`]).

use crate::error::Detail;
use crate::metadata::types::Condition;
use serde_json::Value;

/// Values in one `in` list.
pub const MAX_IN_VALUES: usize = 1_000;
/// Schema problems reported for one document: enough to fix it, and a bound on the work of
/// validating a hostile one (the validator stops after these).
pub const MAX_REPORTED_PROBLEMS: usize = 20;
/// Children of one `all` or `any`.
pub const MAX_CHILDREN: usize = 100;
/// `all` / `any` / `not` nested in one another (a lone comparison has depth 0).
pub const MAX_DEPTH: usize = 16;
/// Conditions (of every kind) in one tree.
pub const MAX_CONDITION_NODES: usize = 500;
/// Values (each `value`, each item of an `in` list) in one tree: bound SQL parameters.
pub const MAX_CONDITION_VALUES: usize = 10_000;
/// Paths in a query spec's `fields`.
pub const MAX_SPEC_FIELDS: usize = 100;
/// Keys in a query spec's `sort`.
pub const MAX_SORT_KEYS: usize = 8;

/// Objects in a definition.
pub const MAX_OBJECTS: usize = 200;
/// Fields of one object (each a column of its record table, next to five system columns).
pub const MAX_FIELDS: usize = 500;
/// Values of one picklist.
pub const MAX_PICKLIST_VALUES: usize = 1_000;
/// Validation rules of one object.
pub const MAX_RULES: usize = 100;
/// Sections of one object's layout.
pub const MAX_LAYOUT_SECTIONS: usize = 50;
/// Permission sets in a definition.
pub const MAX_PERMISSION_SETS: usize = 200;
/// Users in a definition.
pub const MAX_USERS: usize = 10_000;

/// `12345` → `12,345`, as limits are written in messages.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A list at `at` holding `n` items, of which `max` are allowed.
pub(crate) fn check_len(n: usize, max: usize, at: &str, what: &str, out: &mut Vec<Detail>) {
    if n > max {
        out.push(Detail {
            path: at.to_string(),
            message: format!("at most {} {what} are allowed; there are {}", thousands(max), thousands(n)),
        });
    }
}

/// Every limit a condition tree at `at` breaks. Never recurses deeper than [`MAX_DEPTH`] + 1,
/// whatever the depth of the tree, and stops counting at the first problem of each kind.
pub fn condition_problems(c: &Condition, at: &str) -> Vec<Detail> {
    let mut walk = Walk { nodes: 0, values: 0, out: Vec::new(), too_deep: false };
    walk.visit(c, at, 0);
    if walk.nodes > MAX_CONDITION_NODES {
        walk.out.push(Detail {
            path: at.to_string(),
            message: format!(
                "a condition tree may hold at most {} conditions; this one holds more",
                thousands(MAX_CONDITION_NODES)
            ),
        });
    }
    if walk.values > MAX_CONDITION_VALUES {
        walk.out.push(Detail {
            path: at.to_string(),
            message: format!(
                "a condition tree may hold at most {} values in all; this one holds {}",
                thousands(MAX_CONDITION_VALUES),
                thousands(walk.values)
            ),
        });
    }
    walk.out
}

struct Walk {
    nodes: usize,
    values: usize,
    out: Vec<Detail>,
    too_deep: bool,
}

impl Walk {
    fn visit(&mut self, c: &Condition, at: &str, depth: usize) {
        self.nodes += 1;
        let (key, children): (&str, &[Condition]) = match c {
            Condition::All(a) => ("all", &a.all),
            Condition::Any(a) => ("any", &a.any),
            Condition::Not(n) => ("not", std::slice::from_ref(n.not.as_ref())),
            Condition::Related(r) => match &r.related.filter {
                Some(f) => ("related/filter", std::slice::from_ref(f.as_ref())),
                None => return,
            },
            Condition::Compare(cmp) => {
                match &cmp.value {
                    Some(Value::Array(items)) => {
                        self.values += items.len();
                        check_len(
                            items.len(),
                            MAX_IN_VALUES,
                            &format!("{at}/value"),
                            "values in an `in` list",
                            &mut self.out,
                        );
                    }
                    Some(_) => self.values += 1,
                    None => {}
                }
                return;
            }
        };
        if depth + 1 > MAX_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.out.push(Detail {
                    path: at.to_string(),
                    message: format!("`all`, `any` and `not` may be nested at most {MAX_DEPTH} deep"),
                });
            }
            return;
        }
        if key == "not" || key == "related/filter" {
            self.visit(&children[0], &format!("{at}/{key}"), depth + 1);
            return;
        }
        check_len(
            children.len(),
            MAX_CHILDREN,
            &format!("{at}/{key}"),
            &format!("conditions in one `{key}`"),
            &mut self.out,
        );
        for (i, child) in children.iter().enumerate() {
            self.visit(child, &format!("{at}/{key}/{i}"), depth + 1);
        }
    }
}
