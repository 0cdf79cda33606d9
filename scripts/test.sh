#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what is missing (scripts/setup.sh),
# then the Rust tests (kernel, CLI, app crate; unit, integration, data-driven, the TypeScript
# bindings check, the provider layer against fake servers), the front-end checks and unit tests
# (svelte-check, vitest), the real-model test (scripts/model-test.sh), and the
# end-to-end tests in the real app window (scripts/e2e.sh), and the packages: the .deb and .rpm
# built, the .deb installed and its installed app driven on a fresh home directory, then removed
# (scripts/package-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says how long it took, so the slow ones are known.
step() {
  local started=$SECONDS
  "$@"
  echo "test: $* took $((SECONDS - started)) s"
}

step bash scripts/setup.sh

# The app crate embeds ui/dist at compile time: build the UI before any cargo command.
(cd ui && npm run build)
step cargo nextest run --workspace --locked --features custom-protocol --no-fail-fast

(cd ui && npm run check && npm test)

# The provider layer against a real local model (downloads the pinned 0.5B model on first use),
# and the canary-secret test against a real OS keyring (a throwaway gnome-keyring).
step bash scripts/model-test.sh
step bash scripts/keyring-test.sh

step bash scripts/e2e.sh

step bash scripts/package-test.sh
