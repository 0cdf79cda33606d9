//! Countersign desktop app: a thin Tauri v2 shell over `countersign-kernel`.
//! Each command is DTO in → one kernel call → DTO out (see `commands`).

#![cfg_attr(all(not(debug_assertions), target_os = "windows"), windows_subsystem = "windows")]

#[macro_use]
mod command_list;
mod commands;
mod desk;
mod desktop;

/// Tauri's handler for the listed commands.
macro_rules! handler {
    ($($command:ident),* $(,)?) => {
        tauri::generate_handler![$(commands::$command),*]
    };
}

use tauri::Manager;

fn main() {
    // Documents are read in a child process of this same program (see the kernel's `ingest`).
    if let Some(code) = countersign_kernel::ingest::reader_entry_point() {
        std::process::exit(code);
    }
    tauri::Builder::default()
        // First: a second launch hands its arguments to this instance and exits.
        .plugin(tauri_plugin_single_instance::init(desktop::second_launch))
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_dialog::init())
        .setup(|app| {
            if let Some(window) = app.get_webview_window("main") {
                desktop::lighten_webview(&window);
                desktop::remember_window_place(&window);
            }
            // Daily log files for a bug report (what happened and how long it took; never
            // values, prompts or keys), in the OS log folder; Settings shows where.
            let logs = commands::log_folder(app.handle())?;
            let guard = countersign_kernel::logging::to_files(&logs)?;
            tracing::info!(version = env!("CARGO_PKG_VERSION"), "Countersign started");
            app.manage(commands::Logs { folder: logs, _guard: guard });
            // The workspace named on the command line (or by the file association), else the
            // default one (created as the demo on first run).
            let args: Vec<String> = std::env::args().collect();
            let cwd = std::env::current_dir().unwrap_or_default();
            let named = desktop::workspace_argument(&args, &cwd);
            let default = commands::default_workspace_path(app.handle())?;
            let desk = match named.as_deref().map(desk::Desk::open_at) {
                Some(Ok(desk)) => desk,
                other => {
                    if let Some(Err(e)) = other {
                        tracing::error!(
                            code = e.code.as_str(),
                            "the workspace named at launch could not be opened"
                        );
                    }
                    desk::Desk::open_or_create_demo(&default).inspect_err(|e| {
                        tracing::error!(code = e.code.as_str(), "the workspace could not be opened")
                    })?
                }
            };
            desktop::note_recent(app.handle(), &desk.path());
            app.manage(desk);
            // The daily backup while the app stays open (opening takes one when due).
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                    handle.state::<desk::Desk>().back_up_if_due();
                }
            });
            // Indexes follow the sorts and filters used, built in the background.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                    let handle = handle.clone();
                    let _ = tauri::async_runtime::spawn_blocking(move || {
                        handle.state::<desk::Desk>().tune_indexes()
                    })
                    .await;
                }
            });
            app.manage(desk::ModelCalls::default());
            // The package's own llama-server (among its resources), and the built-in model if one
            // is installed: served on first use.
            if let Ok(resources) = app.path().resource_dir() {
                countersign_kernel::ai::runtime::process::ship_server_at(
                    resources.join("llama-server/llama-server"),
                );
            }
            if let Err(e) =
                countersign_kernel::ai::runtime::serve_installed(&commands::app_data(app.handle())?)
            {
                tracing::warn!(code = e.code.as_str(), "the built-in model cannot be served");
            }
            Ok(())
        })
        .invoke_handler(with_app_commands!(handler))
        .build(tauri::generate_context!())
        .expect("error while building Countersign")
        .run(|_, event| {
            if let tauri::RunEvent::Exit = event {
                // Stop the built-in model's server (were the app killed, the OS would).
                countersign_kernel::ai::runtime::set_built_in(None);
            }
        });
}

#[cfg(test)]
mod tests {
    macro_rules! names {
        ($($command:ident),* $(,)?) => {
            &[$(stringify!($command)),*]
        };
    }
    const COMMANDS: &[&str] = with_app_commands!(names);

    /// `ui/src/lib/api.ts` wraps exactly the app's commands: every command is called from it
    /// (by its name in quotes), and it calls no name that is not a command.
    #[test]
    fn the_typescript_wrappers_call_exactly_the_listed_commands() {
        let api = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ui/src/lib/api.ts")).unwrap();
        let mut called: Vec<&str> = api
            .split("call<")
            .skip(1)
            .filter_map(|rest| {
                // `call<Type>("name", …)`: the type, then the name in quotes.
                let (ty, after) = rest.split_once(">(\"")?;
                (!ty.contains(['(', '\n'])).then(|| after.split('"').next().unwrap_or_default())
            })
            .collect();
        called.sort();
        called.dedup();
        let mut listed = COMMANDS.to_vec();
        listed.sort();
        assert_eq!(called, listed, "api.ts and src-tauri/src/command_list.rs disagree");
    }
}
