//! The Ask eval (the format of `eval/ask-dev.jsonl`): each case is a user, a question, the
//! object and the ids the answer must return (in order when `ordered`), or a refusal.
//! Execution match: the records the kernel returns for the model's spec are exactly the
//! expected ones. The report adds timings, tokens and the size of the projection.

use super::{mean, percentile, share, Spread};
use crate::ai::ask::{self, AskAnswer, AskTimings};
use crate::error::{Code, Result};
use crate::records::query::QuerySpec;
use crate::records::workspace::Workspace;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One question, who asks it, and what its answer must be.
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
    /// The answer must be a clarification (words the kernel cannot place), or a refusal.
    #[serde(default)]
    pub expect_clarification: bool,
}

/// The cases of a JSON-lines file (blank lines skipped).
pub fn read_cases(text: &str) -> Result<Vec<AskCase>> {
    super::json_lines(text)
}

/// Codes that are refusals (the kernel declining to answer), not failures of the platform.
pub fn is_refusal(code: Code) -> bool {
    matches!(
        code,
        Code::Permission | Code::GroundingInsufficient | Code::Scope | Code::AiBudget | Code::RateLimit
    )
}

/// Whether a case passed, and why (the report's `pass` and `reason`).
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
                _ if case.expect_clarification => is_refusal(e.code),
                Some(Value::String(code)) => e.code.as_str() == code,
                Some(Value::Bool(true)) => is_refusal(e.code),
                _ => case.expect_refusal_or_empty && is_refusal(e.code),
            };
            v(expected, format!("{}: {}", e.code.as_str(), e.message))
        }
        Ok(a) => {
            if let Some(c) = &a.clarification {
                let words = c.words.iter().map(|w| format!("“{w}”")).collect::<Vec<_>>().join(", ");
                let expected = case.expect_clarification || case.expect_refusal.is_some();
                return v(expected, format!("a clarification: {words} not placed"));
            }
            if case.expect_refusal.is_some() || case.expect_clarification {
                return v(false, "answered where a refusal or a clarification was expected".into());
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

/// One case's line in the report: the verdict, the wall time, and for an answer the spec the
/// kernel ran, its tokens and the kernel's own time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskCaseReport {
    pub id: String,
    pub user: String,
    pub question: String,
    pub pass: bool,
    pub reason: String,
    /// Whole milliseconds.
    pub wall_ms: f64,
    #[serde(flatten)]
    pub answered: Option<Answered>,
}

/// What a case's report shows of an answer (none for a refusal or a failure).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answered {
    pub spec: QuerySpec,
    pub tokens: AskTokens,
    /// Milliseconds, to a tenth.
    pub kernel_ms: f64,
}

/// An answered case's tokens, and the model calls it took (2 after a repair).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AskTokens {
    pub prompt: u64,
    pub completion: u64,
    pub attempts: u32,
}

/// The Ask eval so far: the cases' reports and the figures the summary is made of.
#[derive(Debug, Default)]
pub struct AskTally {
    cases: Vec<AskCaseReport>,
    passed: u32,
    /// Answers shown as a table that is not the expected one.
    wrong_tables: u32,
    /// Answers that were a clarification.
    clarified: u32,
    wall_ms: Vec<f64>,
    model_ms: Vec<f64>,
    kernel_ms: Vec<f64>,
    prompt_tokens: Vec<f64>,
    completion_tokens: Vec<f64>,
    /// The projection the last answer was grounded in, and the whole projection.
    projection: (u64, u64),
}

impl AskTally {
    /// Judge one case's outcome, count it, and return its line of the report.
    pub fn record(&mut self, case: &AskCase, outcome: Result<AskAnswer>, wall_ms: f64) -> &AskCaseReport {
        let verdict = judge(case, &outcome);
        let answer = outcome.ok();
        let shown = answer.as_ref().map(|a| (a.clarification.is_some(), a.result.is_some()));
        self.clarified += u32::from(shown.is_some_and(|(c, _)| c));
        self.wrong_tables += u32::from(!verdict.pass && shown.is_some_and(|(c, table)| !c && table));
        let report = AskCaseReport {
            id: case.id.clone(),
            user: case.user.clone(),
            question: case.question.clone(),
            pass: verdict.pass,
            reason: verdict.reason,
            wall_ms: wall_ms.round(),
            answered: answer.as_ref().map(|a| Answered {
                spec: a.spec.clone(),
                tokens: AskTokens {
                    prompt: a.timings.prompt_tokens,
                    completion: a.timings.completion_tokens,
                    attempts: a.timings.attempts,
                },
                kernel_ms: (a.timings.kernel_ms * 10.0).round() / 10.0,
            }),
        };
        self.add(report, answer.as_ref().map(|a| &a.timings), wall_ms)
    }

