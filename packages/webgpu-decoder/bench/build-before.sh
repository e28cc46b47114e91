#!/usr/bin/env bash
# Bundle bench/bench.ts as it was at git revision REV (default: 35fc15c, the kernel of runs 5-6,
# host-built cell table) into bench/dist/bench-before.mjs, next to `pnpm bench:build`'s bench.mjs,
# to compare both kernels alternating in fresh processes (issue 14: no slowdown beyond noise):
#   for s in 256 1024; do for b in bench-before bench; do node bench/dist/$b.mjs --sizes $s --label H200 --json $OUT/$b-$s.json; done; done
# The old sources go to node_modules/.cache/bench-before/ (out of typecheck and lint) and resolve
# this package's node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-35fc15c}
old=node_modules/.cache/bench-before
rm -rf "$old" && mkdir -p "$old"
git archive "$rev" src bench/bench.ts test/reference.ts | tar -x -C "$old"
node_modules/.bin/esbuild "$old/bench/bench.ts" --bundle --platform=node --format=esm --external:webgpu --outfile=bench/dist/bench-before.mjs --log-level=warning
echo "wrote bench/dist/bench-before.mjs (bench.ts at $rev)"
