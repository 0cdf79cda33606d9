//! Eval harness for Ask (the format of `eval/ask-dev.jsonl`): each case is a user, a question,
//! the object and the ids the answer must return (in order when `ordered`), or a refusal.
//! Execution match: the records the kernel returns for the model's spec are exactly the
//! expected ones.

use crate::ai::ask::{self, AskAnswer};
use crate::error::{Code, Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct AskCase {
    pub id: String,
    pub user: String,
    pub question: String,
    pub object: String,
    #[serde(default)]
    pub expected_ids: Vec<String>,
    #[serde(default)]
    pub ordered: bool,
    /// A refusal code (`permission`) or `true` for any refusal.
    #[serde(default)]
    pub expect_refusal: Option<Value>,
    #[serde(default)]
    pub expect_refusal_or_empty: bool,
}

pub fn read_cases(text: &str) -> Result<Vec<AskCase>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| Error::new(Code::InvalidQuery, format!("case on line {}: {e}", i + 1)))
        })
        .collect()
}

/// Codes that are refusals (the kernel declining to answer), not failures of the platform.
pub fn is_refusal(code: Code) -> bool {
    matches!(
        code,
        Code::Permission | Code::GroundingInsufficient | Code::Scope | Code::AiBudget | Code::RateLimit
    )
}

#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub pass: bool,
    pub reason: String,
}

/// Judge one answer (or error) against its case.
pub fn judge(case: &AskCase, outcome: &Result<AskAnswer>) -> Verdict {
    let v = |pass: bool, reason: String| Verdict { pass, reason };
    match outcome {
        Err(e) => {
            let expected = match &case.expect_refusal {
                Some(Value::String(code)) => e.code.as_str() == code,
                Some(Value::Bool(true)) => is_refusal(e.code),
                _ => case.expect_refusal_or_empty && is_refusal(e.code),
            };
            v(expected, format!("{}: {}", e.code.as_str(), e.message))
        }
        Ok(a) => {
            if case.expect_refusal.is_some() {
                return v(false, "answered where a refusal was expected".into());
            }
            let Some(result) = &a.result else {
                return v(false, "a value was ambiguous; the answer asks the user to choose".into());
            };
            let got = ask::ids(result);
            if case.expect_refusal_or_empty {
                return v(got.is_empty(), format!("{} record(s)", got.len()));
            }
            if result.object != case.object {
                return v(false, format!("queried {} instead of {}", result.object, case.object));
            }
            let pass = if case.ordered {
                got == case.expected_ids
            } else {
                let mut g = got.clone();
                let mut e = case.expected_ids.clone();
                g.sort();
                e.sort();
                g == e && !result.has_more
            };
            let missing = case.expected_ids.iter().filter(|x| !got.contains(x)).count();
            let extra = got.iter().filter(|x| !case.expected_ids.contains(x)).count();
            v(
                pass,
                format!(
                    "{} record(s), expected {}; {missing} missing, {extra} extra{}",
                    got.len(),
                    case.expected_ids.len(),
                    if case.ordered && !pass && missing == 0 && extra == 0 { ", order differs" } else { "" }
                ),
            )
        }
    }
}

/// The `p`-th percentile (0–100) of `xs` (nearest rank).
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}
