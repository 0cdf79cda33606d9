//! What a user may know about the workspace's metadata: the objects they can read, each with
//! the fields they can read (and whether they may edit them), its layout and its related lists.
//! The UI lays out record pages and lists from this; fields at level `none` never appear.

use crate::error::Result;
use crate::metadata::catalog::ObjectMeta;
use crate::metadata::definition::{FieldLevel, FieldType, PicklistValue};
use crate::metadata::permissions::{AI_AUTHOR, AI_MANAGE};
use crate::records::access::Session;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceView {
    pub path: String,
    pub name: String,
    pub currency: String,
    /// The locale values are written in for the acting user (`de-DE`): their own, else the
    /// workspace's, else `en`.
    pub locale: String,
    /// Whether a locale was chosen (the user's or the workspace's); if not, the app writes
    /// dates as stored and numbers as the system's language does.
    pub locale_chosen: bool,
    /// The acting user's own choice, if any.
    #[ts(optional)]
    pub own_locale: Option<String>,
    /// The workspace's locale, if its definition sets one.
    #[ts(optional)]
    pub workspace_locale: Option<String>,
    #[ts(type = "number")]
    pub generation: i64,
    pub users: Vec<UserView>,
    /// The acting user.
    pub user: UserView,
    /// The objects the acting user can read, in definition order.
    pub objects: Vec<ObjectSummary>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UserView {
    pub key: String,
    pub name: String,
    pub permission_sets: Vec<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ObjectSummary {
    pub key: String,
    pub label: String,
    pub plural_label: String,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ObjectView {
    pub key: String,
    pub label: String,
    pub plural_label: String,
    pub name_field: String,
    pub rights: Rights,
    /// Readable fields, in definition order.
    pub fields: Vec<FieldView>,
    /// The layout's sections with only the readable fields; readable fields the layout does not
    /// place come last in a section of their own.
    pub sections: Vec<SectionView>,
    /// Objects whose lookups point at this one (one hop), that the user can read.
    pub related: Vec<RelatedList>,
    /// Columns for a list of this object: the name field, then layout order, no long text;
    /// lookups as the parent's name path (`account.name`) where the user can read it.
    pub list_columns: Vec<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Rights {
    pub create: bool,
    pub edit: bool,
    pub delete: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FieldView {
    pub key: String,
    pub label: String,
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// `read` or `edit` (never `none`: such fields are absent).
    pub access: FieldLevel,
    pub required: bool,
    pub unique: bool,
    #[ts(optional)]
    pub help_text: Option<String>,
    #[ts(optional)]
    pub max_length: Option<u32>,
    #[ts(optional)]
    pub precision: Option<u8>,
    #[ts(optional)]
    pub scale: Option<u8>,
    /// Picklist values, retired ones included (flagged), for display of old values.
    #[ts(optional)]
    pub values: Option<Vec<PicklistValue>>,
    /// Lookup target object.
    #[ts(optional)]
    pub target: Option<String>,
    #[ts(optional)]
    pub default: Option<Value>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SectionView {
    pub label: String,
    pub fields: Vec<String>,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RelatedList {
    pub object: String,
    pub label: String,
    /// The lookup field on `object` that points at the parent.
    pub field: String,
    /// A few readable columns to show in the list (parent names as paths, like `list_columns`).
    pub columns: Vec<String>,
}

impl Session<'_> {
    pub fn describe_workspace(&self) -> WorkspaceView {
        let def = &self.catalog().definition;
        let user_view = |u: &crate::metadata::definition::UserDef| UserView {
            key: u.key.clone(),
            name: u.name.clone(),
            permission_sets: u.permission_sets.clone(),
        };
        let me = def.users.iter().find(|u| u.key == self.user().key).map(user_view).unwrap_or_else(|| {
            UserView { key: self.user().key.clone(), name: self.user().name.clone(), permission_sets: vec![] }
        });
        let own_locale = self.own_locale().ok().flatten();
        WorkspaceView {
            path: self.workspace().path().display().to_string(),
            name: def.name.clone(),
            currency: def.currency.clone(),
            locale: self.locale().tag().to_string(),
            locale_chosen: own_locale.is_some() || def.locale.is_some(),
            own_locale,
            workspace_locale: def.locale.clone(),
            generation: self.catalog().generation,
            users: def.users.iter().filter(|u| u.active).map(user_view).collect(),
            user: me,
            objects: self
                .catalog()
                .objects()
                .iter()
                .filter(|o| self.readable_object(o.key()).is_ok())
                .map(|o| ObjectSummary {
                    key: o.key().to_string(),
                    label: o.def.label.clone(),
                    plural_label: o.def.plural_label.clone(),
                })
                .collect(),
        }
    }

    pub fn describe_object(&self, object: &str) -> Result<ObjectView> {
        let (meta, acc) = self.readable_object(object)?;
        let language = self.locale().language();
        let fields: Vec<FieldView> = meta
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, _)| acc.fields[*i] >= FieldLevel::Read)
            .map(|(i, f)| FieldView {
                key: f.key.clone(),
                label: f.label_in(language).to_string(),
                field_type: f.field_type,
                access: acc.fields[i],
                required: f.required,
                unique: f.unique,
                help_text: f.help_text.clone(),
                max_length: f.max_length,
                precision: f.precision,
                scale: f.scale,
                values: f.values.as_ref().map(|vs| {
                    vs.iter()
                        .map(|v| PicklistValue { label: v.label_in(language).to_string(), ..v.clone() })
                        .collect()
                }),
                target: f.target.clone(),
                default: f.default.clone(),
            })
            .collect();
        let readable = |k: &str| fields.iter().any(|f| f.key == k);
        let mut sections: Vec<SectionView> = meta
            .def
            .layout
            .iter()
            .flat_map(|l| l.sections.iter())
            .map(|s| SectionView {
                label: s.label.clone(),
                fields: s.fields.iter().filter(|f| readable(f)).cloned().collect(),
            })
            .filter(|s| !s.fields.is_empty())
            .collect();
        let placed: Vec<&String> = sections.iter().flat_map(|s| s.fields.iter()).collect();
        let rest: Vec<String> =
            fields.iter().map(|f| f.key.clone()).filter(|k| !placed.contains(&k)).collect();
        if !rest.is_empty() {
            sections.push(SectionView { label: "Other".into(), fields: rest });
        }
        let related = meta
            .referenced_by
            .iter()
            .filter_map(|r| {
                let (child, _) = self.readable_object(&r.object).ok()?;
                self.readable_field(child, &r.field).ok()?;
                Some(RelatedList {
                    object: r.object.clone(),
                    label: if child.referenced_by_many(meta) {
                        format!("{} ({})", child.def.plural_label, child.field(&r.field)?.label)
                    } else {
                        child.def.plural_label.clone()
                    },
                    field: r.field.clone(),
                    columns: self.list_columns(child, Some(&r.field), 5),
                })
            })
            .collect();
        Ok(ObjectView {
            key: meta.key().to_string(),
            label: meta.def.label.clone(),
            plural_label: meta.def.plural_label.clone(),
            name_field: meta.def.name_field.clone(),
            rights: Rights { create: acc.create, edit: acc.edit, delete: acc.delete },
            list_columns: self.list_columns(meta, None, 6),
            fields,
            sections,
            related,
        })
    }

    /// Up to `max` readable columns for a list of `meta`: the name field, then layout order,
    /// skipping long text and the field `skip` (the parent link in a related list). A lookup
    /// whose target's name the user can read is shown as that name (`account.name`).
    fn list_columns(&self, meta: &ObjectMeta, skip: Option<&str>, max: usize) -> Vec<String> {
        let mut out: Vec<String> = vec![];
        let layout_order =
            meta.def.layout.iter().flat_map(|l| l.sections.iter()).flat_map(|s| s.fields.iter());
        let candidates = std::iter::once(&meta.def.name_field).chain(layout_order);
        for key in candidates {
            let Ok((_, f)) = self.readable_field(meta, key) else { continue };
            if f.field_type == FieldType::LongText || Some(key.as_str()) == skip {
                continue;
            }
            let column = match f.field_type {
                FieldType::Lookup => self.name_path(f).unwrap_or_else(|| key.clone()),
                _ => key.clone(),
            };
            if !out.contains(&column) {
                out.push(column);
            }
            if out.len() == max {
                break;
            }
        }
        out
    }

    /// `lookup.name_field` when the user can read the target's name field.
    fn name_path(&self, lookup: &crate::metadata::definition::FieldDef) -> Option<String> {
        let (target, _) = self.readable_object(lookup.target.as_deref()?).ok()?;
        self.readable_field(target, &target.def.name_field).ok()?;
        Some(format!("{}.{}", lookup.key, target.def.name_field))
    }
}

impl ObjectMeta {
    /// Whether this object has more than one lookup to `parent` (related lists then name the field).
    fn referenced_by_many(&self, parent: &ObjectMeta) -> bool {
        self.fields().iter().filter(|f| f.target.as_deref() == Some(parent.key())).count() > 1
    }
}

/// What one user can see and do, for the administrators' read-only view (the rights are edited
/// in the workspace definition).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UserRights {
    pub key: String,
    pub name: String,
    pub active: bool,
    pub permission_sets: Vec<String>,
    pub system_permissions: Vec<String>,
    pub objects: Vec<ObjectRights>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRights {
    pub object: String,
    pub label: String,
    pub read: bool,
    pub create: bool,
    pub edit: bool,
    pub delete: bool,
    /// Every record, not only those shared with the user.
    pub view_all: bool,
    /// Fields the user cannot see (labels).
    pub hidden_fields: Vec<String>,
    /// Fields the user sees but cannot change (labels).
    pub read_only_fields: Vec<String>,
}

impl Session<'_> {
    /// Every user's rights: system permissions, and per object what they may do and which
    /// fields are hidden from them or read-only. Needs `ai.manage` or `ai.author` (the studio).
    pub fn user_rights(&self) -> Result<Vec<UserRights>> {
        self.require_any(&[AI_MANAGE, AI_AUTHOR])?;
        let catalog = self.catalog();
        let mut out = vec![];
        for def in &catalog.definition.users {
            let access = catalog.user(&def.key)?;
            let objects = catalog
                .objects()
                .iter()
                .map(|meta| {
                    let a = access.object(meta.key()).cloned().unwrap_or_default();
                    let labels = |level: FieldLevel| {
                        meta.fields()
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| a.fields.get(*i).copied().unwrap_or(FieldLevel::None) == level)
                            .map(|(_, f)| f.label.clone())
                            .collect::<Vec<_>>()
                    };
                    ObjectRights {
                        object: meta.key().to_string(),
                        label: meta.def.plural_label.clone(),
                        read: a.read,
                        create: a.create,
                        edit: a.edit,
                        delete: a.delete,
                        view_all: a.view_all,
                        hidden_fields: if a.read { labels(FieldLevel::None) } else { vec![] },
                        read_only_fields: if a.read { labels(FieldLevel::Read) } else { vec![] },
                    }
                })
                .collect();
            out.push(UserRights {
                key: def.key.clone(),
                name: def.name.clone(),
                active: def.active,
                permission_sets: def.permission_sets.clone(),
                system_permissions: access.system_permissions.iter().cloned().collect(),
                objects,
            });
        }
        Ok(out)
    }
}

/// One object as another user sees it: what they may do with it and which fields they see,
/// the first rows of its list, and one record (absent when they may not see it).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SeenAs {
    pub user: String,
    /// `None`: the user cannot read the object at all.
    pub object: Option<ObjectView>,
    pub list: Option<crate::records::query::QueryResult>,
    pub record: Option<crate::records::save::Record>,
}

/// Rows of the list a "see as" shows.
const SEEN_ROWS: u32 = 20;

impl Session<'_> {
    /// `object` (and record `id`) as `user` sees them, through `user`'s own session: the same
    /// enforcement path as everything they read. For a user who may deploy (the one who sets
    /// permissions up).
    pub fn see_as(&self, user: &str, object: &str, id: Option<&str>) -> Result<SeenAs> {
        self.require(crate::metadata::permissions::METADATA_DEPLOY)?;
        let other = self.workspace().session(user)?;
        let Ok(view) = other.describe_object(object) else {
            return Ok(SeenAs { user: user.to_string(), object: None, list: None, record: None });
        };
        let spec = crate::records::query::QuerySpec {
            search: None,
            object: object.to_string(),
            fields: view.list_columns.clone(),
            filters: None,
            sort: vec![],
            limit: Some(SEEN_ROWS),
            offset: None,
            after: None,
        };
        let list = other.query(&spec)?;
        let record = id.and_then(|id| other.get(object, id).ok());
        Ok(SeenAs { user: user.to_string(), object: Some(view), list: Some(list), record })
    }
}
