//! Query specs: generated specs run as a random user; a result never holds a field the user
//! may not read, and a bad spec is a typed error.

use super::*;

pub(super) struct Queries {
    pub(super) ws: Workspace,
    pub(super) vocab: Vocabulary,
    pub(super) readable: HashMap<String, HashMap<String, BTreeSet<String>>>,
}

impl Queries {
    pub(super) fn new(dir: &std::path::Path) -> Result<Queries, Error> {
        let ws = fresh_demo(dir, "query-specs")?;
        let readable = USERS.iter().map(|u| (u.to_string(), readable_fields(&ws, u))).collect();
        Ok(Queries { ws, vocab: Vocabulary::of(&demo_definition()), readable })
    }
}

impl crate::Target for Queries {
    fn name(&self) -> &str {
        "query-specs"
    }

    fn case(&mut self, rng: &mut Rng, case: u64) -> Outcome {
        let user = *rng.pick(USERS);
        let spec = self.vocab.spec(rng);
        keep_input(case, "json", spec.to_string().as_bytes());
        let session = match self.ws.session(user) {
            Ok(s) => s,
            Err(e) => return typed(e),
        };
        // As the product receives a spec: as text (the CLI, the app, the model's answer).
        let parsed = match QuerySpec::parse(&spec.to_string()) {
            Ok(s) => s,
            Err(e) => return typed(e),
        };
        match session.query(&parsed) {
            Ok(result) => {
                let readable = self.readable.get(user).and_then(|r| r.get(&result.object));
                for path in &result.fields {
                    let first = path.split('.').next().unwrap_or_default();
                    if !readable.is_some_and(|r| r.contains(first)) {
                        return Outcome::Finding("leak", format!("{user} got `{path}` of {}", result.object));
                    }
                }
                Outcome::Passed
            }
            Err(e) => typed(e),
        }
    }
}
