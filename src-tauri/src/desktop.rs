//! What makes Countersign behave like a desktop app: one instance (a second launch focuses
//! the first and hands it the workspace file it was given), the workspace named on the command
//! line or by the file association, the recent workspaces, and the native file dialogs (run
//! here, in Rust: the window itself is granted no dialog or file-system permission).

use countersign_kernel::recent::RecentWorkspaces;
use countersign_kernel::{Error, Result};
use std::path::{Path, PathBuf};
use tauri::{AppHandle, Emitter, Manager};
use tauri_plugin_dialog::DialogExt;

/// The event the window gets when a second launch opened a workspace here (payload: the
/// `WorkspaceView`) or could not (payload: the error).
pub const WORKSPACE_OPENED: &str = "workspace-opened";
pub const WORKSPACE_REFUSED: &str = "workspace-refused";

/// The file extension of a workspace (the file association's).
pub const EXTENSION: &str = "countersign";

/// The workspace file among a launch's arguments (the first that is not an option; the first
/// argument is the program), made absolute against the launch's working directory.
pub fn workspace_argument(args: &[String], cwd: &Path) -> Option<PathBuf> {
    let path = PathBuf::from(args.iter().skip(1).find(|a| !a.starts_with('-') && !a.is_empty())?);
    Some(if path.is_absolute() { path } else { cwd.join(path) })
}

/// The recent workspaces, kept in the app's config folder.
pub fn recent(app: &AppHandle) -> Result<RecentWorkspaces> {
    let dir = app.path().app_config_dir().map_err(|e| Error::internal(format!("no config folder: {e}")))?;
    Ok(RecentWorkspaces::at(dir.join("recent-workspaces.json")))
}

/// Put `path` first among the recent workspaces. Best effort: a list that cannot be written
/// never stops the workspace from opening.
pub fn note_recent(app: &AppHandle, path: &Path) {
    if let Err(e) = recent(app).and_then(|r| r.note(path, chrono::Utc::now())) {
        tracing::warn!(code = e.code.as_str(), "the recent workspaces list was not updated");
    }
}

/// A second launch: focus this window, and open the workspace it was given, if any.
pub fn second_launch(app: &AppHandle, args: Vec<String>, cwd: String) {
    tracing::info!("a second launch handed over to this instance");
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    let Some(path) = workspace_argument(&args, Path::new(&cwd)) else { return };
    let desk = app.state::<crate::desk::Desk>();
    match desk.open_path(&path) {
        Ok(view) => {
            note_recent(app, &path);
            let _ = app.emit(WORKSPACE_OPENED, view);
        }
        Err(e) => {
            let _ = app.emit(WORKSPACE_REFUSED, e);
        }
    }
}

