//! The one error shape of the kernel: `{code, fault, message, field?, retriable}`.
//!
//! Every failure a caller can see is an [`Error`]. The `code` is a stable dotted string the
//! UI and CLI branch on; `fault` says who can fix it; `field` names the field a save or query
//! error belongs to, so a form can show it in place.

use serde::{Deserialize, Serialize};
use std::fmt;
use ts_rs::TS;

/// Who can act on an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Fault {
    /// The user's input or request; they can change it.
    User,
    /// The workspace's configuration (definition, permissions); an admin can change it.
    Admin,
    /// The program or the machine (disk, database file, bug).
    Platform,
}

/// Stable error codes. Their string form (`Code::as_str`, the serde form) is part of the
/// public contract: the UI and scripts branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub enum Code {
    /// The acting user lacks an object, field or system right.
    #[serde(rename = "permission")]
    Permission,
    /// The record does not exist or the user cannot see it (the two are indistinguishable).
    #[serde(rename = "not_found")]
    NotFound,
    /// The record's version moved since the caller read it.
    #[serde(rename = "conflict")]
    Conflict,
    /// A value does not fit its field's type (scale, length, format, picklist, lookup).
    #[serde(rename = "record.invalid_value")]
    InvalidValue,
    /// A required field is blank.
    #[serde(rename = "record.required")]
    Required,
    /// A `unique` field already holds this value on another record.
    #[serde(rename = "record.duplicate")]
    Duplicate,
    /// A validation rule of the object failed; `message` is the rule's.
    #[serde(rename = "record.validation_rule")]
    ValidationRule,
    /// The record cannot be deleted: other records need it (a required lookup points at it).
    #[serde(rename = "record.in_use")]
    InUse,
    /// A field key that does not exist or that the user cannot read.
    #[serde(rename = "schema.unknown_field")]
    UnknownField,
    /// An object key that does not exist or that the user cannot read.
    #[serde(rename = "schema.unknown_object")]
    UnknownObject,
    /// An unknown user key.
    #[serde(rename = "access.unknown_user")]
    UnknownUser,
    /// A query spec that is malformed (bad op, bad value for the op, too deep a path).
    #[serde(rename = "query.invalid")]
    InvalidQuery,
    /// A workspace definition that does not satisfy the JSON Schema or its semantic rules.
    #[serde(rename = "definition.invalid")]
    InvalidDefinition,
    /// A tool definition that breaks the tool contract (an open input schema, an override that
    /// widens an input, a `changes_outside` tool allowed without the explicit tick, …).
    #[serde(rename = "tool.invalid")]
    InvalidTool,
    /// A deploy that would lose data and was not forced.
    #[serde(rename = "definition.destructive_change")]
    DestructiveChange,
    /// A CSV file that cannot be read or mapped.
    #[serde(rename = "import.invalid_csv")]
    InvalidCsv,
    /// The workspace file was written by a newer Countersign.
    #[serde(rename = "store.too_new")]
    StoreTooNew,
    /// The file is not a Countersign workspace.
    #[serde(rename = "store.not_a_workspace")]
    NotAWorkspace,
    /// Another process deployed a newer definition; reopen the workspace and retry.
    #[serde(rename = "metadata.stale")]
    StaleGeneration,
    /// The workspace has no definition deployed yet.
    #[serde(rename = "store.not_initialized")]
    NotInitialized,
    /// The workspace already holds a definition (init refused).
    #[serde(rename = "store.already_initialized")]
    AlreadyInitialized,
    /// The model endpoint cannot be reached (connection refused, DNS).
    #[serde(rename = "integration.unreachable")]
    IntegrationUnreachable,
    /// The model endpoint did not answer within the capability's timeout.
    #[serde(rename = "integration.timeout")]
    IntegrationTimeout,
    /// The model endpoint refused the request (4xx other than context length).
    #[serde(rename = "integration.rejected")]
    IntegrationRejected,
    /// The prompt does not fit the model's context window.
    #[serde(rename = "integration.context_length")]
    ContextLength,
    /// The model endpoint failed (5xx).
    #[serde(rename = "integration.server_error")]
    IntegrationServer,
    /// The endpoint's answer is not the protocol it speaks (bad JSON, missing fields).
    #[serde(rename = "integration.malformed")]
    IntegrationMalformed,
    /// The stream ended before the endpoint said it was done.
    #[serde(rename = "integration.truncated")]
    IntegrationTruncated,
    /// The answer exceeded the byte cap.
    #[serde(rename = "integration.oversized")]
    IntegrationOversized,
    /// The caller cancelled the call.
    #[serde(rename = "cancelled")]
    Cancelled,
    /// The OS keyring cannot be reached.
    #[serde(rename = "secret.store_unavailable")]
    SecretStoreUnavailable,
    /// The served model no longer matches its pin; an admin must repin.
    #[serde(rename = "model.drift")]
    ModelDrift,
    /// The invocation would exceed a budget (per call, per user per day, workspace per month).
    #[serde(rename = "limit.ai_budget")]
    AiBudget,
    /// Too many calls at once or per minute for this user and capability.
    #[serde(rename = "limit.rate")]
    RateLimit,
    /// The model's output did not satisfy the output contract, even after one repair attempt.
    #[serde(rename = "contract")]
    Contract,
    /// The grounding does not contain what the request needs (a refusal, not a failure).
    #[serde(rename = "grounding.insufficient")]
    GroundingInsufficient,
    /// The request is outside what the capability may do (an object outside its scope, a write
    /// asked of a read capability).
    #[serde(rename = "scope")]
    Scope,
    /// The proposal is no longer open (accepted, discarded, expired, undone) or its undo window
    /// has closed.
    #[serde(rename = "proposal.closed")]
    ProposalClosed,
    /// A prompt version or a model was refused for a capability: its eval suite has no passing
    /// run against it (the failing cases are the details); `ai.manage` may override with a reason.
    #[serde(rename = "eval.gate")]
    EvalGate,
    /// A document format Countersign cannot read.
    #[serde(rename = "document.unsupported")]
    DocumentUnsupported,
    /// A document that is corrupt or not what its name says.
    #[serde(rename = "document.invalid")]
    DocumentInvalid,
    /// A password-protected document.
    #[serde(rename = "document.encrypted")]
    DocumentEncrypted,
    /// A document over the size limits.
    #[serde(rename = "document.too_large")]
    DocumentTooLarge,
    /// A document that took too long to read.
    #[serde(rename = "document.timeout")]
    DocumentTimeout,
    /// SQLite or file-system failure (disk full, locked, corrupt).
    #[serde(rename = "store.io")]
    Storage,
    /// An invariant of the kernel broke; a bug.
    #[serde(rename = "internal")]
    Internal,
    /// A model file is not the one pinned (its size or sha256 differ); it was removed.
    #[serde(rename = "model.checksum")]
    ModelChecksum,
    /// The built-in runtime cannot run: no `llama-server`, or its model is not installed.
    #[serde(rename = "runtime.unavailable")]
    RuntimeUnavailable,
    /// The built-in runtime died again after its one restart (or while loading its model).
    #[serde(rename = "runtime.crashed")]
    RuntimeCrashed,
    /// No model is set up for the capability (none pinned): the built-in model can be turned on.
    #[serde(rename = "model.not_set_up")]
    ModelNotSetUp,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Permission => "permission",
            Code::NotFound => "not_found",
            Code::Conflict => "conflict",
            Code::InvalidValue => "record.invalid_value",
            Code::Required => "record.required",
            Code::Duplicate => "record.duplicate",
            Code::ValidationRule => "record.validation_rule",
            Code::InUse => "record.in_use",
            Code::UnknownField => "schema.unknown_field",
            Code::UnknownObject => "schema.unknown_object",
            Code::UnknownUser => "access.unknown_user",
            Code::InvalidQuery => "query.invalid",
            Code::InvalidDefinition => "definition.invalid",
            Code::InvalidTool => "tool.invalid",
            Code::DestructiveChange => "definition.destructive_change",
            Code::InvalidCsv => "import.invalid_csv",
            Code::StoreTooNew => "store.too_new",
            Code::NotAWorkspace => "store.not_a_workspace",
            Code::StaleGeneration => "metadata.stale",
            Code::IntegrationUnreachable => "integration.unreachable",
            Code::IntegrationTimeout => "integration.timeout",
            Code::IntegrationRejected => "integration.rejected",
            Code::ContextLength => "integration.context_length",
            Code::IntegrationServer => "integration.server_error",
            Code::IntegrationMalformed => "integration.malformed",
            Code::IntegrationTruncated => "integration.truncated",
            Code::IntegrationOversized => "integration.oversized",
            Code::Cancelled => "cancelled",
            Code::SecretStoreUnavailable => "secret.store_unavailable",
            Code::ModelDrift => "model.drift",
            Code::NotInitialized => "store.not_initialized",
            Code::AlreadyInitialized => "store.already_initialized",
            Code::AiBudget => "limit.ai_budget",
            Code::RateLimit => "limit.rate",
            Code::Contract => "contract",
            Code::GroundingInsufficient => "grounding.insufficient",
            Code::Scope => "scope",
            Code::ProposalClosed => "proposal.closed",
            Code::EvalGate => "eval.gate",
            Code::DocumentUnsupported => "document.unsupported",
            Code::DocumentInvalid => "document.invalid",
            Code::DocumentEncrypted => "document.encrypted",
            Code::DocumentTooLarge => "document.too_large",
            Code::DocumentTimeout => "document.timeout",
            Code::Storage => "store.io",
            Code::Internal => "internal",
            Code::ModelChecksum => "model.checksum",
            Code::RuntimeUnavailable => "runtime.unavailable",
            Code::RuntimeCrashed => "runtime.crashed",
            Code::ModelNotSetUp => "model.not_set_up",
        }
    }

    fn default_fault(self) -> Fault {
        match self {
            Code::InvalidDefinition | Code::InvalidTool | Code::DestructiveChange | Code::NotInitialized => {
                Fault::Admin
            }
            Code::StoreTooNew
            | Code::Storage
            | Code::Internal
            | Code::StaleGeneration
            | Code::IntegrationTimeout
            | Code::IntegrationServer
            | Code::IntegrationMalformed
            | Code::IntegrationTruncated
            | Code::IntegrationOversized
            | Code::Contract => Fault::Platform,
            Code::AiBudget | Code::EvalGate => Fault::Admin,
            Code::IntegrationUnreachable | Code::IntegrationRejected | Code::ModelDrift => Fault::Admin,
            Code::SecretStoreUnavailable => Fault::Platform,
            Code::ModelChecksum | Code::RuntimeCrashed => Fault::Platform,
            Code::RuntimeUnavailable | Code::ModelNotSetUp => Fault::Admin,
            _ => Fault::User,
        }
    }
}

