#!/usr/bin/env node
// Store-pattern benchmark (see patterns.c): what the write order alone costs.
//   node bench/store-patterns/run.mjs [MiB ...]     (default 16 64; columns 1024)
// Not a test: it prints ms per pass (best of 7 batches of 4) and the ratio to Float32Array.set.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The wasm module: PATTERNS_WASM names a prebuilt one (machines without clang), else clang builds it. */
function patternsModule() {
  if (process.env.PATTERNS_WASM) return new WebAssembly.Module(readFileSync(process.env.PATTERNS_WASM));
  const dir = mkdtempSync(join(tmpdir(), "sgfp4-patterns-"));
  try {
    const wasmFile = join(dir, "patterns.wasm");
    execFileSync("clang", ["--target=wasm32", "-msimd128", "-mbulk-memory", "-O3", "-nostdlib", "-ffreestanding", "-Wl,--no-entry",
      "-Wl,--import-memory", "-Wl,-z,stack-size=0", "-o", wasmFile, join(here, "patterns.c")]);
    return new WebAssembly.Module(readFileSync(wasmFile));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const module = patternsModule();

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const best = (f) => {
  f();
  let b = Infinity;
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 4; i++) f();
    b = Math.min(b, (performance.now() - t0) / 4);
  }
  return b;
};
for (const mib of sizes.length ? sizes : [16, 64]) {
  const cols = 1024, rows = mib * 256, bytes = mib * 1024 * 1024;
  const memory = new WebAssembly.Memory({ initial: (bytes + 64 * cols * 4) / 65536 + 1 });
  const k = new WebAssembly.Instance(module, { env: { memory } }).exports;
  const src = new Float32Array(rows * cols).fill(1), dst = new Float32Array(rows * cols);
  const set = best(() => dst.set(src));
  const cases = [
    ["sequential", () => k.sequential(0, rows * cols)],
    ["leaf by leaf 64x64", () => k.leaves(0, rows, cols, 6)],
    ["leaf by leaf 16x16", () => k.leaves(0, rows, cols, 4)],
    ["leaf by leaf 4x4", () => k.leaves(0, rows, cols, 2)],
    ["row groups of 1", () => k.row_groups(0, rows, cols, 1)],
    ["row groups of 4", () => k.row_groups(0, rows, cols, 4)],
    ["staged 8 rows + memory.copy", () => k.staged(0, rows, cols, bytes, 8)],
    ["staged 64 rows (the band) + memory.copy", () => k.staged(0, rows, cols, bytes, 64)],
  ];
  console.log(`${mib} MiB output (${rows} x ${cols}); Float32Array.set ${set.toFixed(3)} ms`);
  for (const [name, f] of cases) {
    const t = best(f);
    console.log(`  ${name.padEnd(40)} ${t.toFixed(3).padStart(8)} ms   set/this ${(set / t).toFixed(2)}`);
  }
}
