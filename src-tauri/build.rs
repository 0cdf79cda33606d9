include!("src/command_list.rs");

/// The command names as strings.
macro_rules! names {
    ($($command:ident),* $(,)?) => {
        &[$(stringify!($command)),*]
    };
}

/// The app's own commands, placed under the capability ACL (see src-tauri/capabilities).
const COMMANDS: &[&str] = with_app_commands!(names);

fn main() {
    println!("cargo:rerun-if-changed=src-tauri/capabilities");
    println!("cargo:rerun-if-changed=src-tauri/src/command_list.rs");
    println!("cargo:rerun-if-changed=tauri.conf.json");
    check_capability_file();
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("./src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    tauri_build::try_build(attributes).expect("tauri build script");
}

/// The window's capability allows exactly the listed commands (`allow-<name with dashes>`),
/// besides Tauri's `core:default`.
fn check_capability_file() {
    let text = std::fs::read_to_string("src-tauri/capabilities/default.json").expect("capability file");
    let mut allowed: Vec<String> =
        text.split('"').filter_map(|s| s.strip_prefix("allow-")).map(|s| s.replace('-', "_")).collect();
    let mut listed: Vec<String> = COMMANDS.iter().map(|c| c.to_string()).collect();
    allowed.sort();
    listed.sort();
    assert_eq!(
        allowed, listed,
        "src-tauri/capabilities/default.json must allow exactly the commands of src-tauri/src/command_list.rs"
    );
}
