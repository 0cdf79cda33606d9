//! The AI pipeline every capability goes through:
//! authorize → budget pre-flight → ground → invoke → constrain (one repair) → answer/propose →
//! trace. This module holds the capability-independent parts: prompt components and capability
//! bindings (stored metadata), budgets and rate limits, the invocation record and the execution
//! trace. Capabilities (`ask`) drive it.
//!
//! An invocation is split so that no lock on the workspace is held while the model thinks:
//! a capability's `begin` runs the synchronous steps on a session and returns an owned
//! [`Invocation`] plus the request; the caller awaits the model with no session; the
//! capability's `advance` constrains the answer on a session again (and may ask for the one
//! repair). The trace row is written when the invocation begins (`running`, counting against
//! budgets at its estimate) and completed when it ends, whatever the outcome.
//!
//! The running row is also the call's in-flight slot, in every process that opens the
//! workspace: its lease (`lease_span`, renewed whenever the call comes back to the kernel)
//! counts against the capability's concurrency until the row is completed, the invocation is
//! dropped (the row is closed as `abandoned`) or the lease runs out (a killed process; the next
//! open closes the row as `abandoned`).

pub mod drive;

mod bindings;
mod budget;
pub mod gate;
mod in_flight;
mod invocation;
mod prompts;
mod put_to_use;
mod trace;

pub use bindings::*;
pub(crate) use in_flight::close_abandoned;
pub use in_flight::{lease_span, LEASE_MARGIN};
pub use invocation::{FieldValue, Invocation, ModelChoice, Outcome, RunFigures, ServedCall};
pub use prompts::{example_turns, PromptVersion};
pub use put_to_use::{use_found_server, use_model, ModelInUse};
pub use trace::{Activity, CapabilityBudget, SpendRow, TraceEntry, TraceFilter, TraceOutcome, TRACE_DAYS};
