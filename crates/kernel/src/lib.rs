//! Countersign kernel: the workspace store, typed metadata, records, access and query specs.
//!
//! Everything a user does to records goes through a [`Session`]: reads through one
//! enforcement path (row filter + field levels), writes through one save path
//! ([`Session::save`]). See `ARCHITECTURE.md` at the repository root for the map and the
//! invariants.

pub mod access;
pub mod ask;
pub mod bench;
pub mod catalog;
pub mod clock;
pub mod condition;
pub mod corpus;
pub mod csvio;
pub mod definition;
pub mod demo;
pub mod deploy;
pub mod describe;
pub mod error;
pub mod eval;
pub mod extract;
pub mod ingest;
pub mod limits;
pub mod pins;
pub mod pipeline;
pub mod projection;
pub mod proposals;
pub mod provider;
pub mod query;
pub mod records;
pub mod secrets;
pub mod store;
pub mod summarize;
pub mod tools;
pub mod value;
pub mod workspace;

pub use access::Session;
pub use clock::{Clock, FixedClock, IdSource, SequentialIds, SystemClock, UlidIds};
pub use definition::WorkspaceDefinition;
pub use deploy::{DeployOptions, DeployReport, DEPLOY_PERMISSION};
pub use error::{Code, Error, Fault, Result};
pub use query::{QueryResult, QuerySpec};
pub use records::{HistoryEntry, Record, SaveContext, SaveOutcome, SaveRequest};
pub use workspace::{Workspace, WorkspaceOptions};
