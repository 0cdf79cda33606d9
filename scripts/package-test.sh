#!/usr/bin/env bash
# Builds the .deb and .rpm with the Tauri bundler, installs the .deb on this machine, runs the
# installed app (/usr/bin/countersign) under Xvfb on a fresh home directory through a short
# end-to-end suite (tests/e2e/installed.test.mjs), then its first question answered by the
# built-in model on the llama-server the package ships (tests/e2e/first-run.test.mjs, with the
# model file placed in the app's models folder as scripts/run.sh places it, and no
# COUNTERSIGN_LLAMA_SERVER), then removes the package and checks it leaves none of its files
# behind (the user's data in the home directory is theirs to keep).
# Needs root or sudo (dpkg). Expects scripts/setup.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)

bash scripts/package.sh
deb=$(ls target/release/bundle/deb/*.deb)
rpm=$(ls target/release/bundle/rpm/*.rpm)
echo "packages: $(du -h "$deb" | cut -f1) $(basename "$deb"), $(du -h "$rpm" | cut -f1) $(basename "$rpm")"
stat -c '%s bytes %n' "$deb" "$rpm"
work_rpm_requires=$(mktemp)

# What the .deb declares and ships.
dpkg-deb --field "$deb" Package Version Depends
contents=$(dpkg-deb --contents "$deb")
shipped_server=usr/lib/Countersign/llama-server
for f in usr/bin/countersign usr/share/applications/Countersign.desktop \
  usr/share/mime/packages/app.countersign.desktop.xml usr/share/icons/hicolor/128x128/apps/countersign.png \
  $shipped_server/llama-server $shipped_server/licenses/LLAMA_CPP_LICENSE.txt usr/lib/Countersign/countersign-cli; do
  grep -qE " (\./)?$f\$" <<<"$contents" || { echo "the .deb lacks $f" >&2; echo "$contents" >&2; exit 1; }
done
grep -qE "^-rwxr-xr-x .* (\./)?$shipped_server/llama-server\$" <<<"$contents" \
  || { echo "the .deb's llama-server is not executable" >&2; grep llama-server <<<"$contents" >&2; exit 1; }
dpkg-deb --field "$deb" Depends | grep -q libgomp1 || { echo "the .deb does not depend on libgomp1 (llama-server's OpenMP)" >&2; exit 1; }
for dep in tesseract-ocr tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa poppler-utils; do
  dpkg-deb --field "$deb" Depends | grep -qw -- "$dep" || { echo "the .deb does not depend on $dep (OCR)" >&2; exit 1; }
done
# The desktop entry claims .countersign files and hands the file to the app.
desktop_entry=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO usr/share/applications/Countersign.desktop)
grep -q '^MimeType=.*application/x-countersign-workspace' <<<"$desktop_entry" \
  && grep -q '^Exec=countersign %f$' <<<"$desktop_entry" \
  || { echo "the desktop entry does not open .countersign files:" >&2; echo "$desktop_entry" >&2; exit 1; }

# The .rpm: what it declares, and an install into a scratch root and removal from it (this is a
# Debian machine: the rpm's dependencies are checked by name here, not resolved).
rpm -qp --requires "$rpm" 2>/dev/null | tee "$work_rpm_requires" >/dev/null
for dep in dbus-libs libgomp tesseract poppler-utils 'libwebkit2gtk-4.1.so.0()(64bit)' 'libgtk-3.so.0()(64bit)'; do
  grep -qxF "$dep" "$work_rpm_requires" || { echo "the .rpm does not require $dep" >&2; cat "$work_rpm_requires" >&2; exit 1; }
done
rpm_root=$(mktemp -d)
rpm --root "$rpm_root" --initdb
rpm --root "$rpm_root" -i --nodeps "$rpm" 2>/dev/null
for f in usr/bin/countersign usr/share/applications/Countersign.desktop \
  usr/share/mime/packages/app.countersign.desktop.xml usr/share/icons/hicolor/128x128/apps/countersign.png; do
  [ -e "$rpm_root/$f" ] || { echo "the .rpm did not install $f" >&2; exit 1; }
done
[ -x "$rpm_root/$shipped_server/llama-server" ] || { echo "the .rpm did not install an executable llama-server" >&2; exit 1; }
grep -q '^Exec=countersign %f$' "$rpm_root/usr/share/applications/Countersign.desktop" \
  || { echo "the .rpm's desktop entry does not hand the file to the app" >&2; exit 1; }
rpm --root "$rpm_root" -e countersign 2>/dev/null
[ -z "$(find "$rpm_root/usr" -type f 2>/dev/null)" ] || { echo "the .rpm left files behind: $(find "$rpm_root/usr" -type f)" >&2; exit 1; }
rm -rf "$rpm_root"
echo "rpm: requires $(paste -sd' ' "$work_rpm_requires" | cut -c1-80)…; installed into a scratch root and removed"

# Install it (its dependencies are already here: setup.sh installed the same libraries).
"${sudo_cmd[@]}" dpkg -i "$deb"
files=$(dpkg -L countersign)
test -x /usr/bin/countersign
# The CLI other AI apps run as the MCP server.
/usr/lib/Countersign/countersign-cli --version

# The installed app on a fresh home directory.
work=$(mktemp -d)
display=":$((80 + RANDOM % 9))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
cleanup() {
  kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export DISPLAY="$display"
for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
home="$work/home"
mkdir -p "$home" && mkdir -m700 "$work/run"
(cd tests/e2e && { [ -d node_modules ] || npm ci --no-audit --no-fund; })
shots="$root/target/installed-screenshots"
rm -rf "$shots" && mkdir -p "$shots"
# The driver is found before HOME changes; the app gets the fresh home and a D-Bus session.
export TAURI_DRIVER="${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver" TAURI_DRIVER_LOG="$work/tauri-driver.log"
env -u COUNTERSIGN_WORKSPACE -u COUNTERSIGN_LOG_DIR -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME \
  HOME="$home" XDG_RUNTIME_DIR="$work/run" APP_BIN=/usr/bin/countersign SCREENSHOT_DIR="$shots" \
  dbus-run-session -- bash scripts/with-tauri-driver.sh \
  bash -c 'cd tests/e2e && node --test --test-concurrency=1 --test-reporter=spec installed.test.mjs' \
  || { cat "$work/tauri-driver.log" >&2 || true; exit 1; }
# Its first question, answered by the built-in model on the server the package ships: the model
# file in the app's models folder (as scripts/run.sh leaves it), no COUNTERSIGN_LLAMA_SERVER.
prepared=$(scripts/local-model prepare --size 0.5b)
gguf=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["model"])' "$prepared")
models="$home/.local/share/app.countersign.desktop/models"
mkdir -p "$models"
ln "$gguf" "$models/$(basename "$gguf")" 2>/dev/null || cp "$gguf" "$models/"
env -u COUNTERSIGN_WORKSPACE -u COUNTERSIGN_LOG_DIR -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME \
  -u COUNTERSIGN_LLAMA_SERVER \
  HOME="$home" XDG_RUNTIME_DIR="$work/run" APP_BIN=/usr/bin/countersign SCREENSHOT_DIR="$shots" \
  EXPECT_SERVER="/$shipped_server/llama-server" \
  dbus-run-session -- bash scripts/with-tauri-driver.sh \
  bash -c 'cd tests/e2e && node --test --test-reporter=spec first-run.test.mjs' \
  || { cat "$work/tauri-driver.log" >&2 || true; exit 1; }
echo "installed first run: $(cat "$shots/first-run.json" | tr -d '\n ')"
sleep 1
if pgrep -f "/$shipped_server/llama-server" >/dev/null; then
  echo "the shipped llama-server outlived the app" >&2
  exit 1
fi
echo "installed-app screenshots: $shots"
# The user's data stayed in their home directory.
test -f "$home/.local/share/app.countersign.desktop/demo.countersign"

# Remove the package: none of its files may remain.
"${sudo_cmd[@]}" dpkg --purge countersign
left=()
while IFS= read -r f; do
  [ -e "$f" ] && [ ! -d "$f" ] && left+=("$f")
done <<<"$files"
if [ ${#left[@]} -gt 0 ]; then
  echo "left behind after removal: ${left[*]}" >&2
  exit 1
fi
! dpkg -s countersign >/dev/null 2>&1 || { echo "the package is still registered" >&2; exit 1; }
echo "package test: installed, ran, removed; no file of the package left"
