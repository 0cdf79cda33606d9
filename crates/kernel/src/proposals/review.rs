//! The review of a proposal: each field before → after (a word-level diff for text), in the
//! record's currency, with what the reviewer may accept.

use super::*;

/// One piece of a word-level diff.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffPart {
    /// `equal`, `delete` (only in before) or `insert` (only in the proposed value).
    pub op: String,
    pub text: String,
}

/// Word-level diff of two texts (runs of the same operation merged).
pub fn word_diff(before: &str, after: &str) -> Vec<DiffPart> {
    let mut out: Vec<DiffPart> = vec![];
    for change in similar::TextDiff::from_words(before, after).iter_all_changes() {
        let op = match change.tag() {
            similar::ChangeTag::Equal => "equal",
            similar::ChangeTag::Delete => "delete",
            similar::ChangeTag::Insert => "insert",
        };
        match out.last_mut() {
            Some(last) if last.op == op => last.text.push_str(change.value()),
            _ => out.push(DiffPart { op: op.into(), text: change.value().into() }),
        }
    }
    out
}

/// One field of a proposal as the review screen shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FieldReview {
    pub field: String,
    pub label: String,
    pub field_type: String,
    pub before: Value,
    pub value: Value,
    /// The record's value now, when it moved since the basis (base / current / proposed).
    #[ts(optional)]
    pub current: Option<Value>,
    /// Word-level diff before → proposed, for text values.
    pub diff: Vec<DiffPart>,
    #[ts(optional)]
    pub confidence: Option<f64>,
    #[ts(optional)]
    pub source: Option<SourceSpan>,
    #[ts(optional)]
    pub problem: Option<String>,
    pub candidates: Vec<crate::records::names::Candidate>,
    /// Whether this reviewer may write the field.
    pub can_edit: bool,
}

/// Everything the review screen needs about one proposal.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProposalReview {
    pub proposal: Proposal,
    /// Uncertain first: fields with a problem, then by confidence, then in layout order.
    pub fields: Vec<FieldReview>,
    #[ts(optional)]
    pub document: Option<SourceDocument>,
    /// The record's version now (updates), and whether it moved since the basis.
    #[ts(optional, type = "number")]
    pub current_version: Option<i64>,
    pub stale: bool,
    /// Whether this user may accept, discard or undo (`ai.approve`).
    pub can_decide: bool,
    /// Why undo is not offered (accepted proposals only), e.g. the 30-day window has passed.
    #[ts(optional)]
    pub undo_blocked: Option<String>,
    /// Required fields a new record needs that the proposal leaves out (no default): the
    /// reviewer fills them in when accepting.
    pub missing_required: Vec<MissingField>,
    /// The currency the record's amounts are in before and after the proposal (its own
    /// currency field, or its parent's through the lookup, as the patch leaves them); the
    /// proposed child rows' amounts are in `currency_after` when they take the record's.
    /// `None`: the workspace's currency.
    #[ts(optional)]
    pub currency_before: Option<String>,
    #[ts(optional)]
    pub currency_after: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MissingField {
    pub field: String,
    pub label: String,
    pub field_type: String,
    pub can_edit: bool,
}

