//! Proposals: a model's writes waiting for a reviewer — the inbox, the review, accept (with the
//! reviewer's own values), discard, undo, retention and the auto-apply allowlist.

use crate::output::to_json;
use crate::records::set_values;
use clap::Subcommand;
use countersign_kernel::proposals::ProposalState;
use countersign_kernel::{Code, Error, Result, Session};
use serde_json::{json, Value};

#[derive(Subcommand)]
pub enum ProposalCommand {
    /// The proposals you may see, newest first.
    List {
        #[arg(long, value_parser = ["open", "accepted", "discarded", "expired", "undone"])]
        state: Option<String>,
        #[arg(long)]
        object: Option<String>,
    },
    /// One proposal as the review screen shows it: fields before → after (uncertain first,
    /// word diff, base/current/proposed when the record moved), the source document.
    Show { id: String },
    /// Accept all fields, or only --fields a,b (needs ai.approve; your save). --set FIELD=VALUE
    /// puts your own value in the same save (a correction, or a required field the document
    /// does not state). A proposal with child rows (an invoice's lines) creates them all, or
    /// only --rows 1,3 (numbered from 1; --rows "" creates none).
    Accept {
        id: String,
        #[arg(long, value_delimiter = ',')]
        fields: Option<Vec<String>>,
        #[arg(long)]
        set: Vec<String>,
        #[arg(long, value_delimiter = ',')]
        rows: Option<Vec<String>>,
    },
    Discard {
        id: String,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Undo an accepted proposal (within 30 days, if the record has not moved since).
    Undo { id: String },
    /// Expire open proposals after 30 days, purge old discarded and accepted ones.
    Retention,
    /// The fields of an object a capability may change without review (when its autonomy is
    /// auto_apply); with --fields, set the list (needs ai.approve; --fields "" clears it).
    AutoApply {
        #[arg(long, default_value = "extract")]
        capability: String,
        #[arg(long)]
        object: String,
        #[arg(long, value_delimiter = ',')]
        fields: Option<Vec<String>>,
    },
}

pub fn run(session: &Session<'_>, command: ProposalCommand) -> Result<Value> {
    match command {
        ProposalCommand::List { state, object } => {
            let state = state
                .map(|s| serde_json::from_value::<ProposalState>(Value::String(s)))
                .transpose()
                .map_err(|e| Error::new(Code::InvalidValue, e.to_string()))?;
            Ok(json!({ "proposals": to_json(&session.proposals(state, object.as_deref())?)? }))
        }
        ProposalCommand::Show { id } => to_json(&session.review_proposal(&id)?),
        ProposalCommand::Accept { id, fields, set, rows } => {
            let rows = rows
                .map(|list| {
                    list.iter()
                        .filter(|r| !r.trim().is_empty())
                        .map(|r| match r.trim().parse::<usize>() {
                            Ok(n) if n >= 1 => Ok(n - 1),
                            _ => Err(Error::new(
                                Code::InvalidValue,
                                format!("--rows takes row numbers from 1, not `{r}`"),
                            )),
                        })
                        .collect::<Result<Vec<usize>>>()
                })
                .transpose()?;
            let (proposal, save) =
                session.accept_proposal_edited(&id, fields.as_deref(), &set_values(set)?, rows.as_deref())?;
            Ok(json!({ "proposal": to_json(&proposal)?, "save": to_json(&save)? }))
        }
        ProposalCommand::Discard { id, reason } => {
            to_json(&session.discard_proposal(&id, reason.as_deref())?)
        }
        ProposalCommand::Undo { id } => {
            let (proposal, save) = session.undo_proposal(&id)?;
            Ok(json!({ "proposal": to_json(&proposal)?, "save": to_json(&save)? }))
        }
        ProposalCommand::Retention => to_json(&session.run_retention()?),
        ProposalCommand::AutoApply { capability, object, fields } => {
            if let Some(list) = fields {
                let list: Vec<String> = list.into_iter().filter(|f| !f.trim().is_empty()).collect();
                session.set_auto_apply(&capability, &object, &list)?;
            }
            to_json(&session.auto_apply_list(&capability, &object)?)
        }
    }
}
