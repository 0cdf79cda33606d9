//! Data history: one entry per changed field of each save, and a record's history as its
//! reader may see it.

use super::*;

#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct HistoryEntry {
    #[ts(type = "number")]
    pub seq: i64,
    pub object: String,
    pub record_id: String,
    pub operation: String,
    pub field: String,
    pub old_value: Value,
    pub new_value: Value,
    pub actor: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub proposed_by: Option<String>,
    pub correlation_id: String,
    pub at: String,
    #[ts(type = "number")]
    pub record_version: i64,
}

/// The field named by the one entry a create or a delete writes: its value (new for a
/// create, old for a delete) is the record's owner and every non-blank field as one JSON
/// object. [`Session::history_of`] reads it back as one entry per field.
pub(crate) const WHOLE_RECORD: &str = "*";

impl Session<'_> {
    /// One changed field's entry (an update, or a lookup a delete cleared).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn history(
        &self,
        w: &Write<'_>,
        meta: &ObjectMeta,
        id: &str,
        op: &str,
        field: &str,
        old: &Scalar,
        new: &Scalar,
        def: Option<&FieldDef>,
        version: i64,
    ) -> Result<()> {
        let json = |s: &Scalar| -> Option<String> { (!s.is_null()).then(|| s.to_json(def).to_string()) };
        self.history_row(w, meta, id, op, field, json(old), json(new), version)?;
        if let Some(def) = def {
            follow(w, meta, id, def, old, new, false)?;
        }
        Ok(())
    }

    /// The one entry of a create (`created`) or a delete: the owner and every non-blank
    /// value of `values`, then each value's derived indexes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn history_whole(
        &self,
        w: &Write<'_>,
        meta: &ObjectMeta,
        id: &str,
        created: bool,
        owner: &str,
        values: &[Scalar],
        version: i64,
    ) -> Result<()> {
        let mut whole = Map::new();
        whole.insert("owner".into(), Value::String(owner.into()));
        for (f, v) in meta.fields().iter().zip(values).filter(|(_, v)| !v.is_null()) {
            whole.insert(f.key.clone(), v.to_json(Some(f)));
        }
        let whole = Some(Value::Object(whole).to_string());
        let (op, old, new) = if created { ("create", None, whole) } else { ("delete", whole, None) };
        self.history_row(w, meta, id, op, WHOLE_RECORD, old, new, version)?;
        for (f, v) in meta.fields().iter().zip(values).filter(|(_, v)| !v.is_null()) {
            let (old, new) = if created { (&Scalar::Null, v) } else { (v, &Scalar::Null) };
            follow(w, meta, id, f, old, new, created)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn history_row(
        &self,
        w: &Write<'_>,
        meta: &ObjectMeta,
        id: &str,
        op: &str,
        field: &str,
        old: Option<String>,
        new: Option<String>,
        version: i64,
    ) -> Result<()> {
        w.conn
            .prepare_cached(
                "INSERT INTO data_history (object, record_id, op, field, old_value, new_value, actor, proposed_by, correlation_id, at, record_version)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![
                meta.key(),
                id,
                op,
                field,
                old,
                new,
                if self.user.is_system { SYSTEM_USER } else { self.user.key.as_str() },
                w.ctx.proposed_by,
                w.correlation_id,
                w.at,
                version
            ])?;
        Ok(())
    }

    /// The data history of a record, oldest first, limited to the fields the user can read.
    /// Deleted records' history is visible to users with `viewAll` on the object only.
    pub fn history_of(&self, object: &str, id: &str) -> Result<Vec<HistoryEntry>> {
        let (meta, acc) = self.readable_object(object)?;
        let exists = self.load_row(self.ws.conn(), meta, id, RowAccess::Read)?.is_some();
        if !(exists || acc.view_all || self.user.is_system) {
            return Err(not_found(meta, id));
        }
        let mut stmt = self.ws.conn().prepare_cached(
            "SELECT seq, op, field, old_value, new_value, actor, proposed_by, correlation_id, at, record_version
             FROM data_history WHERE object = ?1 AND record_id = ?2 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![object, id], |r| {
            let parse =
                |s: Option<String>| s.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or(Value::Null);
            Ok(HistoryEntry {
                seq: r.get(0)?,
                object: object.to_string(),
                record_id: id.to_string(),
                operation: r.get(1)?,
                field: r.get(2)?,
                old_value: parse(r.get(3)?),
                new_value: parse(r.get(4)?),
                actor: r.get(5)?,
                proposed_by: r.get(6)?,
                correlation_id: r.get(7)?,
                at: r.get(8)?,
                record_version: r.get(9)?,
            })
        })?;
        let readable = |field: &str| {
            field == "owner"
                || meta.field_index(field).is_some_and(|i| self.field_level(meta, i) >= FieldLevel::Read)
        };
        let mut out = Vec::new();
        for e in rows {
            let e = e?;
            if e.field != WHOLE_RECORD {
                if readable(&e.field) {
                    out.push(e);
                }
                continue;
            }
            // A create's or a delete's one entry, read back as one entry per field.
            let created = e.operation == "create";
            let mut whole = match if created { &e.new_value } else { &e.old_value } {
                Value::Object(m) => m.clone(),
                _ => Map::new(),
            };
            let keys = std::iter::once("owner").chain(meta.fields().iter().map(|f| f.key.as_str()));
            for key in keys.filter(|k| readable(k)) {
                let Some(v) = whole.remove(key) else { continue };
                let (old_value, new_value) = if created { (Value::Null, v) } else { (v, Value::Null) };
                out.push(HistoryEntry { field: key.to_string(), old_value, new_value, ..e.clone() });
            }
        }
        if out.is_empty() && !exists {
            return Err(not_found(meta, id));
        }
        Ok(out)
    }
}

/// The indexes derived from one field's value follow its change: a long text's corpus entry,
/// a short text's value index (summed in the batch when the save is part of one). A new
/// record (`fresh`) has no corpus entry to replace.
fn follow(
    w: &Write<'_>,
    meta: &ObjectMeta,
    id: &str,
    f: &FieldDef,
    old: &Scalar,
    new: &Scalar,
    fresh: bool,
) -> Result<()> {
    fn text(s: &Scalar) -> Option<&str> {
        match s {
            Scalar::Text(t) => Some(t.as_str()),
            _ => None,
        }
    }
    match f.field_type {
        // A batch indexes the long texts of the rows it created when it finishes.
        FieldType::LongText if fresh && w.batch.is_some() => Ok(()),
        FieldType::LongText if fresh => {
            crate::records::corpus::add_field(w.conn, meta.key(), id, &f.key, text(new))
        }
        FieldType::LongText => crate::records::corpus::index_field(w.conn, meta.key(), id, &f.key, text(new)),
        FieldType::Text => match w.batch {
            Some(b) => {
                b.value_uses.borrow_mut().put(meta.key(), &f.key, text(old), text(new));
                Ok(())
            }
            None => crate::records::value_index::put(w.conn, meta.key(), &f.key, text(old), text(new)),
        },
        _ => Ok(()),
    }
}
