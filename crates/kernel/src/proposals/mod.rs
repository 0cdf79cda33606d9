//! Proposals: a model's write is never a
//! write. A proposal holds a typed patch computed against a record's `basisVersion`; a reviewer
//! with `ai.approve` accepts all or some fields as their own save through the one save path
//! (validation rules run; history: actor = reviewer, proposedBy = the proposal); a record that
//! moved since the basis is a `conflict` and nothing is written. Undo, for 30 days, applies the
//! inverse patch from data history as the undoing user's save, refused with `conflict` if the
//! record moved since acceptance. Retention: open proposals expire at 30 days, discarded ones are
//! purged at 90 days, accepted (and undone) ones at 13 months; trace rows stay.
//!
//! State machine: open → accepted | discarded | expired; accepted → undone.

use crate::clock::timestamp;
use crate::error::{Code, Detail, Error, Result};
use crate::metadata::catalog::ObjectMeta;
use crate::metadata::definition::{FieldLevel, FieldType};
use crate::metadata::permissions::{AI_APPROVE, AI_USE};
use crate::records::access::Session;
use crate::records::save::Record;
use crate::records::save::{SaveContext, SaveOutcome, SaveRequest};
use chrono::{DateTime, Duration, Utc};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

mod auto_apply;
mod retention;
mod review;
mod stored;

use stored::*;

pub use auto_apply::*;
pub use retention::*;
pub use review::*;

pub const OPEN_DAYS: i64 = 30;
pub const UNDO_DAYS: i64 = 30;
pub const DISCARDED_KEEP_DAYS: i64 = 90;
/// 13 months.
pub const ACCEPTED_KEEP_DAYS: i64 = 395;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProposalState {
    Open,
    Accepted,
    Discarded,
    Expired,
    Undone,
}

impl ProposalState {
    fn as_str(self) -> &'static str {
        match self {
            ProposalState::Open => "open",
            ProposalState::Accepted => "accepted",
            ProposalState::Discarded => "discarded",
            ProposalState::Expired => "expired",
            ProposalState::Undone => "undone",
        }
    }
}

/// Whether a proposal makes a new record or changes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProposalOperation {
    Create,
    Update,
}

impl ProposalOperation {
    fn as_str(self) -> &'static str {
        match self {
            ProposalOperation::Create => "create",
            ProposalOperation::Update => "update",
        }
    }
}

impl rusqlite::types::FromSql for ProposalOperation {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        match v.as_str()? {
            "create" => Ok(ProposalOperation::Create),
            "update" => Ok(ProposalOperation::Update),
            other => {
                Err(rusqlite::types::FromSqlError::Other(format!("no proposal operation `{other}`").into()))
            }
        }
    }
}

/// Where in a document an extracted value is stated: a byte range of the document's text, the
/// text there, and where that is in the original (a line, a page, a header).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SourceSpan {
    #[ts(type = "number")]
    pub start: usize,
    #[ts(type = "number")]
    pub end: usize,
    pub text: String,
    #[ts(optional)]
    pub location: Option<crate::ingest::Location>,
}

/// One field of a patch: the value proposed, the value it had at the basis, and what the
/// capability knows of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposedField {
    pub field: String,
    pub value: Value,
    /// The record's value at `basisVersion` (null for a create).
    #[serde(default)]
    pub before: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub confidence: Option<f64>,
    /// Where in the document the value is stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<SourceSpan>,
    /// A problem the dry run found (a rule, a lookup with several candidates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
    /// For a lookup that matched several records: the records to choose from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<crate::records::names::Candidate>,
}

/// A child record proposed with its parent (an invoice's lines): created under the parent when
/// the proposal is accepted (all rows, or the reviewer's choice) and removed when it is undone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposedChild {
    pub object: String,
    /// The child's lookup to the parent; the kernel sets it when the row is accepted.
    pub parent_field: String,
    pub fields: Vec<ProposedField>,
    /// Where the document states the row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub source: Option<SourceSpan>,
    /// Once accepted: the record created, and its version then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub record_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub result_version: Option<i64>,
}

