#!/usr/bin/env node
// Kernel alone, one v2 layout per container (FULL_4x4, UNIFORM_8/16/64), this build vs another one
// in the same memory and on the same leaf table. Shows per-leaf cost by leaf size, and how it grows
// once the output no longer fits in cache.
//   node bench/kernel-layouts.mjs --before DIR [rows]   (DIR holds the other build's dist; rows: 256 = 1 MiB)
// Not a test: it prints numbers (best of 5 batches, ms per call).
import { writeV2, parse, LAYOUT } from "@sgfp4/format";
import * as after from "../dist/kernel.js";

const args = process.argv.slice(2);
const beforeAt = args.indexOf("--before");
const before = beforeAt >= 0 ? await import(new URL(args.splice(beforeAt, 2)[1] + "/kernel.js", `file://${process.cwd()}/`).href) : after;
const COLS = 1024, rows = Number(args[0] ?? 256);
const reps = rows > 1000 ? 10 : 200;
let seed = 1;
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const randomBytes = (n) => Uint8Array.from({ length: n }, () => (rnd() * 256) | 0);
const pay = {};
for (const s of [4, 8, 16, 64]) pay[s] = [randomBytes((s * s) / 2), randomBytes((s * s) / 4)];
const best = (f) => {
  let b = Infinity;
  for (let k = 0; k < 5; k++) {
    const s = performance.now();
    for (let i = 0; i < reps; i++) f();
    b = Math.min(b, (performance.now() - s) / reps);
  }
  return b;
};
console.log(`rows ${rows} x ${COLS} (${(rows * COLS * 4) / 2 ** 20} MiB output)`);
for (const [name, layout, size] of [["4x4", LAYOUT.FULL_4x4, 4], ["8x8", LAYOUT.UNIFORM_8, 8], ["16x16", LAYOUT.UNIFORM_16, 16], ["64x64", LAYOUT.UNIFORM_64, 64]]) {
  const records = Array.from({ length: (rows / 64) * (COLS / 64) }, () => ({
    layout,
    leaves: Array.from({ length: (64 / size) ** 2 }, () => {
      const mode = rnd() < 0.5 ? 0 : 1;
      return { mode, scaleBits: 0x3000 + ((rnd() * 0x800) | 0), biasBits: (0xa000 + ((rnd() * 0x1000) | 0)) & 0xfff0, payload: pay[size][mode] };
    }),
  }));
  const bytes = writeV2({ shape: [rows, COLS], records });
  const c = parse(bytes, { profile: "v2", shape: [rows, COLS] });
  const plan = after.planMemory(c, rows * COLS * 4);
  const pages = after.pagesFor(plan.totalBytes);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  after.fillInputs(memory.buffer, c, bytes, plan);
  const run = (k) => () => k.decode_leaves(plan.tableAt, c.leafCount, 0, rows, COLS, c.tilesX, 0);
  const a = run(after.instantiate(after.kernelModule(), memory)), b = run(before.instantiate(before.kernelModule(), memory));
  a(); b();
  const src = new Float32Array(rows * COLS), dst = new Float32Array(rows * COLS);
  const tSet = best(() => dst.set(src)), tA = best(a), tB = best(b), tA2 = best(a);
  const tAfter = Math.min(tA, tA2);
  console.log(`${name.padEnd(6)} ${String(c.leafCount).padStart(7)} leaves | set ${tSet.toFixed(4)} | before ${tB.toFixed(4)} (${((tB * 1e6) / c.leafCount).toFixed(1)} ns/leaf) | after ${tAfter.toFixed(4)} (${((tAfter * 1e6) / c.leafCount).toFixed(1)} ns/leaf) | ${(tB / tAfter).toFixed(2)}x`);
}
