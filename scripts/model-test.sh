#!/usr/bin/env bash
# The real-model test: starts the local 0.5B model (scripts/local-model), runs the ignored
# real-model tests against it (and the built-in runtime's, which run the same llama-server and
# model themselves), then the MCP server driven by a real MCP client, with a summary on that
# model (scripts/mcp-client-test.sh), and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
url=$(scripts/local-model start --size 0.5b)
status=$(scripts/local-model status)
server_log=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("log", ""))' "$status")
# On a failure, the server's own account of the requests it served (what it saw of the failing
# call) goes in the output before the server is stopped.
trap 'rc=$?; if [ $rc -ne 0 ] && [ -f "$server_log" ]; then echo "--- the model server log (last 60 lines)"; tail -n 60 "$server_log"; fi; scripts/local-model stop' EXIT
export COUNTERSIGN_MODEL_GGUF=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["model"])' "$status")
export COUNTERSIGN_LLAMA_SERVER=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["server"])' "$status")
export COUNTERSIGN_MODEL_SHA256=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["sha256"])' "$status")
# With the same package selection and features as the whole suite's run (scripts/test.sh), so
# the tests built there are reused: a narrower `-p` resolves other dependency features and
# builds much of the tree again.
COUNTERSIGN_MODEL_URL="$url" cargo nextest run --workspace --locked --features custom-protocol \
  --run-ignored only -E 'binary(kernel) & test(/^real_model::/) | binary(cli) & test(/^built_in_model::real_/)' \
  --no-capture "$@"
COUNTERSIGN_MODEL_URL="$url" bash scripts/mcp-client-test.sh
