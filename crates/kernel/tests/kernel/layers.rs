//! The kernel's layers, held by reading its sources: a module names only modules of its own
//! layer or of the layers below it, and a capability names no other capability.
//!
//! Layers, lowest first (the list in `src/lib.rs`):
//! 0 foundation ([`FOUNDATION`]) · 1 `metadata` ([`METADATA`]) · 2 `records` · 3 `proposals` ·
//! 4 generic `ai` ([`GENERIC_AI`]) · 5 the capabilities (`ai/ask`, `ai/extract`, `ai/summarize`) ·
//! 6 the compositions, which run capabilities (`ai/mcp`, `ai/assistant`), and
//! `ai/capabilities.rs` where all register · 7 the top ([`TOP`]). Inside the layers with a list,
//! a module names only the modules before it, so no two modules of a layer name each other.

use std::path::{Path, PathBuf};

const CAPABILITIES: &[&str] = &["ask", "extract", "summarize", "judge"];

/// Capabilities that run other capabilities.
const COMPOSITIONS: &[&str] = &["mcp", "assistant"];

/// The foundation's modules in their order: each names only those before it (a migration takes
/// a backup; a backup knows nothing of the store's versions).
const FOUNDATION: &[&str] =
    &["error", "clock", "logging", "locale", "digest", "backup", "store", "recent", "ingest"];

/// The top layer's modules in their order: the eval runner makes its scratch workspaces itself
/// (`open` seeds the shipped suites, so it comes after `eval`), and the benchmarks open workspaces.
const TOP: &[&str] = &["eval", "open", "bench", "lib"];

/// A top-level module's place in `order`.
fn first_rank(order: &[&str], path: &[&str]) -> Option<usize> {
    order.iter().position(|k| Some(k) == path.first())
}

/// The metadata layer's modules in their order: each names only those before it.
const METADATA: &[&str] =
    &["permissions", "types", "value", "condition", "limits", "definition", "diff", "catalog"];

/// A module's place in the order of its layer, if the layer has one.
type Rank = fn(&[&str]) -> Option<usize>;

/// A metadata module's place in [`METADATA`] (the layer's `mod.rs` comes first).
fn metadata_rank(path: &[&str]) -> Option<usize> {
    if path.first() != Some(&"metadata") {
        return None;
    }
    Some(path.get(1).and_then(|m| METADATA.iter().position(|k| k == m)).unwrap_or(0))
}

/// The generic AI layer's modules in their order: each names only those before it (the model
/// providers know nothing of pins, pins nothing of the runtime that serves a model, and the
/// pipeline nothing of the runtime).
const GENERIC_AI: &[&str] =
    &["provider", "secrets", "pins", "contract", "dates", "projection", "tools", "pipeline", "runtime"];

/// A generic AI module's place in [`GENERIC_AI`]; `None` outside it (`ai/mod.rs` included).
fn generic_ai_rank(path: &[&str]) -> Option<usize> {
    if path.first() != Some(&"ai") {
        return None;
    }
    GENERIC_AI.iter().position(|k| Some(k) == path.get(1))
}

/// The layer of a module path (`["ai", "pipeline", "trace"]`), and the capability it belongs
/// to, if any. `None` for a path that names no module of the kernel.
fn layer(path: &[&str]) -> Option<(u8, Option<&'static str>)> {
    let first = *path.first()?;
    Some(match first {
        m if FOUNDATION.contains(&m) => (0, None),
        "metadata" => (1, None),
        "records" => (2, None),
        "proposals" => (3, None),
        "ai" => match path.get(1).copied() {
            Some("capabilities") => (6, None),
            Some(c) if COMPOSITIONS.contains(&c) => (6, None),
            Some(c) => match CAPABILITIES.iter().find(|k| **k == c) {
                Some(k) => (5, Some(*k)),
                None => (4, None),
            },
            None => (4, None),
        },
        m if TOP.contains(&m) => (7, None),
        _ => return None,
    })
}

/// A source file's module path: `src/ai/pipeline/mod.rs` → `["ai", "pipeline"]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every path into the crate a file names outside comments (`crate::a::b…`, and `super::…`
/// resolved against the file's module `module`), with its line number.
fn crate_paths(text: &str, module: &[String]) -> Vec<(usize, Vec<String>)> {
    let mut out = vec![];
    let mut in_tests = false;
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        // An inline module (`mod tests {`): from here on `super` means the file's module.
        let t = code.trim_start().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
        in_tests |= t.starts_with("mod ") && t.trim_end().ends_with('{');
        for (prefix, base) in [
            ("crate::", vec![]),
            // In an inline module, `super` is the file's module; elsewhere its parent.
            (
                "super::",
                if in_tests { module.to_vec() } else { module[..module.len().saturating_sub(1)].to_vec() },
            ),
        ] {
            let mut rest = code;
            while let Some(at) = rest.find(prefix) {
                let before = rest[..at].chars().last();
                rest = &rest[at + prefix.len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue; // `countersign_crate::…` or `super::super::…` (the first one counts)
                }
                let mut path = base.clone();
                let mut named = false;
                for seg in rest.split("::") {
                    if prefix == "super::" && seg == "super" && !named {
                        path.pop();
                        continue;
                    }
                    let name: String = seg.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    let whole = name.len() == seg.len();
                    if !name.is_empty() {
                        path.push(name);
                        named = true;
                    }
                    if !whole || !named {
                        break; // the path ended inside this segment
                    }
                }
                if named {
                    out.push((n + 1, path));
                }
            }
        }
    }
    out
}

