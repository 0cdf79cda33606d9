//! The business vocabulary as users see and edit it: per object, its terms and the categories
//! its picklists' values carry. Reading honours the session (an object the user cannot read
//! is absent; a term on a field the user cannot read is absent, like the field). Editing a
//! term list is a deploy of the current definition with that list changed: the same checks,
//! the same permission (`metadata.deploy`), a new metadata generation.

use crate::error::{Code, Error, Result};
use crate::metadata::definition::{FieldLevel, FieldType, TermDef};
use crate::records::access::Session;
use crate::records::deploy::{DeployReport, DEPLOY_PERMISSION};
use crate::records::workspace::Workspace;
use serde::Serialize;
use ts_rs::TS;

/// One object's vocabulary.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ObjectVocabulary {
    pub object: String,
    pub label: String,
    pub plural_label: String,
    pub terms: Vec<TermDef>,
    /// The categories a term may name: per picklist field, each category with its values.
    pub categories: Vec<FieldCategories>,
    /// The user may change this object's terms (`metadata.deploy`).
    pub can_edit: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FieldCategories {
    pub field: String,
    pub label: String,
    /// `(category, value labels)`.
    pub categories: Vec<(String, Vec<String>)>,
}

impl Session<'_> {
    /// The vocabulary of every object this user can read.
    pub fn vocabulary(&self) -> Result<Vec<ObjectVocabulary>> {
        let can_edit = self.user().has_system_permission(DEPLOY_PERMISSION);
        let mut out = vec![];
        for meta in self.catalog().objects() {
            let Ok((meta, access)) = self.readable_object(meta.key()) else { continue };
            let readable =
                |key: &str| meta.field_index(key).is_some_and(|i| access.fields[i] >= FieldLevel::Read);
            let terms = meta
                .def
                .terms
                .iter()
                .filter(|t| meta.def.term_condition(t).fields().iter().all(|f| readable(f)))
                .cloned()
                .collect();
            let categories = meta
                .fields()
                .iter()
                .filter(|f| f.field_type == FieldType::Picklist && readable(&f.key))
                .filter_map(|f| {
                    // Retired values too: a term's category still holds them.
                    let cats: Vec<(String, Vec<String>)> = f
                        .categories(false)
                        .into_iter()
                        .map(|(c, vs)| (c, vs.iter().map(|v| v.label.clone()).collect()))
                        .collect();
                    (!cats.is_empty()).then(|| FieldCategories {
                        field: f.key.clone(),
                        label: f.label.clone(),
                        categories: cats,
                    })
                })
                .collect();
            out.push(ObjectVocabulary {
                object: meta.key().to_string(),
                label: meta.def.label.clone(),
                plural_label: meta.def.plural_label.clone(),
                terms,
                categories,
                can_edit,
            });
        }
        Ok(out)
    }
}

impl Workspace {
    /// Replace the terms of `object` that `user` can see, as `user`: a deploy of the current
    /// definition with that list changed (checked like any definition; problems carry their
    /// JSON pointers). Terms on fields the user cannot read stay as they are, after the others.
    pub fn deploy_terms(&mut self, user: &str, object: &str, terms: Vec<TermDef>) -> Result<DeployReport> {
        let seen: Vec<String> = self
            .session(user)?
            .vocabulary()?
            .into_iter()
            .filter(|v| v.object == object)
            .flat_map(|v| v.terms.into_iter().map(|t| t.key))
            .collect();
        self.redeploy(user, |def| {
            let target = def
                .objects
                .iter_mut()
                .find(|o| o.key == object && !o.retired)
                .ok_or_else(|| Error::new(Code::UnknownObject, format!("no object `{object}`")))?;
            let unseen = target.terms.iter().filter(|t| !seen.contains(&t.key)).cloned();
            target.terms = terms.into_iter().chain(unseen).collect();
            Ok(())
        })
    }
}
