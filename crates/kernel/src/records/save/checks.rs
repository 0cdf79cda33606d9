//! The checks of the save path: access to the row, its master and its owner, editable fields,
//! coercion of new values, `unique`, validation rules, ids, and the errors they end in.

use super::*;

pub(super) fn check_rules(meta: &ObjectMeta, slots: &[Scalar]) -> Result<()> {
    let failed: Vec<_> = meta.rules.iter().filter(|r| !r.predicate.eval(slots)).collect();
    let Some(first) = failed.first() else {
        return Ok(());
    };
    let mut e = Error::new(Code::ValidationRule, first.message.clone()).with_details(
        failed
            .iter()
            .map(|r| Detail {
                path: r.error_field.clone().unwrap_or_else(|| r.key.clone()),
                message: r.message.clone(),
            })
            .collect(),
    );
    e.field = first.error_field.clone();
    Err(e)
}

impl Session<'_> {
    /// A new record may keep a given id (imports) only for a user who reads every record of
    /// the object: a taken id is then one they can see. For anyone else whether an id is taken
    /// would tell them a hidden record exists, so every id they give gets this same refusal.
    pub(super) fn check_chosen_id(&self, meta: &ObjectMeta, id: &str) -> Result<()> {
        if self.row_filter(meta, "t", RowAccess::Read, &mut Vec::new()).is_none() {
            return Ok(());
        }
        Err(Error::on_field(
            Code::Permission,
            "id",
            format!(
                "you cannot choose the id `{id}` for a new {}: only someone who sees all {} may; leave the id empty",
                meta.def.label, meta.def.plural_label
            ),
        ))
    }
}

pub(super) fn check_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::on_field(
            Code::InvalidValue,
            "id",
            format!("`{id}` is not a valid record id (letters, digits, _ and -)"),
        ))
    }
}

pub(super) fn required(f: &FieldDef) -> Error {
    Error::on_field(Code::Required, f.key.clone(), format!("{} is required", f.label))
}

pub(super) fn not_found(meta: &ObjectMeta, id: &str) -> Error {
    Error::new(Code::NotFound, format!("no {} `{id}`", meta.def.label))
}

pub(super) fn conflict(meta: &ObjectMeta, id: &str, expected: i64, actual: i64) -> Error {
    let now =
        if actual >= 0 { format!(" it is at version {actual}") } else { " it changed meanwhile".into() };
    Error::new(
        Code::Conflict,
        format!(
            "{} `{id}` was changed since you read it (you had version {expected};{now}); reload and try again",
            meta.def.label
        ),
    )
}

