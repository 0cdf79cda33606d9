//! The workspace definition file (`countersign.workspace/v1`): its serde types and its
//! validation. A definition is checked in two passes, both of which report every problem with
//! the JSON pointer it belongs to: first against `schemas/workspace.schema.json` (shape), then
//! against the semantic rules no JSON Schema can say (references between objects, fields,
//! permission sets and users; values that fit their field's type).

use crate::error::{Code, Detail, Error, Result};
use crate::metadata::types::{Comparison, Condition};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

pub const FORMAT: &str = "countersign.workspace/v1";
pub const SCHEMA_TEXT: &str = include_str!("../../../../schemas/workspace.schema.json");

/// Keys the kernel keeps for itself.
pub const SYSTEM_FIELDS: [&str; 5] = ["id", "owner", "version", "created_at", "updated_at"];
pub const SYSTEM_USER: &str = "system";
/// The term every object has for the reader's own records (`owner` = the user).
pub const MINE: &str = "mine";

pub use crate::metadata::types::{
    AiVisibility, CategoryRef, FieldDef, FieldLevel, FieldType, LayoutDef, LayoutSection, ObjectDef,
    ObjectRight, PermissionSetDef, PicklistValue, Sharing, TermDef, UserDef, ValidationRuleDef,
    WorkspaceDefinition,
};

fn schema_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA_TEXT).expect("workspace schema is JSON");
        jsonschema::validator_for(&schema).expect("workspace schema compiles")
    })
}

impl WorkspaceDefinition {
    /// Parse and fully validate a definition. Errors list every problem with its JSON path.
    /// A definition over one of the kernel's size limits (see `limits`) is refused with those
    /// problems first, each naming the limit and its JSON pointer.
    pub fn from_json(doc: &Value) -> Result<Self> {
        let details: Vec<Detail> = schema_validator()
            .iter_errors(doc)
            .take(crate::metadata::limits::MAX_REPORTED_PROBLEMS)
            .map(|e| schema_problem(&e))
            .collect();
        let parsed = serde_json::from_value::<WorkspaceDefinition>(doc.clone());
        if let Ok(def) = &parsed {
            let mut problems = def.limit_problems();
            if !problems.is_empty() {
                problems.extend(details);
                return Err(invalid(problems));
            }
        }
        if !details.is_empty() {
            return Err(invalid(details));
        }
        let def = parsed.map_err(|e| invalid(vec![Detail { path: "/".into(), message: e.to_string() }]))?;
        let details = def.semantic_problems();
        if !details.is_empty() {
            return Err(invalid(details));
        }
        Ok(def)
    }

    pub fn parse(text: &str) -> Result<Self> {
        let doc: Value = serde_json::from_str(text).map_err(|e| {
            invalid(vec![Detail {
                path: format!("line {} column {}", e.line(), e.column()),
                message: format!("not JSON: {e}"),
            }])
        })?;
        Self::from_json(&doc)
    }

    pub fn object(&self, key: &str) -> Option<&ObjectDef> {
        self.objects.iter().find(|o| o.key == key)
    }

