//! The metadata's types: a workspace definition as its file states it, and the conditions
//! validation rules and query filters are written in. Plain data, read and written by serde;
//! what they must satisfy is checked in `definition` (a whole definition) and `condition`
//! (a condition against an object's fields).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use ts_rs::TS;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceDefinition {
    pub format: String,
    pub name: String,
    #[serde(default = "default_currency")]
    pub currency: String,
    /// The IANA time zone the business works in (`Europe/Berlin`): what "today", "this month"
    /// and a date-time field's days mean. Absent: UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub time_zone: Option<String>,
    /// How dates, numbers and amounts are written for readers (`de-DE`; see `crate::locale`).
    /// Absent: English. A user may choose their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub locale: Option<String>,
    /// The month the business's fiscal year starts in (1–12; absent: January). A fiscal year
    /// is named by the calendar year it ends in: with April, FY2025 runs from April 2024 to
    /// March 2025. Ask reads "FY2025", "fiscal Q2" and "last fiscal year" by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fiscal_year_start: Option<u8>,
    pub objects: Vec<ObjectDef>,
    pub permission_sets: Vec<PermissionSetDef>,
    pub users: Vec<UserDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub data: Option<BTreeMap<String, String>>,
}

fn default_currency() -> String {
    "USD".into()
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, TS)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    Private,
    PublicRead,
    PublicReadWrite,
    Inherit,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct ObjectDef {
    pub key: String,
    pub label: String,
    pub plural_label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    /// Retired: the table and its history are kept, but the object is gone from the live
    /// catalog (every list, query, form and projection) until it is restored.
    #[serde(default, skip_serializing_if = "is_false")]
    #[ts(optional, as = "Option<bool>")]
    pub retired: bool,
    pub sharing: Sharing,
    pub name_field: String,
    pub fields: Vec<FieldDef>,
    #[serde(default)]
    pub validation_rules: Vec<ValidationRuleDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub layout: Option<LayoutDef>,
    /// The business's words for sets of this object's records ("open opportunity").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<TermDef>>")]
    pub terms: Vec<TermDef>,
    /// Other words people use for these records ("deals" for opportunities), in any language:
    /// Ask reads a question that says them as asking for this object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub synonyms: Vec<String>,
    /// The object's label and plural in other languages, by language code (de, fr, es, en).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(optional, as = "Option<BTreeMap<String, ObjectLabel>>")]
    pub labels: BTreeMap<String, ObjectLabel>,
}

/// An object's label and plural label in one language.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectLabel {
    pub label: String,
    pub plural_label: String,
}

/// A named term of the workspace's vocabulary: what a set of an object's records is called
/// (a label and synonyms) and the filter it means — either a condition on the object's own
/// fields, or "this picklist field's value is in that category".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct TermDef {
    pub key: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub filter: Option<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub category: Option<CategoryRef>,
}

/// "`field`'s value is one of those in `category`" (retired values included).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields)]
pub struct CategoryRef {
    pub field: String,
    pub is: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, TS)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    Text,
    LongText,
    Number,
    Currency,
    Date,
    Datetime,
    Boolean,
    Picklist,
    Lookup,
    Email,
    Phone,
    Url,
}

impl FieldType {
    pub fn is_textual(self) -> bool {
        matches!(
            self,
            FieldType::Text | FieldType::LongText | FieldType::Email | FieldType::Phone | FieldType::Url
        )
    }
    pub fn is_numeric(self) -> bool {
        matches!(self, FieldType::Number | FieldType::Currency)
    }
    /// The type as definition files write it (`long_text`), which is also how the kernel
    /// names it to a model.
    pub fn key(self) -> String {
        serde_json::to_value(self).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default, TS)]