/// What a capability proposes.
#[derive(Debug, Clone, Default)]
pub struct ProposalDraft {
    pub capability: String,
    pub object: String,
    /// `None` proposes a new record.
    pub record_id: Option<String>,
    pub fields: Vec<ProposedField>,
    /// Child records proposed with it (rows of a child object with a master-detail lookup to
    /// this one).
    pub children: Vec<ProposedChild>,
    /// Values the capability found but could not map (value + source), for the reviewer.
    pub unmapped: Vec<Value>,
    /// For the reviewer only.
    pub rationale: String,
    pub grounding_hash: String,
    pub prompt: String,
    pub prompt_version: i64,
    pub model_id: String,
    pub model_version: String,
    pub correlation_id: Option<String>,
    /// The document the values were read from (Extract), kept for the review preview.
    pub document: Option<SourceDocument>,
}

/// The text a proposal's values were read from, with its source map and the instructions
/// to an AI found in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SourceDocument {
    pub name: String,
    pub kind: crate::ingest::DocumentKind,
    pub sha256: String,
    pub text: String,
    pub segments: Vec<crate::ingest::Segment>,
    pub injections: Vec<crate::ingest::Injection>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub id: String,
    pub capability: String,
    pub object: String,
    #[ts(optional)]
    pub record_id: Option<String>,
    pub operation: ProposalOperation,
    pub fields: Vec<ProposedField>,
    /// Child records proposed with it; an accepted row has its `recordId`.
    pub children: Vec<ProposedChild>,
    pub unmapped: Vec<Value>,
    pub rationale: String,
    #[ts(optional, type = "number")]
    pub basis_version: Option<i64>,
    pub grounding_hash: String,
    pub prompt: String,
    #[ts(type = "number")]
    pub prompt_version: i64,
    pub model_id: String,
    pub model_version: String,
    #[ts(type = "number")]
    pub generation: i64,
    pub correlation_id: String,
    pub state: ProposalState,
    #[ts(optional)]
    pub state_reason: Option<String>,
    pub created_by: String,
    pub created_at: String,
    #[ts(optional)]
    pub decided_by: Option<String>,
    #[ts(optional)]
    pub decided_at: Option<String>,
    pub accepted_fields: Vec<String>,
    #[ts(optional)]
    pub accept_correlation: Option<String>,
    #[ts(optional, type = "number")]
    pub result_version: Option<i64>,
    #[ts(optional)]
    pub undone_by: Option<String>,
    #[ts(optional)]
    pub undone_at: Option<String>,
    /// Until when undo is possible (accepted proposals).
    #[ts(optional)]
    pub undo_until: Option<String>,
    /// Fields of the patch hidden from this reader (they cannot read them).
    pub hidden_fields: u32,
    /// Applied without a reviewer: every field was on the capability's auto-apply allowlist.
    pub auto_applied: bool,
    /// Values the reviewer typed when accepting (replacing a proposed value, or filling in a
    /// field the proposal left out), kept apart from what the capability proposed.
    #[ts(type = "{ [key: string]: JsonValue }")]
    pub reviewer_edits: Map<String, Value>,
}