/// Set the window's webview up for a forms-and-tables app on WebKitGTK (Linux):
/// - **rendered on the CPU** (hardware acceleration policy "never"). GPU compositing gives every
///   scrolling area and layer a backing store of its own: measured with `scripts/footprint.sh`
///   (Xvfb, Mesa), it held ~100 MiB in the web process after the first list, and most of the
///   growth over a long session. The app has no canvas, video or 3D to gain from it.
///   `COUNTERSIGN_GPU_RENDERING=1` keeps WebKit's default (for a machine where it renders better).
/// - **the smallest resource caches** (cache model "document viewer"): everything the window loads
///   comes from the app itself, so a web browser's memory and page caches only hold copies.
pub fn lighten_webview(window: &tauri::WebviewWindow) {
    #[cfg(target_os = "linux")]
    {
        let gpu = std::env::var("COUNTERSIGN_GPU_RENDERING").is_ok_and(|v| v == "1");
        let applied = window.with_webview(move |webview| {
            use webkit2gtk::{
                CacheModel, HardwareAccelerationPolicy, SettingsExt, WebContextExt, WebViewExt,
            };
            let view = webview.inner();
            if !gpu {
                if let Some(settings) = WebViewExt::settings(&view) {
                    settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
                }
            }
            if let Some(context) = view.context() {
                context.set_cache_model(CacheModel::DocumentViewer);
            }
        });
        if let Err(e) = applied {
            tracing::warn!(error = %e, "the webview's settings could not be applied");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = window;
}

/// Write the window's size and place a second after they last changed. The window-state plugin
/// writes them only when the app exits cleanly, so an app that was killed (a crash, a logout, a
/// power cut) came back at the size it had before.
pub fn remember_window_place(window: &tauri::WebviewWindow) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tauri_plugin_window_state::{AppHandleExt, StateFlags};
    let app = window.app_handle().clone();
    let changes = std::sync::Arc::new(AtomicU64::new(0));
    window.on_window_event(move |event| {
        if !matches!(event, tauri::WindowEvent::Resized(_) | tauri::WindowEvent::Moved(_)) {
            return;
        }
        let change = changes.fetch_add(1, Ordering::SeqCst) + 1;
        let (app, changes) = (app.clone(), changes.clone());
        tauri::async_runtime::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            if changes.load(Ordering::SeqCst) != change {
                return; // a later change will write
            }
            if let Err(e) = app.save_window_state(StateFlags::all()) {
                tracing::warn!(error = %e, "the window's size and place were not written");
            }
        });
    });
}

/// The native Open dialog for a workspace file (`None`: cancelled).
pub fn pick_workspace(app: &AppHandle) -> Option<PathBuf> {
    pick_file(app, "Open a workspace", ("Countersign workspace", EXTENSION))
}

/// The native Open dialog for a model file (GGUF) for the built-in runtime (`None`: cancelled).
pub fn pick_model_file(app: &AppHandle) -> Option<PathBuf> {
    pick_file(app, "Choose a model file", ("GGUF model", "gguf"))
}

/// The `countersign-cli` other AI apps run for the MCP server: the one the app's package ships
/// (among its resources), else the one beside this program (a build tree), else by name on
/// `PATH`.
pub fn mcp_program(app: &AppHandle) -> PathBuf {
    let shipped = app.path().resource_dir().ok().map(|d| d.join("countersign-cli"));
    let beside = std::env::current_exe().ok().and_then(|e| e.parent().map(|d| d.join("countersign-cli")));
    shipped
        .into_iter()
        .chain(beside)
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("countersign-cli"))
}

/// The native Open dialog for one file of the kind `filter` names (`None`: cancelled).
fn pick_file(app: &AppHandle, title: &str, filter: (&str, &str)) -> Option<PathBuf> {
    app.dialog()
        .file()
        .set_title(title)
        .add_filter(filter.0, &[filter.1])
        .blocking_pick_file()
        .and_then(|f| f.into_path().ok())
}

/// The native Save dialog for a new file named `name` in `folder` (`None`: cancelled).
pub fn save_as(
    app: &AppHandle,
    title: &str,
    folder: Option<PathBuf>,
    name: &str,
    filter: (&str, &str),
) -> Option<PathBuf> {
    let mut dialog =
        app.dialog().file().set_title(title).set_file_name(name).add_filter(filter.0, &[filter.1]);
    if let Some(folder) = folder {
        dialog = dialog.set_directory(folder);
    }
    dialog.blocking_save_file().and_then(|f| f.into_path().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_argument_is_the_first_non_option_made_absolute() {
        let cwd = Path::new("/home/ana");
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(workspace_argument(&args(&["countersign"]), cwd), None);
        assert_eq!(
            workspace_argument(&args(&["countersign", "books.countersign"]), cwd),
            Some(PathBuf::from("/home/ana/books.countersign"))
        );
        assert_eq!(
            workspace_argument(&args(&["countersign", "--verbose", "/data/w.countersign"]), cwd),
            Some(PathBuf::from("/data/w.countersign"))
        );
    }
}
