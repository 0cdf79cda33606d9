//! What a new definition changes, read from the two definitions alone (the data is the
//! plan's business): objects, fields, permission sets and users added, changed, retired,
//! restored and removed, each with the attributes that changed.

use crate::metadata::definition::{FieldDef, ObjectDef, PermissionSetDef, UserDef, WorkspaceDefinition};
use serde::Serialize;
use ts_rs::TS;
use ChangeAction as A;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ChangeAction {
    Add,
    Change,
    Retire,
    Restore,
    Remove,
}

/// One change a deploy makes to the metadata.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct MetadataChange {
    pub action: ChangeAction,
    /// What changes, by key: `workspace`, `object account`, `field account.segment`,
    /// `permission set admin`, `user ava`.
    pub target: String,
    /// For a change: what is different (`label "A" → "B"; required`); otherwise empty.
    pub detail: String,
}

impl MetadataChange {
    fn new(action: ChangeAction, target: String, detail: Vec<String>) -> MetadataChange {
        MetadataChange { action, target, detail: detail.join("; ") }
    }

    /// One line: `added field account.segment`, `changed object invoice (label "A" → "B")`.
    pub fn summary(&self) -> String {
        let verb = match self.action {
            ChangeAction::Add => "added",
            ChangeAction::Change => "changed",
            ChangeAction::Retire => "retired",
            ChangeAction::Restore => "restored",
            ChangeAction::Remove => "removed",
        };
        if self.detail.is_empty() {
            format!("{verb} {}", self.target)
        } else {
            format!("{verb} {} ({})", self.target, self.detail)
        }
    }
}

/// The changes from `old` (none: an empty workspace) to `new`, in definition order.
pub fn diff(old: Option<&WorkspaceDefinition>, new: &WorkspaceDefinition) -> Vec<MetadataChange> {
    let mut out = Vec::new();
    if let Some(old) = old {
        let mut d = Vec::new();
        differ(&mut d, "name", &old.name, &new.name);
        differ(&mut d, "currency", &old.currency, &new.currency);
        differ(&mut d, "time zone", &old.time_zone, &new.time_zone);
        if !d.is_empty() {
            out.push(MetadataChange::new(A::Change, "workspace".into(), d));
        }
    }
    let old_objects = old.map(|d| d.objects.as_slice()).unwrap_or_default();
    for o in &new.objects {
        let target = format!("object {}", o.key);
        match old_objects.iter().find(|p| p.key == o.key) {
            None => out.push(MetadataChange::new(A::Add, target, vec![])),
            Some(p) => {
                match (p.retired, o.retired) {
                    (false, true) => out.push(MetadataChange::new(A::Retire, target, vec![])),
                    (true, false) => out.push(MetadataChange::new(A::Restore, target, vec![])),
                    _ => {
                        let d = object_detail(p, o);
                        if !d.is_empty() {
                            out.push(MetadataChange::new(A::Change, target, d));
                        }
                    }
                }
                out.extend(field_changes(p, o));
            }
        }
    }
    for p in old_objects.iter().filter(|p| new.object(&p.key).is_none()) {
        out.push(MetadataChange::new(A::Remove, format!("object {}", p.key), vec![]));
    }
    let old_sets = old.map(|d| d.permission_sets.as_slice()).unwrap_or_default();
    keyed(&mut out, old_sets, &new.permission_sets, |s| &s.key, "permission set", set_detail);
    let old_users = old.map(|d| d.users.as_slice()).unwrap_or_default();
    keyed(&mut out, old_users, &new.users, |u| &u.key, "user", user_detail);
    out
}

fn field_changes(prev: &ObjectDef, o: &ObjectDef) -> Vec<MetadataChange> {
    let mut out = Vec::new();
    for f in &o.fields {
        let target = format!("field {}.{}", o.key, f.key);
        match prev.fields.iter().find(|p| p.key == f.key) {
            None => out.push(MetadataChange::new(A::Add, target, vec![shown(&f.field_type)])),
            Some(p) if !p.retired && f.retired => out.push(MetadataChange::new(A::Retire, target, vec![])),
            Some(p) if p.retired && !f.retired => {
                out.push(MetadataChange::new(A::Restore, target, field_detail(p, f)))
            }
            Some(p) => {
                let d = field_detail(p, f);
                if !d.is_empty() {
                    out.push(MetadataChange::new(A::Change, target, d));
                }
            }
        }
    }
    for p in prev.fields.iter().filter(|p| !o.fields.iter().any(|f| f.key == p.key)) {
        out.push(MetadataChange::new(A::Remove, format!("field {}.{}", o.key, p.key), vec![]));
    }
    out
}

/// Added, changed and removed items of a keyed list (permission sets, users).
fn keyed<T>(
    out: &mut Vec<MetadataChange>,
    old: &[T],
    new: &[T],
    key: impl Fn(&T) -> &String,
    kind: &str,
    detail: impl Fn(&T, &T) -> Vec<String>,
) {
    for n in new {
        let target = format!("{kind} {}", key(n));
        match old.iter().find(|o| key(o) == key(n)) {
            None => out.push(MetadataChange::new(ChangeAction::Add, target, vec![])),
            Some(o) => {
                let d = detail(o, n);
                if !d.is_empty() {
                    out.push(MetadataChange::new(ChangeAction::Change, target, d));
                }
            }
        }
    }
    for o in old.iter().filter(|o| !new.iter().any(|n| key(n) == key(o))) {
        out.push(MetadataChange::new(ChangeAction::Remove, format!("{kind} {}", key(o)), vec![]));
    }
}

