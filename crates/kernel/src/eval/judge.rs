//! The judge's agreement with a person: a hand-labelled set of answers — the facts each stood
//! on, the answer, and the person's yes or no on every criterion of a rubric — judged by the
//! judge model; agreement per criterion and overall (with Cohen's kappa, agreement beyond
//! chance), and every disagreement with the judge's reason.

use crate::ai::judge::Verdict;
use crate::error::{Code, Error, Result};
use serde::{Deserialize, Serialize};

/// A labelled set: the rubric, and the cases.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledSet {
    pub rubric: Vec<String>,
    pub cases: Vec<LabelledCase>,
}

/// One labelled answer: what it stood on, the answer, and the person's verdict per criterion.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledCase {
    pub id: String,
    pub facts: String,
    pub answer: String,
    pub labels: Vec<bool>,
    /// Why the person labelled it so (for the reader of the set).
    #[serde(default)]
    pub note: String,
}

impl LabelledSet {
    pub fn read(text: &str) -> Result<LabelledSet> {
        let set: LabelledSet = serde_json::from_str(text)
            .map_err(|e| Error::new(Code::InvalidValue, format!("not a labelled set: {e}")))?;
        if let Some(c) = set.cases.iter().find(|c| c.labels.len() != set.rubric.len()) {
            return Err(Error::new(
                Code::InvalidValue,
                format!("case {} has {} labels for {} criteria", c.id, c.labels.len(), set.rubric.len()),
            ));
        }
        Ok(set)
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CriterionAgreement {
    pub criterion: String,
    pub judged: u32,
    pub agreed: u32,
    pub agreement: f64,
    pub kappa: f64,
    pub person_yes: u32,
    pub judge_yes: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Disagreement {
    pub case: String,
    pub criterion: String,
    pub person: bool,
    pub judge: bool,
    pub reason: String,
}

/// The calibration's report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Calibration {
    pub cases: u32,
    /// Cases the judge gave no verdicts on (each counted as a disagreement on every criterion).
    pub unjudged: Vec<String>,
    pub verdicts: u32,
    pub agreed: u32,
    pub agreement: f64,
    pub kappa: f64,
    pub criteria: Vec<CriterionAgreement>,
    pub disagreements: Vec<Disagreement>,
}

/// Cohen's kappa of two yes/no raters over `n` items: `agreed` agreements, `a` and `b` yeses.
fn kappa(n: u32, agreed: u32, a: u32, b: u32) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    let observed = agreed as f64 / n;
    let chance = (a as f64 / n) * (b as f64 / n) + (1.0 - a as f64 / n) * (1.0 - b as f64 / n);
    if (1.0 - chance).abs() < 1e-12 {
        return 1.0;
    }
    (observed - chance) / (1.0 - chance)
}

/// The tally of a calibration: add each case's verdicts (or their absence), then `finish`.
#[derive(Default)]
pub struct CalibrationTally {
    rows: Vec<(String, Vec<bool>, Option<Vec<Verdict>>)>,
}

impl CalibrationTally {
    pub fn record(&mut self, case: &LabelledCase, verdicts: Result<Vec<Verdict>>) {
        self.rows.push((case.id.clone(), case.labels.clone(), verdicts.ok()));
    }

    pub fn finish(self, rubric: &[String]) -> Calibration {
        let mut out = Calibration { cases: self.rows.len() as u32, ..Default::default() };
        let mut per: Vec<CriterionAgreement> = rubric
            .iter()
            .map(|c| CriterionAgreement { criterion: c.clone(), ..Default::default() })
            .collect();
        let (mut yes_person, mut yes_judge) = (0, 0);
        for (id, labels, verdicts) in &self.rows {
            let Some(verdicts) = verdicts else {
                out.unjudged.push(id.clone());
                out.verdicts += labels.len() as u32;
                continue;
            };
            for (i, (label, v)) in labels.iter().zip(verdicts).enumerate() {
                let c = &mut per[i];
                c.judged += 1;
                out.verdicts += 1;
                c.person_yes += u32::from(*label);
                c.judge_yes += u32::from(v.pass);
                yes_person += u32::from(*label);
                yes_judge += u32::from(v.pass);
                if *label == v.pass {
                    c.agreed += 1;
                    out.agreed += 1;
                } else {
                    out.disagreements.push(Disagreement {
                        case: id.clone(),
                        criterion: rubric[i].clone(),
                        person: *label,
                        judge: v.pass,
                        reason: v.reason.clone(),
                    });
                }
            }
        }
        for c in &mut per {
            c.agreement = super::share(c.agreed, c.judged);
            c.kappa = kappa(c.judged, c.agreed, c.person_yes, c.judge_yes);
        }
        out.agreement = super::share(out.agreed, out.verdicts);
        out.kappa = kappa(out.verdicts, out.agreed, yes_person, yes_judge);
        out.criteria = per;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(pass: bool) -> Verdict {
        Verdict { criterion: String::new(), pass, reason: "because".into() }
    }

    #[test]
    fn agreement_and_kappa_count_each_criterion_and_an_unjudged_case_disagrees() {
        let rubric = vec!["a".to_string(), "b".to_string()];
        let case = |id: &str, labels: Vec<bool>| LabelledCase {
            id: id.into(),
            facts: String::new(),
            answer: String::new(),
            labels,
            note: String::new(),
        };
        let mut t = CalibrationTally::default();
        t.record(&case("1", vec![true, true]), Ok(vec![v(true), v(false)]));
        t.record(&case("2", vec![false, true]), Ok(vec![v(false), v(true)]));
        t.record(&case("3", vec![true, false]), Err(Error::new(Code::Contract, "no verdicts")));
        let c = t.finish(&rubric);
        assert_eq!((c.verdicts, c.agreed), (6, 3));
        assert_eq!(c.unjudged, ["3"]);
        assert_eq!(c.criteria[0].agreement, 1.0);
        assert_eq!(c.criteria[0].kappa, 1.0, "perfect agreement with both answers used");
        assert_eq!(c.criteria[1].agreement, 0.5);
        assert_eq!(c.disagreements.len(), 1);
        assert!(c.disagreements[0].person && !c.disagreements[0].judge);
        assert!(LabelledSet::read(
            r#"{"rubric": ["a"], "cases": [{"id": "x", "facts": "", "answer": "", "labels": [true, false]}]}"#
        )
        .is_err());
    }
}
