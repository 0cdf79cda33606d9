//! Typed metadata: the workspace definition file and its validation, field values, conditions
//! (validation rules and query filters share them), the kernel's size limits, and the catalog
//! compiled from a definition, and what one definition changes from another. Pure data and
//! checks: nothing here opens the store.

pub mod catalog;
pub mod condition;
pub mod definition;
pub mod diff;
pub mod limits;
pub mod permissions;
pub mod types;
pub mod value;