    /// Every size limit this definition breaks (`limits`), with its JSON pointer.
    pub fn limit_problems(&self) -> Vec<Detail> {
        use crate::metadata::limits::{self as l, check_len};
        let mut out = Vec::new();
        check_len(self.objects.len(), l::MAX_OBJECTS, "/objects", "objects", &mut out);
        for (oi, obj) in self.objects.iter().enumerate() {
            let at = format!("/objects/{oi}");
            check_len(
                obj.fields.len(),
                l::MAX_FIELDS,
                &format!("{at}/fields"),
                "fields on one object",
                &mut out,
            );
            for (fi, f) in obj.fields.iter().enumerate() {
                let n = f.values.as_ref().map_or(0, Vec::len);
                let vat = format!("{at}/fields/{fi}/values");
                check_len(n, l::MAX_PICKLIST_VALUES, &vat, "values in one picklist", &mut out);
            }
            let rat = format!("{at}/validationRules");
            check_len(
                obj.validation_rules.len(),
                l::MAX_RULES,
                &rat,
                "validation rules on one object",
                &mut out,
            );
            for (ri, rule) in obj.validation_rules.iter().enumerate() {
                out.extend(l::condition_problems(&rule.assert, &format!("{rat}/{ri}/assert")));
            }
            if let Some(layout) = &obj.layout {
                let sat = format!("{at}/layout/sections");
                check_len(layout.sections.len(), l::MAX_LAYOUT_SECTIONS, &sat, "layout sections", &mut out);
            }
        }
        let sets = self.permission_sets.len();
        check_len(sets, l::MAX_PERMISSION_SETS, "/permissionSets", "permission sets", &mut out);
        check_len(self.users.len(), l::MAX_USERS, "/users", "users", &mut out);
        out
    }

    /// The live part of this definition: without retired objects and fields (and without the
    /// layout places and permission-set entries that name them). This is what the catalog
    /// compiles; the stored definition keeps the retired parts so restoring them is a deploy.
    pub fn live(&self) -> WorkspaceDefinition {
        let retired_objects: HashSet<&str> =
            self.objects.iter().filter(|o| o.retired).map(|o| o.key.as_str()).collect();
        let retired_fields: HashSet<String> = self
            .objects
            .iter()
            .flat_map(|o| {
                o.fields
                    .iter()
                    .filter(move |f| o.retired || f.retired)
                    .map(move |f| format!("{}.{}", o.key, f.key))
            })
            .collect();
        let mut d = self.clone();
        d.objects.retain(|o| !o.retired);
        for o in &mut d.objects {
            let retired: HashSet<String> =
                o.fields.iter().filter(|f| f.retired).map(|f| f.key.clone()).collect();
            o.fields.retain(|f| !f.retired);
            if let Some(layout) = &mut o.layout {
                for s in &mut layout.sections {
                    s.fields.retain(|k| !retired.contains(k));
                }
                layout.sections.retain(|s| !s.fields.is_empty());
            }
        }
        for set in &mut d.permission_sets {
            set.objects.retain(|k, _| !retired_objects.contains(k.as_str()));
            set.fields.retain(|k, _| !retired_fields.contains(k));
        }
        if let Some(data) = &mut d.data {
            data.retain(|k, _| !retired_objects.contains(k.as_str()));
        }
        d
    }

    /// Semantic problems of the live definition (with their pointers into this one), and of
    /// what is retired: a retired key stays taken, a name field cannot be retired, and nothing
    /// live may look up a retired object.
    fn semantic_problems(&self) -> Vec<Detail> {
        let live = self.live();
        let mut problems: Vec<Detail> = live
            .live_problems()
            .into_iter()
            .map(|d| Detail { path: self.stored_pointer(&live, &d.path), message: d.message })
            .collect();
        for (oi, obj) in self.objects.iter().enumerate() {
            let at = format!("/objects/{oi}");
            if obj.retired {
                if live.object(&obj.key).is_none()
                    && self.objects.iter().filter(|o| o.key == obj.key).count() > 1
                {
                    problems.push(Detail {
                        path: format!("{at}/key"),
                        message: format!("object key `{}` is used twice", obj.key),
                    });
                }
                continue;
            }
            for (fi, f) in obj.fields.iter().enumerate() {
                let fat = format!("{at}/fields/{fi}");
                if f.retired {
                    if f.key == obj.name_field {
                        problems.push(Detail {
                            path: format!("{fat}/retired"),
                            message: format!("`{}` is the name field of `{}`: choose another name field before retiring it", f.key, obj.key),
                        });
                    }
                    if obj.fields.iter().filter(|x| x.key == f.key).count() > 1 {
                        problems.push(Detail {
                            path: format!("{fat}/key"),
                            message: format!(
                                "field key `{}` is used twice (a retired field keeps its key)",
                                f.key
                            ),
                        });
                    }
                    continue;
                }
                if let Some(target) =
                    f.target.as_deref().filter(|t| self.object(t).is_some_and(|o| o.retired))
                {
                    problems.push(Detail {
                        path: format!("{fat}/target"),
                        message: format!(
                            "`{target}` is retired: retire `{}.{}` too, or restore `{target}`",
                            obj.key, f.key
                        ),
                    });
                }
            }
            if self.objects.iter().any(|o| o.retired && o.key == obj.key) {
                problems.push(Detail {
                    path: format!("{at}/key"),
                    message: format!(
                        "object key `{}` is used twice (a retired object keeps its key)",
                        obj.key
                    ),
                });
            }
        }
        problems
    }