fn differ<T: PartialEq + Serialize>(out: &mut Vec<String>, what: &str, a: &T, b: &T) {
    if a != b {
        out.push(format!("{what} {} → {}", shown(a), shown(b)));
    }
}

/// A value as a change shows it: its JSON (strings quoted, enums by their names), `none` for
/// an absent option.
fn shown<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::Null) => "none".to_string(),
        Ok(v) => v.to_string(),
        Err(_) => "?".to_string(),
    }
}

fn flag(out: &mut Vec<String>, what: &str, a: bool, b: bool) {
    if a != b {
        out.push(if b { what.to_string() } else { format!("not {what}") });
    }
}

fn object_detail(p: &ObjectDef, o: &ObjectDef) -> Vec<String> {
    let mut d = Vec::new();
    differ(&mut d, "label", &p.label, &o.label);
    differ(&mut d, "plural label", &p.plural_label, &o.plural_label);
    differ(&mut d, "description", &p.description, &o.description);
    differ(&mut d, "sharing", &p.sharing, &o.sharing);
    differ(&mut d, "name field", &p.name_field, &o.name_field);
    if p.validation_rules != o.validation_rules {
        d.push("validation rules".into());
    }
    if p.layout != o.layout || field_order(p, o) != field_order(o, p) {
        d.push("page layout".into());
    }
    if p.terms != o.terms {
        d.push("terms".into());
    }
    d
}

/// The order of the fields both objects have (adding or removing one is its own change).
fn field_order<'a>(o: &'a ObjectDef, other: &ObjectDef) -> Vec<&'a str> {
    o.fields.iter().map(|f| f.key.as_str()).filter(|k| other.fields.iter().any(|x| x.key == *k)).collect()
}

fn field_detail(p: &FieldDef, f: &FieldDef) -> Vec<String> {
    let mut d = Vec::new();
    differ(&mut d, "label", &p.label, &f.label);
    differ(&mut d, "type", &p.field_type, &f.field_type);
    flag(&mut d, "required", p.required, f.required);
    flag(&mut d, "unique", p.unique, f.unique);
    differ(&mut d, "max length", &p.max_length, &f.max_length);
    differ(&mut d, "precision", &p.precision, &f.precision);
    differ(&mut d, "scale", &p.scale, &f.scale);
    differ(&mut d, "target", &p.target, &f.target);
    flag(&mut d, "master-detail", p.master_detail, f.master_detail);
    differ(&mut d, "default", &p.default, &f.default);
    differ(&mut d, "help text", &p.help_text, &f.help_text);
    differ(&mut d, "AI visibility", &p.ai_visibility, &f.ai_visibility);
    flag(&mut d, "additive", p.additive, f.additive);
    let values = |x: &FieldDef| x.values.clone().unwrap_or_default();
    let (pv, fv) = (values(p), values(f));
    for v in &fv {
        match pv.iter().find(|o| o.value == v.value) {
            None => d.push(format!("value {:?} added", v.value)),
            Some(o) if o.active && !v.active => d.push(format!("value {:?} retired", v.value)),
            Some(o) if !o.active && v.active => d.push(format!("value {:?} restored", v.value)),
            Some(o) if o != v => d.push(format!("value {:?} changed", v.value)),
            Some(_) => {}
        }
    }
    for o in pv.iter().filter(|o| !fv.iter().any(|v| v.value == o.value)) {
        d.push(format!("value {:?} removed", o.value));
    }
    d
}

fn set_detail(p: &PermissionSetDef, s: &PermissionSetDef) -> Vec<String> {
    let mut d = Vec::new();
    differ(&mut d, "label", &p.label, &s.label);
    differ(&mut d, "system permissions", &p.system, &s.system);
    for (object, rights) in &s.objects {
        if p.objects.get(object) != Some(rights) {
            d.push(format!(
                "{object}: {}",
                rights.iter().map(|r| shown(r).to_lowercase()).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    for object in p.objects.keys().filter(|k| !s.objects.contains_key(*k)) {
        d.push(format!("{object}: no access"));
    }
    for (field, level) in &s.fields {
        if p.fields.get(field) != Some(level) {
            d.push(format!("{field}: {}", shown(level)));
        }
    }
    for field in p.fields.keys().filter(|k| !s.fields.contains_key(*k)) {
        d.push(format!("{field}: as the object"));
    }
    flag(&mut d, "view all", p.view_all, s.view_all);
    d
}

fn user_detail(p: &UserDef, u: &UserDef) -> Vec<String> {
    let mut d = Vec::new();
    differ(&mut d, "name", &p.name, &u.name);
    differ(&mut d, "e-mail", &p.email, &u.email);
    flag(&mut d, "active", p.active, u.active);
    differ(&mut d, "permission sets", &p.permission_sets, &u.permission_sets);
    d
}
