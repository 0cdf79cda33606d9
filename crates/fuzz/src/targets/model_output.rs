//! Model output: Ask, Extract and Summarize fed mutated model replies; none writes to records,
//! no trace row is left running, and every error is typed.

use super::*;

pub(super) struct Capability {
    pub(super) name: String,
    pub(super) dir: std::path::PathBuf,
    pub(super) ws: Workspace,
    /// Moved a minute on between cases, so requests-per-minute limits do not refuse most of
    /// them before the model's answer is reached.
    pub(super) clock: Arc<FixedClock>,
    pub(super) model: ModelChoice,
    pub(super) documents: Vec<Document>,
    pub(super) ids: HashMap<String, Vec<String>>,
    pub(super) words: Vec<String>,
    pub(super) cases_on_ws: u64,
}

pub(super) const OBJECTS: &[&str] = &["account", "contact", "opportunity", "invoice", "invoice_line", "note"];

impl Capability {
    pub(super) fn new(name: &str, dir: &std::path::Path) -> Result<Capability, Error> {
        let clock = Arc::new(FixedClock::at("2026-11-29T10:00:00Z"));
        let ws = fresh_demo_with(dir, name, Self::options(&clock))?;
        let model = ModelChoice::unstored(
            "http://127.0.0.1:9/v1",
            "fuzz-model",
            "sha256:fuzz".into(),
            "fuzz".into(),
            json!({}),
        );
        let documents = SEED_DOCUMENTS
            .iter()
            .filter(|(n, _)| n.starts_with("INV-"))
            .filter_map(|(n, b)| ingest(n, b.to_vec(), &Limits::default()).ok())
            .collect();
        let mut ids = HashMap::new();
        for o in OBJECTS {
            let table = countersign_kernel::records::save::table_of(o);
            let mut stmt = ws
                .raw_connection()
                .prepare(&format!("SELECT id FROM {table} LIMIT 200"))
                .map_err(|e| Error::internal(e.to_string()))?;
            let list: Vec<String> = stmt
                .query_map([], |r| r.get(0))
                .map_err(|e| Error::internal(e.to_string()))?
                .flatten()
                .collect();
            ids.insert(o.to_string(), list);
        }
        let words = Vocabulary::of(&demo_definition()).words;
        Ok(Capability {
            name: name.into(),
            dir: dir.to_path_buf(),
            ws,
            model,
            documents,
            ids,
            words,
            clock,
            cases_on_ws: 0,
        })
    }

    pub(super) fn options(clock: &Arc<FixedClock>) -> WorkspaceOptions {
        WorkspaceOptions { clock: clock.clone(), ..WorkspaceOptions::default() }
    }

    /// A model's failure to keep the contract, or the endpoint's, is a typed refusal here:
    /// only a storage or internal error is a finding.
    pub(super) fn typed_model(e: Error) -> Outcome {
        let code = e.code.as_str();
        if code == "contract" || code.starts_with("integration.") {
            Outcome::Refused(e)
        } else {
            typed(e)
        }
    }

    pub(super) fn response(
        rng: &mut Rng,
        schema: Option<&Value>,
        vocab: &[String],
    ) -> countersign_kernel::Result<ChatResponse> {
        if rng.chance(0.03) {
            return Err(Error::new(
                *rng.pick(&[
                    Code::IntegrationTimeout,
                    Code::IntegrationMalformed,
                    Code::IntegrationTruncated,
                    Code::ContextLength,
                ]),
                "the fuzzer's endpoint failed",
            ));
        }
        let value = gen::from_schema(rng, schema.unwrap_or(&json!({})), vocab, 8);
        Ok(ChatResponse {
            content: gen::model_text(rng, &value),
            usage: Default::default(),
            finish_reason: Some(if rng.chance(0.05) { "length" } else { "stop" }.into()),
            timings: None,
            first_token_ms: None,
            total_ms: 1.0,
        })
    }

    pub(super) fn vocab(prompt: &countersign_kernel::ai::provider::Prompt, words: &[String]) -> Vec<String> {
        let texts: Vec<&str> = prompt
            .parts
            .iter()
            .map(|p| match p {
                Part::Request(t) => t.as_str(),
                Part::Untrusted { content, .. } => content.as_str(),
            })
            .collect();
        let mut v = gen::vocabulary(&texts);
        v.extend(words.iter().take(200).cloned());
        v
    }

    pub(super) fn ask(&self, rng: &mut Rng, s: &Session<'_>) -> Result<(), Outcome> {
        let question = gen::phrase(rng, &self.words);
        let answer = self.scripted(rng, s, &mut Ask { question }, 3)?;
        let Some(result) = answer.result else { return Ok(()) };
        let readable = readable_fields(&self.ws, &s.user().key);
        let fields = readable.get(&result.object);
        for path in &result.fields {
            let first = path.split('.').next().unwrap_or_default();
            if !fields.is_some_and(|f| f.contains(first)) {
                return Err(Outcome::Finding("leak", format!("Ask gave `{path}` of {}", result.object)));
            }
        }
        Ok(())
    }

