#!/usr/bin/env bash
# The canary-secret test against a real OS keyring (scripts/with-keyring.sh), with throwaway
# data and runtime directories.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -m700 "$work/data" "$work/run"
export XDG_DATA_HOME="$work/data" XDG_RUNTIME_DIR="$work/run"
bash scripts/with-keyring.sh cargo nextest run -p countersign-kernel --test kernel --run-ignored only provider:: "$@"