impl Session<'_> {
    /// The currency of the proposal's record's amounts before and after it: the record's own
    /// currency field, or its parent's (read through this session), as the patch leaves them.
    pub(super) fn review_currencies(
        &self,
        meta: &ObjectMeta,
        p: &Proposal,
        current: Option<&Record>,
    ) -> (Option<String>, Option<String>) {
        let Some(amount) = meta.fields().iter().find(|f| f.field_type == FieldType::Currency) else {
            return (None, None);
        };
        let Some(path) = self.currency_path(meta, &amount.key) else { return (None, None) };
        let (field, parent) = match path.split_once('.') {
            Some((lookup, cf)) => (lookup, Some(cf)),
            None => (path.as_str(), None),
        };
        let now = current.and_then(|c| c.fields.get(field)).cloned().unwrap_or(Value::Null);
        let patched = p.fields.iter().find(|f| f.field == field);
        let before =
            patched
                .map_or(now.clone(), |f| if p.record_id.is_some() { f.before.clone() } else { Value::Null });
        let after = patched.map_or(now, |f| f.value.clone());
        let code = |v: &Value| -> Option<String> {
            let v = v.as_str()?;
            match (parent, meta.def.fields.iter().find(|f| f.key == field).and_then(|f| f.target.as_deref()))
            {
                (None, _) => Some(v.to_string()),
                (Some(cf), Some(target)) => {
                    self.get(target, v).ok()?.fields.get(cf).and_then(Value::as_str).map(String::from)
                }
                (Some(_), None) => None,
            }
        };
        (code(&before), code(&after))
    }

    /// The currency of a proposal's amounts before and after it (see
    /// [`ProposalReview::currency_before`]).
    pub fn proposal_currencies(&self, p: &Proposal) -> Result<(Option<String>, Option<String>)> {
        let (meta, _) = self.readable_object(&p.object)?;
        let current = p.record_id.as_deref().and_then(|r| self.get(&p.object, r).ok());
        Ok(self.review_currencies(meta, p, current.as_ref()))
    }

    /// The review of one proposal: fields before → after with diffs, the source document, and
    /// whether the record moved since the basis.
    pub fn review_proposal(&self, id: &str) -> Result<ProposalReview> {
        let p = self.proposal(id)?;
        let (meta, _) = self.readable_object(&p.object)?;
        let current = match (&p.record_id, p.state) {
            (Some(r), ProposalState::Open | ProposalState::Accepted) => self.get(&p.object, r).ok(),
            _ => None,
        };
        let stale = match (p.state, &current) {
            (ProposalState::Open, Some(c)) => Some(c.version) != p.basis_version,
            (ProposalState::Accepted, Some(c)) => Some(c.version) != p.result_version,
            _ => false,
        };
        let mut fields: Vec<(usize, FieldReview)> = p
            .fields
            .iter()
            .filter_map(|f| {
                let (i, def) = self.readable_field(meta, &f.field).ok()?;
                let diff = match (f.before.as_str(), f.value.as_str()) {
                    (Some(b), Some(a))
                        if !b.is_empty()
                            && matches!(def.field_type, FieldType::Text | FieldType::LongText) =>
                    {
                        word_diff(b, a)
                    }
                    _ => vec![],
                };
                Some((
                    i,
                    FieldReview {
                        field: f.field.clone(),
                        label: def.label.clone(),
                        field_type: def.field_type.key(),
                        before: f.before.clone(),
                        value: f.value.clone(),
                        current: current
                            .as_ref()
                            .filter(|_| stale)
                            .map(|c| c.fields.get(&f.field).cloned().unwrap_or(Value::Null)),
                        diff,
                        confidence: f.confidence,
                        source: f.source.clone(),
                        problem: f.problem.clone(),
                        candidates: f.candidates.clone(),
                        can_edit: self.field_level(meta, i) == FieldLevel::Edit,
                    },
                ))
            })
            .collect();
        fields.sort_by(|(ia, a), (ib, b)| {
            let rank = |f: &FieldReview| (f.problem.is_none(), f.confidence.unwrap_or(f64::INFINITY));
            let (ra, rb) = (rank(a), rank(b));
            ra.0.cmp(&rb.0).then(ra.1.total_cmp(&rb.1)).then(ia.cmp(ib))
        });
        // The document states the values of every field of the patch: a reader who may not see
        // some of them does not get the document either.
        let document = if p.hidden_fields > 0 { None } else { self.source_document(self.ws.conn(), id)? };
        let can_decide = self.user().has_system_permission(AI_APPROVE);
        let undo_blocked = (p.state == ProposalState::Accepted)
            .then(|| {
                if p.undo_until.as_deref().is_some_and(|u| u < timestamp(self.ws.clock.now()).as_str()) {
                    Some(format!(
                        "undo was possible for {UNDO_DAYS} days after acceptance, until {}; edit the record instead",
                        p.undo_until.as_deref().unwrap_or_default()
                    ))
                } else if stale {
                    Some("the record changed after this proposal was accepted; undo would overwrite that change".into())
                } else if !can_decide {
                    Some("undo needs the ai.approve permission".into())
                } else {
                    None
                }
            })
            .flatten();
        let (currency_before, currency_after) = self.review_currencies(meta, &p, current.as_ref());
        let missing_required = if p.operation == ProposalOperation::Create && p.state == ProposalState::Open {
            meta.fields()
                .iter()
                .enumerate()
                .filter(|(_, f)| {
                    f.required && f.default.is_none() && !p.fields.iter().any(|x| x.field == f.key)
                })
                .map(|(i, f)| MissingField {
                    field: f.key.clone(),
                    label: f.label.clone(),
                    field_type: f.field_type.key(),
                    can_edit: self.field_level(meta, i) == FieldLevel::Edit,
                })
                .collect()
        } else {
            vec![]
        };
        Ok(ProposalReview {
            missing_required,
            currency_before,
            currency_after,
            current_version: current.as_ref().map(|c| c.version),
            proposal: p,
            fields: fields.into_iter().map(|(_, f)| f).collect(),
            document,
            stale,
            can_decide,
            undo_blocked,
        })
    }
}
