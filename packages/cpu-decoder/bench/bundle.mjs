#!/usr/bin/env node
// Packs the CPU benchmarks for a machine without the workspace (the device machine of
// BENCHMARKS.md): .bench/cpu-bench.mjs (bench.mjs with its imports bundled) and
// .bench/store-patterns.mjs + .bench/patterns.wasm. Needs esbuild (dev dependency) and clang.
//   node bench/bundle.mjs   then, there:  node --expose-gc .bench/cpu-bench.mjs 16 64
//                                         PATTERNS_WASM=.bench/patterns.wasm node .bench/store-patterns.mjs
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, ".bench");
mkdirSync(out, { recursive: true });
for (const [entry, file] of [["bench/bench.mjs", "cpu-bench.mjs"], ["bench/store-patterns/run.mjs", "store-patterns.mjs"]]) {
  buildSync({ entryPoints: [join(root, entry)], bundle: true, platform: "node", format: "esm", outfile: join(out, file), logLevel: "warning" });
}
execFileSync("clang", ["--target=wasm32", "-msimd128", "-mbulk-memory", "-O3", "-nostdlib", "-ffreestanding", "-Wl,--no-entry",
  "-Wl,--import-memory", "-Wl,-z,stack-size=0", "-o", join(out, "patterns.wasm"), join(root, "bench", "store-patterns", "patterns.c")]);
console.log(`wrote ${out}/cpu-bench.mjs, store-patterns.mjs, patterns.wasm`);