#[serde(rename_all = "snake_case")]
pub enum AiVisibility {
    #[default]
    Allowed,
    Never,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct PicklistValue {
    pub value: String,
    pub label: String,
    #[serde(default = "yes")]
    pub active: bool,
    /// The business's name for the set this value belongs to ("open", "unpaid"): a word of
    /// the workspace's vocabulary, shared by several values of one picklist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub category: Option<String>,
    /// The label in other languages, by language code (`{"de": "Bezahlt"}`): what a reader in
    /// that locale sees.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(optional, as = "Option<BTreeMap<String, String>>")]
    pub labels: BTreeMap<String, String>,
}

impl PicklistValue {
    /// The label a reader in `language` sees: its translation, else the label.
    pub fn label_in(&self, language: crate::locale::Language) -> &str {
        self.labels.get(language.code()).map(String::as_str).unwrap_or(&self.label)
    }
}

fn yes() -> bool {
    true
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// For `skip_serializing_if` on a flag that defaults to true.
pub(crate) fn is_true(b: &bool) -> bool {
    *b
}

fn is_allowed(v: &AiVisibility) -> bool {
    *v == AiVisibility::Allowed
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct FieldDef {
    pub key: String,
    pub label: String,
    #[serde(rename = "type")]
    pub field_type: FieldType,
    #[serde(default, skip_serializing_if = "is_false")]
    #[ts(optional, as = "Option<bool>")]
    pub required: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    #[ts(optional, as = "Option<bool>")]
    pub unique: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_length: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub precision: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub scale: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub values: Option<Vec<PicklistValue>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    #[ts(optional, as = "Option<bool>")]
    pub master_detail: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub default: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub help_text: Option<String>,
    #[serde(default, skip_serializing_if = "is_allowed")]
    #[ts(optional, as = "Option<AiVisibility>")]
    pub ai_visibility: AiVisibility,
    /// Retired: the column, its values and their history are kept, but the field is gone from
    /// the live catalog until it is restored.
    #[serde(default, skip_serializing_if = "is_false")]
    #[ts(optional, as = "Option<bool>")]
    pub retired: bool,
    /// Whether a sum over records means something (a number or currency only): false for a unit
    /// price or a rate, which the kernel never totals.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[ts(optional, as = "Option<bool>")]
    pub additive: bool,
    /// The label in other languages, by language code (`{"de": "Fälligkeitsdatum"}`): what a
    /// reader in that locale sees on forms and lists, and what a summary's words name it by.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(optional, as = "Option<BTreeMap<String, String>>")]
    pub labels: BTreeMap<String, String>,
}

impl FieldDef {
    /// The label a reader in `language` sees: its translation, else the label.
    pub fn label_in(&self, language: crate::locale::Language) -> &str {
        self.labels.get(language.code()).map(String::as_str).unwrap_or(&self.label)
    }

    /// A picklist's categories in the order their first value comes, each with the values that
    /// carry it (`active_only`: without retired values).
    pub fn categories(&self, active_only: bool) -> Vec<(String, Vec<&PicklistValue>)> {
        let mut out: Vec<(String, Vec<&PicklistValue>)> = vec![];
        for v in self.values.iter().flatten().filter(|v| v.active || !active_only) {
            let Some(c) = &v.category else { continue };
            match out.iter_mut().find(|(k, _)| k == c) {
                Some((_, vs)) => vs.push(v),
                None => out.push((c.clone(), vec![v])),
            }
        }
        out
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValidationRuleDef {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default = "yes")]
    pub active: bool,
    pub assert: Condition,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error_field: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
pub struct LayoutDef {
    pub sections: Vec<LayoutSection>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
pub struct LayoutSection {
    pub label: String,
    pub fields: Vec<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, TS)]
#[serde(rename_all = "snake_case")]
pub enum ObjectRight {
    Read,
    Create,
    Edit,
    Delete,
}

/// A field's access level. Ordered: `None < Read < Edit`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash, TS)]
#[serde(rename_all = "snake_case")]
pub enum FieldLevel {
    None,
    Read,
    Edit,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct PermissionSetDef {
    pub key: String,
    pub label: String,
    #[serde(default)]
    pub system: Vec<String>,
    #[serde(default)]
    pub objects: BTreeMap<String, Vec<ObjectRight>>,
    #[serde(default)]
    pub fields: BTreeMap<String, FieldLevel>,
    #[serde(default)]
    pub view_all: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(rename_all = "camelCase")]
pub struct UserDef {
    pub key: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub email: Option<String>,
    #[serde(default = "yes")]
    pub active: bool,
    pub permission_sets: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(untagged)]
pub enum Condition {
    All(AllOf),
    Any(AnyOf),
    Not(NotOf),
    Related(RelatedTo),
    Compare(Comparison),
}

/// `{"related": {…}}`: the record's related records of one kind (the child records whose
/// lookup `via` points at it) — some, none, or at least `count` — optionally only those that
/// meet `filter` (on the child's own fields). Only the child rows the user can read count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields)]
pub struct RelatedTo {
    pub related: Related,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Related {
    /// The child object.
    pub object: String,
    /// The child's lookup to the queried object.
    pub via: String,
    pub has: Has,
    /// With `has: at_least`: how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub count: Option<u32>,
    /// Only the children that meet this condition count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub filter: Option<Box<Condition>>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, TS)]
#[serde(rename_all = "snake_case")]
pub enum Has {
    Some,
    None,
    AtLeast,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields)]
pub struct AllOf {
    pub all: Vec<Condition>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields)]
pub struct AnyOf {
    pub any: Vec<Condition>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields)]
pub struct NotOf {
    pub not: Box<Condition>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Comparison {
    pub field: String,
    pub op: Op,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub other_field: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, TS)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
    In,
    Contains,
    /// Full text, on a long text field in a query: every word of the value, stemmed
    /// ("delays" finds "delay"), anywhere in the text.
    Matches,
    IsSet,
    IsBlank,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Ne => "ne",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::In => "in",
            Op::Contains => "contains",
            Op::Matches => "matches",
            Op::IsSet => "is_set",
            Op::IsBlank => "is_blank",
        }
    }
}
