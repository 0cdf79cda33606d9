#!/usr/bin/env bash
# The canary-secret tests (a model provider's key, a tool's key) against a real OS keyring
# (scripts/with-keyring.sh), with throwaway data and runtime directories.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -m700 "$work/data" "$work/run"
export XDG_DATA_HOME="$work/data" XDG_RUNTIME_DIR="$work/run"
# The same selection and features as the whole suite's run, so its build is reused.
bash scripts/with-keyring.sh cargo nextest run --workspace --locked --features custom-protocol \
  --run-ignored only -E 'binary(kernel) & test(/^(provider|tool_calls)::/)' "$@"
