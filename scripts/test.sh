#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what is missing (scripts/setup.sh),
# then the Rust tests (kernel, CLI, app crate; unit, integration, data-driven, the TypeScript
# bindings check), the front-end checks and unit tests (svelte-check, vitest), and the
# end-to-end tests in the real app window (scripts/e2e.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

# The app crate embeds ui/dist at compile time: build the UI before any cargo command.
(cd ui && npm run build)
cargo nextest run --workspace --locked --features custom-protocol --no-fail-fast

(cd ui && npm run check && npm test)

bash scripts/e2e.sh
