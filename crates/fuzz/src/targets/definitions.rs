//! Definitions: mutated workspace definitions deployed as a random user; a deployed one must
//! reopen, a refused one must leave the generation where it was, and every error is typed.

use super::*;

pub(super) struct Definitions {
    pub(super) dir: std::path::PathBuf,
    pub(super) ws: Workspace,
    pub(super) base: Value,
    pub(super) words: Vec<String>,
}

impl Definitions {
    pub(super) fn new(dir: &std::path::Path) -> Result<Definitions, Error> {
        let mut base = serde_json::to_value(demo_definition()).map_err(|e| Error::internal(e.to_string()))?;
        base.as_object_mut().map(|m| m.remove("data"));
        let words = Vocabulary::of(&demo_definition()).words;
        let ws = Self::fresh(dir, &base)?;
        Ok(Definitions { dir: dir.to_path_buf(), ws, base, words })
    }

    /// A workspace holding the demo definition and no records.
    pub(super) fn fresh(dir: &std::path::Path, base: &Value) -> Result<Workspace, Error> {
        let path = dir.join("definitions.countersign");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let mut ws = Workspace::create(&path, WorkspaceOptions::default())?;
        ws.deploy(&WorkspaceDefinition::from_json(base)?, &DeployOptions::default())?;
        Ok(ws)
    }

    pub(super) fn definition(&self, rng: &mut Rng) -> Value {
        let mut def = self.base.clone();
        for _ in 0..1 + rng.below(3) {
            gen::mutate_json(rng, &mut def, &self.words);
        }
        if rng.chance(0.02) {
            // An object with far more fields than SQLite has columns.
            let n = 1000 + rng.below(3000);
            let fields = def.get_mut("objects").and_then(|o| o.get_mut(0)).and_then(|o| o.get_mut("fields"));
            if let Some(fields) = fields.and_then(Value::as_array_mut) {
                for i in 0..n {
                    fields.push(json!({"key": format!("f{i}"), "label": format!("F{i}"), "type": "text"}));
                }
            }
        }
        def
    }
}

impl crate::Target for Definitions {
    fn name(&self) -> &str {
        "definitions"
    }

    fn case(&mut self, rng: &mut Rng, case: u64) -> Outcome {
        let candidate = self.definition(rng);
        keep_input(case, "json", candidate.to_string().as_bytes());
        let def = match WorkspaceDefinition::from_json(&candidate) {
            Ok(d) => d,
            Err(e) => return typed(e),
        };
        let generation = self.ws.generation();
        let opts = DeployOptions { force: rng.chance(0.3), user: Some((*rng.pick(USERS)).to_string()) };
        match self.ws.deploy(&def, &opts) {
            Ok(_) => {
                // The deployed workspace must open and describe itself for each of its users.
                let users: Vec<String> = def.users.iter().map(|u| u.key.clone()).collect();
                for u in users.iter().take(5) {
                    if let Ok(s) = self.ws.session(u) {
                        let _ = s.describe_workspace();
                    }
                }
                let reopened = countersign_kernel::open::open(self.ws.path(), WorkspaceOptions::default());
                if let Err(e) = reopened {
                    return Outcome::Finding(
                        "unopenable",
                        format!("{}: {}", e.code.as_str(), clip(&e.message)),
                    );
                }
                match Self::fresh(&self.dir, &self.base) {
                    Ok(ws) => self.ws = ws,
                    Err(e) => return Outcome::Finding("setup", e.message),
                }
                Outcome::Passed
            }
            Err(e) => {
                if self.ws.generation() != generation {
                    return Outcome::Finding(
                        "half_deploy",
                        format!("generation moved on a refused deploy: {e}"),
                    );
                }
                typed(e)
            }
        }
    }
}
