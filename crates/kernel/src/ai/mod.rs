//! The AI platform. Generic parts first — model providers, model pins and their secrets, the
//! schema projection, kernel tools, and the pipeline every capability runs through (bindings,
//! prompts, budgets, the invocation and its trace) — then the capabilities, each in its own
//! folder. Generic modules never import a capability; the capabilities register themselves in
//! [`capabilities`].

pub mod contract;
pub mod dates;
pub mod pins;
pub mod pipeline;
pub mod projection;
pub mod provider;
pub mod runtime;
pub mod secrets;
pub mod tools;

pub mod capabilities;

pub mod ask;
pub mod assistant;
pub mod extract;
pub mod judge;
pub mod mcp;
pub mod summarize;
