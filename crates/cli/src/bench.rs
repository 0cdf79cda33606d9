//! `bench`: the kernel's benchmarks against hand-written SQL, on a scratch workspace.

use crate::output::to_json;
use clap::Args;
use countersign_kernel::bench::{self, BenchOptions};
use countersign_kernel::Result;
use serde_json::Value;
use std::path::PathBuf;

#[derive(Args)]
pub struct BenchArgs {
    /// Invoice rows to generate.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Accounts in the import benchmark's CSV, 10 columns (0: skip it).
    #[arg(long, default_value_t = 100_000)]
    import_rows: usize,
    /// Single-field updates to time (each path).
    #[arg(long, default_value_t = 20_000)]
    updates: usize,
    /// Query repetitions to time (each path).
    #[arg(long, default_value_t = 50)]
    queries: usize,
    /// Directory for the scratch workspace (default: a temporary directory).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Only make the benchmark's workspace (the demo plus `rows` invoices) at this path and
    /// keep it (the end-to-end test at scale opens it).
    #[arg(long)]
    generate_only: Option<PathBuf>,
}

pub fn run(args: BenchArgs) -> Result<Value> {
    let BenchArgs { rows, import_rows, updates, queries, dir, generate_only } = args;
    to_json(&bench::run(&BenchOptions { rows, import_rows, updates, queries, dir, generate_only })?)
}