impl Session<'_> {
    pub(super) fn system_row(&self, conn: &Connection, meta: &ObjectMeta, id: &str) -> Result<Row> {
        let system = Session {
            ws: self.ws,
            user: self.catalog.system_user(),
            catalog: self.catalog.clone(),
            correlation: self.correlation.clone(),
        };
        system
            .load_row(conn, meta, id, RowAccess::Read)?
            .ok_or_else(|| Error::internal(format!("row {id} vanished")))
    }

    /// The field index of an editable field; unknown/unreadable → absent, read-only → permission.
    pub(super) fn editable_field(&self, meta: &ObjectMeta, key: &str) -> Result<usize> {
        let (i, f) = self.readable_field(meta, key)?;
        if self.field_level(meta, i) < FieldLevel::Edit {
            return Err(Error::on_field(Code::Permission, key, format!("you cannot edit {}", f.label)));
        }
        Ok(i)
    }

    /// Coerce a value being written. `current` is the stored value on update: an unchanged
    /// value is accepted as it is (a retired picklist value or an old lookup stays valid).
    pub(super) fn coerce_new(
        &self,
        conn: &Connection,
        meta: &ObjectMeta,
        i: usize,
        v: &Value,
        current: Option<&Scalar>,
    ) -> Result<Scalar> {
        let f = &meta.fields()[i];
        let value = coerce(f, v).map_err(|m| Error::on_field(Code::InvalidValue, f.key.clone(), m))?;
        if value.is_null() || current == Some(&value) {
            return Ok(value);
        }
        match f.field_type {
            FieldType::Picklist => {
                let s = value.as_str().unwrap_or_default();
                let active = f.values.iter().flatten().any(|pv| pv.value == s && pv.active);
                if !active {
                    return Err(Error::on_field(
                        Code::InvalidValue,
                        f.key.clone(),
                        format!("`{s}` is a retired value of {}; choose an active one", f.label),
                    ));
                }
            }
            FieldType::Lookup => {
                let target = self.catalog.object_meta(f.target.as_deref().unwrap_or_default())?;
                let id = value.as_str().unwrap_or_default();
                let visible = self.user.object(target.key()).is_some_and(|a| a.read)
                    && self.load_row(conn, target, id, RowAccess::Read)?.is_some();
                if !visible {
                    return Err(Error::on_field(
                        Code::InvalidValue,
                        f.key.clone(),
                        format!("no {} `{id}` that you can see", target.def.label),
                    ));
                }
            }
            _ => {}
        }
        Ok(value)
    }

    pub(super) fn check_row_writable(&self, conn: &Connection, meta: &ObjectMeta, id: &str) -> Result<()> {
        let mut params = vec![Scalar::Text(id.to_string())];
        if let Some(filter) = self.row_filter(meta, "t", RowAccess::Write, &mut params) {
            let sql = format!("SELECT count(*) FROM {} t WHERE t.id = ? AND {filter}", meta.table);
            let n: i64 =
                conn.prepare_cached(&sql)?.query_row(params_from_iter(params.iter()), |r| r.get(0))?;
            if n == 0 {
                return Err(Error::new(
                    Code::Permission,
                    format!("you can see {} `{id}` but not change it", meta.def.label),
                ));
            }
        }
        Ok(())
    }

    /// A detail record can be created or moved only under a master the user can edit.
    pub(super) fn check_master_writable(
        &self,
        conn: &Connection,
        meta: &ObjectMeta,
        md: usize,
        parent: &str,
    ) -> Result<()> {
        let master = self.catalog.object_meta(meta.fields()[md].target.as_deref().unwrap_or_default())?;
        self.check_row_writable(conn, master, parent)
            .map_err(|e| Error::on_field(Code::Permission, meta.fields()[md].key.clone(), e.message))
    }

    pub(super) fn check_new_owner(
        &self,
        meta: &ObjectMeta,
        owner: &str,
        current: Option<&str>,
    ) -> Result<String> {
        let may_assign = self.user.is_system
            || self.user.object(meta.key()).is_some_and(|a| a.view_all)
            || current == Some(self.user.key.as_str())
            || (current.is_none() && owner == self.user.key);
        if !may_assign {
            return Err(Error::on_field(
                Code::Permission,
                "owner",
                format!("you cannot assign {} to another owner", meta.def.plural_label),
            ));
        }
        let user = self.catalog.user(owner).map_err(|e| e.with_field("owner"))?;
        if !user.active {
            return Err(Error::on_field(Code::InvalidValue, "owner", format!("user `{owner}` is inactive")));
        }
        Ok(owner.to_string())
    }

    /// `only`: the unique fields to check (update: the changed ones); `None`: all.
    pub(super) fn check_unique(
        &self,
        conn: &Connection,
        meta: &ObjectMeta,
        slots: &[Scalar],
        id: &str,
        only: Option<&[usize]>,
    ) -> Result<()> {
        for (i, f) in meta.fields().iter().enumerate() {
            if !f.unique || slots[i].is_null() || only.is_some_and(|o| !o.contains(&i)) {
                continue;
            }
            let sql =
                format!("SELECT count(*) FROM {} WHERE {} = ?1 AND id <> ?2", meta.table, column(&f.key));
            let n: i64 = conn.prepare_cached(&sql)?.query_row(params![slots[i], id], |r| r.get(0))?;
            if n > 0 {
                return Err(Error::on_field(
                    Code::Duplicate,
                    f.key.clone(),
                    format!(
                        "another {} already has {} `{}`",
                        meta.def.label,
                        f.label,
                        slots[i].to_text(Some(f))
                    ),
                ));
            }
        }
        Ok(())
    }
}
