fn main() {
    println!("cargo:rerun-if-changed=src-tauri/capabilities");
    println!("cargo:rerun-if-changed=tauri.conf.json");
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("./src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(countersign_commands()));
    tauri_build::try_build(attributes).expect("tauri build script");
}

/// The app's own commands, placed under the capability ACL (see src-tauri/capabilities).
fn countersign_commands() -> &'static [&'static str] {
    &[
        "app_state",
        "open_workspace",
        "create_workspace",
        "switch_user",
        "describe_object",
        "query_records",
        "get_record",
        "save_record",
        "record_history",
        "import_csv",
        "export_csv",
        "provider_settings",
        "save_provider",
        "remove_provider",
        "test_provider",
        "discover_providers",
        "pin_model",
        "check_model",
        "ask",
        "cancel_model_call",
        "summarize",
        "extract",
        "proposals",
        "review_proposal",
        "accept_proposal",
        "discard_proposal",
        "undo_proposal",
        "auto_apply_list",
        "set_auto_apply",
        "save_list_view",
        "list_views",
    ]
}