    fn add(&mut self, report: AskCaseReport, timings: Option<&AskTimings>, wall_ms: f64) -> &AskCaseReport {
        self.passed += u32::from(report.pass);
        self.wall_ms.push(wall_ms);
        if let Some(t) = timings {
            self.model_ms.push(t.model_ms);
            self.kernel_ms.push(t.kernel_ms);
            self.prompt_tokens.push(t.prompt_tokens as f64);
            self.completion_tokens.push(t.completion_tokens as f64);
            self.projection = (t.projection_tokens, t.full_projection_tokens);
        }
        self.cases.push(report);
        self.cases.last().expect("a case was just recorded")
    }

    /// The report, with the size of the workspace's whole definition beside the projection
    /// (what a prompt would cost without one).
    pub fn finish(self, ws: &Workspace) -> AskReport {
        self.report(definition_tokens(ws))
    }

    fn report(self, full_definition_dump: u64) -> AskReport {
        let total = self.cases.len() as u32;
        AskReport {
            passed: self.passed,
            total,
            wrong_tables: self.wrong_tables,
            wrong_table_rate: share(self.wrong_tables, total),
            clarified: self.clarified,
            execution_match_rate: share(self.passed, total),
            wall_ms: Spread::of(&self.wall_ms).rounded(),
            model_ms: Median { p50: percentile(&self.model_ms, 50.0).round() },
            kernel_ms: Spread::of(&self.kernel_ms),
            tokens_per_question: TokensPerQuestion {
                prompt_mean: mean(&self.prompt_tokens).round(),
                completion_mean: mean(&self.completion_tokens).round(),
                completion_p50: percentile(&self.completion_tokens, 50.0),
            },
            projection_tokens: ProjectionTokens {
                used: self.projection.0,
                whole_projection: self.projection.1,
                full_definition_dump,
            },
            cases: self.cases,
        }
    }
}

/// The estimated tokens of the workspace's whole definition as JSON (0 without one).
fn definition_tokens(ws: &Workspace) -> u64 {
    ws.catalog()
        .map(|c| {
            crate::ai::projection::estimate_tokens(&serde_json::to_string(&c.definition).unwrap_or_default())
        })
        .unwrap_or(0)
}

/// The Ask eval's report: every case, the execution-match rate, time, tokens, projection size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskReport {
    pub cases: Vec<AskCaseReport>,
    pub passed: u32,
    pub total: u32,
    pub execution_match_rate: f64,
    /// Answers shown as a table of other rows than the expected ones (a clarification or a
    /// refusal is not a wrong table).
    pub wrong_tables: u32,
    pub wrong_table_rate: f64,
    /// Answers that were a clarification, expected or not.
    pub clarified: u32,
    /// Whole milliseconds.
    pub wall_ms: Spread,
    /// Whole milliseconds, answered cases only.
    pub model_ms: Median,
    /// Answered cases only.
    pub kernel_ms: Spread,
    pub tokens_per_question: TokensPerQuestion,
    pub projection_tokens: ProjectionTokens,
}

/// The median of a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Median {
    pub p50: f64,
}

/// Tokens of the answered cases: whole means, and the median completion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TokensPerQuestion {
    pub prompt_mean: f64,
    pub completion_mean: f64,
    pub completion_p50: f64,
}

