//! The Summarize eval: records summarized one by one, each accepted (after at most one repair)
//! or refused. The report counts both, sentences and citations of the accepted summaries, the
//! problems and citation coverage and precision of the first answers (before any repair), and
//! re-checks every accepted summary against freshly read facts, independently of the run.

use super::{share, Spread};
use crate::ai::summarize::{recheck, CitationStats, FirstAnswer, SummaryAnswer};
use crate::error::{Error, Result};
use crate::records::access::Session;
use serde::{Deserialize, Serialize, Serializer};

/// A case of a Summarize eval set: a record, who reads it, and the key facts a reader of it
/// needs (`open_pipeline`, `overdue`: amounts; `latest_note`: a title).
#[derive(Debug, Clone, Deserialize)]
pub struct SummarizeEvalCase {
    pub object: String,
    pub id: String,
    pub user: String,
    #[serde(default)]
    pub facts: Vec<KeyFact>,
}

/// A key fact: `total` (one amount per currency) or `each` of its amounts stated, or the
/// `title` stated.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct KeyFact {
    pub key: String,
    #[serde(default)]
    pub total: Vec<String>,
    #[serde(default)]
    pub each: Vec<String>,
    #[serde(default)]
    pub title: Option<String>,
}

/// Cases, one JSON object a line; a broken line is an error naming it.
pub fn read_cases(text: &str) -> Result<Vec<SummarizeEvalCase>> {
    super::json_lines(text)
}

/// The amounts a text writes, in any usual formatting: 628000, 628,000, 628,000.00, 628k,
/// $0.628M, 1.2 million.
pub fn amounts_in(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && chars[i - 1].is_alphanumeric()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit()
                || ((chars[i] == ',' || chars[i] == '.')
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            i += 1;
        }
        let Ok(x) = chars[start..i].iter().filter(|c| **c != ',').collect::<String>().parse::<f64>() else {
            continue;
        };
        let rest: String = chars[i..].iter().take(9).collect::<String>().to_lowercase();
        let rest = rest.trim_start();
        let scale = if rest.starts_with("million") || rest.starts_with('m') && !rest.starts_with("m2") {
            1_000_000.0
        } else if rest.starts_with("thousand") || rest.starts_with('k') {
            1_000.0
        } else {
            1.0
        };
        out.push(x);
        if scale != 1.0 {
            out.push(x * scale);
        }
    }
    out
}

/// Whether a summary's text states a key fact.
pub fn states_key_fact(text: &str, fact: &KeyFact) -> bool {
    if let Some(title) = &fact.title {
        return text.to_lowercase().contains(&title.to_lowercase());
    }
    let written = amounts_in(text);
    let said = |v: &String| v.parse::<f64>().is_ok_and(|x| written.iter().any(|w| (w - x).abs() < 0.5));
    (!fact.total.is_empty() && fact.total.iter().all(said))
        || (!fact.each.is_empty() && fact.each.iter().all(said))
}

/// One record's run: its first answer's figures and the summary or the refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryCase {
    pub id: String,
    pub first: FirstAnswer,
    pub outcome: std::result::Result<SummaryAnswer, Error>,
}

/// `{"id", "accepted": true, "attempts", "first", "answer"}` or
/// `{"id", "accepted": false, "code", "message", "first"}`.
impl Serialize for SummaryCase {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("accepted", &self.outcome.is_ok())?;
        match &self.outcome {
            Ok(answer) => {
                m.serialize_entry("attempts", &answer.attempts)?;
                m.serialize_entry("first", &self.first)?;
                m.serialize_entry("answer", answer)?;
            }
            Err(e) => {
                m.serialize_entry("code", e.code.as_str())?;
                m.serialize_entry("message", &e.message)?;
                m.serialize_entry("first", &self.first)?;
            }
        }
        m.end()
    }
}

/// The Summarize eval so far: the records' runs and the counts the summary is made of.
#[derive(Debug, Default)]
pub struct SummarizeTally {
    cases: Vec<SummaryCase>,
    accepted: u32,
    accepted_first_answer: u32,
    refused: u32,
    insufficient: u32,
    sentences: u32,
    citations: u32,
    citations_by_kernel: u32,
    first_problems: usize,
    first_citations: CitationStats,
    unverified: usize,
    wall_ms: Vec<f64>,
    key_facts: u32,
    key_facts_stated: u32,
    prompt_tokens: Vec<f64>,
    completion_tokens: Vec<f64>,
}

