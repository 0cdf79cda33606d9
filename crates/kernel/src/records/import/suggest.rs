//! A mapping suggested for a file before it is imported: each column's field, found by the
//! column's name (a field's key or label, or a name another tool's export uses for the same
//! thing) or, failing that, by what its cells hold (e-mail addresses, web addresses, phone
//! numbers, dates, yes/no, numbers, a picklist's values); each column's detected type and a few
//! of its values; and, for every picklist column, the values the picklist does not hold, each
//! with the closest value it does (for the person to map, add, or leave blank).
//!
//! The exports of HubSpot, Salesforce and Google Contacts name the same things their own way
//! ("Phone Number", "Phone", "Phone 1 - Value"): [`SourceTool`] tries that tool's names first.

use super::table::Table;
use crate::error::Result;
use crate::metadata::catalog::ObjectMeta;
use crate::metadata::definition::{FieldDef, FieldLevel, FieldType};
use crate::records::access::Session;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use ts_rs::TS;

/// The tool a file was exported from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SourceTool {
    Hubspot,
    Salesforce,
    GoogleContacts,
}

/// How a column's field was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// The column is named like the field's key, or is `id` or `owner`.
    Key,
    Label,
    /// A name another tool's export uses for what the field holds.
    Alias,
    /// What the column's cells hold.
    Content,
    /// No field: the column is left out unless the person maps it.
    Unmatched,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct ColumnSuggestion {
    pub column: String,
    pub field: Option<String>,
    pub matched_by: MatchedBy,
    /// What the cells look like: `email`, `url`, `phone`, `date`, `datetime`, `boolean`,
    /// `number`, `text`, or `empty`.
    pub detected: String,
    /// The first few non-blank cells.
    pub samples: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct UnknownValue {
    pub value: String,
    /// How many rows hold it.
    #[ts(type = "number")]
    pub rows: u64,
    /// The picklist's closest active value, if one is close.
    pub closest: Option<String>,
}

/// A picklist column's values the picklist does not hold (active).
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct UnknownValues {
    pub column: String,
    pub field: String,
    pub values: Vec<UnknownValue>,
}

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct MappingSuggestion {
    pub object: String,
    #[ts(type = "number")]
    pub rows: u64,
    pub columns: Vec<ColumnSuggestion>,
    pub unknown_values: Vec<UnknownValues>,
    /// The suggested mapping as an import takes it (column → field key, `""`: left out).
    pub mapping: BTreeMap<String, String>,
}

/// Rows whose cells are looked at to detect a column's type.
const SAMPLE_ROWS: usize = 200;
/// Distinct values kept per column (a column with more is no picklist).
const DISTINCT_KEPT: usize = 1000;

/// Suggest how `table`'s columns map to `object`'s fields for this session's user (fields the
/// user may edit only). Reads the whole table once.
pub fn suggest(
    session: &Session<'_>,
    object: &str,
    table: Table<'_>,
    tool: Option<SourceTool>,
) -> Result<MappingSuggestion> {
    let (meta, _) = session.readable_object(object)?;
    let headers = table.headers.clone();
    let width = headers.len();
    let mut samples: Vec<Vec<String>> = vec![Vec::new(); width];
    let mut distinct: Vec<HashMap<String, u64>> = vec![HashMap::new(); width];
    let mut rows = 0u64;
    for (_, cells) in table {
        let Ok(cells) = cells else { continue };
        rows += 1;
        for (i, cell) in cells.iter().enumerate().take(width) {
            let cell = cell.trim();
            if cell.is_empty() {
                continue;
            }
            if samples[i].len() < SAMPLE_ROWS {
                samples[i].push(cell.to_string());
            }
            let d = &mut distinct[i];
            if d.len() < DISTINCT_KEPT || d.contains_key(cell) {
                *d.entry(cell.to_string()).or_default() += 1;
            }
        }
    }
    let editable: Vec<&FieldDef> = meta
        .fields()
        .iter()
        .enumerate()
        .filter(|(i, _)| session.field_level(meta, *i) >= FieldLevel::Edit)
        .map(|(_, f)| f)
        .collect();
    let detected: Vec<Detected> = samples.iter().map(|s| detect(s)).collect();
    let mut chosen: Vec<(Option<String>, MatchedBy)> = vec![(None, MatchedBy::Unmatched); width];
    let taken = |chosen: &[(Option<String>, MatchedBy)], key: &str| {
        chosen.iter().any(|(f, _)| f.as_deref() == Some(key))
    };
    // By name: key, label, then the tools' names.
    for (i, h) in headers.iter().enumerate() {
        let n = norm(h);
        if n == "id" || n == "owner" {
            chosen[i] = (Some(n), MatchedBy::Key);
            continue;
        }
        if let Some(f) = editable.iter().find(|f| norm(&f.key) == n && !taken(&chosen, &f.key)) {
            chosen[i] = (Some(f.key.clone()), MatchedBy::Key);
        } else if let Some(f) = editable.iter().find(|f| norm(&f.label) == n && !taken(&chosen, &f.key)) {
            chosen[i] = (Some(f.key.clone()), MatchedBy::Label);
        }
    }
    // Names of first and last names come last: they join into one field only if no column
    // (a full name) has taken it before them.
    let halves = |r: Role| matches!(r, Role::FirstName | Role::LastName);
    for pass_halves in [false, true] {
        let before = chosen.clone();
        for (i, h) in headers.iter().enumerate() {
            if chosen[i].0.is_some() {
                continue;
            }
            let Some(role) = role_of(h, tool).filter(|r| halves(*r) == pass_halves) else { continue };
            let in_use = if pass_halves { &before } else { &chosen };
            if let Some(f) = field_for_role(meta, &editable, role, |k| taken(in_use, k)) {
                chosen[i] = (Some(f), MatchedBy::Alias);
            }
        }
    }
    // By content: a kind of value exactly one free field takes.
    for i in 0..width {
        if chosen[i].0.is_some() {
            continue;
        }
        let free: Vec<&&FieldDef> = editable.iter().filter(|f| !taken(&chosen, &f.key)).collect();
        let fits: Vec<&&FieldDef> = match detected[i] {
            Detected::Empty => vec![],
            Detected::Text => free
                .iter()
                .copied()
                .filter(|f| f.field_type == FieldType::Picklist && picklist_share(f, &distinct[i]) >= 0.8)
                .collect(),
            d => free.iter().copied().filter(|f| d.fits(f.field_type)).collect(),
        };
        if let [one] = fits.as_slice() {
            chosen[i] = (Some(one.key.clone()), MatchedBy::Content);
        }
    }
    let mut unknown_values = Vec::new();
    for (i, (field, _)) in chosen.iter().enumerate() {
        let Some(f) = field.as_deref().and_then(|k| meta.field(k)) else { continue };
        if f.field_type != FieldType::Picklist {
            continue;
        }
        let mut values: Vec<UnknownValue> = distinct[i]
            .iter()
            .filter(|(v, _)| picklist_value(f, v).is_none())
            .map(|(v, n)| UnknownValue { value: v.clone(), rows: *n, closest: closest(f, v) })
            .collect();
        if values.is_empty() {
            continue;
        }
        values.sort_by(|a, b| b.rows.cmp(&a.rows).then(a.value.cmp(&b.value)));
        unknown_values.push(UnknownValues { column: headers[i].clone(), field: f.key.clone(), values });
    }
    let columns: Vec<ColumnSuggestion> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| ColumnSuggestion {
            column: h.clone(),
            field: chosen[i].0.clone(),
            matched_by: chosen[i].1,
            detected: detected[i].name().to_string(),
            samples: samples[i].iter().take(3).cloned().collect(),
        })
        .collect();
    let mapping = columns.iter().map(|c| (c.column.clone(), c.field.clone().unwrap_or_default())).collect();
    Ok(MappingSuggestion { object: object.to_string(), rows, columns, unknown_values, mapping })
}

