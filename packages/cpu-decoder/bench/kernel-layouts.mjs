#!/usr/bin/env node
// Kernel alone, one v2 layout per container (FULL_4x4, UNIFORM_8/16/64), this build vs another one
// in the same memory and on the same leaf table. Shows per-leaf cost by leaf size, and how it grows
// once the output no longer fits in cache.
//   node bench/kernel-layouts.mjs [--before DIR] [rows]   (DIR holds the other build's dist; rows: 256 = 1 MiB)
// Not a test: it prints numbers (best of 5 batches, ms per call).
import { LAYOUT } from "@sgfp4/format";
import { beforeBuild, best, kernelAlone, v2UniformContainer } from "./lib.mjs";

const args = process.argv.slice(2);
const before = (await beforeBuild(args))?.kernel;
const COLS = 1024, rows = Number(args[0] ?? 256);
const reps = rows > 1000 ? 10 : 200;
console.log(`rows ${rows} x ${COLS} (${(rows * COLS * 4) / 2 ** 20} MiB output)`);
for (const [name, layout] of [["4x4", LAYOUT.FULL_4x4], ["8x8", LAYOUT.UNIFORM_8], ["16x16", LAYOUT.UNIFORM_16], ["64x64", LAYOUT.UNIFORM_64]]) {
  const alone = kernelAlone(v2UniformContainer(rows, COLS, layout), { profile: "v2", shape: [rows, COLS] });
  const theirs = before ? alone.other(before) : alone.ours;
  alone.ours();
  theirs();
  const src = new Float32Array(rows * COLS), dst = new Float32Array(rows * COLS);
  const tSet = best(() => dst.set(src), reps), tB = best(theirs, reps), tAfter = Math.min(best(alone.ours, reps), best(alone.ours, reps));
  const perLeaf = (t) => ((t * 1e6) / alone.leafCount).toFixed(1);
  console.log(`${name.padEnd(6)} ${String(alone.leafCount).padStart(7)} leaves | set ${tSet.toFixed(4)} | before ${tB.toFixed(4)} (${perLeaf(tB)} ns/leaf) | after ${tAfter.toFixed(4)} (${perLeaf(tAfter)} ns/leaf) | ${(tB / tAfter).toFixed(2)}x`);
}
