//! Proposals: the inbox, review, accept, discard and undo, and auto-apply.

use super::*;

/// The proposals this user may see, newest first (the inbox filters and counts them).
#[tauri::command]
pub async fn proposals(desk: State<'_, Desk>) -> Result<Vec<Proposal>> {
    desk.session(|s| s.proposals(None, None))
}

#[tauri::command]
pub async fn review_proposal(desk: State<'_, Desk>, id: String) -> Result<ProposalReview> {
    desk.session(|s| s.review_proposal(&id))
}

/// Accept all fields (`fields: null`) or the chosen ones, with the reviewer's own values in
/// `edits`, and all child rows (`rows: null`) or the chosen ones, as this user's save.
#[tauri::command]
pub async fn accept_proposal(
    desk: State<'_, Desk>,
    id: String,
    fields: Option<Vec<String>>,
    edits: Option<serde_json::Map<String, serde_json::Value>>,
    rows: Option<Vec<usize>>,
) -> Result<Proposal> {
    desk.session(|s| {
        Ok(s.accept_proposal_edited(&id, fields.as_deref(), &edits.unwrap_or_default(), rows.as_deref())?.0)
    })
}

#[tauri::command]
pub async fn discard_proposal(desk: State<'_, Desk>, id: String, reason: Option<String>) -> Result<Proposal> {
    desk.session(|s| s.discard_proposal(&id, reason.as_deref()))
}

#[tauri::command]
pub async fn undo_proposal(desk: State<'_, Desk>, id: String) -> Result<Proposal> {
    desk.session(|s| Ok(s.undo_proposal(&id)?.0))
}

#[tauri::command]
pub async fn auto_apply_list(
    desk: State<'_, Desk>,
    capability: String,
    object: String,
) -> Result<AutoApplyList> {
    desk.session(|s| s.auto_apply_list(&capability, &object))
}

#[tauri::command]
pub async fn set_auto_apply(
    desk: State<'_, Desk>,
    capability: String,
    object: String,
    fields: Vec<String>,
) -> Result<AutoApplyList> {
    desk.session(|s| {
        s.set_auto_apply(&capability, &object, &fields)?;
        s.auto_apply_list(&capability, &object)
    })
}

/// The tool calls waiting for this user's decision (needs ai.approve), every argument in full.
#[tauri::command]
pub async fn tool_approvals(desk: State<'_, Desk>) -> Result<Vec<ToolCallView>> {
    desk.session(|s| s.approvals())
}

/// Approve (the call is then sent, the workspace not held meanwhile) or deny a waiting tool
/// call; the call as it then stands.
#[tauri::command]
pub async fn decide_tool_call(
    desk: State<'_, Desk>,
    id: String,
    decision: Decision,
    comment: Option<String>,
) -> Result<ToolCallView> {
    calls::decide_and_carry_out(&UserDesk::current(&desk)?, &id, decision, comment.as_deref()).await
}

/// Tool calls whose outcome is unknown, for this user to resolve (needs ai.approve).
#[tauri::command]
pub async fn tool_calls_to_resolve(desk: State<'_, Desk>) -> Result<Vec<ToolCallView>> {
    desk.session(|s| s.calls_to_resolve())
}

/// Say what became of a call whose outcome was unknown: it happened, or it did not (the note
/// is what the model is told).
#[tauri::command]
pub async fn resolve_tool_call(
    desk: State<'_, Desk>,
    id: String,
    happened: bool,
    note: String,
) -> Result<ToolCallView> {
    desk.session(|s| s.resolve_tool_call(&id, happened, &note))
}
