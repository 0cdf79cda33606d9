//! Credentials live only in the OS keyring (Secret Service on Linux, Keychain on macOS, the
//! Credential Manager on Windows). The workspace stores a reference `secret://countersign/<name>`,
//! never the secret. The keyring crate's platform stores are chosen explicitly (see Cargo.toml),
//! so no platform silently falls back to an in-memory store; when no store is reachable the error
//! says so (`secret.store_unavailable`).

use crate::ai::provider::Secret;
use crate::error::{Code, Error, Result};

const SERVICE: &str = "countersign";
const PREFIX: &str = "secret://countersign/";

/// A parsed `secret://countersign/<name>` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRef(String);

impl SecretRef {
    pub fn parse(s: &str) -> Result<SecretRef> {
        let name = s.strip_prefix(PREFIX).unwrap_or_default();
        let ok = !name.is_empty()
            && name.len() <= 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if ok {
            Ok(SecretRef(name.to_string()))
        } else {
            Err(Error::new(
                Code::InvalidValue,
                format!("`{s}` is not a secret reference; use {PREFIX}<name> (letters, digits, - _ .)"),
            ))
        }
    }
    pub fn name(&self) -> &str {
        &self.0
    }
    pub fn uri(&self) -> String {
        format!("{PREFIX}{}", self.0)
    }
}

fn entry(r: &SecretRef) -> Result<keyring::Entry> {
    keyring::Entry::new(SERVICE, r.name()).map_err(store_error)
}

fn store_error(e: keyring::Error) -> Error {
    match e {
        keyring::Error::PlatformFailure(_) | keyring::Error::NoStorageAccess(_) => Error::new(
            Code::SecretStoreUnavailable,
            format!("the OS keyring is not available ({e}); keys are never stored anywhere else"),
        ),
        other => Error::new(Code::SecretStoreUnavailable, format!("keyring error: {other}")),
    }
}

/// Store a secret under `r`, replacing any previous one.
pub fn set(r: &SecretRef, secret: &Secret) -> Result<()> {
    entry(r)?.set_password(secret.expose()).map_err(store_error)
}

/// The secret under `r`, if there is one.
pub fn get(r: &SecretRef) -> Result<Option<Secret>> {
    match entry(r)?.get_password() {
        Ok(s) => Ok(Some(Secret::new(s))),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(store_error(e)),
    }
}

/// Remove the secret under `r` (no error if there is none).
pub fn delete(r: &SecretRef) -> Result<()> {
    match entry(r)?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(store_error(e)),
    }
}

impl crate::records::access::Session<'_> {
    /// Store a key a provider or a tool is configured with (by its `secret://` reference) in the
    /// OS keyring, never in the workspace (`ai.manage`).
    pub fn store_secret(&self, reference: &str, secret: &Secret) -> Result<()> {
        self.require(crate::metadata::permissions::AI_MANAGE)?;
        set(&SecretRef::parse(reference)?, secret)
    }
}
