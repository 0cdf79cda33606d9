//! Prompt components: versions frozen once published, and the active-version pointer.

use crate::clock::timestamp;
use crate::error::{Code, Error, Result};
use crate::metadata::permissions::AI_AUTHOR;
use crate::records::access::Session;
use rusqlite::params;
use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// One frozen version of a prompt component.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptVersion {
    pub prompt: String,
    pub version: i64,
    /// System-role text: instructions only, never data.
    pub instructions: String,
    /// Worked examples, sent as user/assistant turns: `[{"user": [[label|null, text]…], "answer": …}]`.
    pub examples: Value,
    /// Typed inputs: `{name: type}`.
    pub inputs: Value,
    /// The output contract, by schema reference (`schemas/…`).
    pub output_contract: String,
    pub published_at: String,
    pub published_by: String,
    pub active: bool,
    /// The instructions and examples in other languages, by language code
    /// (`{"de": {"instructions": "…", "examples": […]}}`), frozen with the version.
    pub variants: Value,
}

impl PromptVersion {
    /// This version as a reader in `language` gets it: the language's variant of the
    /// instructions and examples where the version has one, else the version itself. The
    /// trace keeps the version; the prompt text it stores is the variant's.
    pub fn in_language(mut self, language: crate::locale::Language) -> PromptVersion {
        let variant = &self.variants[language.code()];
        if let Some(text) = variant["instructions"].as_str() {
            self.instructions = text.to_string();
            if variant["examples"].is_array() {
                self.examples = variant["examples"].clone();
            }
        }
        self
    }

    /// The languages this version has a variant in, besides its own.
    pub fn languages(&self) -> Vec<String> {
        self.variants.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
    }
}

