#!/usr/bin/env bash
# Runs a command in its own D-Bus session with a throwaway, unlocked gnome-keyring (the OS
# keyring's Secret Service), so tests use a real keyring without touching the user's.
# Set XDG_DATA_HOME and XDG_RUNTIME_DIR to throwaway directories first (HOME is left alone).
set -euo pipefail
exec keyctl session - dbus-run-session -- bash -c '
  echo -n throwaway-pass | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  for _ in $(seq 1 100); do
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
      org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true" && break
    sleep 0.1
  done
  exec "$@"
' bash "$@"
