#!/usr/bin/env bash
# End-to-end tests in the real app window: builds the UI and the app (UI embedded), starts a
# virtual display (Xvfb) and a D-Bus session, runs tauri-driver (which drives WebKitWebDriver)
# and the WebdriverIO suite in tests/e2e against a fresh demo workspace.
# Screenshots and start-up/memory figures land in target/e2e-screenshots/.
# Expects scripts/setup.sh to have installed the system packages and tauri-driver.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# E2E_PROFILE=release runs the suite against a release build (for start-up/memory figures).
profile="${E2E_PROFILE:-debug}"
(cd ui && npm run build)
if [ "$profile" = release ]; then
  cargo build --release --locked --features custom-protocol
else
  cargo build --locked --features custom-protocol
fi
app="$root/target/$profile/countersign"

# The suite's packages, installed again when its lock file changed since the last install.
(cd tests/e2e && { cmp -s package-lock.json node_modules/.installed-lock || { npm ci --no-audit --no-fund && cp package-lock.json node_modules/.installed-lock; }; })

work=$(mktemp -d)
shots="$root/target/e2e-screenshots"
rm -rf "$shots" && mkdir -p "$shots"

cleanup() {
  [ -n "${xvfb_pid:-}" ] && kill "$xvfb_pid" 2>/dev/null || true
  scripts/local-model stop || true
  rm -rf "$work"
}
trap cleanup EXIT

# A real local model on llama.cpp's usual port, for the settings screen's discovery and pinning.
COUNTERSIGN_LOCAL_MODEL_PORT=8080 scripts/local-model start --size 0.5b >/dev/null

display=":$((90 + RANDOM % 9))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
export DISPLAY="$display"
for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
xdpyinfo >/dev/null 2>&1 || { echo "Xvfb did not start" >&2; cat "$work/xvfb.log" >&2; exit 1; }

# A month of calls made through the real pipeline against a fake endpoint (the kernel test
# that checks their spend writes its workspace here): the activity screen on a few hundred calls.
export ACTIVITY_SAMPLE="$work/activity.countersign"
COUNTERSIGN_ACTIVITY_SAMPLE="$ACTIVITY_SAMPLE" cargo nextest run --workspace --locked --features custom-protocol \
  --no-fail-fast -E 'test(a_month_of_calls_adds_up_day_by_day_in_the_spend)' >"$work/sample.log" 2>&1 \
  || { cat "$work/sample.log" >&2; exit 1; }

# The CLI, for the tests that act in the app's workspace from outside (a tool call to approve).
cargo build --locked -p countersign-cli
export CLI_BIN="$root/target/debug/countersign-cli"

# A fresh demo workspace for this run; the app creates it on first start.
export COUNTERSIGN_WORKSPACE="$work/e2e.countersign"
mkdir -m700 "$work/run"
export XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config" XDG_RUNTIME_DIR="$work/run"
export APP_BIN="$app" SCREENSHOT_DIR="$shots"
# The app's log files for this run, kept beside the screenshots.
export COUNTERSIGN_LOG_DIR="$shots/logs"
export TAURI_DRIVER_LOG="$work/tauri-driver.log"

# One D-Bus session for the app, its OS keyring (a throwaway gnome-keyring) and the driver.
bash scripts/with-keyring.sh bash scripts/with-tauri-driver.sh \
  bash -c 'cd tests/e2e && node --test --test-concurrency=1 --test-reporter=spec app.test.mjs window-place.test.mjs' \
  || { echo "--- tauri-driver log ---" >&2; cat "$work/tauri-driver.log" >&2 || true; exit 1; }
# The list at scale: a workspace with a million invoices (the benchmark's data set, written
# with raw SQL as setup), opened in the app; each step's time from input to rows drawn.
cli="$root/target/debug/countersign-cli"
scale_ws="$work/scale.countersign"
"$cli" bench --rows "${SCALE_ROWS:-1000000}" --generate-only "$scale_ws" >/dev/null
COUNTERSIGN_WORKSPACE="$scale_ws" SCALE_ROWS="${SCALE_ROWS:-1000000}" bash scripts/with-keyring.sh bash scripts/with-tauri-driver.sh \
  bash -c 'cd tests/e2e && node --test --test-reporter=spec scale.test.mjs' \
  || { echo "--- tauri-driver log ---" >&2; cat "$work/tauri-driver.log" >&2 || true; exit 1; }