/// Letters and digits only, lower case: "E-mail 1 - Value" → "email1value".
fn norm(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// The picklist value a cell names (by value or label, any case), if one active value.
fn picklist_value<'f>(f: &'f FieldDef, cell: &str) -> Option<&'f str> {
    f.values
        .iter()
        .flatten()
        .filter(|v| v.active)
        .find(|v| v.value.eq_ignore_ascii_case(cell) || v.label.eq_ignore_ascii_case(cell))
        .map(|v| v.value.as_str())
}

/// The share of a column's rows whose value the picklist holds.
fn picklist_share(f: &FieldDef, distinct: &HashMap<String, u64>) -> f64 {
    let all: u64 = distinct.values().sum();
    let known: u64 = distinct.iter().filter(|(v, _)| picklist_value(f, v).is_some()).map(|(_, n)| n).sum();
    if all == 0 {
        0.0
    } else {
        known as f64 / all as f64
    }
}

/// The active value whose value or label is closest to `cell` (similarity ≥ 0.6).
fn closest(f: &FieldDef, cell: &str) -> Option<String> {
    let c = norm(cell);
    f.values
        .iter()
        .flatten()
        .filter(|v| v.active)
        .map(|v| {
            let s = strsim::normalized_levenshtein(&c, &norm(&v.value))
                .max(strsim::normalized_levenshtein(&c, &norm(&v.label)));
            let contains = !c.is_empty() && (norm(&v.label).contains(&c) || c.contains(&norm(&v.label)));
            (if contains { s.max(0.7) } else { s }, v.value.clone())
        })
        .filter(|(s, _)| *s >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, v)| v)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Detected {
    Empty,
    Email,
    Url,
    Phone,
    Date,
    Datetime,
    Boolean,
    Number,
    Text,
}