    /// A pointer into `live` (this definition without its retired parts) as a pointer into
    /// this definition: object and field indices shift past the retired ones.
    fn stored_pointer(&self, live: &WorkspaceDefinition, path: &str) -> String {
        let parts: Vec<&str> = path.split('/').collect();
        let index = |s: &str| s.parse::<usize>().ok();
        let (Some(&""), Some(&"objects"), Some(oi)) =
            (parts.first(), parts.get(1), parts.get(2).and_then(|s| index(s)))
        else {
            return path.to_string();
        };
        let Some(live_obj) = live.objects.get(oi) else { return path.to_string() };
        let Some(soi) = self.objects.iter().position(|o| o.key == live_obj.key) else {
            return path.to_string();
        };
        let mut out: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
        out[2] = soi.to_string();
        if let (Some(&"fields"), Some(fi)) = (parts.get(3), parts.get(4).and_then(|s| index(s))) {
            if let Some(sfi) = live_obj
                .fields
                .get(fi)
                .and_then(|f| self.objects[soi].fields.iter().position(|x| x.key == f.key))
            {
                out[4] = sfi.to_string();
            }
        }
        out.join("/")
    }

    fn live_problems(&self) -> Vec<Detail> {
        let mut p = Problems::default();
        let objects: HashMap<&str, &ObjectDef> = self.objects.iter().map(|o| (o.key.as_str(), o)).collect();
        let mut seen = HashSet::new();
        for (oi, obj) in self.objects.iter().enumerate() {
            let at = format!("/objects/{oi}");
            if !seen.insert(obj.key.as_str()) {
                p.add(format!("{at}/key"), format!("object key `{}` is used twice", obj.key));
            }
            check_object(obj, &at, &objects, &mut p);
        }
        // Master-detail chains must end (no cycles).
        for (oi, obj) in self.objects.iter().enumerate() {
            let mut cur = obj;
            for _ in 0..=self.objects.len() {
                match master_of(cur).and_then(|t| objects.get(t)) {
                    Some(next) => cur = next,
                    None => break,
                }
                if cur.key == obj.key {
                    p.add(
                        format!("/objects/{oi}"),
                        format!("master-detail relationships of `{}` form a cycle", obj.key),
                    );
                    break;
                }
            }
        }
        if let Some(tz) = &self.time_zone {
            if !crate::clock::known_time_zone(tz) {
                p.add(
                    "/timeZone".into(),
                    format!(
                        "`{tz}` is not a time zone this machine knows (an IANA name such as Europe/Berlin)"
                    ),
                );
            }
        }
        if let Some(tag) = &self.locale {
            if crate::locale::Locale::parse(tag).is_none() {
                p.add(
                    "/locale".into(),
                    format!("`{tag}` is not a locale Countersign can write (English, German, French or Spanish: en, de-DE, fr-FR, es-ES)"),
                );
            }
        }
        let mut set_keys = HashSet::new();
        for (si, set) in self.permission_sets.iter().enumerate() {
            let at = format!("/permissionSets/{si}");
            if !set_keys.insert(set.key.as_str()) {
                p.add(format!("{at}/key"), format!("permission set `{}` is defined twice", set.key));
            }
            for okey in set.objects.keys() {
                if !objects.contains_key(okey.as_str()) {
                    p.add(format!("{at}/objects/{okey}"), format!("no object `{okey}`"));
                }
            }
            for path in set.fields.keys() {
                let (o, f) = path.split_once('.').unwrap_or((path, ""));
                let known = objects.get(o).is_some_and(|obj| obj.fields.iter().any(|fd| fd.key == f));
                if !known {
                    p.add(format!("{at}/fields/{path}"), format!("no field `{path}`"));
                }
            }
        }
        let mut user_keys = HashSet::new();
        for (ui, user) in self.users.iter().enumerate() {
            let at = format!("/users/{ui}");
            if user.key == SYSTEM_USER {
                p.add(format!("{at}/key"), "the user key `system` is reserved".to_string());
            }
            if !user_keys.insert(user.key.as_str()) {
                p.add(format!("{at}/key"), format!("user `{}` is defined twice", user.key));
            }
            for (pi, ps) in user.permission_sets.iter().enumerate() {
                if !set_keys.contains(ps.as_str()) {
                    p.add(format!("{at}/permissionSets/{pi}"), format!("no permission set `{ps}`"));
                }
            }
        }
        if let Some(data) = &self.data {
            for okey in data.keys() {
                if !objects.contains_key(okey.as_str()) {
                    p.add(format!("/data/{okey}"), format!("no object `{okey}`"));
                }
            }
        }
        p.0
    }
}

