//! The kernel's integration tests, as one test binary (one link instead of one per file): each
//! module is one area. `common` builds workspaces (the demo once per build, copied per test)
//! and the fake model endpoint.

mod common;

mod access;
mod activity;
mod ask;
mod ask_grammar;
mod ask_reader;
mod assistant;
mod assistant_tools;
mod backup;
mod bindings;
mod corpus;
mod counts;
mod csv_io;
mod definition_and_store;
mod deploy_preview;
mod eval_gate;
mod extract;
mod extract_pointing;
mod hardening;
mod import;
mod in_flight;
mod ingest;
mod keyset;
mod layers;
mod learned;
mod limits;
mod locale;
mod logging;
mod mcp_servers;
mod model_files;
mod model_runtime;
mod proposals;
mod provider;
mod query;
mod real_model;
mod save_path;
mod summarize;
mod summary_slots;
mod templates;
mod text_index;
mod tool_calls;
mod tools;
mod use_index;
mod value_index;
mod vocabulary;
