//! The open workspace: opening, creating and choosing files, recent files, backups, the acting
//! user and their rights, and where things are (About, logs).

use super::*;

/// The folder of the app's log files (Settings shows it, for a bug report).
#[tauri::command]
pub async fn log_location(logs: State<'_, Logs>) -> Result<String> {
    Ok(logs.folder.display().to_string())
}

#[tauri::command]
pub async fn app_state(desk: State<'_, Desk>) -> Result<WorkspaceView> {
    desk.session(|s| Ok(s.describe_workspace()))
}

#[tauri::command]
pub async fn open_workspace(app: AppHandle, desk: State<'_, Desk>, path: String) -> Result<WorkspaceView> {
    let view = desk.open_path(Path::new(&path))?;
    desktop::note_recent(&app, Path::new(&path));
    Ok(view)
}

/// The templates a new workspace may start from.
#[tauri::command]
pub async fn workspace_templates() -> Result<Vec<TemplateSummary>> {
    Ok(templates::summaries())
}

/// Create a workspace file from a template, with its sample records or without.
#[tauri::command]
pub async fn create_workspace(
    app: AppHandle,
    desk: State<'_, Desk>,
    path: String,
    template: String,
    records: bool,
) -> Result<WorkspaceView> {
    let view = desk.create_at(Path::new(&path), &template, records)?;
    desktop::note_recent(&app, Path::new(&path));
    Ok(view)
}

/// The native Open dialog, then open the workspace chosen (`None`: cancelled).
#[tauri::command]
pub async fn choose_workspace(app: AppHandle, desk: State<'_, Desk>) -> Result<Option<WorkspaceView>> {
    let Some(path) = desktop::pick_workspace(&app) else { return Ok(None) };
    let view = desk.open_path(&path)?;
    desktop::note_recent(&app, &path);
    Ok(Some(view))
}

/// The native Save dialog, then create the workspace there (`None`: cancelled).
#[tauri::command]
pub async fn choose_new_workspace(
    app: AppHandle,
    desk: State<'_, Desk>,
    template: String,
    records: bool,
) -> Result<Option<WorkspaceView>> {
    let folder = app.path().document_dir().ok();
    let name = format!("{template}.{}", desktop::EXTENSION);
    let filter = ("Countersign workspace", desktop::EXTENSION);
    let Some(mut path) = desktop::save_as(&app, "Create a workspace", folder, &name, filter) else {
        return Ok(None);
    };
    if path.extension().is_none() {
        path.set_extension(desktop::EXTENSION);
    }
    let view = desk.create_at(&path, &template, records)?;
    desktop::note_recent(&app, &path);
    Ok(Some(view))
}

/// The workspaces opened lately on this machine, newest first.
#[tauri::command]
pub async fn recent_workspaces(app: AppHandle) -> Result<Vec<RecentWorkspace>> {
    Ok(desktop::recent(&app)?.list())
}

#[tauri::command]
pub async fn forget_recent_workspace(app: AppHandle, path: String) -> Result<()> {
    desktop::recent(&app)?.forget(&path)
}

/// The About box: the version, the workspace and its backups, the data and log folders.
#[tauri::command]
pub async fn about(app: AppHandle, desk: State<'_, Desk>, logs: State<'_, Logs>) -> Result<About> {
    let data = app.path().app_data_dir().map_err(|e| Error::internal(format!("no data folder: {e}")))?;
    desk.with(|open| Ok(About::of(&open.ws, &data, &logs.folder)))
}

/// The open workspace's backups, newest first.
#[tauri::command]
pub async fn backups(desk: State<'_, Desk>) -> Result<Vec<Backup>> {
    desk.with(|open| open.ws.backups())
}

#[tauri::command]
pub async fn back_up(desk: State<'_, Desk>) -> Result<Backup> {
    desk.with(|open| open.ws.back_up())
}

/// Replace the open workspace with one of its backups (needs metadata.deploy); what it
/// replaces is backed up first.
#[tauri::command]
pub async fn restore_backup(desk: State<'_, Desk>, path: String) -> Result<WorkspaceView> {
    desk.with(|open| {
        open::restore_open(&mut open.ws, Path::new(&path), &open.user)?;
        Ok(open.ws.session(&open.user)?.describe_workspace())
    })
}

#[tauri::command]
pub async fn switch_user(desk: State<'_, Desk>, user: String) -> Result<WorkspaceView> {
    desk.with(|open| {
        let view = open.ws.session(&user)?.describe_workspace();
        open.user = user;
        Ok(view)
    })
}

/// Choose the acting user's own locale (`None`: the workspace's); the workspace as they now
/// read it.
#[tauri::command]
pub async fn set_own_locale(desk: State<'_, Desk>, locale: Option<String>) -> Result<WorkspaceView> {
    desk.session(|s| {
        s.set_own_locale(locale.as_deref())?;
        Ok(s.describe_workspace())
    })
}

/// Every user's rights, read-only (the definition is where they change).
#[tauri::command]
pub async fn user_rights(desk: State<'_, Desk>) -> Result<Vec<UserRights>> {
    desk.session(|s| s.user_rights())
}
