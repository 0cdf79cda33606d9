//! The compiled form of one metadata generation: objects with resolved fields, compiled
//! validation rules, relationships, and every user's effective access. Built once per deploy
//! (and on open) and shared read-only by every session; nothing on the save or query path
//! re-reads or re-parses the definition.

use crate::error::{Code, Error, Result};
use crate::metadata::condition::{Operand, Predicate};
use crate::metadata::definition::{
    FieldDef, FieldLevel, FieldType, ObjectDef, ObjectRight, WorkspaceDefinition, SYSTEM_USER,
};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

#[derive(Debug)]
pub struct Catalog {
    pub generation: i64,
    /// The live definition: without retired objects and fields. Everything that reads or
    /// writes records works from this.
    pub definition: WorkspaceDefinition,
    /// The definition as deployed, retired parts included: what a deploy compares against and
    /// what an edit of the definition starts from.
    pub stored: WorkspaceDefinition,
    objects: Vec<ObjectMeta>,
    index: HashMap<String, usize>,
    users: HashMap<String, Arc<UserAccess>>,
}

#[derive(Debug)]
pub struct ObjectMeta {
    pub def: ObjectDef,
    /// Quoted SQL table name.
    pub table: String,
    field_index: HashMap<String, usize>,
    pub rules: Vec<CompiledRule>,
    /// The master-detail field (index) and its master object, for `inherit` sharing.
    pub master: Option<(usize, String)>,
    /// Lookups on other objects that point at this one.
    pub referenced_by: Vec<Reference>,
}

#[derive(Debug, Clone)]
pub struct Reference {
    pub object: String,
    pub field: String,
    pub master_detail: bool,
}

#[derive(Debug)]
pub struct CompiledRule {
    pub key: String,
    pub predicate: Predicate,
    pub message: String,
    pub error_field: Option<String>,
}

/// A user's effective rights: the union of their permission sets.
#[derive(Debug)]
pub struct UserAccess {
    pub key: String,
    pub name: String,
    pub active: bool,
    pub system_permissions: BTreeSet<String>,
    objects: HashMap<String, ObjectAccess>,
    /// The kernel's own actor (demo loading): every right, no row predicate.
    pub is_system: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ObjectAccess {
    pub read: bool,
    pub create: bool,
    pub edit: bool,
    pub delete: bool,
    pub view_all: bool,
    /// Effective level per field, by field index.
    pub fields: Vec<FieldLevel>,
}

pub fn column(field: &str) -> String {
    format!("\"f_{field}\"")
}

pub fn table(object: &str) -> String {
    format!("\"obj_{object}\"")
}

/// Whether a picklist value is an ISO 4217-style currency code (`USD`, `EUR`): a picklist of
/// nothing else says its record's currency.
pub fn is_currency_code(v: &str) -> bool {
    v.len() == 3 && v.chars().all(|c| c.is_ascii_uppercase())
}

impl ObjectMeta {
    /// The picklist that states the currency of this object's amounts: one whose every value
    /// is a currency code.
    pub fn currency_field(&self) -> Option<&str> {
        self.def
            .fields
            .iter()
            .find(|f| {
                f.field_type == FieldType::Picklist
                    && f.values
                        .as_ref()
                        .is_some_and(|vs| !vs.is_empty() && vs.iter().all(|v| is_currency_code(&v.value)))
            })
            .map(|f| f.key.as_str())
    }

    pub fn key(&self) -> &str {
        &self.def.key
    }
    pub fn fields(&self) -> &[FieldDef] {
        &self.def.fields
    }
    pub fn field_index(&self, key: &str) -> Option<usize> {
        self.field_index.get(key).copied()
    }
    pub fn field(&self, key: &str) -> Option<&FieldDef> {
        self.field_index(key).map(|i| &self.def.fields[i])
    }
    pub fn name_field(&self) -> &FieldDef {
        self.field(&self.def.name_field).expect("name field checked at deploy")
    }
}

impl UserAccess {
    pub fn object(&self, object: &str) -> Option<&ObjectAccess> {
        self.objects.get(object)
    }
    pub fn has_system_permission(&self, p: &str) -> bool {
        self.is_system || self.system_permissions.contains(p)
    }
}

impl Catalog {
    pub fn compile(generation: i64, stored: WorkspaceDefinition) -> Result<Catalog> {
        let definition = stored.live();
        let mut objects = Vec::new();
        let mut index = HashMap::new();
        for (i, o) in definition.objects.iter().enumerate() {
            index.insert(o.key.clone(), i);
            let field_index: HashMap<String, usize> =
                o.fields.iter().enumerate().map(|(i, f)| (f.key.clone(), i)).collect();
            let mut rules = Vec::new();
            for r in o.validation_rules.iter().filter(|r| r.active) {
                let mut resolve = |path: &str| -> Result<Operand> {
                    let slot = *field_index.get(path).ok_or_else(|| {
                        Error::new(
                            Code::InvalidDefinition,
                            format!("rule `{}` names unknown field `{path}`", r.key),
                        )
                    })?;
                    Ok(Operand {
                        expr: column(path),
                        slot,
                        def: Box::new(o.fields[slot].clone()),
                        row: None,
                        text_index: None,
                    })
                };
                let predicate = r.assert.compile(&mut resolve).map_err(|e| {
                    Error::new(
                        Code::InvalidDefinition,
                        format!("rule `{}` of `{}`: {}", r.key, o.key, e.message),
                    )
                })?;
                rules.push(CompiledRule {
                    key: r.key.clone(),
                    predicate,
                    message: r.message.clone(),
                    error_field: r.error_field.clone(),
                });
            }
            let master = o
                .fields
                .iter()
                .position(|f| f.master_detail)
                .map(|i| (i, o.fields[i].target.clone().unwrap_or_default()));
            objects.push(ObjectMeta {
                def: o.clone(),
                table: table(&o.key),
                field_index,
                rules,
                master,
                referenced_by: Vec::new(),
            });
        }
        for o in &definition.objects {
            for f in o.fields.iter().filter(|f| f.field_type == FieldType::Lookup) {
                if let Some(t) = f.target.as_ref().and_then(|t| index.get(t)) {
                    objects[*t].referenced_by.push(Reference {
                        object: o.key.clone(),
                        field: f.key.clone(),
                        master_detail: f.master_detail,
                    });
                }
            }
        }
        let users = definition
            .users
            .iter()
            .map(|u| (u.key.clone(), Arc::new(effective_access(&definition, u))))
            .collect();
        Ok(Catalog { generation, definition, stored, objects, index, users })
    }

