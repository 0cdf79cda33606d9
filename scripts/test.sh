#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what is missing, then runs
# the kernel and CLI tests (unit, integration, data-driven) with cargo-nextest.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
  echo "cargo is required (https://rustup.rs)" >&2
  exit 1
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  cargo install cargo-nextest --locked
fi

cargo nextest run --workspace --locked --no-fail-fast "$@"