impl Detected {
    fn name(self) -> &'static str {
        match self {
            Detected::Empty => "empty",
            Detected::Email => "email",
            Detected::Url => "url",
            Detected::Phone => "phone",
            Detected::Date => "date",
            Detected::Datetime => "datetime",
            Detected::Boolean => "boolean",
            Detected::Number => "number",
            Detected::Text => "text",
        }
    }

    fn fits(self, t: FieldType) -> bool {
        match self {
            Detected::Email => t == FieldType::Email,
            Detected::Url => t == FieldType::Url,
            Detected::Phone => t == FieldType::Phone,
            Detected::Date => t == FieldType::Date,
            Detected::Datetime => t == FieldType::Datetime,
            Detected::Boolean => t == FieldType::Boolean,
            Detected::Number => matches!(t, FieldType::Number | FieldType::Currency),
            Detected::Empty | Detected::Text => false,
        }
    }
}

/// What every sampled cell of a column looks like (the narrowest kind all of them are).
fn detect(samples: &[String]) -> Detected {
    if samples.is_empty() {
        return Detected::Empty;
    }
    let all = |p: fn(&str) -> bool| samples.iter().all(|s| p(s));
    if all(|s| {
        let (user, host) = s.split_once('@').unwrap_or_default();
        !user.is_empty() && host.contains('.') && !s.contains(' ')
    }) {
        Detected::Email
    } else if all(|s| s.starts_with("http://") || s.starts_with("https://") || s.starts_with("www.")) {
        Detected::Url
    } else if all(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()) {
        Detected::Date
    } else if all(|s| {
        chrono::DateTime::parse_from_rfc3339(s).is_ok()
            || chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").is_ok()
            || chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S").is_ok()
    }) {
        Detected::Datetime
    } else if all(|s| matches!(s.to_ascii_lowercase().as_str(), "true" | "false" | "yes" | "no" | "y" | "n"))
    {
        Detected::Boolean
    } else if all(|s| {
        // Written as a phone number: seven digits or more, and a `+`, space, dash or bracket.
        let digits = s.chars().filter(char::is_ascii_digit).count();
        digits >= 7
            && s.chars().any(|c| " +-()".contains(c))
            && s.chars().all(|c| c.is_ascii_digit() || " +-().".contains(c) || c == 'x')
    }) {
        Detected::Phone
    } else if all(|s| s.replace([',', ' '], "").trim_start_matches(['$', '€', '£']).parse::<f64>().is_ok())
    {
        Detected::Number
    } else {
        Detected::Text
    }
}

