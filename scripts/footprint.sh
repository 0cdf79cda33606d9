#!/usr/bin/env bash
# Footprint: cold start and idle memory of Countersign beside the floor — a minimal Tauri app
# (crates/minimal-app: the same Tauri and WebKitGTK, an empty page) — in the same harness: both
# release builds, started RUNS+1 times each (7 unless RUNS says), taking turns, through tauri-driver under Xvfb in one fresh home
# directory per app. The first start is reported apart (Countersign creates its demo workspace
# then); the medians of the others are the cold start and idle memory. Prints a table; the raw
# runs land in target/footprint/runs.jsonl.
# Expects scripts/setup.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs="${RUNS:-7}"

(cd ui && npm run build)
# The same release build as the packages (scripts/package.sh strips debug information too).
CARGO_PROFILE_RELEASE_STRIP=debuginfo cargo build --release --locked --features custom-protocol -p countersign -p minimal-app
(cd tests/e2e && { [ -d node_modules ] || npm ci --no-audit --no-fund; })

out="$root/target/footprint"
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d)
display=":$((70 + RANDOM % 9))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
trap 'kill $xvfb_pid 2>/dev/null || true; rm -rf "$work"' EXIT
export DISPLAY="$display"
for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
export TAURI_DRIVER="${CARGO_HOME:-$HOME/.cargo}/bin/tauri-driver"

measure() { # run number, app binary, the selector of its first screen
  home="$work/home-$(basename "$2")"
  mkdir -p "$home" "$work/run-$1-$(basename "$2")" && chmod 700 "$work/run-$1-$(basename "$2")"
  env -u COUNTERSIGN_WORKSPACE -u XDG_DATA_HOME -u XDG_CONFIG_HOME -u XDG_CACHE_HOME \
    HOME="$home" XDG_RUNTIME_DIR="$work/run-$1-$(basename "$2")" APP_BIN="$2" READY_SELECTOR="$3" FOOTPRINT_OUT="$out/runs.jsonl" FOOTPRINT_RUN="$1" \
    dbus-run-session -- bash scripts/with-tauri-driver.sh \
    bash -c 'cd tests/e2e && node --test --test-reporter=dot footprint.test.mjs'
}
# The two apps take turns, so a slower moment of the machine falls on both.
for i in $(seq 0 "$runs"); do
  measure "$i" "$root/target/release/minimal-app" '[data-testid="ready"]'
  measure "$i" "$root/target/release/countersign" '[data-testid="row-acc_0003"]'
done

python3 - "$out/runs.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in runs:
    by.setdefault(r["app"].rsplit("/", 1)[-1], []).append(r)
def med(xs): return statistics.median(xs)
print("| | first start (ms) | cold start (ms) | idle PSS total (MiB) | idle PSS by process (MiB) |")
print("|---|---|---|---|---|")
for app, all_runs in by.items():
    first = [r for r in all_runs if r["run"] == 0]
    rs = [r for r in all_runs if r["run"] > 0]
    procs = {}
    for r in rs:
        for p in r["idle"]["processes"]:
            procs.setdefault(p["name"], []).append(p["pssMiB"])
    per = ", ".join(f"{n} {med(v):.0f}" for n, v in sorted(procs.items()))
    print(f"| {app} ({len(rs)} runs) | {first[0]['coldStartMs'] if first else '-'} | {med([r['coldStartMs'] for r in rs]):.0f} | {med([r['idle']['totalPssMiB'] for r in rs]):.0f} | {per} |")
PY
