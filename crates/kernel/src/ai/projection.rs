//! The schema projection (the grounding a model gets): what one user may know of the workspace's metadata
//! at one generation, as the model sees it.
//!
//! Objects the user can read, each with the fields the user can read (type, precision/scale,
//! required, default, help text, active picklist values only, lookup targets, the user's level),
//! its relationships one hop out and its validation messages, fields in layout order. Fields at
//! level `none` and fields classified `aiVisibility: never` are absent — not masked.
//!
//! Scope: when the whole projection fits the token budget it is used whole, so that it is the
//! same prompt prefix for every question of this user at this generation (the model server's
//! prompt cache then skips it). Otherwise it is scoped to the objects the request names (through
//! a label index), plus their parents and children one hop out.
//!
//! The canonical JSON of the projection is hashed (sha256) into the **grounding hash**.
//! Projections are cached per (user, generation, scope).

use crate::locale::Language;
use crate::metadata::definition::{FieldLevel, FieldType};
use crate::records::access::Session;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// A rough, deliberately high token estimate for budgets (≈ 3 characters per token).
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(3)
}

/// The estimate for a whole prompt: every message, plus a few tokens of chat framing each.
pub fn estimate_prompt_tokens(prompt: &crate::ai::provider::Prompt) -> u64 {
    prompt.messages().iter().map(|m| estimate_tokens(m["content"].as_str().unwrap_or_default()) + 4).sum()
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Projection {
    pub user: String,
    pub generation: i64,
    /// The object keys in scope, or `["*"]` when the whole projection is used.
    pub scope: Vec<String>,
    pub objects: Vec<ProjectedObject>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedObject {
    pub key: String,
    pub label: String,
    pub plural_label: String,
    pub name_field: String,
    /// Readable, AI-visible fields in layout order.
    pub fields: Vec<ProjectedField>,
    /// Objects whose lookups on this one the user can read: `(object, field)`.
    pub children: Vec<(String, String)>,
    /// Validation messages of the object's active rules.
    pub rules: Vec<String>,
    /// The workspace's terms for sets of this object's records whose every field this user
    /// may read (a term on a hidden field is absent, like the field).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<ProjectedTerm>,
    /// Every name a question may call these records by: the labels in each language and the
    /// synonyms (`None`: any language). For reading questions only; the model never sees them.
    #[serde(skip)]
    pub names: Vec<ObjectName>,
}

/// One name of an object: its words, their language (`None`: a synonym, any language) and
/// whether it names one record or several (`None`: not known).
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectName {
    pub language: Option<Language>,
    pub text: String,
    pub plural: Option<bool>,
}

/// A term of the vocabulary as the model may use it: the words and the filter they mean.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedTerm {
    pub key: String,
    pub label: String,
    pub synonyms: Vec<String>,
    /// On the object's own fields.
    pub condition: crate::metadata::types::Condition,
}

impl ProjectedTerm {
    /// The label and every synonym.
    pub fn phrases(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.label.as_str()).chain(self.synonyms.iter().map(String::as_str))
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedField {
    pub key: String,
    pub label: String,
    #[serde(rename = "type")]
    pub field_type: FieldType,
    pub access: FieldLevel,
    pub required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// Active picklist values only: `(value, label)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<(String, String)>,
    /// The categories of the active values: `(category, values)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<(String, Vec<String>)>,
    /// Lookup target, when the user can read the target object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// False for a number or currency whose sum over records means nothing (a unit price).
    #[serde(skip_serializing_if = "crate::metadata::types::is_true")]
    pub additive: bool,
    /// The field's label in other languages. For reading questions only.
    #[serde(skip)]
    pub other_labels: Vec<(Language, String)>,
    /// The active values' labels in other languages: `(value, language, label)`.
    #[serde(skip)]
    pub other_value_labels: Vec<(String, Language, String)>,
}

/// A projection ready for a prompt: the value, its rendering and its hash.
#[derive(Debug, Clone)]
pub struct Grounding {
    pub projection: Projection,
    /// The compact text the model reads.
    pub text: String,
    /// `sha256:<hex>` of the canonical JSON of `projection`.
    pub hash: String,
    pub tokens: u64,
    /// The tokens the whole projection would take (for the scoping report).
    pub full_tokens: u64,
}

impl Grounding {
    /// Render and hash a projection.
    fn of(projection: Projection, full_tokens: u64) -> Grounding {
        let text = projection.render(true);
        let hash = format!("sha256:{:x}", Sha256::digest(projection.canonical_json().as_bytes()));
        Grounding { tokens: estimate_tokens(&text), full_tokens, projection, text, hash }
    }
}

impl Projection {
    pub fn object(&self, key: &str) -> Option<&ProjectedObject> {
        self.objects.iter().find(|o| o.key == key)
    }

    /// A field by path (`status` or `account.industry`) from `object`, with the object it
    /// belongs to.
    pub fn field<'a>(
        &'a self,
        object: &str,
        path: &str,
    ) -> Option<(&'a ProjectedObject, &'a ProjectedField)> {
        let o = self.object(object)?;
        match path.split_once('.') {
            None => o.fields.iter().find(|f| f.key == path).map(|f| (o, f)),
            Some((lookup, rest)) => {
                let l = o.fields.iter().find(|f| f.key == lookup && f.field_type == FieldType::Lookup)?;
                let parent = self.object(l.target.as_deref()?)?;
                // A second hop (`invoice.account.name`), or the parent's own field.
                if rest.contains('.') {
                    return self.field(&parent.key, rest);
                }
                parent
                    .fields
                    .iter()
                    .find(|f| f.key == rest && f.field_type != FieldType::Lookup)
                    .map(|f| (parent, f))
            }
        }
    }

    /// The terms a query on `object` may use: its own (`key`), then each readable parent's
    /// through its lookup (`account.key_account`), with the condition on the queried object.
    pub fn terms(&self, object: &str) -> Vec<(String, &ProjectedTerm, crate::metadata::types::Condition)> {
        let Some(o) = self.object(object) else { return vec![] };
        let mut out: Vec<_> = o.terms.iter().map(|t| (t.key.clone(), t, t.condition.clone())).collect();
        for l in o.fields.iter().filter(|f| f.field_type == FieldType::Lookup) {
            let Some(parent) = l.target.as_deref().and_then(|t| self.object(t)) else { continue };
            // The reader's own records are the object's own `mine`, not a parent's.
            for t in parent.terms.iter().filter(|t| t.key != crate::metadata::definition::MINE) {
                out.push((format!("{}.{}", l.key, t.key), t, t.condition.through(&l.key)));
            }
        }
        out
    }

    /// Every path a query on `object` may name: its own fields, then `lookup.field` for each
    /// readable parent in scope.
    pub fn paths(&self, object: &str) -> Vec<(String, &ProjectedField)> {
        let Some(o) = self.object(object) else { return vec![] };
        let mut out: Vec<(String, &ProjectedField)> = o.fields.iter().map(|f| (f.key.clone(), f)).collect();
        for l in o.fields.iter().filter(|f| f.field_type == FieldType::Lookup) {
            let Some(parent) = l.target.as_deref().and_then(|t| self.object(t)) else { continue };
            for f in parent.fields.iter().filter(|f| f.field_type != FieldType::Lookup) {
                out.push((format!("{}.{}", l.key, f.key), f));
            }
        }
        out
    }

    pub fn canonical_json(&self) -> String {
        serde_json::to_string(self).expect("projection serializes")
    }

    /// The compact text form the model reads. Stable for a given projection. `for_query`
    /// leaves out what only writes need (the user's edit level, validation messages).
    pub fn render(&self, for_query: bool) -> String {
        let mut s = String::new();
        for o in &self.objects {
            let _ = writeln!(
                s,
                "object {} ({} / {}); name field: {}",
                o.key, o.label, o.plural_label, o.name_field
            );
            for f in &o.fields {
                let _ = write!(s, "  {}: {}", f.key, type_text(f));
                if !f.label.eq_ignore_ascii_case(&f.key.replace('_', " ")) {
                    let _ = write!(s, " \"{}\"", f.label);
                }
                if f.required {
                    s.push_str(", required");
                }
                if f.access == FieldLevel::Read && !for_query {
                    s.push_str(", read-only");
                }
                if let Some(d) = &f.default {
                    let _ = write!(s, ", default {d}");
                }
                if let Some(h) = &f.help {
                    let _ = write!(s, " — {h}");
                }
                s.push('\n');
            }
            let parents: Vec<String> = o
                .fields
                .iter()
                .filter(|f| f.field_type == FieldType::Lookup)
                .filter_map(|f| Some(format!("{}.<{} field>", f.key, f.target.as_deref()?)))
                .collect();
            if !parents.is_empty() {
                let _ = writeln!(s, "  parent paths: {}", parents.join(", "));
            }
            // `mine` is every object's: listed once, after the objects.
            for t in o.terms.iter().filter(|t| t.key != crate::metadata::definition::MINE) {
                let _ = write!(s, "  term {}: \"{}\"", t.key, t.label);
                if !t.synonyms.is_empty() {
                    let _ = write!(s, " (also \"{}\")", t.synonyms.join("\", \""));
                }
                s.push('\n');
            }
            if !o.children.is_empty() && !for_query {
                let c: Vec<String> = o.children.iter().map(|(obj, f)| format!("{obj}.{f}")).collect();
                let _ = writeln!(s, "  children: {}", c.join(", "));
            }
            if !for_query {
                for r in &o.rules {
                    let _ = writeln!(s, "  rule: {r}");
                }
            }
        }
        if let Some(t) =
            self.objects.iter().flat_map(|o| &o.terms).find(|t| t.key == crate::metadata::definition::MINE)
        {
            let _ = writeln!(
                s,
                "every object: term {}: \"{}\" (also \"{}\") — the records you own",
                t.key,
                t.label,
                t.synonyms.join("\", \"")
            );
        }
        s
    }
}

fn type_text(f: &ProjectedField) -> String {
    match f.field_type {
        FieldType::Picklist => {
            let v: Vec<&str> = f.values.iter().map(|(v, _)| v.as_str()).collect();
            let mut t = format!("picklist [{}]", v.join(", "));
            if !f.categories.is_empty() {
                let c: Vec<String> =
                    f.categories.iter().map(|(c, vs)| format!("{c}: {}", vs.join(", "))).collect();
                let _ = write!(t, " ({})", c.join("; "));
            }
            t
        }
        FieldType::Lookup => format!(
            "lookup to {} (value: its {} name)",
            f.target.as_deref().unwrap_or("?"),
            f.target.as_deref().unwrap_or("record")
        ),
        FieldType::Number | FieldType::Currency => {
            let t = if f.field_type == FieldType::Currency { "currency" } else { "number" };
            match f.scale {
                Some(sc) if sc > 0 => format!("{t} ({sc} decimals)"),
                _ => t.to_string(),
            }
        }
        FieldType::Date => "date YYYY-MM-DD".into(),
        FieldType::Datetime => "datetime".into(),
        FieldType::Boolean => "boolean".into(),
        FieldType::LongText => "long text".into(),
        FieldType::Email => "email".into(),
        FieldType::Phone => "phone".into(),
        FieldType::Url => "url".into(),
        FieldType::Text => "text".into(),
    }
}

/// The term every object has: the user's own records ("my opportunities"), `owner` = the user.
fn mine(user: &str) -> ProjectedTerm {
    use crate::metadata::types::{Condition, Op};
    ProjectedTerm {
        key: crate::metadata::definition::MINE.into(),
        label: "Mine".into(),
        synonyms: vec!["my".into(), "I own".into(), "owned by me".into()],
        condition: Condition::compare("owner", Op::Eq, serde_json::Value::String(user.to_string())),
    }
}

/// (user, generation, scope).
type ProjectionKey = (String, i64, Vec<String>);

/// Cache of projections per (user, generation, scope), kept on the workspace.
#[derive(Debug, Default)]
pub struct ProjectionCache(Mutex<HashMap<ProjectionKey, Arc<Grounding>>>);

impl ProjectionCache {
    pub fn len(&self) -> usize {
        self.0.lock().map(|m| m.len()).unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Words of a label or key, lower-cased and reduced to a crude stem, for the label index.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stem(&w.to_lowercase()))
        .collect()
}

fn stem(w: &str) -> String {
    if w.len() > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..w.len() - 3]);
    }
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        return w[..w.len() - 1].to_string();
    }
    w.to_string()
}