impl SummarizeTally {
    /// Count one record's run: the first answer whatever the outcome; an accepted summary is
    /// re-checked on `session` against freshly read facts (`summarize::recheck`).
    pub fn record(
        &mut self,
        session: &Session<'_>,
        id: &str,
        first: FirstAnswer,
        outcome: Result<SummaryAnswer>,
        wall_ms: f64,
    ) -> Result<&SummaryCase> {
        let unverified = match &outcome {
            Ok(answer) => recheck(session, answer)?,
            Err(_) => 0,
        };
        Ok(self.add(SummaryCase { id: id.to_string(), first, outcome }, unverified, wall_ms))
    }

    /// Count which of a case's key facts the last recorded run's summary states (none when it
    /// was refused); returns the keys stated.
    pub fn key_facts(&mut self, facts: &[KeyFact]) -> Vec<String> {
        let text = match self.cases.last().map(|c| &c.outcome) {
            Some(Ok(a)) => a.sentences.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join(" "),
            _ => String::new(),
        };
        self.key_facts += facts.len() as u32;
        let stated: Vec<String> =
            facts.iter().filter(|f| states_key_fact(&text, f)).map(|f| f.key.clone()).collect();
        self.key_facts_stated += stated.len() as u32;
        stated
    }

    /// Count a run whose accepted summary (if any) re-checked with `unverified` problems.
    fn add(&mut self, case: SummaryCase, unverified: usize, wall_ms: f64) -> &SummaryCase {
        self.wall_ms.push(wall_ms);
        if let Ok(a) = &case.outcome {
            self.prompt_tokens.push(a.figures.prompt_tokens as f64);
            self.completion_tokens.push(a.figures.completion_tokens as f64);
        }
        self.first_problems += case.first.problems.len();
        self.first_citations.add(&case.first.citations);
        match &case.outcome {
            Ok(answer) => {
                self.accepted += 1;
                self.insufficient += u32::from(answer.insufficient.is_some());
                self.accepted_first_answer += u32::from(case.first.problems.is_empty());
                self.unverified += unverified;
                self.sentences += answer.sentences.len() as u32;
                for citation in answer.sentences.iter().flat_map(|s| &s.citations) {
                    self.citations += 1;
                    self.citations_by_kernel += u32::from(!citation.by_model);
                }
            }
            Err(_) => self.refused += 1,
        }
        self.cases.push(case);
        self.cases.last().expect("a case was just recorded")
    }

    /// The report: the counts, the first answers' citation ratios, the timings, every run.
    pub fn finish(self) -> SummarizeReport {
        let records = self.cases.len();
        let c = &self.first_citations;
        let first_answers = FirstAnswers {
            citation_coverage_by_model: ratio(c.values_cited_by_model, c.values),
            citation_coverage_with_kernel: ratio(
                c.values_cited_by_model + c.values_cited_by_kernel,
                c.values,
            ),
            citation_precision: ratio(c.markers_stated, c.markers + c.markers_unknown),
            counts: c.clone(),
        };
        SummarizeReport {
            records,
            accepted_after_at_most_one_repair: self.accepted,
            accepted_share: share(self.accepted, records as u32),
            accepted_first_answer: self.accepted_first_answer,
            refused: self.refused,
            insufficient: self.insufficient,
            sentences: self.sentences,
            citations: self.citations,
            citations_attached_by_kernel: self.citations_by_kernel,
            problems_in_first_answers: self.first_problems,
            first_answers,
            unverified_claims_in_accepted_summaries: self.unverified,
            key_facts: self.key_facts,
            key_facts_stated: self.key_facts_stated,
            key_fact_coverage: ratio(self.key_facts_stated, self.key_facts),
            prompt_tokens: Spread::of(&self.prompt_tokens),
            completion_tokens: Spread::of(&self.completion_tokens),
            wall_ms: Spread::of(&self.wall_ms),
            cases: self.cases,
        }
    }
}

/// `part / whole`, or nothing to say when there is no whole.
fn ratio(part: u32, whole: u32) -> Option<f64> {
    (whole != 0).then(|| part as f64 / whole as f64)
}

