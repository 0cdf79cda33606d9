//! Autonomy: which (capability, object, field) a capability may apply without review, and the
//! auto-apply itself — still a save through the one save path, audited with the capability as
//! proposedBy.

use super::*;

/// Auto-apply leaves for a reviewer any proposal with a field stated with less confidence.
pub const AUTO_APPLY_MIN_CONFIDENCE: f64 = 0.9;

/// How far a capability's proposals go without a reviewer: `read_only` proposes nothing,
/// `propose` leaves every proposal for review (the default), `auto_apply` applies the fields on
/// the (capability, object) allowlist as the user's own save.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Autonomy {
    ReadOnly,
    Propose,
    AutoApply,
}

/// The auto-apply allowlist: which fields of an object a capability may change without review.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AutoApplyList {
    pub capability: String,
    pub object: String,
    pub autonomy: Autonomy,
    pub fields: Vec<String>,
    /// Whether this user may change the list (`ai.approve`).
    pub can_set: bool,
}

impl Session<'_> {
    /// Auto-apply: apply an open update proposal without a reviewer when every field is on the
    /// capability's allowlist for the object and the dry run found no problem; the change is
    /// this user's save (their edit rights and the rules apply), audited with the proposal as
    /// proposedBy, and undoable like any other. `None` = left open for review.
    /// `autonomy` is the capability's, from its binding.
    pub fn auto_apply(&self, p: &Proposal, autonomy: Autonomy) -> Result<Option<Proposal>> {
        if p.operation != ProposalOperation::Update || autonomy != Autonomy::AutoApply {
            return Ok(None);
        }
        let allowed = self.auto_apply_fields(&p.capability, &p.object)?;
        let tx = self.begin_write()?;
        // Everything is decided on the stored proposal, inside the write transaction.
        let current = self.load_proposal(&tx, &p.id)?;
        let instructed = self.source_document(&tx, &p.id)?.is_some_and(|d| !d.injections.is_empty());
        if current.state != ProposalState::Open
            || instructed
            || !current.children.is_empty()
            || current.fields.iter().any(|f| {
                f.problem.is_some()
                    || !allowed.contains(&f.field)
                    || f.confidence.is_some_and(|c| c < AUTO_APPLY_MIN_CONFIDENCE)
            })
        {
            return Ok(None);
        }
        match self.apply_within(&tx, &current, Choice { fields: None, edits: &Map::new(), rows: None }, true)
        {
            Ok(_) => {
                tx.commit()?;
                Ok(Some(self.proposal(&p.id)?))
            }
            // Not applied (a rule, a right, a moved record): the proposal stays for a reviewer.
            Err(e) if e.fault != crate::error::Fault::Platform => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The fields of `object` a capability may change without review.
    pub fn auto_apply_fields(&self, capability: &str, object: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .ws
            .conn()
            .prepare("SELECT field FROM auto_apply WHERE capability = ?1 AND object = ?2 ORDER BY field")?;
        let rows = stmt.query_map(params![capability, object], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Set the auto-apply allowlist of (capability, object) — `ai.approve` only; the fields must
    /// be fields of the object the setter can edit. The caller has checked that the capability
    /// exists.
    pub(crate) fn set_auto_apply_fields(
        &self,
        capability: &str,
        object: &str,
        fields: &[String],
    ) -> Result<Vec<String>> {
        self.require(AI_APPROVE)?;
        let (meta, _) = self.readable_object(object)?;
        for f in fields {
            let (i, _) = self.readable_field(meta, f)?;
            if self.field_level(meta, i) != crate::metadata::definition::FieldLevel::Edit {
                return Err(Error::on_field(
                    Code::Permission,
                    f.clone(),
                    format!("you cannot edit `{f}`, so you cannot let {capability} change it without review"),
                ));
            }
        }
        let tx = self.begin_write()?;
        tx.execute(
            "DELETE FROM auto_apply WHERE capability = ?1 AND object = ?2",
            params![capability, object],
        )?;
        for f in fields {
            tx.execute(
                "INSERT OR IGNORE INTO auto_apply (capability, object, field, set_by, set_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![capability, object, f, self.user().key, timestamp(self.ws.clock.now())],
            )?;
        }
        tx.commit()?;
        self.auto_apply_fields(capability, object)
    }
}
