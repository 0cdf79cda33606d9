//! Sessions and the one enforcement path for access.
//!
//! A [`Session`] is a user bound to the workspace's current metadata generation. It is the
//! only way to read or write records: every read (get, query, export, history, lookups
//! resolved during a save) builds its SQL with [`Session::row_filter`] for rows and checks
//! [`Session::field_level`] for columns. A row the user cannot read is absent (`not_found`),
//! a field at level `none` is absent (`schema.unknown_field`) — never "forbidden", so neither
//! existence leaks.
//!
//! Row access: `viewAll` (with the object right) sees and edits every row; otherwise
//! `public_read` lets everyone read and the owner edit, `public_read_write` lets everyone read
//! and edit, `private` lets only the owner read and edit, and `inherit` (master-detail) gives
//! on a detail row the access the user has on its master row.

use crate::error::{Code, Error, Result};
use crate::metadata::catalog::{column, Catalog, ObjectAccess, ObjectMeta, UserAccess};
use crate::metadata::definition::{AiVisibility, FieldDef, FieldLevel, Sharing};
use crate::metadata::value::Scalar;
use crate::records::workspace::Workspace;
use std::sync::Arc;

pub struct Session<'w> {
    pub(crate) ws: &'w Workspace,
    pub(crate) user: Arc<UserAccess>,
    pub(crate) catalog: Arc<Catalog>,
    /// The correlation every trace row and proposal this session writes joins (one turn of a
    /// conversation, one call from another app); `None`: each gets its own.
    pub(crate) correlation: Option<String>,
}

/// Whether a row filter is for reading or for editing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowAccess {
    Read,
    Write,
}

/// The rows of an object a user's access reaches (see `Session::row_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowScope {
    All,
    Nothing,
    Owned,
    /// Through the master record (master-detail sharing).
    Master,
}

impl<'w> Session<'w> {
    pub(crate) fn new(ws: &'w Workspace, user: Arc<UserAccess>) -> Self {
        let catalog = ws.catalog().expect("session only made on an initialised workspace").clone();
        Session { ws, user, catalog, correlation: None }
    }