/// The violations in the kernel's sources.
fn violations(src: &Path) -> Vec<String> {
    let mut files = vec![];
    sources(src, &mut files);
    files.sort();
    let mut found = vec![];
    for file in &files {
        let module = module_of(src, file);
        let module_refs: Vec<&str> = module.iter().map(String::as_str).collect();
        let Some((own, own_cap)) = layer(&module_refs) else {
            found.push(format!("{}: a module outside every layer; add it to the list", file.display()));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (line, path) in crate_paths(&text, &module) {
            let refs: Vec<&str> = path.iter().map(String::as_str).collect();
            let Some((theirs, their_cap)) = layer(&refs) else {
                if own < 6 {
                    found.push(format!(
                        "{}:{line}: names `crate::{}`; below the top, name the module an item lives in",
                        file.display(),
                        path.join("::")
                    ));
                }
                continue;
            };
            // Inside a layer with an order of its own, a module names only those before it.
            let ordered: [(Rank, &[&str], &str); 4] = [
                (|p| first_rank(FOUNDATION, p), FOUNDATION, "foundation"),
                (metadata_rank, METADATA, "metadata"),
                (generic_ai_rank, GENERIC_AI, "generic AI"),
                (|p| first_rank(TOP, p), TOP, "top"),
            ];
            for (rank, order, what) in ordered {
                if let (Some(mine), Some(named)) = (rank(&module_refs), rank(&refs)) {
                    if named > mine {
                        found.push(format!(
                            "{}:{line}: names `crate::{}`; the {what} modules go {} and name only those before them",
                            file.display(),
                            path.join("::"),
                            order.join(" → ")
                        ));
                    }
                }
            }
            if theirs > own {
                found.push(format!(
                    "{}:{line}: layer {own} names `crate::{}` of layer {theirs} above it",
                    file.display(),
                    path.join("::")
                ));
            } else if their_cap.is_some()
                && their_cap != own_cap
                && own < 6
                && module_refs.get(1) != Some(&"capabilities")
            {
                found.push(format!(
                    "{}:{line}: names the capability `crate::{}`; capabilities share only what lies below them",
                    file.display(),
                    path.join("::")
                ));
            }
        }
    }
    found
}

#[test]
fn no_layer_names_a_layer_above_it_and_no_capability_names_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(found.is_empty(), "{} import(s) against the layers:\n{}", found.len(), found.join("\n"));
}

/// The check itself: it finds an upward import, a capability naming another, a root item
/// named below the top, a module naming one after it in its layer's order (foundation,
/// metadata, generic AI, top), and ignores comments.
#[test]
fn the_layer_check_finds_what_it_should() {
    let dir = std::env::temp_dir().join(format!("countersign-layers-{}", std::process::id()));
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("records/save.rs", "use crate::metadata::value::Scalar;\nuse crate::proposals::Proposal;\n");
    write("ai/pipeline/mod.rs", "// crate::ai::ask is only mentioned\nfn f() { crate::ai::ask::go() }\n");
    write("ai/extract/mod.rs", "use crate::ai::ask::Candidate;\nuse crate::ai::pipeline::Invocation;\n");
    write("metadata/value.rs", "fn f() -> crate::Session {}\nuse crate::metadata::condition::Op;\n");
    write("ai/capabilities.rs", "pub use crate::ai::ask::SPEC;\n");
    write(
        "ai/summarize/mod.rs",
        "use super::ask::Candidate;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
    );
    write(
        "ai/provider.rs",
        "fn f() { crate::ai::runtime::built_in(); }\nuse crate::ai::secrets::SecretRef;\n",
    );
    write("backup.rs", "fn f() -> i64 { crate::store::schema_version() }\n");
    write("eval/suites/runner.rs", "use crate::open::create;\nuse crate::store::immediate;\n");
    let found = violations(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 10, "{found:#?}");
    assert!(found[0].contains("ai/extract/mod.rs:1") && found[0].contains("capability"), "{found:#?}");
    assert!(found[1].contains("ai/pipeline/mod.rs:2") && found[1].contains("layer 4"), "{found:#?}");
    assert!(
        found[2].contains("ai/provider.rs:1") && found[2].contains("generic AI modules go"),
        "{found:#?}"
    );
    assert!(found[3].contains("ai/provider.rs:2") && found[3].contains("ai::secrets"), "{found:#?}");
    assert!(
        found[4].contains("ai/summarize/mod.rs:1") && found[4].contains("ai::ask::Candidate"),
        "{found:#?}"
    );
    assert!(found[5].contains("backup.rs:1") && found[5].contains("foundation modules go"), "{found:#?}");
    assert!(
        found[6].contains("eval/suites/runner.rs:1") && found[6].contains("top modules go"),
        "{found:#?}"
    );
    assert!(found[7].contains("metadata/value.rs:1"), "{found:#?}");
    assert!(found[8].contains("metadata/value.rs:2") && found[8].contains("types → value"), "{found:#?}");
    assert!(found[9].contains("records/save.rs:2") && found[9].contains("layer 3"), "{found:#?}");
}