/// The object's master (the target of its master-detail field), if any.
pub fn master_of(obj: &ObjectDef) -> Option<&str> {
    obj.fields.iter().find(|f| f.master_detail).and_then(|f| f.target.as_deref())
}

fn check_object(obj: &ObjectDef, at: &str, objects: &HashMap<&str, &ObjectDef>, p: &mut Problems) {
    let mut keys = HashSet::new();
    for (fi, f) in obj.fields.iter().enumerate() {
        let fat = format!("{at}/fields/{fi}");
        if !keys.insert(f.key.as_str()) {
            p.add(format!("{fat}/key"), format!("field key `{}` is used twice", f.key));
        }
        if let (Some(prec), Some(scale)) = (f.precision, f.scale) {
            if scale > prec {
                p.add(format!("{fat}/scale"), format!("scale {scale} exceeds precision {prec}"));
            }
        }
        if let Some(values) = &f.values {
            let mut vs = HashSet::new();
            for (vi, v) in values.iter().enumerate() {
                if !vs.insert(v.value.as_str()) {
                    p.add(
                        format!("{fat}/values/{vi}"),
                        format!("picklist value `{}` is listed twice", v.value),
                    );
                }
            }
            if !values.iter().any(|v| v.active) {
                p.add(format!("{fat}/values"), "a picklist needs at least one active value".to_string());
            }
        }
        if let Some(target) = &f.target {
            if !objects.contains_key(target.as_str()) {
                p.add(format!("{fat}/target"), format!("no object `{target}`"));
            }
        }
        if f.master_detail && !f.required {
            p.add(format!("{fat}/required"), "a master-detail field must be required".to_string());
        }
        if f.unique
            && !matches!(
                f.field_type,
                FieldType::Text | FieldType::Email | FieldType::Phone | FieldType::Url | FieldType::Number
            )
        {
            p.add(
                format!("{fat}/unique"),
                format!("a {:?} field cannot be unique", f.field_type).to_lowercase(),
            );
        }
        if let Some(default) = &f.default {
            match f.field_type {
                FieldType::Lookup => {
                    p.add(format!("{fat}/default"), "a lookup cannot have a default".to_string())
                }
                _ => {
                    if let Err(e) = crate::metadata::value::coerce(f, default) {
                        p.add(format!("{fat}/default"), e);
                    } else if f.field_type == FieldType::Picklist {
                        let active = f
                            .values
                            .iter()
                            .flatten()
                            .any(|v| v.active && Some(v.value.as_str()) == default.as_str());
                        if !active {
                            p.add(
                                format!("{fat}/default"),
                                "a picklist default must be an active value".to_string(),
                            );
                        }
                    }
                }
            }
        }
    }
    match obj.fields.iter().find(|f| f.key == obj.name_field) {
        None => p.add(format!("{at}/nameField"), format!("no field `{}` on `{}`", obj.name_field, obj.key)),
        Some(f) if !f.field_type.is_textual() => p.add(
            format!("{at}/nameField"),
            "the name field must be a text, e-mail, phone or URL field".to_string(),
        ),
        Some(_) => {}
    }
    let md: Vec<&FieldDef> = obj.fields.iter().filter(|f| f.master_detail).collect();
    match (obj.sharing, md.len()) {
        (Sharing::Inherit, 1) | (Sharing::Private | Sharing::PublicRead | Sharing::PublicReadWrite, 0) => {}
        (Sharing::Inherit, _) => p.add(
            format!("{at}/sharing"),
            "`inherit` sharing needs exactly one master-detail field".to_string(),
        ),
        (_, _) => p.add(
            format!("{at}/sharing"),
            "an object with a master-detail field must use `inherit` sharing".to_string(),
        ),
    }
    let mut rule_keys = HashSet::new();
    for (ri, rule) in obj.validation_rules.iter().enumerate() {
        let rat = format!("{at}/validationRules/{ri}");
        if !rule_keys.insert(rule.key.as_str()) {
            p.add(format!("{rat}/key"), format!("rule key `{}` is used twice", rule.key));
        }
        if let Some(ef) = &rule.error_field {
            if !keys.contains(ef.as_str()) {
                p.add(format!("{rat}/errorField"), format!("no field `{ef}` on `{}`", obj.key));
            }
        }
        check_condition(obj, &rule.assert, &format!("{rat}/assert"), "a validation rule", p);
    }
    check_terms(obj, at, p);
    if let Some(layout) = &obj.layout {
        let mut placed = HashSet::new();
        for (si, s) in layout.sections.iter().enumerate() {
            for (fi, f) in s.fields.iter().enumerate() {
                let lat = format!("{at}/layout/sections/{si}/fields/{fi}");
                if !keys.contains(f.as_str()) {
                    p.add(lat, format!("no field `{f}` on `{}`", obj.key));
                } else if !placed.insert(f.as_str()) {
                    p.add(lat, format!("field `{f}` is placed twice"));
                }
            }
        }
    }
}

