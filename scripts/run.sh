#!/usr/bin/env bash
# Runs Countersign. Until the desktop app lands, this is the CLI against the demo workspace,
# which is created in the OS app-data directory on first run (~/.local/share/countersign/).
# With no arguments it shows the accounts Ben (a sales rep) can see; otherwise it passes the
# arguments to countersign-cli, e.g.:  scripts/run.sh --as ava get account acc_0001
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p countersign-cli
bin=target/release/countersign-cli
if [ $# -eq 0 ]; then
  exec "$bin" --as ben query --spec '{"object":"account","fields":["name","industry","type","billing_city"],"sort":[{"field":"name"}],"limit":10}'
fi
exec "$bin" "$@"