/// The model loop exists once: in the kernel only `pipeline::drive` calls the model (the
/// provider layer's `chat_with_retry`), and in the UI only the one model-call helper opens a
/// progress channel.
#[test]
fn one_model_loop_in_rust_and_one_in_the_ui() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut rust = vec![];
    for dir in ["crates/kernel/src", "crates/cli/src", "src-tauri/src", "crates/fuzz/src"] {
        sources(&root.join(dir), &mut rust);
    }
    rust.sort();
    let calling: Vec<String> = rust
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("chat_with_retry("))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert_eq!(
        calling,
        ["crates/kernel/src/ai/pipeline/drive.rs", "crates/kernel/src/ai/provider/retry.rs"],
        "the model is called from drive only"
    );
    let mut ui = vec![];
    ui_sources(&root.join("ui/src"), &mut ui);
    ui.sort();
    let channels: Vec<String> = ui
        .iter()
        .filter(|f| !f.to_string_lossy().contains(".test."))
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("new Channel"))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert_eq!(channels, ["ui/src/lib/modelCall.svelte.ts"], "model calls go through ModelCall");
}

fn ui_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            ui_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "ts" || e == "svelte") {
            out.push(path);
        }
    }
}

/// Time and ids are injected: outside `clock.rs` (where `SystemClock` and `UlidIds` live) and
/// the benchmark's setup, no kernel source reads the wall clock or makes a random id itself.
/// Elapsed times use the monotonic `Instant`, which is allowed.
#[test]
fn only_the_clock_module_reads_the_wall_clock_or_makes_ids() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![];
    sources(&src, &mut files);
    files.sort();
    let forbidden = ["Utc::now(", "Local::now(", "SystemTime::now(", "Ulid::new(", "rand::"];
    let mut found = vec![];
    for file in &files {
        let name = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if name == "clock.rs" || name == "bench.rs" {
            continue;
        }
        for (n, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if let Some(f) = forbidden.iter().find(|f| code.contains(*f)) {
                found.push(format!("{name}:{}: {f}", n + 1));
            }
        }
    }
    assert!(found.is_empty(), "use the workspace's Clock and IdSource instead:\n{}", found.join("\n"));
}

/// Code lines (comments left out) of the Rust files under `dir` that contain `needle`, as
/// `path:line` relative to `dir`, but for the files and folders `allowed` names.
fn mentions(dir: &Path, needle: &str, allowed: &[&str]) -> Vec<String> {
    let mut files = vec![];
    sources(dir, &mut files);
    files.sort();
    let mut found = vec![];
    for file in files {
        let rel = file.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
        if allowed.iter().any(|a| rel == *a || (a.ends_with('/') && rel.starts_with(a))) {
            continue;
        }
        for (n, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            if line.split("//").next().unwrap_or("").contains(needle) {
                found.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    found
}

/// Where a field may reach a model is decided in one place: `Session::ai_field_level` (the
/// user's level, `none` for an `aiVisibility: never` field). Only the metadata (which defines
/// the setting) and the access layer read `aiVisibility`; a planted reader elsewhere is found.
#[test]
fn the_ai_visibility_rule_is_read_in_one_place() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed = ["metadata/", "records/access.rs"];
    let found = mentions(&src, ".ai_visibility", &allowed);
    assert!(found.is_empty(), "read `aiVisibility` through Session::ai_field_level:\n{}", found.join("\n"));

    let dir = std::env::temp_dir().join(format!("countersign-visibility-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("ai")).unwrap();
    std::fs::write(dir.join("ai/tools.rs"), "// f.ai_visibility in a comment\nif f.ai_visibility == x {}\n")
        .unwrap();
    let planted = mentions(&dir, ".ai_visibility", &allowed);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(planted, ["ai/tools.rs:2"]);
}

/// Permission keys are named by their constants (`metadata::permissions`), never written out:
/// a typo in a raw string would be a permission nobody has.
#[test]
fn permission_keys_are_named_by_their_constants() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = vec![];
    for key in ["ai.use", "ai.author", "ai.approve", "ai.manage", "metadata.deploy"] {
        for quoted in [format!("\"{key}\""), format!("'{key}'")] {
            found.extend(mentions(&src, &quoted, &["metadata/permissions.rs"]));
        }
    }
    assert!(found.is_empty(), "name the constant of metadata::permissions:\n{}", found.join("\n"));
}