/// A condition on `obj`'s own fields (`what` names its owner in the message: a validation
/// rule, a term).
fn check_condition(obj: &ObjectDef, c: &Condition, at: &str, what: &str, p: &mut Problems) {
    match c {
        Condition::All(all) => {
            for (i, c) in all.all.iter().enumerate() {
                check_condition(obj, c, &format!("{at}/all/{i}"), what, p);
            }
        }
        Condition::Any(any) => {
            for (i, c) in any.any.iter().enumerate() {
                check_condition(obj, c, &format!("{at}/any/{i}"), what, p);
            }
        }
        Condition::Not(not) => check_condition(obj, &not.not, &format!("{at}/not"), what, p),
        Condition::Related(_) => p.add(
            at.to_string(),
            format!("{what} can only use the fields of `{}`, not related records", obj.key),
        ),
        Condition::Compare(cmp) => {
            if let Err(e) = check_own_comparison(obj, cmp, what) {
                p.add(at.to_string(), e);
            }
        }
    }
}

fn check_own_comparison(obj: &ObjectDef, cmp: &Comparison, what: &str) -> std::result::Result<(), String> {
    let find = |k: &str| {
        obj.fields
            .iter()
            .find(|f| f.key == k)
            .ok_or_else(|| format!("{what} can only use the fields of `{}`; no field `{k}`", obj.key))
    };
    let field = find(&cmp.field)?;
    crate::metadata::condition::check_op(field.field_type, cmp.op).map_err(|e| e.message)?;
    if let Some(other) = &cmp.other_field {
        let o = find(other)?;
        crate::metadata::condition::check_comparable(field.field_type, o.field_type)
            .map_err(|e| e.message)?;
    }
    if let Some(v) = &cmp.value {
        let items: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            v => vec![v],
        };
        for item in items {
            crate::metadata::value::coerce(field, item)?;
        }
    }
    Ok(())
}