/// The stored examples of a prompt version as chat turns.
pub fn example_turns(examples: &Value) -> Vec<(Vec<crate::ai::provider::Part>, String)> {
    use crate::ai::provider::Part;
    examples
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let parts = e["user"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    let text = p[1].as_str().unwrap_or_default().to_string();
                    match p[0].as_str() {
                        Some(label) => Part::Untrusted { label: label.to_string(), content: text },
                        None => Part::Request(text),
                    }
                })
                .collect();
            (parts, e["answer"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

impl Session<'_> {
    pub fn prompt_versions(&self, prompt: &str) -> Result<Vec<PromptVersion>> {
        self.seed_capabilities()?;
        let mut stmt = self.ws.conn().prepare(
            "SELECT v.prompt, v.version, v.instructions, v.inputs, v.output_contract, v.published_at, v.published_by,
                    v.version = p.active_version, v.examples, v.variants
             FROM ai_prompt_version v JOIN ai_prompt p ON p.key = v.prompt WHERE v.prompt = ?1 ORDER BY v.version",
        )?;
        let rows = stmt
            .query_map([prompt], |r| {
                Ok(PromptVersion {
                    prompt: r.get(0)?,
                    version: r.get(1)?,
                    instructions: r.get(2)?,
                    inputs: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or(Value::Null),
                    output_contract: r.get(4)?,
                    published_at: r.get(5)?,
                    published_by: r.get(6)?,
                    active: r.get(7)?,
                    examples: serde_json::from_str(&r.get::<_, String>(8)?).unwrap_or(Value::Null),
                    variants: serde_json::from_str(&r.get::<_, String>(9)?).unwrap_or(Value::Null),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        if rows.is_empty() {
            return Err(Error::new(Code::NotFound, format!("no prompt `{prompt}`")));
        }
        Ok(rows)
    }

    /// The active version as this session's user reads it: in their locale's language where
    /// the version has a variant for it.
    pub fn active_prompt(&self, prompt: &str) -> Result<PromptVersion> {
        self.prompt_versions(prompt)?
            .into_iter()
            .find(|v| v.active)
            .map(|v| v.in_language(self.locale().language()))
            .ok_or_else(|| Error::internal(format!("prompt `{prompt}` has no active version")))
    }

    /// Publish a new version (frozen from now on). Needs `ai.author`. Does not activate it.
    pub fn publish_prompt(
        &self,
        prompt: &str,
        instructions: &str,
        examples: Option<&Value>,
        output_contract: &str,
    ) -> Result<i64> {
        self.publish_prompt_with(prompt, instructions, examples, output_contract, None)
    }

    /// Publish a new version with its language variants (absent: the latest version's).
    pub fn publish_prompt_with(
        &self,
        prompt: &str,
        instructions: &str,
        examples: Option<&Value>,
        output_contract: &str,
        variants: Option<&Value>,
    ) -> Result<i64> {
        self.require(AI_AUTHOR)?;
        let current = self.prompt_versions(prompt)?;
        let variants = variants.map_or_else(
            || current.last().map(|v| v.variants.to_string()).unwrap_or_else(|| "{}".into()),
            Value::to_string,
        );
        let inputs = current.last().map(|v| v.inputs.to_string()).unwrap_or_else(|| "{}".into());
        let examples = examples.map_or_else(
            || current.last().map(|v| v.examples.to_string()).unwrap_or_else(|| "[]".into()),
            Value::to_string,
        );
        let version = current.last().map_or(1, |v| v.version + 1);
        let tx = self.begin_write()?;
        tx.execute(
            "INSERT INTO ai_prompt_version (prompt, version, instructions, examples, inputs, output_contract, published_at, published_by, variants)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                prompt,
                version,
                instructions,
                examples,
                inputs,
                output_contract,
                timestamp(self.ws.clock.now()),
                self.user().key,
                variants
            ],
        )?;
        tx.commit()?;
        Ok(version)
    }

    /// Publish a new version made from `base`: its worked examples and output contract, with
    /// new `instructions` (the studio's "new version from this one"). Needs `ai.author`.
    pub fn publish_prompt_from(&self, prompt: &str, base: i64, instructions: &str) -> Result<i64> {
        let from =
            self.prompt_versions(prompt)?.into_iter().find(|v| v.version == base).ok_or_else(|| {
                Error::new(Code::NotFound, format!("prompt `{prompt}` has no version {base}"))
            })?;
        if instructions.trim().is_empty() {
            return Err(Error::on_field(
                Code::Required,
                "instructions",
                "a prompt version needs instructions",
            ));
        }
        self.publish_prompt_with(
            prompt,
            instructions,
            Some(&from.examples),
            &from.output_contract,
            Some(&from.variants),
        )
    }

    /// The word diff of two versions' instructions (`a` before, `b` after).
    pub fn prompt_diff(&self, prompt: &str, a: i64, b: i64) -> Result<Vec<crate::proposals::DiffPart>> {
        let versions = self.prompt_versions(prompt)?;
        let text =
            |n: i64| {
                versions.iter().find(|v| v.version == n).map(|v| v.instructions.clone()).ok_or_else(|| {
                    Error::new(Code::NotFound, format!("prompt `{prompt}` has no version {n}"))
                })
            };
        Ok(crate::proposals::word_diff(&text(a)?, &text(b)?))
    }

    /// Move the active pointer: the only way to change a prompt's behaviour. Needs `ai.author`.
    pub fn activate_prompt(&self, prompt: &str, version: i64) -> Result<()> {
        self.activate_prompt_with(prompt, version, None)
    }

    /// Move the active pointer through the eval gate: each capability that uses the prompt and
    /// has a model to run on needs a passing suite run against this version with its model, or
    /// `override_reason` from a user with `ai.manage`. All or nothing.
    pub fn activate_prompt_with(
        &self,
        prompt: &str,
        version: i64,
        override_reason: Option<&str>,
    ) -> Result<()> {
        self.require(AI_AUTHOR)?;
        if !self.prompt_versions(prompt)?.iter().any(|v| v.version == version) {
            return Err(Error::new(Code::NotFound, format!("prompt `{prompt}` has no version {version}")));
        }
        let users: Vec<(crate::ai::pipeline::CapabilityBinding, crate::ai::pins::ModelPin)> = self
            .capabilities()?
            .into_iter()
            .filter(|b| b.prompt == prompt)
            .map(|b| Ok::<_, Error>(self.effective_pin(&b)?.map(|p| (b, p))))
            .filter_map(|r| r.transpose())
            .collect::<Result<_>>()?;
        let tx = self.begin_write()?;
        for (binding, pin) in &users {
            let candidate = super::gate::Candidate {
                capability: &binding.key,
                prompt_version: version,
                pin,
                change: format!("activate prompt {prompt} version {version}"),
            };
            self.pass_gate(&tx, &candidate, override_reason)?;
        }
        tx.execute("UPDATE ai_prompt SET active_version = ?2 WHERE key = ?1", params![prompt, version])?;
        tx.commit()?;
        Ok(())
    }
}