impl Session<'_> {
    /// Record a proposal. Nothing is written to records. Needs the capability's `ai.use`; an
    /// update proposal is computed against the record's current version (its basis).
    pub fn propose(&self, draft: ProposalDraft) -> Result<Proposal> {
        self.require(AI_USE)?;
        let (meta, _) = self.readable_object(&draft.object)?;
        let mut fields = draft.fields;
        if fields.is_empty() {
            return Err(Error::new(Code::InvalidValue, "a proposal needs at least one field"));
        }
        for f in &fields {
            self.readable_field(meta, &f.field)?;
        }
        let children = draft.children;
        for c in &children {
            let (child, _) = self.readable_object(&c.object)?;
            for f in &c.fields {
                self.readable_field(child, &f.field)?;
            }
        }
        let (operation, basis) = match &draft.record_id {
            Some(id) => {
                let current = self.get(&draft.object, id)?;
                for f in &mut fields {
                    f.before = current.fields.get(&f.field).cloned().unwrap_or(Value::Null);
                }
                (ProposalOperation::Update, Some(current.version))
            }
            None => (ProposalOperation::Create, None),
        };
        let id = self.ws.ids.record_id("proposal");
        let correlation = draft.correlation_id.clone().unwrap_or_else(|| self.correlation_id());
        let tx = self.begin_write()?;
        tx.execute(
            &format!(
                "INSERT INTO proposal ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                 'open', NULL, ?17, ?18, NULL, NULL, '[]', NULL, NULL, NULL, NULL, 0, '{{}}', ?19)"
            ),
            params![
                id,
                draft.capability,
                draft.object,
                draft.record_id,
                operation.as_str(),
                json_text(&fields),
                json_text(&draft.unmapped),
                draft.rationale,
                basis,
                draft.grounding_hash,
                draft.prompt,
                draft.prompt_version,
                draft.model_id,
                draft.model_version,
                self.catalog().generation,
                correlation,
                self.user().key,
                timestamp(self.ws.clock.now()),
                json_text(&children),
            ],
        )?;
        if let Some(doc) = &draft.document {
            tx.execute(
                "INSERT INTO proposal_document (proposal_id, document) VALUES (?1, ?2)",
                params![id, json_text(doc)],
            )?;
        }
        tx.commit()?;
        self.proposal(&id)
    }

    fn load_proposal(&self, conn: &rusqlite::Connection, id: &str) -> Result<Proposal> {
        conn.query_row(&format!("SELECT {COLUMNS} FROM proposal WHERE id = ?1"), [id], from_row)
            .optional()?
            .ok_or_else(|| Error::new(Code::NotFound, format!("no proposal `{id}`")))
    }

    /// Whether this user may see a proposal: its author, or a reviewer (`ai.approve`) who can
    /// read its record (or, for a create, its object).
    fn may_see(&self, p: &Proposal) -> bool {
        if p.created_by == self.user().key {
            return true;
        }
        if !self.user().has_system_permission(AI_APPROVE) {
            return false;
        }
        match &p.record_id {
            Some(id) if p.state != ProposalState::Undone || p.operation == ProposalOperation::Update => {
                self.get(&p.object, id).is_ok()
            }
            _ => self.readable_object(&p.object).is_ok(),
        }
    }

    /// The proposal as this reader may see it: fields they cannot read are left out.
    fn shown(&self, mut p: Proposal) -> Proposal {
        let before = p.fields.len();
        match self.readable_object(&p.object) {
            Ok((meta, _)) => {
                let readable = |k: &str| self.readable_field(meta, k).is_ok();
                p.fields.retain(|f| readable(&f.field));
                p.reviewer_edits.retain(|k, _| readable(k));
                p.unmapped.retain(|u| u["field"].as_str().is_none_or(readable));
                p.accepted_fields.retain(|k| readable(k));
            }
            Err(_) => {
                p.fields.clear();
                p.children.clear();
                p.reviewer_edits.clear();
                p.unmapped.clear();
                p.accepted_fields.clear();
            }
        }
        // A child object the reader cannot read shows no rows; a child field they cannot read,
        // no cell.
        p.children.retain_mut(|c| match self.readable_object(&c.object) {
            Ok((meta, _)) => {
                c.fields.retain(|f| self.readable_field(meta, &f.field).is_ok());
                true
            }
            Err(_) => false,
        });
        p.hidden_fields = (before - p.fields.len()) as u32;
        if p.state == ProposalState::Accepted {
            if let Some(t) = p.decided_at.as_deref().and_then(|t| parse_time(t).ok()) {
                p.undo_until = Some(timestamp(t + Duration::days(UNDO_DAYS)));
            }
        }
        p
    }

    pub fn proposal(&self, id: &str) -> Result<Proposal> {
        let p = self.load_proposal(self.ws.conn(), id)?;
        if !self.may_see(&p) {
            return Err(Error::new(Code::NotFound, format!("no proposal `{id}`")));
        }
        Ok(self.shown(p))
    }

    /// Proposals this user may see, newest first, optionally in one state or of one object.
    pub fn proposals(&self, state: Option<ProposalState>, object: Option<&str>) -> Result<Vec<Proposal>> {
        let mut stmt = self.ws.conn().prepare(&format!(
            "SELECT {COLUMNS} FROM proposal WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR object = ?2)
             ORDER BY created_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map(params![state.map(ProposalState::as_str), object], from_row)?;
        let mut out = vec![];
        for r in rows {
            let p = r?;
            if self.may_see(&p) {
                out.push(self.shown(p));
            }
        }
        Ok(out)
    }

    /// A reviewer's decision starts here: `ai.approve`, the proposal visible to them, in `state`.
    fn decide(
        &self,
        conn: &rusqlite::Connection,
        id: &str,
        state: ProposalState,
        verb: &str,
    ) -> Result<Proposal> {
        self.require(AI_APPROVE)?;
        let p = self.load_proposal(conn, id)?;
        if !self.may_see(&p) {
            return Err(Error::new(Code::NotFound, format!("no proposal `{id}`")));
        }
        if p.state != state {
            return Err(closed(&p, verb));
        }
        Ok(p)
    }

    /// Accept all fields (`fields = None`) or the chosen ones, as this reviewer's save. A record
    /// that moved since the basis is a `conflict` (details: base / current / proposed per
    /// field) and nothing is written; a validation failure writes nothing either.
    pub fn accept_proposal(&self, id: &str, fields: Option<&[String]>) -> Result<(Proposal, SaveOutcome)> {
        self.accept_proposal_edited(id, fields, &Map::new(), None)
    }

    /// Accept with the reviewer's own values in `edits` (a proposed value corrected, or a field
    /// the proposal left out, such as a required one the document does not state). The edits
    /// are written in the same save and kept on the proposal apart from what it proposed.
    /// `rows` chooses the child rows to create with it (indexes into `children`; `None` = all).
    pub fn accept_proposal_edited(
        &self,
        id: &str,
        fields: Option<&[String]>,
        edits: &Map<String, Value>,
        rows: Option<&[usize]>,
    ) -> Result<(Proposal, SaveOutcome)> {
        let started = std::time::Instant::now();
        let out = (|| {
            self.require(AI_APPROVE)?;
            self.expire_if_due(id)?;
            let tx = self.begin_write()?;
            let p = self.decide(&tx, id, ProposalState::Open, "accepted")?;
            let saved = self.apply_within(&tx, &p, Choice { fields, edits, rows }, false)?;
            tx.commit()?;
            Ok((self.proposal(id)?, saved))
        })();
        log_decision("accept", id, started, out.as_ref().map(|_| ()));
        out
    }

    /// Write a proposal's chosen fields as this user's save and mark it accepted, inside `tx`.
    fn apply_within(
        &self,
        tx: &rusqlite::Connection,
        p: &Proposal,
        choice: Choice<'_>,
        auto: bool,
    ) -> Result<SaveOutcome> {
        let Choice { fields, edits, rows } = choice;
        let id = &p.id;
        let chosen: Vec<&ProposedField> = match fields {
            None => p.fields.iter().collect(),
            Some(list) => {
                let mut out = vec![];
                for name in list {
                    let f = p.fields.iter().find(|f| &f.field == name).ok_or_else(|| {
                        Error::on_field(
                            Code::InvalidValue,
                            name.clone(),
                            format!("`{name}` is not in proposal {id}"),
                        )
                    })?;
                    out.push(f);
                }
                out
            }
        };
        let rows: Vec<usize> = match rows {
            None => (0..p.children.len()).collect(),
            Some(list) => {
                if let Some(bad) = list.iter().find(|r| **r >= p.children.len()) {
                    return Err(Error::new(
                        Code::InvalidValue,
                        format!("proposal {id} has {} rows; there is no row {}", p.children.len(), bad + 1),
                    ));
                }
                list.to_vec()
            }
        };
        if chosen.is_empty() && edits.is_empty() {
            return Err(Error::new(Code::InvalidValue, "choose at least one field to accept"));
        }
        // The reviewer's values correct chosen fields, or fill in a required field a new record
        // needs that the proposal leaves out — nothing else rides on the proposal.
        if !edits.is_empty() {
            let (meta, _) = self.readable_object(&p.object)?;
            for key in edits.keys() {
                let fills_required = p.operation == ProposalOperation::Create
                    && !p.fields.iter().any(|f| &f.field == key)
                    && meta.fields().iter().any(|f| &f.key == key && f.required);
                if !chosen.iter().any(|f| &f.field == key) && !fills_required {
                    return Err(Error::on_field(
                        Code::InvalidValue,
                        key.clone(),
                        format!("`{key}` is neither a chosen field of proposal {id} nor a required field it leaves out"),
                    ));
                }
            }
        }
        let mut values: Map<String, Value> =
            chosen.iter().map(|f| (f.field.clone(), f.value.clone())).collect();
        values.extend(edits.iter().map(|(k, v)| (k.clone(), v.clone())));
        let request = match (&p.record_id, p.basis_version) {
            (Some(record), Some(basis)) => {
                let current = self.get(&p.object, record)?;
                if current.version != basis {
                    let (meta, _) = self.readable_object(&p.object)?;
                    let details = p
                        .fields
                        .iter()
                        .filter(|f| self.readable_field(meta, &f.field).is_ok())
                        .map(|f| Detail {
                            path: f.field.clone(),
                            message: format!(
                                "base {} · current {} · proposed {}",
                                f.before,
                                current.fields.get(&f.field).cloned().unwrap_or(Value::Null),
                                f.value
                            ),
                        })
                        .collect();
                    return Err(Error::new(
                        Code::Conflict,
                        format!(
                            "the record changed since this proposal was made (version {basis}, now {}); nothing was written — re-derive the proposal",
                            current.version
                        ),
                    )
                    .with_details(details));
                }
                SaveRequest::Update {
                    object: p.object.clone(),
                    id: record.clone(),
                    changes: values,
                    expected_version: Some(basis),
                }
            }
            _ => SaveRequest::Create { object: p.object.clone(), values, id: None, owner: None },
        };
        let correlation = self.ws.ids.correlation_id();
        let ctx = SaveContext { proposed_by: Some(p.id.clone()), correlation_id: Some(correlation.clone()) };
        let saved = self.save_within(tx, request, &ctx)?;
        // The chosen rows, created under the record just saved, in the same transaction.
        let mut children = p.children.clone();
        for &r in &rows {
            let child = &mut children[r];
            let mut values: Map<String, Value> =
                child.fields.iter().map(|f| (f.field.clone(), f.value.clone())).collect();
            values.insert(child.parent_field.clone(), Value::String(saved.id.clone()));
            let request = SaveRequest::Create { object: child.object.clone(), values, id: None, owner: None };
            let made = self.save_within(tx, request, &ctx).map_err(|e| {
                let message = format!("row {}: {}", r + 1, e.message);
                Error { message, ..e }
            })?;
            child.record_id = Some(made.id);
            child.result_version = Some(made.version);
        }
        let accepted: Vec<String> =
            chosen.iter().map(|f| f.field.clone()).filter(|f| !edits.contains_key(f)).collect();
        let changed = tx.execute(
            "UPDATE proposal SET state = 'accepted', decided_by = ?2, decided_at = ?3, accepted_fields = ?4,
                accept_correlation = ?5, result_version = ?6, record_id = ?7, auto_applied = ?8,
                state_reason = ?9, reviewer_edits = ?10, children = ?11 WHERE id = ?1 AND state = 'open'",
            params![
                p.id,
                self.user().key,
                timestamp(self.ws.clock.now()),
                serde_json::to_string(&accepted).map_err(|e| Error::internal(e.to_string()))?,
                correlation,
                saved.version,
                saved.id,
                auto,
                auto.then_some("applied without review: every field is on the auto-apply allowlist"),
                json_text(edits),
                json_text(&children),
            ],
        )?;
        if changed != 1 {
            return Err(Error::new(Code::ProposalClosed, format!("proposal {id} was decided meanwhile")));
        }
        Ok(saved)
    }

    fn source_document(&self, conn: &rusqlite::Connection, id: &str) -> Result<Option<SourceDocument>> {
        Ok(conn
            .query_row("SELECT document FROM proposal_document WHERE proposal_id = ?1", [id], |r| {
                r.get::<_, String>(0)
            })
            .optional()?
            .and_then(|d| serde_json::from_str::<SourceDocument>(&d).ok()))
    }

    /// Discard an open proposal, with an optional reason for the record.
    pub fn discard_proposal(&self, id: &str, reason: Option<&str>) -> Result<Proposal> {
        let started = std::time::Instant::now();
        let out = (|| {
            self.require(AI_APPROVE)?;
            self.expire_if_due(id)?;
            let tx = self.begin_write()?;
            self.decide(&tx, id, ProposalState::Open, "discarded")?;
            tx.execute(
                "UPDATE proposal SET state = 'discarded', state_reason = ?2, decided_by = ?3, decided_at = ?4 WHERE id = ?1",
                params![id, reason.map(str::trim).filter(|r| !r.is_empty()), self.user().key, timestamp(self.ws.clock.now())],
            )?;
            tx.commit()?;
            self.proposal(id)
        })();
        log_decision("discard", id, started, out.as_ref().map(|_| ()));
        out
    }

    /// Undo an accepted proposal within 30 days: the inverse patch from data history, as this
    /// user's save (the same checks), refused with `conflict` if the record moved since.
    pub fn undo_proposal(&self, id: &str) -> Result<(Proposal, SaveOutcome)> {
        let started = std::time::Instant::now();
        let out = (|| {
            let tx = self.begin_write()?;
            let p = self.decide(&tx, id, ProposalState::Accepted, "undone")?;
            let decided = parse_time(p.decided_at.as_deref().unwrap_or_default())?;
            let until = decided + Duration::days(UNDO_DAYS);
            if self.ws.clock.now() > until {
                return Err(Error::new(
                    Code::ProposalClosed,
                    format!(
                        "undo of proposal {id} was possible for {UNDO_DAYS} days after acceptance, until {}; it can no longer be undone (edit the record instead)",
                        timestamp(until)
                    ),
                ));
            }
            let (record, version, correlation) =
                match (p.record_id.clone(), p.result_version, p.accept_correlation.clone()) {
                    (Some(r), Some(v), Some(c)) => (r, v, c),
                    _ => return Err(Error::internal(format!("accepted proposal {id} has no result"))),
                };
            // Rows created with it: one edited since is a conflict like the record.
            let made: Vec<(&ProposedChild, String, i64)> = p
                .children
                .iter()
                .filter_map(|c| Some((c, c.record_id.clone()?, c.result_version?)))
                .collect();
            let ctx = SaveContext { proposed_by: None, correlation_id: None };
            for (child, row, at) in &made {
                let now = self.get(&child.object, row)?;
                if now.version != *at {
                    return Err(Error::new(
                        Code::Conflict,
                        format!(
                            "a row created by this proposal ({} {row}) changed after it was accepted; undo would overwrite that change, so nothing was written",
                            child.object
                        ),
                    ));
                }
                // A new record's rows go with it (master-detail); an existing record's are
                // deleted one by one.
                if p.operation == ProposalOperation::Update {
                    let delete = SaveRequest::Delete {
                        object: child.object.clone(),
                        id: row.clone(),
                        expected_version: Some(*at),
                    };
                    self.save_within(&tx, delete, &ctx)?;
                }
            }
            let current = self.get(&p.object, &record)?;
            if current.version != version {
                return Err(Error::new(
                    Code::Conflict,
                    format!(
                        "the record changed after the proposal was accepted (version {version}, now {}); undo would overwrite that change, so nothing was written",
                        current.version
                    ),
                ));
            }
            let request = if p.operation == ProposalOperation::Create {
                SaveRequest::Delete { object: p.object.clone(), id: record, expected_version: Some(version) }
            } else {
                let mut stmt = tx.prepare(
                    "SELECT field, old_value FROM data_history WHERE correlation_id = ?1 AND record_id = ?2 ORDER BY seq",
                )?;
                let inverse: Map<String, Value> = stmt
                    .query_map(params![correlation, record], |r| {
                        let old: Option<String> = r.get(1)?;
                        Ok((
                            r.get::<_, String>(0)?,
                            old.and_then(|o| serde_json::from_str(&o).ok()).unwrap_or(Value::Null),
                        ))
                    })?
                    .collect::<rusqlite::Result<_>>()?;
                SaveRequest::Update {
                    object: p.object.clone(),
                    id: record,
                    changes: inverse,
                    expected_version: Some(version),
                }
            };
            let saved = self.save_within(&tx, request, &ctx)?;
            tx.execute(
                "UPDATE proposal SET state = 'undone', undone_by = ?2, undone_at = ?3 WHERE id = ?1 AND state = 'accepted'",
                params![id, self.user().key, timestamp(self.ws.clock.now())],
            )?;
            tx.commit()?;
            Ok((self.proposal(id)?, saved))
        })();
        log_decision("undo", id, started, out.as_ref().map(|_| ()));
        out
    }
}

/// One line per decision on a proposal: what, which, how it ended, how long it took.
fn log_decision(action: &str, id: &str, started: std::time::Instant, out: Result<(), &Error>) {
    let ms = crate::logging::ms_since(started);
    match out {
        Ok(()) => tracing::info!(action, proposal = id, ms, "proposal decided"),
        Err(e) => {
            tracing::info!(action, proposal = id, code = e.code.as_str(), ms, "proposal decision refused")
        }
    }
}

/// What a reviewer accepts: the fields (`None` = all), their own values, the child rows (`None`
/// = all).
struct Choice<'a> {
    fields: Option<&'a [String]>,
    edits: &'a Map<String, Value>,
    rows: Option<&'a [usize]>,
}