impl Code {
    pub const ALL: [Code; 50] = [
        Code::Permission,
        Code::NotFound,
        Code::Conflict,
        Code::InvalidValue,
        Code::Required,
        Code::Duplicate,
        Code::ValidationRule,
        Code::InUse,
        Code::UnknownField,
        Code::UnknownObject,
        Code::UnknownUser,
        Code::InvalidQuery,
        Code::InvalidDefinition,
        Code::InvalidTool,
        Code::DestructiveChange,
        Code::InvalidCsv,
        Code::StoreTooNew,
        Code::NotAWorkspace,
        Code::StaleGeneration,
        Code::NotInitialized,
        Code::AlreadyInitialized,
        Code::Storage,
        Code::Internal,
        Code::IntegrationUnreachable,
        Code::IntegrationTimeout,
        Code::IntegrationRejected,
        Code::ContextLength,
        Code::IntegrationServer,
        Code::IntegrationMalformed,
        Code::IntegrationTruncated,
        Code::IntegrationOversized,
        Code::Cancelled,
        Code::SecretStoreUnavailable,
        Code::ModelDrift,
        Code::AiBudget,
        Code::RateLimit,
        Code::Contract,
        Code::GroundingInsufficient,
        Code::Scope,
        Code::DocumentUnsupported,
        Code::DocumentInvalid,
        Code::DocumentEncrypted,
        Code::DocumentTooLarge,
        Code::DocumentTimeout,
        Code::ProposalClosed,
        Code::EvalGate,
        Code::ModelChecksum,
        Code::RuntimeUnavailable,
        Code::RuntimeCrashed,
        Code::ModelNotSetUp,
    ];
}