/// Terms: unique keys, a filter on the object's own fields, or a category some value of a
/// picklist field of the object carries.
fn check_terms(obj: &ObjectDef, at: &str, p: &mut Problems) {
    let mut term_keys = HashSet::new();
    for (ti, term) in obj.terms.iter().enumerate() {
        let tat = format!("{at}/terms/{ti}");
        if !term_keys.insert(term.key.as_str()) {
            p.add(format!("{tat}/key"), format!("term key `{}` is used twice", term.key));
        }
        if term.key == MINE {
            p.add(
                format!("{tat}/key"),
                format!("the term key `{MINE}` is the kernel's (the reader's own records)"),
            );
        }
        if let Some(filter) = &term.filter {
            check_condition(obj, filter, &format!("{tat}/filter"), "a term", p);
        }
        if let Some(c) = &term.category {
            let cat = format!("{tat}/category");
            match obj.fields.iter().find(|f| f.key == c.field) {
                Some(f) if f.field_type == FieldType::Picklist => {
                    if !f.values.iter().flatten().any(|v| v.category.as_deref() == Some(c.is.as_str())) {
                        p.add(cat, format!("no value of `{}` has the category `{}`", c.field, c.is));
                    }
                }
                Some(_) => p.add(cat, format!("`{}` is not a picklist field", c.field)),
                None => p.add(cat, format!("no field `{}` on `{}`", c.field, obj.key)),
            }
        }
    }
}

impl ObjectDef {
    /// The condition a term of this object means, on the object's own fields: its filter, or
    /// its category as `field in [every value carrying it]`.
    pub fn term_condition(&self, term: &TermDef) -> Condition {
        if let Some(filter) = &term.filter {
            return filter.clone();
        }
        let c = term.category.as_ref().expect("a term has a filter or a category (schema)");
        let values = self
            .fields
            .iter()
            .filter(|f| f.key == c.field)
            .flat_map(|f| f.values.iter().flatten())
            .filter(|v| v.category.as_deref() == Some(c.is.as_str()))
            .map(|v| Value::String(v.value.clone()))
            .collect();
        Condition::compare(c.field.clone(), crate::metadata::types::Op::In, Value::Array(values))
    }
}

#[derive(Default)]
struct Problems(Vec<Detail>);

impl Problems {
    fn add(&mut self, path: String, message: String) {
        self.0.push(Detail { path, message });
    }
}

/// One JSON Schema problem as a detail. The validator's message quotes the offending value;
/// a large one (a 40,000-item list, a whole object) is named, not quoted.
pub(crate) fn schema_problem(e: &jsonschema::ValidationError<'_>) -> Detail {
    let message = e.to_string();
    let message = if message.len() <= 300 { message } else { e.masked_with("the value").to_string() };
    Detail { path: pointer_or_root(e.instance_path().as_str()), message }
}

fn pointer_or_root(p: &str) -> String {
    if p.is_empty() {
        "/".into()
    } else {
        p.to_string()
    }
}

fn invalid(details: Vec<Detail>) -> Error {
    let first = details.first().map(|d| format!("{}: {}", d.path, d.message)).unwrap_or_default();
    Error::new(
        Code::InvalidDefinition,
        format!("the workspace definition is invalid ({} problem(s)); first: {first}", details.len()),
    )
    .with_details(details)
}
