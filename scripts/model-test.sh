#!/usr/bin/env bash
# The real-model test: starts the local 0.5B model (scripts/local-model), runs the ignored
# real-model tests against it, and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
url=$(scripts/local-model start --size 0.5b)
trap 'scripts/local-model stop' EXIT
COUNTERSIGN_MODEL_URL="$url" cargo nextest run -p countersign-kernel --test real_model --run-ignored only --no-capture "$@"