    pub fn objects(&self) -> &[ObjectMeta] {
        &self.objects
    }

    /// An object by key, without regard to any user (kernel-internal).
    pub fn object_meta(&self, key: &str) -> Result<&ObjectMeta> {
        self.index
            .get(key)
            .map(|i| &self.objects[*i])
            .ok_or_else(|| Error::new(Code::UnknownObject, format!("no object `{key}`")))
    }

    pub fn user(&self, key: &str) -> Result<Arc<UserAccess>> {
        self.users
            .get(key)
            .cloned()
            .ok_or_else(|| Error::new(Code::UnknownUser, format!("no user `{key}` in this workspace")))
    }

    /// The names of the active users who have `permission`, in the definition's order.
    pub fn users_with(&self, permission: &str) -> Vec<String> {
        self.user_keys()
            .filter_map(|k| self.users.get(k))
            .filter(|u| u.active && u.has_system_permission(permission))
            .map(|u| u.name.clone())
            .collect()
    }

    pub fn user_keys(&self) -> impl Iterator<Item = &str> {
        self.definition.users.iter().map(|u| u.key.as_str())
    }

    /// The kernel's own actor: used to load demo data and nothing a person does.
    pub fn system_user(&self) -> Arc<UserAccess> {
        let objects = self
            .objects
            .iter()
            .map(|o| {
                (
                    o.def.key.clone(),
                    ObjectAccess {
                        read: true,
                        create: true,
                        edit: true,
                        delete: true,
                        view_all: true,
                        fields: vec![FieldLevel::Edit; o.def.fields.len()],
                    },
                )
            })
            .collect();
        Arc::new(UserAccess {
            key: SYSTEM_USER.into(),
            name: "Countersign".into(),
            active: true,
            system_permissions: BTreeSet::new(),
            objects,
            is_system: true,
        })
    }
}

fn effective_access(def: &WorkspaceDefinition, user: &crate::metadata::definition::UserDef) -> UserAccess {
    let sets: Vec<_> = def.permission_sets.iter().filter(|s| user.permission_sets.contains(&s.key)).collect();
    let mut objects = HashMap::new();
    for o in &def.objects {
        let mut acc = ObjectAccess { fields: vec![FieldLevel::None; o.fields.len()], ..Default::default() };
        for set in &sets {
            let rights = set.objects.get(&o.key).map(Vec::as_slice).unwrap_or_default();
            let has = |r: ObjectRight| rights.contains(&r);
            if !has(ObjectRight::Read) {
                continue;
            }
            acc.read = true;
            acc.create |= has(ObjectRight::Create);
            acc.edit |= has(ObjectRight::Edit);
            acc.delete |= has(ObjectRight::Delete);
            acc.view_all |= set.view_all;
            let base = if has(ObjectRight::Edit) || has(ObjectRight::Create) {
                FieldLevel::Edit
            } else {
                FieldLevel::Read
            };
            for (i, f) in o.fields.iter().enumerate() {
                let level = set.fields.get(&format!("{}.{}", o.key, f.key)).copied().unwrap_or(base);
                // A set cannot grant more on a field than on its object.
                let level = level.min(base);
                acc.fields[i] = acc.fields[i].max(level);
            }
        }
        objects.insert(o.key.clone(), acc);
    }
    UserAccess {
        key: user.key.clone(),
        name: user.name.clone(),
        active: user.active,
        system_permissions: sets.iter().flat_map(|s| s.system.iter().cloned()).collect(),
        objects,
        is_system: false,
    }
}
