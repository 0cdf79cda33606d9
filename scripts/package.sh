#!/usr/bin/env bash
# Builds the installable packages — .deb and .rpm — with the Tauri bundler (a release build
# with its debug information stripped; the UI is built first). They land in
# target/release/bundle/{deb,rpm}/. Expects scripts/setup.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO_PROFILE_RELEASE_STRIP=debuginfo ui/node_modules/.bin/tauri build --bundles deb,rpm
ls -l target/release/bundle/deb/*.deb target/release/bundle/rpm/*.rpm