/// One detail of a multi-part error (definition validation lists every problem with its path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Detail {
    /// JSON pointer into the document (`/objects/2/fields/0/type`) or a CSV row label.
    pub path: String,
    pub message: String,
}

/// The one error shape, across the CLI and the app's IPC: `{code, fault, message, field?,
/// retriable, details?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Error {
    pub code: Code,
    pub fault: Fault,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub field: Option<String>,
    pub retriable: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<Detail>>")]
    pub details: Vec<Detail>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            fault: code.default_fault(),
            message: message.into(),
            field: None,
            retriable: false,
            details: Vec::new(),
        }
    }

    pub fn on_field(code: Code, field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::new(code, message).with_field(field)
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }

    pub fn with_details(mut self, details: Vec<Detail>) -> Self {
        self.details = details;
        self
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(Code::Internal, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)?;
        if let Some(field) = &self.field {
            write!(f, " (field `{field}`)")?;
        }
        for d in &self.details {
            write!(f, "\n  {}: {}", d.path, d.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// What SQLite said, without the statement. A `SqlInputError` (a statement that does not
/// prepare) carries the whole SQL text and its offset in its `Display`: that is the kernel's
/// business, can be megabytes long, and is never shown. Capped, as a message is for people.
fn sqlite_said(e: &rusqlite::Error) -> String {
    let said = match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        rusqlite::Error::SqliteFailure(f, None) => f.to_string(),
        other => other.to_string(),
    };
    match said.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &said[..cut]),
        None => said,
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode as C;
        let code = match &e {
            rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
            rusqlite::Error::SqlInputError { error, .. } => Some(error.code),
            _ => None,
        };
        let said = sqlite_said(&e);
        let (retriable, message) = match code {
            Some(C::DatabaseBusy | C::DatabaseLocked) => {
                (true, "the workspace is busy with another write (an import, a deploy, another process); try again when it ends".to_string())
            }
            Some(C::DiskFull) => (false, "the disk is full; nothing was written".to_string()),
            Some(C::ReadOnly | C::CannotOpen | C::PermissionDenied) => {
                (false, format!("the workspace file cannot be written: {said}"))
            }
            Some(C::DatabaseCorrupt | C::NotADatabase) => {
                (false, format!("the workspace file is damaged: {said}"))
            }
            _ => (false, format!("storage error: {said}")),
        };
        Error { retriable, ..Error::new(Code::Storage, message) }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::new(Code::Storage, format!("file error: {e}"))
    }
}