    /// This session, with every trace row and proposal it writes joined to `correlation`.
    pub fn correlated(&self, correlation: &str) -> Session<'w> {
        Session {
            ws: self.ws,
            user: self.user.clone(),
            catalog: self.catalog.clone(),
            correlation: Some(correlation.to_string()),
        }
    }

    /// The session's correlation, else a new one.
    pub(crate) fn correlation_id(&self) -> String {
        self.correlation.clone().unwrap_or_else(|| self.ws.ids.correlation_id())
    }

    pub(crate) fn require(&self, permission: &str) -> Result<()> {
        if self.user().has_system_permission(permission) {
            Ok(())
        } else {
            Err(Error::new(
                Code::Permission,
                format!("{} does not have the `{permission}` permission", self.user().name),
            ))
        }
    }

    /// The user has at least one of `permissions`.
    pub(crate) fn require_any(&self, permissions: &[&str]) -> Result<()> {
        if permissions.iter().any(|p| self.user().has_system_permission(p)) {
            Ok(())
        } else {
            let names: Vec<String> = permissions.iter().map(|p| format!("`{p}`")).collect();
            Err(Error::new(
                Code::Permission,
                format!("{} has none of the permissions {}", self.user().name, names.join(", ")),
            ))
        }
    }

    pub fn user(&self) -> &UserAccess {
        &self.user
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn workspace(&self) -> &'w Workspace {
        self.ws
    }

    /// Begin a write transaction, refusing if another process deployed a newer generation
    /// than this session's metadata (its checks would be against stale rules).
    pub(crate) fn begin_write(&self) -> Result<rusqlite::Transaction<'w>> {
        let tx = crate::store::immediate(self.ws.conn())?;
        let current: i64 = tx
            .prepare_cached("SELECT coalesce(max(generation), 0) FROM metadata_generation")?
            .query_row([], |r| r.get(0))?;
        if current != self.catalog.generation {
            return Err(Error {
                retriable: true,
                ..Error::new(
                    Code::StaleGeneration,
                    format!(
                        "the workspace definition changed (generation {current}, this session has {}); reopen the workspace",
                        self.catalog.generation
                    ),
                )
            });
        }
        Ok(tx)
    }

    /// The object and the user's rights on it, if the user can read it at all.
    /// Today in the workspace's time zone.
    pub fn today(&self) -> chrono::NaiveDate {
        crate::clock::local_day(self.ws.clock.now(), self.time_zone())
    }

    /// The workspace's time zone (an IANA name), if its definition sets one.
    pub fn time_zone(&self) -> Option<&str> {
        self.catalog().definition.time_zone.as_deref()
    }

    pub fn readable_object(&self, key: &str) -> Result<(&ObjectMeta, &ObjectAccess)> {
        let unknown = || Error::new(Code::UnknownObject, format!("no object `{key}`"));
        let meta = self.catalog.object_meta(key).map_err(|_| unknown())?;
        match self.user.object(key) {
            Some(acc) if acc.read => Ok((meta, acc)),
            _ => Err(unknown()),
        }
    }

    pub fn field_level(&self, object: &ObjectMeta, field_index: usize) -> FieldLevel {
        self.user.object(object.key()).map_or(FieldLevel::None, |a| a.fields[field_index])
    }

    /// The user's level on a field as a model acting for them may use it: their own level,
    /// or `none` when the field's `aiVisibility` is `never`. The one place that rule is written:
    /// the projection, the kernel tools, Extract's targets, corpus hits and the trace's hidden
    /// values all ask here (`layers::the_ai_visibility_rule_is_read_in_one_place`).
    pub fn ai_field_level(&self, object: &ObjectMeta, field_index: usize) -> FieldLevel {
        match object.fields()[field_index].ai_visibility {
            AiVisibility::Allowed => self.field_level(object, field_index),
            AiVisibility::Never => FieldLevel::None,
        }
    }

    /// The fields of `object` the user can read, in definition order.
    pub fn readable_fields(&self, object: &str) -> Result<Vec<&FieldDef>> {
        let (meta, acc) = self.readable_object(object)?;
        Ok(meta
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, _)| acc.fields[*i] >= FieldLevel::Read)
            .map(|(_, f)| f)
            .collect())
    }

    /// A readable field by key; unknown and unreadable are the same error.
    pub fn readable_field<'a>(&self, object: &'a ObjectMeta, key: &str) -> Result<(usize, &'a FieldDef)> {
        match object.field_index(key) {
            Some(i) if self.field_level(object, i) >= FieldLevel::Read => Ok((i, &object.fields()[i])),
            _ => Err(Error::on_field(
                Code::UnknownField,
                key.to_string(),
                format!("no field `{key}` on {}", object.def.label),
            )),
        }
    }

    /// SQL condition (on table alias `alias`) selecting the rows of `object` this user may
    /// read or write; `None` when every row qualifies. Parameters are appended to `params`.
    pub fn row_filter(
        &self,
        object: &ObjectMeta,
        alias: &str,
        mode: RowAccess,
        params: &mut Vec<Scalar>,
    ) -> Option<String> {
        self.row_filter_depth(object, alias, mode, params, 0)
    }

    /// Which rows of an object this user may read (or write): all, none, the ones they own,
    /// or those whose master record they may.
    pub(crate) fn row_scope(&self, object: &ObjectMeta, mode: RowAccess) -> RowScope {
        if self.user.is_system {
            return RowScope::All;
        }
        let acc = match self.user.object(object.key()) {
            Some(a) if a.read => a,
            _ => return RowScope::Nothing,
        };
        if acc.view_all {
            return RowScope::All;
        }
        match (object.def.sharing, mode) {
            (Sharing::PublicReadWrite, _) | (Sharing::PublicRead, RowAccess::Read) => RowScope::All,
            (Sharing::Private | Sharing::PublicRead, _) => RowScope::Owned,
            (Sharing::Inherit, _) => RowScope::Master,
        }
    }

    fn row_filter_depth(
        &self,
        object: &ObjectMeta,
        alias: &str,
        mode: RowAccess,
        params: &mut Vec<Scalar>,
        depth: usize,
    ) -> Option<String> {
        match self.row_scope(object, mode) {
            RowScope::All => None,
            RowScope::Nothing => Some("0".into()),
            RowScope::Owned => {
                params.push(Scalar::Text(self.user.key.clone()));
                Some(format!("{alias}.owner = ?"))
            }
            RowScope::Master => {
                let Some((field_idx, master_key)) = &object.master else {
                    return Some("0".into());
                };
                let Ok(master) = self.catalog.object_meta(master_key) else {
                    return Some("0".into());
                };
                if depth > 8 {
                    return Some("0".into());
                }
                let m = format!("m{depth}");
                let inner = self.row_filter_depth(master, &m, mode, params, depth + 1)?;
                let md = column(&object.fields()[*field_idx].key);
                Some(format!(
                    "EXISTS (SELECT 1 FROM {} {m} WHERE {m}.id = {alias}.{md} AND {inner})",
                    master.table
                ))
            }
        }
    }
}

/// Where a caller that awaits between steps (the model-call driver, a model check) gets the
/// user's session for each step: a caller that keeps its workspace behind a lock (the app)
/// lends it for each step only.
pub trait Sessions {
    fn with<T>(&self, step: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T>;
}

/// A caller that holds its session for the whole call (the CLI, the evals, the tests).
impl Sessions for Session<'_> {
    fn with<T>(&self, step: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        step(self)
    }
}

/// Sessions whose every step joins one correlation (a conversation's turn, a call from another
/// app): the trace rows and proposals of the capabilities it drives are grouped under it.
pub struct Correlated<'s, S: Sessions> {
    pub sessions: &'s S,
    pub correlation: String,
}

impl<S: Sessions> Sessions for Correlated<'_, S> {
    fn with<T>(&self, step: impl FnOnce(&Session<'_>) -> Result<T>) -> Result<T> {
        self.sessions.with(|s| step(&s.correlated(&self.correlation)))
    }
}
