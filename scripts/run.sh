#!/usr/bin/env bash
# Installs what is missing and launches the Countersign desktop app. On first run it creates the
# demo workspace in the OS app-data directory (~/.local/share/app.countersign.desktop/ on Linux);
# set COUNTERSIGN_WORKSPACE=/path/to/file.countersign to open another one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(cd ui && npm run build)
cargo build --release --locked --features custom-protocol
exec target/release/countersign "$@"
