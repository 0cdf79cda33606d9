#!/usr/bin/env bash
# The canary-secret test against a real OS keyring: a throwaway gnome-keyring (Secret Service)
# in its own D-Bus session, unlocked with a throwaway password, with throwaway data and runtime
# directories (HOME is left alone).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -m700 "$work/data" "$work/run"
export XDG_DATA_HOME="$work/data" XDG_RUNTIME_DIR="$work/run"
keyctl session - dbus-run-session -- bash -c '
  echo -n ci-pass | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  for _ in $(seq 1 100); do
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
      org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true" && break
    sleep 0.1
  done
  exec "$@"
' bash cargo nextest run -p countersign-kernel --test provider --run-ignored only "$@"