/// What a column holds, known from the name another tool's export gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Name,
    FirstName,
    LastName,
    Email,
    Phone,
    Mobile,
    Company,
    Title,
    City,
    Country,
    Website,
    Notes,
    Birthday,
    Industry,
    Revenue,
    Employees,
}

/// The column names of each tool's export (normalized by [`norm`]).
const HUBSPOT: &[(&str, Role)] = &[
    ("firstname", Role::FirstName),
    ("lastname", Role::LastName),
    ("email", Role::Email),
    ("phonenumber", Role::Phone),
    ("mobilephonenumber", Role::Mobile),
    ("companyname", Role::Company),
    ("associatedcompany", Role::Company),
    ("jobtitle", Role::Title),
    ("city", Role::City),
    ("countryregion", Role::Country),
    ("websiteurl", Role::Website),
    ("industry", Role::Industry),
    ("annualrevenue", Role::Revenue),
    ("numberofemployees", Role::Employees),
];
const SALESFORCE: &[(&str, Role)] = &[
    ("firstname", Role::FirstName),
    ("lastname", Role::LastName),
    ("email", Role::Email),
    ("phone", Role::Phone),
    ("mobilephone", Role::Mobile),
    ("accountname", Role::Company),
    ("title", Role::Title),
    ("mailingcity", Role::City),
    ("billingcity", Role::City),
    ("mailingcountry", Role::Country),
    ("billingcountry", Role::Country),
    ("website", Role::Website),
    ("description", Role::Notes),
    ("birthdate", Role::Birthday),
    ("industry", Role::Industry),
    ("annualrevenue", Role::Revenue),
    ("employees", Role::Employees),
];
const GOOGLE_CONTACTS: &[(&str, Role)] = &[
    ("name", Role::Name),
    ("givenname", Role::FirstName),
    ("firstname", Role::FirstName),
    ("familyname", Role::LastName),
    ("lastname", Role::LastName),
    ("email1value", Role::Email),
    ("phone1value", Role::Phone),
    ("organization1name", Role::Company),
    ("organizationname", Role::Company),
    ("organization1title", Role::Title),
    ("organizationtitle", Role::Title),
    ("address1city", Role::City),
    ("address1country", Role::Country),
    ("website1value", Role::Website),
    ("notes", Role::Notes),
    ("birthday", Role::Birthday),
];
/// Names any file may use (a vCard's columns among them).
const COMMON: &[(&str, Role)] = &[
    ("name", Role::Name),
    ("fullname", Role::Name),
    ("displayname", Role::Name),
    ("contactname", Role::Name),
    ("emailaddress", Role::Email),
    ("email", Role::Email),
    ("phone", Role::Phone),
    ("telephone", Role::Phone),
    ("mobile", Role::Mobile),
    ("mobilephone", Role::Mobile),
    ("company", Role::Company),
    ("organization", Role::Company),
    ("organisation", Role::Company),
    ("title", Role::Title),
    ("city", Role::City),
    ("country", Role::Country),
    ("website", Role::Website),
    ("url", Role::Website),
    ("note", Role::Notes),
    ("notes", Role::Notes),
    ("birthday", Role::Birthday),
];

