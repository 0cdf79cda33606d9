#!/usr/bin/env bash
# Runs a command with tauri-driver (WebDriver for the app's window) listening on
# 127.0.0.1:4444, and stops the driver afterwards. DISPLAY (and the D-Bus session the app
# should use) must be set up first. The driver's log goes to $TAURI_DRIVER_LOG (default: none);
# $TAURI_DRIVER names the binary when HOME no longer leads to it.
set -euo pipefail
driver="${TAURI_DRIVER:-${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver}"
"$driver" --port 4444 >"${TAURI_DRIVER_LOG:-/dev/null}" 2>&1 &
driver_pid=$!
trap 'kill $driver_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  (exec 3<>/dev/tcp/127.0.0.1/4444) 2>/dev/null && break
  sleep 0.1
done
"$@"
