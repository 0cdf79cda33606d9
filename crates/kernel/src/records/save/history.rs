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

impl Session<'_> {
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
                json(old),
                json(new),
                if self.user.is_system { SYSTEM_USER } else { self.user.key.as_str() },
                w.ctx.proposed_by,
                w.correlation_id,
                w.at,
                version
            ])?;
        fn text(s: &Scalar) -> Option<&str> {
            match s {
                Scalar::Text(t) => Some(t.as_str()),
                _ => None,
            }
        }
        let new_text = if op == "delete" { None } else { text(new) };
        match def.map(|f| f.field_type) {
            Some(crate::metadata::definition::FieldType::LongText) => {
                crate::records::corpus::index_field(w.conn, meta.key(), id, field, new_text)?;
            }
            Some(crate::metadata::definition::FieldType::Text) => {
                crate::records::value_index::put(w.conn, meta.key(), field, text(old), new_text)?;
            }
            _ => {}
        }
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
        let mut out = Vec::new();
        for e in rows {
            let e = e?;
            let readable = e.field == "owner"
                || meta.field_index(&e.field).is_some_and(|i| self.field_level(meta, i) >= FieldLevel::Read);
            if readable {
                out.push(e);
            }
        }
        if out.is_empty() && !exists {
            return Err(not_found(meta, id));
        }
        Ok(out)
    }
}
