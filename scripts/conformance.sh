#!/usr/bin/env bash
# The main job: the golden vectors against every backend this machine has (cpu, webgpu, vulkan),
# a readable report on the terminal, and JSON + JUnit reports under reports/.
# Extra arguments go to `sgfp4 conformance` (for example --require webgpu).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --no-setup ]]; then shift; else bash scripts/setup.sh; fi
mkdir -p reports
node apps/cli/dist/bin.js conformance --backend all --report json=reports/conformance.json,junit=reports/conformance.xml "$@"
