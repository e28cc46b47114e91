// Is the leaf fits' inner pass faster as WebAssembly? Builds pass.c with clang (wasm32, SIMD) into a temporary
// folder, checks that the scalar and order-keeping SIMD forms give the JavaScript pass's exact numbers on random
// heavy-tailed leaves, then times all four on leaves of n weights (ns per weight per pass, best of 5).
// Usage: node bench/pass-kernels/run.mjs [n, default 64]   (needs clang with the wasm32 target and wasm-ld)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "sgfp4-pass-"));
const file = join(dir, "pass.wasm");
execFileSync("clang", ["--target=wasm32", "-msimd128", "-O3", "-nostdlib", "-ffreestanding", "-ffp-contract=off", "-Wl,--no-entry", "-Wl,--export-all", "-o", file, new URL("./pass.c", import.meta.url).pathname]);
const { instance } = await WebAssembly.instantiate(readFileSync(file), {});
rmSync(dir, { recursive: true, force: true });
const e = instance.exports;
const mem = new Float64Array(e.memory.buffer);
const vAt = e.v.value / 8;
const sumsAt = e.sums.value / 8;

// src/fit/codes.ts assignFp4 without its early stop: as it was (Math.fround per weight), and as it is (the 16
// decoded values in a table, the same numbers)
let js = [];
const codes = new Int8Array(4096);
function fp4Js(v, n, S, B) {
  let sse = 0, maxAbs = 0, sq = 0, sqq = 0, sqv = 0;
  const inv = 1 / S;
  for (let i = 0; i < n; i++) {
    const w = v[i];
    const y = (w - B) * inv;
    const floorY = Math.floor(y);
    let q = floorY + +(y - floorY >= 0.5);
    if (q > 7) q = 7;
    else if (q < -8) q = -8;
    codes[i] = q;
    const d = w - Math.fround(S * q + B);
    sse += d * d;
    const a = Math.abs(d);
    if (a > maxAbs) maxAbs = a;
    sq += q;
    sqq += q * q;
    sqv += q * w;
  }
  js = [sse, maxAbs, sq, sqq, sqv];
}
const decoded = new Float64Array(16);
function fp4JsTable(v, n, S, B) {
  let sse = 0, maxAbs = 0, sq = 0, sqq = 0, sqv = 0;
  const inv = 1 / S;
  for (let k = 0; k < 16; k++) decoded[k] = Math.fround(S * (k - 8) + B);
  for (let i = 0; i < n; i++) {
    const w = v[i];
    const y = (w - B) * inv;
    const floorY = Math.floor(y);
    let q = floorY + +(y - floorY >= 0.5);
    if (q > 7) q = 7;
    else if (q < -8) q = -8;
    codes[i] = q;
    const d = w - decoded[q + 8];
    sse += d * d;
    const a = Math.abs(d);
    if (a > maxAbs) maxAbs = a;
    sq += q;
    sqq += q * q;
    sqv += q * w;
  }
  return [sse, maxAbs, sq, sqq, sqv];
}

const n = Number(process.argv[2] ?? 64);
if (n % 2 || n > 4096) throw new Error("n must be even and at most 4096");
let seed = 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const leaf = new Float64Array(n);
let mismatches = 0;
for (let t = 0; t < 5000; t++) {
  for (let i = 0; i < n; i++) leaf[i] = Math.fround((rand() - 0.5) / (Math.abs(rand() - 0.5) + 0.05));
  const S = 0.05 + rand() * 3;
  const B = Math.fround((rand() - 0.5) * 0.1);
  mem.set(leaf, vAt);
  fp4Js(leaf, n, S, B);
  const t = fp4JsTable(leaf, n, S, B);
  for (let k = 0; k < 5; k++) if (t[k] !== js[k]) mismatches++;
  for (const f of [e.fp4_scalar, e.fp4_simd_ordered]) {
    f(n, S, B);
    for (let k = 0; k < 5; k++) if (mem[sumsAt + k] !== js[k]) mismatches++;
  }
}
console.log(`n = ${n}: the table form, wasm scalar and order-keeping SIMD differ from JavaScript in ${mismatches} of ${5000 * 3 * 5} sums`);
mem.set(leaf, vAt);
const reps = Math.ceil(4e6 / n);
const time = (f) => {
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let k = 0; k < reps; k++) f(n, 1.3 + (k & 7) * 0.01, 0.01);
    best = Math.min(best, ((performance.now() - t0) * 1e6) / reps / n);
  }
  return best.toFixed(2);
};
console.log(`ns per weight per pass: JavaScript ${time((n, S, B) => fp4Js(leaf, n, S, B))}, JavaScript with the table ${time((n, S, B) => fp4JsTable(leaf, n, S, B))}, wasm scalar ${time(e.fp4_scalar)}, wasm SIMD same order ${time(e.fp4_simd_ordered)}, wasm SIMD per-lane sums ${time(e.fp4_simd_lanes)}`);
