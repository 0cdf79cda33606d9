//! The system permissions of the access model, by key: what a permission set's `system` list
//! holds and what `Session::require` checks. Code names these constants, never the strings
//! (`layers::permission_keys_are_named_by_their_constants`).

/// Use the AI capabilities (ask, extract, summarize, the assistant).
pub const AI_USE: &str = "ai.use";
/// Write prompt versions and eval suites.
pub const AI_AUTHOR: &str = "ai.author";
/// Accept or discard proposals, set a capability's autonomy.
pub const AI_APPROVE: &str = "ai.approve";
/// Manage providers, model pins, budgets, the built-in model, other apps' access, and see
/// everyone's trace.
pub const AI_MANAGE: &str = "ai.manage";
/// Deploy a new definition (objects, fields, users and their permission sets).
pub const METADATA_DEPLOY: &str = "metadata.deploy";
