#!/usr/bin/env bash
# Builds the installable packages — .deb and .rpm — with the Tauri bundler (a release build
# with its debug information stripped; the UI is built first). They land in
# target/release/bundle/{deb,rpm}/. Expects scripts/setup.sh to have run.
#
# The packages also ship, as the app's resources (src-tauri/packaging/resources.json, installed
# under /usr/lib/Countersign/):
# - llama.cpp's server for the built-in model: `llama-server` and the shared libraries it loads,
#   built by scripts/local-model from llama.cpp's pinned source for any AVX2 CPU (not the
#   prebuilt registry build, which needs the instructions of the CPU it was built on), staged in
#   target/llama-server; the app looks there first;
# - `countersign-cli`, which other AI apps run as the MCP server (Settings shows its path).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/local-model stage-server target/llama-server
CARGO_PROFILE_RELEASE_STRIP=debuginfo cargo build --release --locked -p countersign-cli
CARGO_PROFILE_RELEASE_STRIP=debuginfo ui/node_modules/.bin/tauri build --bundles deb,rpm \
  --config src-tauri/packaging/resources.json
ls -l target/release/bundle/deb/*.deb target/release/bundle/rpm/*.rpm
