//! The workspace's definition edited in the app (Settings → Objects, Users & permissions): the
//! definition as deployed, a preview of a draft, its deploy, and a "see as" of one user.

use super::*;

/// The definition as deployed, retired parts included (needs metadata.deploy).
#[tauri::command]
pub async fn workspace_definition(desk: State<'_, Desk>) -> Result<WorkspaceDefinition> {
    desk.with(|open| open.ws.definition_for(&open.user))
}

/// What deploying `definition` would change, and every problem it would meet in the data
/// (read beside the window's connection: at scale it reads every row).
#[tauri::command]
pub async fn preview_deploy(desk: State<'_, Desk>, definition: WorkspaceDefinition) -> Result<DeployPreview> {
    desk.beside(|ws, user| ws.preview_deploy(&definition, Some(user)))
}

/// Deploy `definition` as the current user (a backup is taken first), each step told over
/// `progress`; `cancel_model_call(call)` stops it with nothing changed. The workspace as the
/// user sees it afterwards.
#[tauri::command]
pub async fn deploy_definition(
    desk: State<'_, Desk>,
    calls: State<'_, ModelCalls>,
    call: String,
    definition: WorkspaceDefinition,
    force: bool,
    progress: Channel<DeployProgress>,
) -> Result<WorkspaceView> {
    let running = calls.begin(&call)?;
    let mut report = |p: &DeployProgress| {
        let _ = progress.send(p.clone());
    };
    let cancelled = || running.cancel.is_cancelled();
    let deployed = desk.beside(|mut ws, user| {
        let opts = DeployOptions { force, user: Some(user.to_string()) };
        ws.deploy_watched(&definition, &opts, Watch { progress: &mut report, cancelled: &cancelled })?;
        Ok(ws)
    })?;
    desk.take_deployed(deployed)
}

/// `object` (and record `id`) as `user` sees them.
#[tauri::command]
pub async fn see_as(
    desk: State<'_, Desk>,
    user: String,
    object: String,
    id: Option<String>,
) -> Result<SeenAs> {
    desk.session(|s| s.see_as(&user, &object, id.as_deref()))
}

/// Add values to a picklist (an import's "add it"), as the current user.
#[tauri::command]
pub async fn add_picklist_values(
    desk: State<'_, Desk>,
    object: String,
    field: String,
    values: Vec<String>,
) -> Result<()> {
    desk.with(|open| open.ws.add_picklist_values(&open.user, &object, &field, &values).map(|_| ()))
}
