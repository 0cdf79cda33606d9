//! Countersign kernel: the workspace store, typed metadata, records, proposals and the AI
//! pipeline with its capabilities.
//!
//! The modules are layers, each importing only the layers below it (a test holds this; see
//! `ARCHITECTURE.md` at the repository root for the map and the invariants):
//!
//! 1. foundation — [`error`], [`clock`], [`locale`] (how values are written for a reader),
//!    [`digest`] (file digests), [`store`] (the SQLite file
//!    and its migrations), [`ingest`] (documents to text and a source map), [`logging`] (where
//!    events go);
//! 2. [`metadata`] — the workspace definition, its types, conditions and limits, the compiled
//!    catalog;
//! 3. [`records`] — the workspace, sessions and the one enforcement path for reads, the one save
//!    path, queries, CSV, the corpus index, deploying a definition;
//! 4. [`proposals`] — proposals, review, accept, undo, retention, the auto-apply allowlist;
//! 5. [`ai`] — providers, secrets, model pins, the projection, kernel tools, the pipeline and
//!    the built-in runtime (generic, in that order), then the capabilities, then the
//!    compositions that run capabilities (the MCP server's tools), all registered with the
//!    pipeline;
//! 6. [`open`] — opening and creating a workspace for use, the same for every caller; [`eval`]
//!    and [`bench`] — measurements over everything below.
//!
//! Everything a user does to records goes through a [`Session`]: reads through one
//! enforcement path (row filter + field levels), writes through one save path
//! ([`Session::save`]).

pub mod backup;
pub mod clock;
pub mod digest;
pub mod error;
pub mod ingest;
pub mod locale;
pub mod logging;
pub mod recent;
pub mod store;

pub mod metadata;

pub mod records;

pub mod proposals;

pub mod ai;

pub mod bench;
pub mod eval;
pub mod open;

pub use clock::{Clock, FixedClock, IdSource, SequentialIds, SystemClock, UlidIds};
pub use error::{Code, Error, Fault, Result};
pub use metadata::definition::WorkspaceDefinition;
pub use records::access::Session;
pub use records::deploy::{DeployOptions, DeployReport, DEPLOY_PERMISSION};
pub use records::query::{QueryResult, QuerySpec};
pub use records::save::{HistoryEntry, Record, SaveContext, SaveOutcome, SaveRequest};
pub use records::workspace::{Workspace, WorkspaceOptions};