    /// A capability run with generated answers in place of the model's, through the same
    /// `begin` and `advance` the driver calls; more than `calls` model calls is a finding.
    pub(super) fn scripted<C: drive::Capability>(
        &self,
        rng: &mut Rng,
        s: &Session<'_>,
        capability: &mut C,
        calls: usize,
    ) -> Result<C::Answer, Outcome> {
        let mut run = capability.begin(s, self.model.clone()).map_err(Self::typed_model)?;
        for _ in 0..calls {
            let vocab = Self::vocab(&run.request.prompt, &self.words);
            let resp = Self::response(rng, run.request.schema.as_ref().map(|(_, s)| s), &vocab);
            // The step the driver takes with a response.
            match drive::step(s, capability, &mut run, resp).map_err(Self::typed_model)? {
                Step::Call => {}
                Step::Done(answer) => return Ok(answer),
            }
        }
        Err(Outcome::Finding("unbounded", format!("{} made more than {calls} model calls", C::KEY)))
    }

    pub(super) fn extract(&self, rng: &mut Rng, s: &Session<'_>) -> Result<(), Outcome> {
        let doc = if rng.chance(0.8) && !self.documents.is_empty() {
            rng.pick(&self.documents).clone()
        } else {
            let text = gen::phrase(rng, &self.words);
            ingest("fuzz.txt", text.into_bytes(), &Limits::default()).map_err(typed)?
        };
        let object = *rng.pick(OBJECTS);
        let record = if rng.chance(0.3) {
            self.ids.get(object).filter(|i| !i.is_empty()).map(|i| rng.pick(i).clone())
        } else {
            None
        };
        let mut extract = Extract { document: doc, object: object.to_string(), record };
        let answer = self.scripted(rng, s, &mut extract, 3)?;
        let p = &answer.proposal;
        let view = s.describe_object(&p.object).map_err(Self::typed_model)?;
        let catalog = self.ws.catalog().map_err(Self::typed_model)?;
        let meta = catalog.object_meta(&p.object).map_err(Self::typed_model)?;
        for f in &p.fields {
            let editable = view.fields.iter().any(|v| v.key == f.field && v.access == FieldLevel::Edit);
            if !editable {
                return Err(Outcome::Finding(
                    "invalid_write",
                    format!("proposal {} sets `{}`, which the user cannot edit", p.id, f.field),
                ));
            }
            let def = meta.fields().iter().find(|d| d.key == f.field);
            if let (Some(def), false) = (def, f.value.is_null()) {
                if def.field_type != FieldType::Lookup {
                    if let Err(e) = value::coerce(def, &f.value) {
                        return Err(Outcome::Finding(
                            "invalid_write",
                            format!(
                                "proposal {} sets {} = {}: {e}",
                                p.id,
                                f.field,
                                clip(&f.value.to_string())
                            ),
                        ));
                    }
                }
            }
        }
        s.review_proposal(&p.id).map_err(Self::typed_model)?;
        Ok(())
    }

    pub(super) fn summarize(&self, rng: &mut Rng, s: &Session<'_>) -> Result<(), Outcome> {
        use countersign_kernel::ai::summarize::recheck;
        let object = *rng.pick(OBJECTS);
        let id = self
            .ids
            .get(object)
            .filter(|i| !i.is_empty())
            .map(|i| rng.pick(i).clone())
            .unwrap_or_else(|| gen::nasty(rng));
        let answer = self.scripted(rng, s, &mut Summarize::new(object, &id), 6)?;
        for sentence in &answer.sentences {
            if let Some(c) = value::unsafe_char(&sentence.text, false) {
                return Err(Outcome::Finding(
                    "unsafe_text",
                    format!("a verified sentence holds U+{:04X}", c as u32),
                ));
            }
        }
        if let Err(e) = recheck(s, &answer) {
            return Err(Outcome::Finding(
                "unverified",
                format!("an accepted summary fails the re-check: {}", clip(&e.message)),
            ));
        }
        Ok(())
    }
}

impl crate::Target for Capability {
    fn name(&self) -> &str {
        &self.name
    }

    fn case(&mut self, rng: &mut Rng, _case: u64) -> Outcome {
        self.cases_on_ws += 1;
        self.clock.advance(chrono::Duration::seconds(61));
        if self.cases_on_ws > 2000 {
            match fresh_demo_with(&self.dir, &self.name, Self::options(&self.clock)) {
                Ok(ws) => self.ws = ws,
                Err(e) => return Outcome::Finding("setup", e.message),
            }
            self.cases_on_ws = 0;
        }
        let history = history_len(&self.ws);
        // Mostly users who may use AI; dan (a viewer) and eve less often.
        let user = *rng.pick(&["ava", "ava", "ben", "ben", "cara", "cara", "dan", "eve"]);
        let outcome = match self.ws.session(user) {
            Err(e) => typed(e),
            Ok(s) => {
                let r = match self.name.as_str() {
                    "ask" => self.ask(rng, &s),
                    "extract" => self.extract(rng, &s),
                    _ => self.summarize(rng, &s),
                };
                match r {
                    Ok(()) => Outcome::Passed,
                    Err(o) => o,
                }
            }
        };
        if history_len(&self.ws) != history {
            return Outcome::Finding("invalid_write", format!("{} wrote to records", self.name));
        }
        let running =
            scalar(self.ws.raw_connection(), "SELECT count(*) FROM ai_trace WHERE outcome = 'running'");
        if running != 0 {
            return Outcome::Finding(
                "trace_left_running",
                format!("{running} trace rows still running after the case"),
            );
        }
        outcome
    }
}
