//! The CLI's integration tests, as one test binary: the real `countersign-cli` executable on
//! real workspace files. `hostile_documents` and `crash` are the slow ones (left out of the
//! `fast` nextest profile).

mod common;

mod built_in_model;
mod cli;
mod crash;
mod gate;
mod hardening;
mod hostile_documents;
mod indexes;
mod mcp;
mod people;
mod templates;
mod tools;
