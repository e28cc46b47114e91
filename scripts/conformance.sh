#!/usr/bin/env bash
# The main job: the golden vectors against every backend this machine has (cpu, webgpu, vulkan),
# a readable report on the terminal, and JSON + JUnit reports under reports/.
# Extra arguments go to `sgfp4 conformance` (for example --require webgpu).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --no-setup ]]; then shift; else bash scripts/setup.sh; fi
mkdir -p reports
# SGFP4_REQUIRE="cpu webgpu vulkan" turns an unavailable backend into a failure (release gate).
require=()
for b in ${SGFP4_REQUIRE:-}; do require+=(--require "$b"); done
node apps/cli/dist/bin.js conformance --backend all "${require[@]}" --report json=reports/conformance.json,junit=reports/conformance.xml "$@"
