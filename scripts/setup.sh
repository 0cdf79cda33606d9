#!/usr/bin/env bash
# Installs what Countersign needs to build, run and test on a fresh Debian/Ubuntu machine:
# the system libraries Tauri uses (WebKitGTK 4.1, libsoup 3, …), Xvfb, WebKitWebDriver and
# D-Bus for the end-to-end tests, Tesseract with its English, German, French and Spanish data and
# poppler's pdftoppm (OCR of scans and pictures; the .deb depends on them too), cmake (scripts/local-model builds llama.cpp's server with it on a CPU
# its prebuilt build does not run on), the npm packages of the UI and the e2e suite, and the cargo
# tools (cargo-nextest, tauri-driver). Idempotent: skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential pkg-config libssl-dev libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev
  libsoup-3.0-dev libayatana-appindicator3-dev librsvg2-dev xvfb xauth x11-utils x11-apps dbus dbus-x11
  at-spi2-core libgl1-mesa-dri fonts-dejavu-core webkit2gtk-driver libdbus-1-dev gnome-keyring libsecret-tools keyutils
  rpm cpio python3 cmake tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa
  poppler-utils)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cargo nextest --version >/dev/null 2>&1 || cargo install cargo-nextest --locked
tauri_driver="${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver"
[ -x "$tauri_driver" ] || cargo install tauri-driver --locked --version 2.1.0

(cd ui && npm ci --no-audit --no-fund)
(cd tests/e2e && npm ci --no-audit --no-fund && cp package-lock.json node_modules/.installed-lock)