rm -rf "$scale_ws" "$scale_ws"-wal "$scale_ws"-shm "$scale_ws".backups

# First launch on a fresh home directory: no provider, the built-in model's file in the app's
# models folder (as scripts/run.sh leaves it), llama-server found through the environment.
fresh="$work/fresh-home"
models="$fresh/.local/share/app.countersign.desktop/models"
mkdir -p "$models" && mkdir -m700 "$work/run-fresh"
prepared=$(scripts/local-model prepare --size 0.5b)
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$prepared" "$1"; }
gguf=$(field model)
ln "$gguf" "$models/$(basename "$gguf")" 2>/dev/null || cp "$gguf" "$models/"
env -u COUNTERSIGN_WORKSPACE -u COUNTERSIGN_LOG_DIR -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME \
  TAURI_DRIVER="${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver" HOME="$fresh" XDG_RUNTIME_DIR="$work/run-fresh" \
  COUNTERSIGN_LLAMA_SERVER="$(field server)" EXPECT_SERVER="$(field server)" SCREENSHOT_DIR="$shots" \
  FOUND_SERVER=http://127.0.0.1:8080/v1 \
  dbus-run-session -- bash scripts/with-tauri-driver.sh \
  bash -c 'cd tests/e2e && node --test --test-reporter=spec first-run.test.mjs' \
  || { echo "--- tauri-driver log ---" >&2; cat "$work/tauri-driver.log" >&2 || true; exit 1; }
sleep 1
if pgrep -f "$(basename "$(field server)") .*--alias builtin" >/dev/null; then
  echo "the built-in runtime outlived the app" >&2
  exit 1
fi

# The assistant with the real 1.5B model: a conversation in the app on a fresh demo workspace
# that pins it (the model is started in place of the 0.5B: one local model runs at a time).
scripts/local-model stop || true
assistant_url=$(COUNTERSIGN_LOCAL_MODEL_PORT=8091 scripts/local-model start --size 1.5b)
assistant_ws="$work/assistant.countersign"
"$cli" --workspace "$assistant_ws" init --demo >/dev/null
"$cli" --workspace "$assistant_ws" --as ava provider add local --kind openai --url "$assistant_url" >/dev/null
served=$(curl -sf "$assistant_url/models" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
"$cli" --workspace "$assistant_ws" --as ava model pin local --provider local --model "$served" >/dev/null
COUNTERSIGN_WORKSPACE="$assistant_ws" bash scripts/with-keyring.sh bash scripts/with-tauri-driver.sh \
  bash -c 'cd tests/e2e && node --test --test-reporter=spec assistant.test.mjs' \
  || { echo "--- tauri-driver log ---" >&2; cat "$work/tauri-driver.log" >&2 || true; exit 1; }

echo "e2e screenshots: $shots"
ls "$shots"

# The log the app wrote during the run says what happened and never what the records, the
# questions or the keys hold: values the tests typed (a city, an account name, a question's
# words, the API key stored in the keyring) must be absent.
log=$(cat "$shots"/logs/countersign*.log)
for event in "Countersign started" "workspace file opened" "record saved" "invocation began" "model answered" "invocation finished" "command refused"; do
  grep -qF "$event" <<<"$log" || { echo "the app's log has no '$event'" >&2; exit 1; }
done
for value in Lisbon "Acme Industries" healthcare Kowalski sk-e2e-; do
  if grep -qiF "$value" <<<"$log"; then echo "the app's log holds '$value'" >&2; exit 1; fi
done
echo "e2e log: $(ls "$shots"/logs) ($(wc -l <<<"$log") lines, no typed value in it)"
