//! How a proposal is stored: its row read back (`from_row`, with a damaged column named, not
//! guessed) and its JSON columns written.

use super::*;

pub(super) fn parse_time(s: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| Error::internal(format!("bad stored time {s}: {e}")))
}

pub(super) fn closed(p: &Proposal, what: &str) -> Error {
    let why = p.state_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
    Error::new(
        Code::ProposalClosed,
        format!("proposal {} is {}{why}; it cannot be {what}", p.id, p.state.as_str()),
    )
}

pub(super) const COLUMNS: &str = "id, capability, object, record_id, operation, fields, unmapped, rationale, basis_version, grounding_hash,
    prompt, prompt_version, model_id, model_version, generation, correlation_id, state, state_reason, created_by, created_at,
    decided_by, decided_at, accepted_fields, accept_correlation, result_version, undone_by, undone_at, auto_applied, reviewer_edits, children";

/// A stored proposal, its columns read by name. A column that does not hold what the kernel
/// wrote (JSON that does not parse, a state it does not know) is an error naming the column,
/// never a default that would show a damaged proposal as an open one.
pub(super) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Proposal> {
    pub(super) fn damaged(
        r: &rusqlite::Row<'_>,
        column: &str,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> rusqlite::Error {
        let at = r.as_ref().column_index(column).unwrap_or(0);
        rusqlite::Error::FromSqlConversionFailure(
            at,
            rusqlite::types::Type::Text,
            Box::new(DamagedColumn(column.to_string(), e.to_string())),
        )
    }
    pub(super) fn parsed<T: serde::de::DeserializeOwned>(
        r: &rusqlite::Row<'_>,
        column: &str,
    ) -> rusqlite::Result<T> {
        let text: String = r.get(column)?;
        serde_json::from_str(&text).map_err(|e| damaged(r, column, e))
    }
    let state: String = r.get("state")?;
    Ok(Proposal {
        id: r.get("id")?,
        capability: r.get("capability")?,
        object: r.get("object")?,
        record_id: r.get("record_id")?,
        operation: r.get("operation")?,
        fields: parsed(r, "fields")?,
        children: parsed(r, "children")?,
        unmapped: parsed(r, "unmapped")?,
        rationale: r.get("rationale")?,
        basis_version: r.get("basis_version")?,
        grounding_hash: r.get("grounding_hash")?,
        prompt: r.get("prompt")?,
        prompt_version: r.get("prompt_version")?,
        model_id: r.get("model_id")?,
        model_version: r.get("model_version")?,
        generation: r.get("generation")?,
        correlation_id: r.get("correlation_id")?,
        state: serde_json::from_value(Value::String(state)).map_err(|e| damaged(r, "state", e))?,
        state_reason: r.get("state_reason")?,
        created_by: r.get("created_by")?,
        created_at: r.get("created_at")?,
        decided_by: r.get("decided_by")?,
        decided_at: r.get("decided_at")?,
        accepted_fields: parsed(r, "accepted_fields")?,
        accept_correlation: r.get("accept_correlation")?,
        result_version: r.get("result_version")?,
        undone_by: r.get("undone_by")?,
        undone_at: r.get("undone_at")?,
        undo_until: None,
        hidden_fields: 0,
        auto_applied: r.get("auto_applied")?,
        reviewer_edits: parsed(r, "reviewer_edits")?,
    })
}

/// Why a stored proposal column cannot be read: `(column, what the parser said)`.
#[derive(Debug)]
pub(super) struct DamagedColumn(String, String);

impl std::fmt::Display for DamagedColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the proposal's stored `{}` cannot be read ({})", self.0, self.1)
    }
}

impl std::error::Error for DamagedColumn {}

/// JSON text of a value for a stored column.
pub(super) fn json_text<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}
