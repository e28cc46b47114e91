#!/usr/bin/env bash
# Runs every test of the repository on this machine, after its own set-up:
# lint, typecheck and unit tests of every package (turbo), then the conformance suite over
# every backend this machine has. Exit status is nonzero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export TURBO_TELEMETRY_DISABLED=1
pnpm exec turbo run lint typecheck test --output-logs=new-only --concurrency=2 "$@"
bash scripts/conformance.sh --no-setup