/// Words too generic to say which field a question is about.
const GENERIC: &[&str] = &[
    "id", "name", "number", "date", "type", "code", "limit", "the", "of", "a", "an", "and", "or", "in", "at",
    "to", "for", "by", "on", "is", "are", "with", "amount", "total", "status", "value", "pct", "percent",
];

/// The language a definition's language code names.
fn language_of(code: &str) -> Option<Language> {
    Language::ALL.into_iter().find(|l| l.code() == code)
}

impl Session<'_> {
    fn project_object(&self, key: &str) -> Option<ProjectedObject> {
        let (meta, acc) = self.readable_object(key).ok()?;
        let visible = |i: usize| self.ai_field_level(meta, i) >= FieldLevel::Read;
        let mut order: Vec<usize> = vec![];
        let layout = meta.def.layout.iter().flat_map(|l| l.sections.iter()).flat_map(|s| s.fields.iter());
        for k in std::iter::once(&meta.def.name_field).chain(layout) {
            if let Some(i) = meta.field_index(k) {
                if !order.contains(&i) {
                    order.push(i);
                }
            }
        }
        order.extend((0..meta.fields().len()).filter(|i| !order.contains(i)).collect::<Vec<_>>());
        let fields = order
            .into_iter()
            .filter(|i| visible(*i))
            .map(|i| {
                let f = &meta.fields()[i];
                ProjectedField {
                    key: f.key.clone(),
                    label: f.label.clone(),
                    field_type: f.field_type,
                    access: acc.fields[i],
                    required: f.required,
                    precision: f.precision,
                    scale: f.scale,
                    default: f.default.clone(),
                    help: f.help_text.clone(),
                    values: f
                        .values
                        .iter()
                        .flatten()
                        .filter(|v| v.active)
                        .map(|v| (v.value.clone(), v.label.clone()))
                        .collect(),
                    categories: f
                        .categories(true)
                        .into_iter()
                        .map(|(c, vs)| (c, vs.iter().map(|v| v.value.clone()).collect()))
                        .collect(),
                    target: f.target.clone().filter(|t| self.readable_object(t).is_ok()),
                    additive: f.additive,
                    other_labels: f
                        .labels
                        .iter()
                        .filter_map(|(code, label)| Some((language_of(code)?, label.clone())))
                        .collect(),
                    other_value_labels: f
                        .values
                        .iter()
                        .flatten()
                        .filter(|v| v.active)
                        .flat_map(|v| {
                            v.labels.iter().filter_map(|(code, label)| {
                                Some((v.value.clone(), language_of(code)?, label.clone()))
                            })
                        })
                        .collect(),
                }
            })
            .collect::<Vec<_>>();
        let children = meta
            .referenced_by
            .iter()
            .filter(|r| {
                self.readable_object(&r.object)
                    .ok()
                    .and_then(|(child, _)| self.readable_field(child, &r.field).ok())
                    .is_some()
            })
            .map(|r| (r.object.clone(), r.field.clone()))
            .collect();
        let rules = meta.rules.iter().map(|r| r.message.clone()).collect();
        let mut terms: Vec<ProjectedTerm> = meta
            .def
            .terms
            .iter()
            .map(|t| (t, meta.def.term_condition(t)))
            .filter(|(_, c)| c.fields().iter().all(|f| meta.field_index(f).is_some_and(visible)))
            .map(|(t, condition)| ProjectedTerm {
                key: t.key.clone(),
                label: t.label.clone(),
                synonyms: t.synonyms.clone(),
                condition,
            })
            .collect();
        terms.push(mine(&self.user().key));
        Some(ProjectedObject {
            key: meta.key().to_string(),
            label: meta.def.label.clone(),
            plural_label: meta.def.plural_label.clone(),
            name_field: meta.def.name_field.clone(),
            fields,
            children,
            rules,
            terms,
            names: {
                let d = &meta.def;
                let name = |language: Option<Language>, text: &str, plural: Option<bool>| ObjectName {
                    language,
                    text: text.to_string(),
                    plural,
                };
                let mut names = vec![
                    name(Some(Language::En), &d.label, Some(false)),
                    name(Some(Language::En), &d.plural_label, Some(true)),
                ];
                for (code, l) in &d.labels {
                    if let Some(language) = language_of(code) {
                        names.push(name(Some(language), &l.label, Some(false)));
                        names.push(name(Some(language), &l.plural_label, Some(true)));
                    }
                }
                // A synonym is plural when the list also holds it without its plural ending.
                let lower: Vec<String> = d.synonyms.iter().map(|s| s.to_lowercase()).collect();
                for (s, l) in d.synonyms.iter().zip(&lower) {
                    let plural = if ["s", "es", "en", "x"]
                        .iter()
                        .any(|e| l.strip_suffix(e).is_some_and(|b| lower.iter().any(|x| x == b)))
                    {
                        Some(true)
                    } else if lower
                        .iter()
                        .any(|x| x.len() > l.len() && x.starts_with(l.as_str()) && x.len() - l.len() <= 2)
                    {
                        Some(false)
                    } else {
                        None
                    };
                    names.push(name(None, s, plural));
                }
                names
            },
        })
    }

    /// The user's whole projection at this generation (every readable object).
    pub fn projection(&self) -> Projection {
        Projection {
            user: self.user().key.clone(),
            generation: self.catalog().generation,
            scope: vec!["*".into()],
            objects: self.catalog().objects().iter().filter_map(|o| self.project_object(o.key())).collect(),
        }
    }

    /// Object keys the text names through the label index (key, label, plural label), among
    /// the objects the user can read.
    pub fn objects_named(&self, text: &str) -> Vec<String> {
        let asked: BTreeSet<String> = words(text).into_iter().collect();
        self.catalog()
            .objects()
            .iter()
            .filter(|o| self.readable_object(o.key()).is_ok())
            .filter(|o| {
                let mut w = words(&o.def.label);
                w.extend(words(&o.def.plural_label));
                w.push(stem(o.key()));
                // Multi-word labels ("Invoice Line") need every word.
                let label = words(&o.def.label);
                asked.contains(&stem(o.key()))
                    || (!label.is_empty() && label.iter().all(|x| asked.contains(x)))
            })
            .map(|o| o.key().to_string())
            .collect()
    }

    /// The words of `text` that name only fields or objects this user's projection leaves out
    /// (fields the user cannot read, `aiVisibility: never` fields, objects the user cannot
    /// read). A question about them cannot be answered from the grounding: answering it with
    /// some other field would be a confident wrong answer.
    pub fn terms_outside_projection(&self, text: &str, projection: &Projection) -> Vec<String> {
        let mut visible: BTreeSet<String> = BTreeSet::new();
        for o in &projection.objects {
            visible.extend(words(&o.key));
            visible.extend(words(&o.label));
            visible.extend(words(&o.plural_label));
            for f in &o.fields {
                visible.extend(words(&f.key));
                visible.extend(words(&f.label));
                for (v, l) in &f.values {
                    visible.extend(words(v));
                    visible.extend(words(l));
                }
                for (c, _) in &f.categories {
                    visible.extend(words(c));
                }
            }
            for t in &o.terms {
                visible.extend(t.phrases().flat_map(words));
            }
        }
        let mut hidden: BTreeSet<String> = BTreeSet::new();
        for o in self.catalog().objects() {
            let readable = projection.object(o.key());
            if readable.is_none() {
                hidden.extend(words(o.key()));
                hidden.extend(words(&o.def.label));
                hidden.extend(words(&o.def.plural_label));
            }
            for f in o.fields() {
                if readable.is_some_and(|p| p.fields.iter().any(|x| x.key == f.key)) {
                    continue;
                }
                hidden.extend(words(&f.key));
                hidden.extend(words(&f.label));
            }
        }
        let mut out = vec![];
        for w in words(text) {
            if w.len() > 2
                && hidden.contains(&w)
                && !visible.contains(&w)
                && !GENERIC.contains(&w.as_str())
                && !out.contains(&w)
            {
                out.push(w);
            }
        }
        out
    }

    /// The grounding for a request: the whole projection when it fits `budget_tokens`, else the
    /// objects `text` names plus one hop. Cached per (user, generation, scope).
    pub fn grounding(&self, text: &str, budget_tokens: u64) -> Arc<Grounding> {
        let whole = self.whole_grounding();
        if whole.tokens <= budget_tokens {
            return whole;
        }
        let full = &whole.projection;
        let mut wanted: Vec<String> = vec![];
        for key in self.objects_named(text) {
            let Some(o) = full.object(&key) else { continue };
            wanted.push(key);
            wanted.extend(o.fields.iter().filter_map(|f| f.target.clone()));
            wanted.extend(o.children.iter().map(|(c, _)| c.clone()));
        }
        // In definition order; nothing named means every object.
        let scope: Vec<String> = full
            .objects
            .iter()
            .map(|o| o.key.clone())
            .filter(|k| wanted.is_empty() || wanted.contains(k))
            .collect();
        self.cached_grounding(scope.clone(), || {
            let mut p = full.clone();
            p.objects.retain(|o| scope.contains(&o.key));
            p.scope = scope;
            Grounding::of(p, whole.tokens)
        })
    }

    /// The user's whole projection at this generation, cached (the stable prompt prefix).
    pub fn whole_grounding(&self) -> Arc<Grounding> {
        self.cached_grounding(vec!["*".into()], || {
            let p = self.projection();
            let tokens = estimate_tokens(&p.render(true));
            Grounding::of(p, tokens)
        })
    }

    fn cached_grounding(&self, scope: Vec<String>, build: impl FnOnce() -> Grounding) -> Arc<Grounding> {
        let key = (self.user().key.clone(), self.catalog().generation, scope);
        let cache = self.workspace().extension::<ProjectionCache>();
        if let Some(g) = cache.0.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return g;
        }
        let g = Arc::new(build());
        if let Ok(mut m) = cache.0.lock() {
            m.insert(key, g.clone());
        }
        g
    }
}
