//! An empty Tauri window: the floor Countersign's start-up time and memory are measured
//! against (scripts/footprint.sh).

fn main() {
    tauri::Builder::default().run(tauri::generate_context!()).expect("the minimal app runs");
}