/// The projection of the last answered case (`used`, `whole_projection`) beside the whole
/// definition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProjectionTokens {
    pub used: u64,
    pub whole_projection: u64,
    pub full_definition_dump: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use serde_json::json;

    fn case(v: Value) -> AskCase {
        let mut c =
            json!({"id": "ask-01", "user": "cara", "question": "Paid invoices?", "object": "invoice"});
        c.as_object_mut().unwrap().extend(v.as_object().unwrap().clone());
        serde_json::from_value(c).unwrap()
    }

    fn refused(code: Code) -> Result<AskAnswer> {
        Err(Error::new(code, "declined"))
    }

    #[test]
    fn a_refusal_passes_only_where_one_is_expected() {
        let by_code = case(json!({"expect_refusal": "permission"}));
        assert!(judge(&by_code, &refused(Code::Permission)).pass);
        assert!(!judge(&by_code, &refused(Code::Scope)).pass);
        let any = case(json!({"expect_refusal": true}));
        assert!(judge(&any, &refused(Code::GroundingInsufficient)).pass);
        assert!(!judge(&any, &refused(Code::Contract)).pass, "a broken contract is a failure, not a refusal");
        let or_empty = case(json!({"expect_refusal_or_empty": true}));
        assert!(judge(&or_empty, &refused(Code::RateLimit)).pass);
        let answer = case(json!({"expected_ids": ["inv_1"]}));
        let v = judge(&answer, &refused(Code::Permission));
        assert_eq!((v.pass, v.reason.as_str()), (false, "permission: declined"));
    }

    #[test]
    fn cases_are_read_line_by_line_naming_a_broken_line() {
        let text = "{\"id\":\"a\",\"user\":\"ava\",\"question\":\"q\",\"object\":\"account\"}\n\n{\"id\":";
        let e = read_cases(text).unwrap_err();
        assert_eq!(e.code, Code::InvalidQuery);
        assert!(e.message.starts_with("case on line 3:"), "{}", e.message);
    }

    fn timings(model_ms: f64, kernel_ms: f64, prompt: u64, completion: u64) -> AskTimings {
        AskTimings {
            model_ms,
            kernel_ms,
            prompt_tokens: prompt,
            completion_tokens: completion,
            attempts: 1,
            projection_tokens: 300,
            full_projection_tokens: 900,
            ..Default::default()
        }
    }

    #[test]
    fn the_tally_sums_up_passes_times_tokens_and_the_projection() {
        let mut tally = AskTally::default();
        let c = case(json!({"expect_refusal": "permission"}));
        let line = tally.record(&c, refused(Code::Permission), 1234.4);
        assert_eq!((line.pass, line.wall_ms, line.answered.is_none()), (true, 1234.0, true));
        tally.record(&c, refused(Code::Scope), 2000.0);
        let spec = QuerySpec::parse(r#"{"object": "invoice"}"#).unwrap();
        let answered = |pass| AskCaseReport {
            id: "ask-03".into(),
            user: "cara".into(),
            question: "q".into(),
            pass,
            reason: "1 record(s)".into(),
            wall_ms: 3000.0,
            answered: Some(Answered {
                spec: spec.clone(),
                tokens: AskTokens { prompt: 1000, completion: 41, attempts: 1 },
                kernel_ms: 2.5,
            }),
        };
        tally.add(answered(true), Some(&timings(2500.4, 2.46, 1000, 41)), 3000.0);
        tally.add(answered(false), Some(&timings(3500.0, 4.0, 1100, 60)), 4000.0);
        let r = tally.report(5000);
        assert_eq!((r.passed, r.total, r.execution_match_rate), (2, 4, 0.5));
        assert_eq!(r.wall_ms, Spread { p50: 2000.0, p90: 4000.0 });
        assert_eq!((r.model_ms.p50, r.kernel_ms), (2500.0, Spread { p50: 2.46, p90: 4.0 }));
        assert_eq!(
            r.tokens_per_question,
            TokensPerQuestion { prompt_mean: 1050.0, completion_mean: 51.0, completion_p50: 41.0 }
        );
        assert_eq!(
            r.projection_tokens,
            ProjectionTokens { used: 300, whole_projection: 900, full_definition_dump: 5000 }
        );
        let v = serde_json::to_value(&r).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "cases",
                "passed",
                "total",
                "execution_match_rate",
                "wrong_tables",
                "wrong_table_rate",
                "clarified",
                "wall_ms",
                "model_ms",
                "kernel_ms",
                "tokens_per_question",
                "projection_tokens"
            ]
        );
        assert_eq!(
            v["cases"][0],
            json!({"id": "ask-01", "user": "cara", "question": "Paid invoices?", "pass": true,
                "reason": "permission: declined", "wall_ms": 1234.0})
        );
        let answered_keys: Vec<&str> =
            v["cases"][2].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            answered_keys,
            ["id", "user", "question", "pass", "reason", "wall_ms", "spec", "tokens", "kernel_ms"]
        );
        assert_eq!(v["cases"][2]["tokens"], json!({"prompt": 1000, "completion": 41, "attempts": 1}));
    }

    #[test]
    fn an_empty_tally_reports_zeros() {
        let v = serde_json::to_value(AskTally::default().report(0)).unwrap();
        assert_eq!((v["total"].clone(), v["execution_match_rate"].clone()), (json!(0), json!(0.0)));
        assert_eq!(v["model_ms"], json!({"p50": 0.0}));
    }
}
