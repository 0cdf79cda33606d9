//! Countersign desktop app: a thin Tauri v2 shell over `countersign-kernel`.
//! Each command is DTO in → one kernel call → DTO out (see `commands`).

#![cfg_attr(all(not(debug_assertions), target_os = "windows"), windows_subsystem = "windows")]

mod commands;

use tauri::Manager;

fn main() {
    // Documents are read in a child process of this same program (see the kernel's `ingest`).
    if let Some(code) = countersign_kernel::ingest::reader_entry_point() {
        std::process::exit(code);
    }
    tauri::Builder::default()
        .setup(|app| {
            let path = commands::default_workspace_path(app.handle())?;
            app.manage(commands::Desk::open_or_create_demo(&path)?);
            app.manage(commands::ModelCalls::default());
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::app_state,
            commands::open_workspace,
            commands::create_workspace,
            commands::switch_user,
            commands::describe_object,
            commands::query_records,
            commands::get_record,
            commands::save_record,
            commands::record_history,
            commands::import_csv,
            commands::export_csv,
            commands::provider_settings,
            commands::save_provider,
            commands::remove_provider,
            commands::test_provider,
            commands::discover_providers,
            commands::pin_model,
            commands::check_model,
            commands::ask,
            commands::cancel_model_call,
            commands::summarize,
            commands::extract,
            commands::proposals,
            commands::review_proposal,
            commands::accept_proposal,
            commands::discard_proposal,
            commands::undo_proposal,
            commands::auto_apply_list,
            commands::set_auto_apply,
            commands::save_list_view,
            commands::list_views,
        ])
        .run(tauri::generate_context!())
        .expect("error while running Countersign");
}
