//! `countersign-cli index …`: the indexes the kernel made from use (`tune_indexes`, which the
//! app runs in the background): list them with their uses and cost, pin one (kept however
//! idle), unpin it, or drop it now. Each needs `metadata.deploy`; the kernel checks it.

use crate::output::to_json;
use countersign_kernel::records::use_index::UseIndexChange;
use countersign_kernel::{Result, Session};
use serde_json::Value;

#[derive(clap::Subcommand)]
pub enum IndexCommand {
    /// The indexes made from use, most used first, with their shape, uses and cost.
    List,
    /// Keep an index however long it goes unused.
    Pin { name: String },
    /// Let an index be dropped again once it goes unused.
    Unpin { name: String },
    /// Drop an index now (the kernel makes it again if its shape is used again).
    Drop { name: String },
}

pub fn run(session: &Session<'_>, command: IndexCommand) -> Result<Value> {
    let (ws, user) = (session.workspace(), session.user().key.as_str());
    let (name, change) = match command {
        IndexCommand::List => return to_json(&ws.use_indexes(user)?),
        IndexCommand::Pin { name } => (name, UseIndexChange::Pin(true)),
        IndexCommand::Unpin { name } => (name, UseIndexChange::Pin(false)),
        IndexCommand::Drop { name } => (name, UseIndexChange::Drop),
    };
    to_json(&ws.change_use_index(user, &name, change)?)
}
