//! Names to records: a value someone wrote ("Monarch", "acme inc") matched against the names of
//! the records the user can read, or against the stored spellings of a text field. Used
//! wherever a person's or a model's words must point at records — Ask's filters, Extract's
//! lookups — and always through the user's session, so a record they cannot read never matches.

use crate::error::Result;
use crate::metadata::condition::{Condition, Op};
use crate::records::access::Session;
use crate::records::query::QuerySpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// What a value the model wrote resolved to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Resolution {
    /// The filter's field path.
    pub field: String,
    /// The object whose records were searched.
    pub object: String,
    /// What the model wrote.
    pub written: String,
    pub status: ResolutionStatus,
    /// The matching records (`id`, `name`); several when ambiguous.
    pub matches: Vec<Candidate>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionStatus {
    /// Exactly one record matches (possibly after normalising case, punctuation, suffixes).
    Resolved,
    /// Several records match: the user must choose; the query was not run.
    Ambiguous,
    /// No record the user can read matches: the filter matches nothing.
    Unmatched,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Candidate {
    pub id: String,
    pub name: String,
}

impl Session<'_> {
    /// Match a written name against the names of `object`'s records this user can read.
    pub fn resolve_name(&self, object: &str, path: &str, written: &str) -> Result<Resolution> {
        let (meta, _) = self.readable_object(object)?;
        let name_field = meta.def.name_field.clone();
        let wanted = name_tokens(written);
        let mut resolution = Resolution {
            field: path.to_string(),
            object: object.to_string(),
            written: written.to_string(),
            status: ResolutionStatus::Unmatched,
            matches: vec![],
        };
        if wanted.is_empty() {
            return Ok(resolution);
        }
        // The candidates' prefilter: any of the first words (a name is never longer; the
        // model may write anything, and one `any` holds at most `MAX_CHILDREN` conditions).
        let any: Vec<Condition> = wanted
            .iter()
            .take(crate::metadata::limits::MAX_CHILDREN)
            .map(|t| {
                Condition::compare(
                    name_field.clone(),
                    Op::Contains,
                    Value::String(t.chars().take(4).collect()),
                )
            })
            .collect();
        let found = self.query(&QuerySpec {
            search: None,
            object: object.to_string(),
            fields: vec![name_field.clone()],
            filters: Some(Condition::Any(crate::metadata::condition::AnyOf { any })),
            sort: vec![],
            limit: Some(5_000),
            offset: None,
            after: None,
        })?;
        // Tiers: the same words (only case and punctuation differ) wins outright; the same words
        // once legal suffixes are dropped ("Acme Inc" = "ACME") wins only if nothing else
        // matches partially; otherwise every candidate is offered ("acme": Acme Labs, Acme
        // Industries, Acme GmbH).
        let literal = normal_text(written);
        let (mut same, mut core, mut partial) = (vec![], vec![], vec![]);
        for r in &found.records {
            let name = r.get(&name_field).and_then(Value::as_str).unwrap_or_default();
            let have = name_tokens(name);
            let c =
                Candidate { id: r["id"].as_str().unwrap_or_default().to_string(), name: name.to_string() };
            if normal_text(name) == literal {
                same.push(c);
            } else if have == wanted {
                core.push(c);
            } else if wanted.iter().all(|w| have.iter().any(|h| token_matches(w, h))) {
                partial.push(c);
            }
        }
        let matches = if !same.is_empty() {
            same
        } else if partial.is_empty() {
            core
        } else {
            core.into_iter().chain(partial).collect()
        };
        resolution.status = match matches.len() {
            0 => ResolutionStatus::Unmatched,
            1 => ResolutionStatus::Resolved,
            _ => ResolutionStatus::Ambiguous,
        };
        resolution.matches = matches.into_iter().take(20).collect();
        Ok(resolution)
    }

    /// Match a written text value against the stored values of a text field (case and
    /// punctuation insensitive). Several spellings of the same value all match.
    pub fn resolve_text(&self, object: &str, path: &str, written: &str) -> Result<Resolution> {
        let found = self.query(&QuerySpec {
            search: None,
            object: object.to_string(),
            fields: vec![path.to_string()],
            filters: Some(Condition::compare(
                path.to_string(),
                Op::Contains,
                Value::String(written.trim().to_string()),
            )),
            sort: vec![],
            limit: Some(5_000),
            offset: None,
            after: None,
        })?;
        let wanted = normal_text(written);
        let mut spellings: Vec<String> = vec![];
        for r in &found.records {
            if let Some(v) = r.get(path).and_then(Value::as_str) {
                if normal_text(v) == wanted && !spellings.iter().any(|s| s == v) {
                    spellings.push(v.to_string());
                }
            }
        }
        let status =
            if spellings.is_empty() { ResolutionStatus::Unmatched } else { ResolutionStatus::Resolved };
        Ok(Resolution {
            field: path.to_string(),
            object: object.to_string(),
            written: written.to_string(),
            status,
            matches: spellings.into_iter().map(|s| Candidate { id: String::new(), name: s }).collect(),
        })
    }
}

const LEGAL: &[&str] = &[
    "inc",
    "incorporated",
    "llc",
    "ltd",
    "limited",
    "corp",
    "corporation",
    "co",
    "company",
    "gmbh",
    "plc",
    "ag",
    "sa",
    "the",
    "and",
];

const ABBREVIATIONS: &[(&str, &str)] = &[
    ("intl", "international"),
    ("mfg", "manufacturing"),
    ("grp", "group"),
    ("svcs", "services"),
    ("svc", "services"),
    ("natl", "national"),
    ("univ", "university"),
    ("assoc", "associates"),
    ("bros", "brothers"),
    ("mgmt", "management"),
    ("sys", "systems"),
    ("tech", "technologies"),
    ("hldgs", "holdings"),
];

/// Lower-cased words of a name without punctuation, legal suffixes or "and"; abbreviations
/// expanded.
pub fn name_tokens(name: &str) -> Vec<String> {
    let words: Vec<String> = name
        .to_lowercase()
        .replace('&', " and ")
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            ABBREVIATIONS.iter().find(|(a, _)| *a == w).map_or(w.to_string(), |(_, full)| full.to_string())
        })
        .collect();
    let significant: Vec<String> = words.iter().filter(|w| !LEGAL.contains(&w.as_str())).cloned().collect();
    if significant.is_empty() {
        words
    } else {
        significant
    }
}

/// A written word matches a name word when equal, a prefix of at least 3 letters, or a plural.
fn token_matches(written: &str, have: &str) -> bool {
    written == have
        || (written.len() >= 3 && have.starts_with(written))
        || written.strip_suffix('s') == Some(have)
        || have.strip_suffix('s') == Some(written)
}

pub fn normal_text(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