/// The Summarize eval's report (see the module's documentation), every run last.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummarizeReport {
    pub records: usize,
    pub accepted_after_at_most_one_repair: u32,
    pub accepted_share: f64,
    pub accepted_first_answer: u32,
    pub refused: u32,
    pub insufficient: u32,
    pub sentences: u32,
    pub citations: u32,
    pub citations_attached_by_kernel: u32,
    pub problems_in_first_answers: usize,
    pub first_answers: FirstAnswers,
    /// Always 0 for summaries the kernel accepted; counted to show it.
    pub unverified_claims_in_accepted_summaries: usize,
    /// Key facts of the cases (`--cases`) and how many the summaries state.
    pub key_facts: u32,
    pub key_facts_stated: u32,
    pub key_fact_coverage: Option<f64>,
    /// Per accepted summary, all its calls.
    pub prompt_tokens: Spread,
    pub completion_tokens: Spread,
    /// Milliseconds.
    pub wall_ms: Spread,
    pub cases: Vec<SummaryCase>,
}

/// How the first answers' citations compared with what their sentences state (`null` where
/// there was nothing to compare).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstAnswers {
    /// Values needing a citation that the model cited.
    pub citation_coverage_by_model: Option<f64>,
    /// … that the model cited or the kernel attached.
    pub citation_coverage_with_kernel: Option<f64>,
    /// The model's markers (and ids that are no fact) that name a fact the sentence states.
    pub citation_precision: Option<f64>,
    pub counts: CitationStats,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::pipeline::RunFigures;
    use crate::ai::summarize::{Citation, Fact, Sentence};
    use crate::error::Code;
    use serde_json::json;

    fn citation(field: &str, by_model: bool) -> Citation {
        let fact = Fact {
            reference: "F1".into(),
            object: "account".into(),
            id: "acc_0001".into(),
            field: field.into(),
            label: field.into(),
            field_type: "text".into(),
            value: json!("x"),
            display: "x".into(),
            record_name: "Acme".into(),
            set: None,
            currency: None,
        };
        Citation { fact, at: 0, by_model }
    }

    fn summary(sentences: Vec<Vec<Citation>>, insufficient: Option<&str>) -> SummaryAnswer {
        SummaryAnswer {
            object: "account".into(),
            id: "acc_0001".into(),
            sentences: sentences
                .into_iter()
                .map(|citations| Sentence { text: "It is.".into(), citations, clause: false })
                .collect(),
            insufficient: insufficient.map(String::from),
            refused: vec![],
            facts: 9,
            attempts: 1,
            figures: RunFigures {
                trace_id: "trace_1".into(),
                total_ms: 1.0,
                model_ms: 1.0,
                prompt_tokens: 10,
                completion_tokens: 5,
                warning: None,
            },
        }
    }

    fn first(problems: &[&str], citations: CitationStats) -> FirstAnswer {
        FirstAnswer { problems: problems.iter().map(|p| p.to_string()).collect(), citations }
    }

    fn case(id: &str, first: FirstAnswer, outcome: Result<SummaryAnswer>) -> SummaryCase {
        SummaryCase { id: id.into(), first, outcome }
    }

    #[test]
    fn the_tally_counts_accepted_refused_citations_and_first_answers() {
        let mut tally = SummarizeTally::default();
        let stats = |values, by_model, by_kernel, markers, stated, unknown| CitationStats {
            values,
            values_cited_by_model: by_model,
            values_cited_by_kernel: by_kernel,
            markers,
            markers_stated: stated,
            markers_unknown: unknown,
            markers_dropped: 0,
        };
        // Accepted at once: two sentences, three citations, one attached by the kernel.
        let answer = summary(
            vec![vec![citation("name", true), citation("type", false)], vec![citation("rating", true)]],
            None,
        );
        tally.add(case("acc_0001", first(&[], stats(4, 2, 1, 3, 3, 0)), Ok(answer)), 0, 100.0);
        // Accepted after a repair, and "not enough facts".
        let mut repaired = summary(vec![], Some("The facts say little."));
        repaired.attempts = 2;
        tally.add(
            case("acc_0002", first(&["uncited 9,999"], stats(2, 0, 0, 1, 0, 1)), Ok(repaired)),
            1,
            300.0,
        );
        // Refused: its first answer's problems still count.
        let refused = Err(Error::new(Code::Contract, "refused"));
        tally.add(case("acc_0003", first(&["a", "b"], CitationStats::default()), refused), 0, 200.0);
        let r = tally.finish();
        assert_eq!((r.records, r.accepted_after_at_most_one_repair, r.accepted_first_answer), (3, 2, 1));
        assert_eq!((r.refused, r.insufficient, r.accepted_share), (1, 1, 2.0 / 3.0));
        assert_eq!((r.sentences, r.citations, r.citations_attached_by_kernel), (2, 3, 1));
        assert_eq!((r.problems_in_first_answers, r.unverified_claims_in_accepted_summaries), (3, 1));
        assert_eq!(r.first_answers.counts, stats(6, 2, 1, 4, 3, 1));
        assert_eq!(r.first_answers.citation_coverage_by_model, Some(2.0 / 6.0));
        assert_eq!(r.first_answers.citation_coverage_with_kernel, Some(3.0 / 6.0));
        assert_eq!(r.first_answers.citation_precision, Some(3.0 / 5.0));
        assert_eq!(r.wall_ms, Spread { p50: 200.0, p90: 300.0 });
    }

    #[test]
    fn with_nothing_to_compare_the_shares_are_zero_and_the_ratios_null() {
        let r = SummarizeTally::default().finish();
        assert_eq!((r.records, r.accepted_share), (0, 0.0));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v["first_answers"],
            json!({"citation_coverage_by_model": null, "citation_coverage_with_kernel": null,
                "citation_precision": null, "counts": serde_json::to_value(CitationStats::default()).unwrap()})
        );
    }

    #[test]
    fn the_report_is_the_json_the_eval_prints() {
        let mut tally = SummarizeTally::default();
        let answer = summary(vec![vec![citation("name", true)]], None);
        tally.add(case("acc_0001", FirstAnswer::default(), Ok(answer.clone())), 0, 10.0);
        let refused = Err(Error::new(Code::NotFound, "no Account `nope`"));
        tally.add(case("nope", FirstAnswer::default(), refused), 0, 10.0);
        let v = serde_json::to_value(tally.finish()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "records",
                "accepted_after_at_most_one_repair",
                "accepted_share",
                "accepted_first_answer",
                "refused",
                "insufficient",
                "sentences",
                "citations",
                "citations_attached_by_kernel",
                "problems_in_first_answers",
                "first_answers",
                "unverified_claims_in_accepted_summaries",
                "key_facts",
                "key_facts_stated",
                "key_fact_coverage",
                "prompt_tokens",
                "completion_tokens",
                "wall_ms",
                "cases"
            ]
        );
        let first = serde_json::to_value(FirstAnswer::default()).unwrap();
        assert_eq!(
            v["cases"],
            json!([
                {"id": "acc_0001", "accepted": true, "attempts": 1, "first": first,
                    "answer": serde_json::to_value(&answer).unwrap()},
                {"id": "nope", "accepted": false, "code": "not_found", "message": "no Account `nope`", "first": first},
            ])
        );
        let order = |i: usize| v["cases"][i].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(order(0), ["id", "accepted", "attempts", "first", "answer"]);
        assert_eq!(order(1), ["id", "accepted", "code", "message", "first"]);
    }

    #[test]
    fn a_key_fact_is_stated_in_any_usual_formatting() {
        let total = KeyFact {
            key: "open_pipeline".into(),
            total: vec!["628000.00".into()],
            each: vec!["326000.00".into(), "302000.00".into()],
            title: None,
        };
        for text in [
            "worth 628000",
            "worth 628,000",
            "worth 628,000.00 USD",
            "worth 628k",
            "worth $0.628M",
            "326,000 and 302,000",
        ] {
            assert!(states_key_fact(text, &total), "{text}");
        }
        for text in ["worth 62,800", "326,000 only", "nothing"] {
            assert!(!states_key_fact(text, &total), "{text}");
        }
        let note = KeyFact {
            key: "latest_note".into(),
            total: vec![],
            each: vec![],
            title: Some("Renewal risk".into()),
        };
        assert!(states_key_fact("The newest note is renewal risk.", &note));
        assert!(!states_key_fact("A note about renewals.", &note));
    }
}
