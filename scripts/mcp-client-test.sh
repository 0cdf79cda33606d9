#!/usr/bin/env bash
# Countersign's MCP server driven by a real MCP client from the package registries: the
# official Python SDK (`mcp` on PyPI, pinned, in a cached virtual environment), on a fresh demo
# workspace with the server turned on and `propose_record` switched off, acting as ben. With
# COUNTERSIGN_MODEL_URL (a local model server, as scripts/model-test.sh gives it) the workspace
# pins that model and the transcript includes a summary. The transcript is printed and kept in
# target/mcp-transcript.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${XDG_CACHE_HOME:-$HOME/.cache}/countersign/mcp-client"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import mcp' 2>/dev/null || "$venv/bin/pip" install -q --disable-pip-version-check 'mcp==2.3.0'
cargo build -q -p countersign-cli --locked
cli="$PWD/target/debug/countersign-cli"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ws="$work/mcp.countersign"
"$cli" --workspace "$ws" init --demo >/dev/null
"$cli" --workspace "$ws" --as ava mcp on >/dev/null
"$cli" --workspace "$ws" --as ava mcp tool propose_record off >/dev/null
flags=()
if [ -n "${COUNTERSIGN_MODEL_URL:-}" ]; then
  "$cli" --workspace "$ws" --as ava provider add local --kind openai --url "$COUNTERSIGN_MODEL_URL" >/dev/null
  served=$(curl -sf "$COUNTERSIGN_MODEL_URL/models" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
  "$cli" --workspace "$ws" --as ava model pin local --provider local --model "$served" >/dev/null
  flags+=(--summarize)
fi
mkdir -p target
env -u COUNTERSIGN_WORKSPACE "$venv/bin/python" tests/mcp/client.py "$cli" "$ws" ben "${flags[@]}" | tee target/mcp-transcript.txt
grep -q '^transcript: ok$' target/mcp-transcript.txt
