//! Where models come from: providers (servers on this machine), model pins (one exact model on
//! one provider, by its fingerprint) and API keys in the OS keyring.

use crate::ai::runtime;
use crate::output::to_json;
use clap::Subcommand;
use countersign_kernel::ai::pins;
use countersign_kernel::ai::provider::{ProviderKind, Secret, StructuredForm};
use countersign_kernel::ai::secrets::{self, SecretRef};
use countersign_kernel::{Code, Error, Result, Session};
use serde_json::{json, Value};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum ProviderCommand {
    /// Add (or replace) a provider.
    Add {
        key: String,
        #[arg(long, value_parser = ["openai", "ollama"])]
        kind: String,
        /// Base URL: http://127.0.0.1:8080/v1 (OpenAI-compatible) or http://127.0.0.1:11434 (Ollama).
        #[arg(long)]
        url: String,
        /// secret://countersign/NAME, set with `secret set`.
        #[arg(long)]
        key_ref: Option<String>,
        /// How structured output is sent (servers differ).
        #[arg(long, value_parser = ["json_schema", "json_object_schema", "ollama_format"])]
        structured: Option<String>,
    },
    List,
    /// Server kind, models, digests and round-trip time.
    Test {
        key: String,
    },
    Remove {
        key: String,
    },
    /// Probe the usual local ports (11434, 8080, 1234, 8000) on 127.0.0.1.
    Discover,
}

#[derive(Subcommand)]
pub enum ModelCommand {
    /// Pin a model by its content fingerprint (floating names like `latest` are refused).
    Pin {
        key: String,
        #[arg(long)]
        provider: String,
        #[arg(long)]
        model: String,
        /// The local GGUF file the server loads: its sha256 becomes the pin's digest.
        #[arg(long)]
        gguf: Option<PathBuf>,
        #[arg(long, default_value_t = 0.0)]
        temperature: f64,
        #[arg(long, default_value_t = 1024)]
        max_output_tokens: u32,
        /// Price per million input tokens.
        #[arg(long, default_value_t = 0.0)]
        input_price: f64,
        /// Price per million output tokens.
        #[arg(long, default_value_t = 0.0)]
        output_price: f64,
        #[arg(long, default_value = "USD")]
        currency: String,
    },
    List,
    /// The models recommended for the built-in runtime: size, sha256, the memory each needs,
    /// whether it is installed and fits this machine.
    Catalog,
    /// Install a model for the built-in runtime: a catalog model (fetched, resumable, checked
    /// against its sha256) or a GGUF file of your own.
    Install {
        /// A catalog model's name.
        #[arg(required_unless_present = "file", conflicts_with = "file")]
        name: Option<String>,
        #[arg(long)]
        file: Option<PathBuf>,
        /// Fetch from this address — a folder (a mirror) holding the catalog's files — instead
        /// of the catalog's own; as Settings' "Download from".
        #[arg(long, conflicts_with = "file")]
        from: Option<String>,
    },
    /// Check that the server still serves the pinned model (drift refuses calls until repinned).
    Check {
        key: String,
    },
}

#[derive(Subcommand)]
pub enum SecretCommand {
    /// Store the key read from standard input under REF (secret://countersign/NAME).
    Set {
        reference: String,
    },
    Delete {
        reference: String,
    },
}

pub fn provider(session: &Session<'_>, command: ProviderCommand) -> Result<Value> {
    match command {
        ProviderCommand::Add { key, kind, url, key_ref, structured } => {
            let kind = if kind == "ollama" { ProviderKind::Ollama } else { ProviderKind::OpenaiCompatible };
            let cfg = pins::ProviderConfig {
                key,
                kind,
                base_url: url,
                credential_ref: key_ref,
                structured_form: structured_form(kind, structured.as_deref()),
                region: "this machine".into(),
                retention: "none".into(),
            };
            session.add_provider(&cfg)?;
            to_json(&cfg)
        }
        ProviderCommand::List => Ok(json!({ "providers": to_json(&session.providers()?)? })),
        ProviderCommand::Test { key } => {
            let ep = session.endpoint(&key)?;
            to_json(&runtime()?.block_on(pins::test_connection(&ep))?)
        }
        ProviderCommand::Remove { key } => {
            session.remove_provider(&key)?;
            Ok(json!({ "removed": key }))
        }
        ProviderCommand::Discover => {
            Ok(json!({ "servers": to_json(&runtime()?.block_on(pins::discover()))? }))
        }
    }
}

/// `--structured`, or the form the kind of server takes by default.
fn structured_form(kind: ProviderKind, structured: Option<&str>) -> StructuredForm {
    match structured {
        Some("json_object_schema") => StructuredForm::JsonObjectSchema,
        Some("ollama_format") => StructuredForm::OllamaFormat,
        Some(_) => StructuredForm::JsonSchema,
        None if kind == ProviderKind::Ollama => StructuredForm::OllamaFormat,
        None => StructuredForm::JsonSchema,
    }
}

impl ModelCommand {
    /// The built-in runtime's model files: no workspace needed.
    pub fn on_model_files(&self) -> bool {
        matches!(self, ModelCommand::Catalog | ModelCommand::Install { .. })
    }
}

pub fn model(session: &Session<'_>, command: ModelCommand) -> Result<Value> {
    match command {
        ModelCommand::Pin {
            key,
            provider,
            model,
            gguf,
            temperature,
            max_output_tokens,
            input_price,
            output_price,
            currency,
        } => {
            let settings = pins::PinSettings {
                temperature,
                max_output_tokens,
                input_price_per_mtok: input_price,
                output_price_per_mtok: output_price,
                currency,
            };
            let weights = gguf.as_deref().map_or(pins::Weights::Served, pins::Weights::File);
            let pin = pins::pin_served_model(session, &key, &provider, &model, weights, &settings);
            to_json(&runtime()?.block_on(pin)?)
        }
        ModelCommand::List => Ok(json!({ "models": to_json(&session.model_pins()?)? })),
        files @ (ModelCommand::Catalog | ModelCommand::Install { .. }) => crate::runtime::model_files(files),
        ModelCommand::Check { key } => {
            let pin = runtime()?.block_on(pins::check_pin(session, &key))?;
            Ok(json!({ "model": key, "matches_pin": true, "digest": pin.digest }))
        }
    }
}

/// Keys live in the OS keyring, never in the workspace; no workspace is opened.
pub fn secret(command: SecretCommand) -> Result<Value> {
    match command {
        SecretCommand::Set { reference } => {
            let r = SecretRef::parse(&reference)?;
            let mut key = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut key)?;
            let key = key.trim_end_matches(['\r', '\n']);
            if key.is_empty() {
                return Err(Error::new(Code::InvalidValue, "no key on standard input"));
            }
            secrets::set(&r, &Secret::new(key))?;
            Ok(json!({ "stored": r.uri() }))
        }
        SecretCommand::Delete { reference } => {
            let r = SecretRef::parse(&reference)?;
            secrets::delete(&r)?;
            Ok(json!({ "deleted": r.uri() }))
        }
    }
}