fn role_of(column: &str, tool: Option<SourceTool>) -> Option<Role> {
    let n = norm(column);
    let first: &[(&str, Role)] = match tool {
        Some(SourceTool::Hubspot) => HUBSPOT,
        Some(SourceTool::Salesforce) => SALESFORCE,
        Some(SourceTool::GoogleContacts) => GOOGLE_CONTACTS,
        None => &[],
    };
    [first, COMMON, HUBSPOT, SALESFORCE, GOOGLE_CONTACTS]
        .iter()
        .flat_map(|list| list.iter())
        .find(|(name, _)| *name == n)
        .map(|(_, r)| *r)
}

/// Words an organisation object or field is called by.
const ORGANISATION: [&str; 7] =
    ["account", "company", "client", "customer", "organization", "organisation", "supplier"];

/// The field a role fills on `meta`, among the free editable fields. First and last names go
/// to fields labelled so, else both into the name field.
fn field_for_role(
    meta: &ObjectMeta,
    editable: &[&FieldDef],
    role: Role,
    taken: impl Fn(&str) -> bool,
) -> Option<String> {
    let free = |f: &&&FieldDef| !taken(&f.key);
    let labelled = |words: &[&str]| {
        editable.iter().filter(free).find(|f| {
            let l = f.label.to_lowercase();
            words.iter().any(|w| l.contains(w))
        })
    };
    let typed = |t: FieldType| editable.iter().filter(free).find(|f| f.field_type == t);
    let name_field =
        editable.iter().find(|f| f.key == meta.def.name_field && f.field_type == FieldType::Text);
    let org_object =
        ORGANISATION.iter().any(|w| meta.def.key.contains(w) || meta.def.label.to_lowercase().contains(w));
    let found = match role {
        // On an organisation (a client, a supplier) a person's name is its contact's.
        Role::Name if org_object => labelled(&["contact"]).or_else(|| name_field.filter(free)),
        Role::Name => name_field.filter(free),
        Role::FirstName | Role::LastName => {
            let own: &[&str] = if role == Role::FirstName {
                &["first name", "given name"]
            } else {
                &["last name", "family name", "surname"]
            };
            // Both halves join in one field when there is no field for each.
            let whole = |f: &&&FieldDef| f.field_type == FieldType::Text;
            labelled(own).or_else(|| {
                if org_object {
                    editable
                        .iter()
                        .filter(whole)
                        .filter(free)
                        .find(|f| f.label.to_lowercase().contains("contact"))
                } else {
                    name_field.filter(free)
                }
            })
        }
        Role::Email => typed(FieldType::Email),
        Role::Phone => editable
            .iter()
            .filter(free)
            .find(|f| f.field_type == FieldType::Phone && !f.label.to_lowercase().contains("mobile")),
        Role::Mobile => labelled(&["mobile", "cell"])
            .filter(|f| f.field_type == FieldType::Phone)
            .or_else(|| typed(FieldType::Phone)),
        Role::Company => editable
            .iter()
            .filter(free)
            .find(|f| {
                f.field_type == FieldType::Lookup
                    && f.target.as_deref().is_some_and(|t| ORGANISATION.iter().any(|w| t.contains(w)))
            })
            .or_else(|| labelled(&["company", "organization", "organisation", "employer"]))
            .or_else(|| name_field.filter(|_| org_object).filter(free)),
        Role::Title => labelled(&["title", "position", "role"]).filter(|f| f.field_type == FieldType::Text),
        Role::City => labelled(&["city", "town"]),
        Role::Country => labelled(&["country"]),
        Role::Website => typed(FieldType::Url),
        Role::Notes => typed(FieldType::LongText),
        Role::Birthday => labelled(&["birth"]).filter(|f| f.field_type == FieldType::Date),
        Role::Industry => labelled(&["industry", "sector"]),
        Role::Revenue => labelled(&["revenue"]),
        Role::Employees => labelled(&["employees", "headcount"]),
    };
    found.map(|f| f.key.clone())
}
