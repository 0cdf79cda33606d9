//! The capabilities the kernel ships, registered with the generic pipeline. A new capability
//! declares its `SPEC` (prompt versions, default binding) in its own folder and is listed here;
//! nothing below this layer names it.

use crate::ai::pipeline::{register_capabilities, CapabilitySpec};
use crate::records::workspace::Workspace;

/// Every capability, in the order settings show them.
pub const ALL: &[&CapabilitySpec] = &[
    &crate::ai::ask::SPEC,
    &crate::ai::extract::SPEC,
    &crate::ai::summarize::SPEC,
    &crate::ai::mcp::SPEC,
    &crate::ai::assistant::SPEC,
    &crate::ai::judge::SPEC,
];

/// Offer the shipped capabilities on an open workspace.
pub fn register(ws: &Workspace) {
    register_capabilities(ws, ALL);
}
