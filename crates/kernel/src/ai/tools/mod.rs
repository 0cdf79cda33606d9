//! Tools a model may call. `kernel`: the kernel's own, reading this workspace on the user's
//! session. `definition`: a tool from outside as workspace metadata (an HTTP request an admin
//! writes, a tool of a connected MCP server), with its effect, closed inputs, policy and the
//! admin's narrowing overrides. `registry`: the one list of both, and the saved versions.
//! `calls`: a call of a defined tool under the contract (operation key, approvals, bounded
//! output, the outcome a person resolves). `mcp_servers`: the MCP servers an admin connects,
//! their tool lists reviewed and pinned by digest. `record_data`: a tool's output as the asking
//! user may see it.

pub mod calls;
pub mod definition;
pub mod kernel;
pub mod mcp_servers;
pub mod record_data;
pub mod registry;

pub use kernel::*;
