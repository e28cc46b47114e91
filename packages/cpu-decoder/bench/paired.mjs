#!/usr/bin/env node
// Paired A/B of decodeInto a createOutput() array: this build against another (--before DIR holds
// its dist, e.g. a bundle made from an older commit), with Float32Array.set as the baseline. Each
// of 15 rounds times ours, before and set back to back, so the per-round ratio before/ours is
// little affected by load changes on a shared box; the median is printed.
//   node bench/paired.mjs --before /abs/dir 16      (size in MiB; tensors [n/1024, 1024])
// Not a test: it prints numbers.
import * as ours from "../dist/index.js";
import { beforeBuild, v1Container, v2MixContainer, v2RandomMixedContainer } from "./lib.mjs";

const args = process.argv.slice(2);
const before = (await beforeBuild(args))?.index;
if (!before) throw new Error("--before DIR is required");
const mib = Number(args[0]) || 16, COLS = 1024, rows = mib * 256;
const src = new Float32Array(rows * COLS).fill(1.5), warm = new Float32Array(rows * COLS);
for (const [name, bytes, profile] of [["v1 FP4", v1Container(rows, COLS), "v1"], ["v2 mix", v2MixContainer(rows, COLS), "v2"], ["v2 random MIXED", v2RandomMixedContainer(rows, COLS), "v2"]]) {
  const o = { profile, shape: [rows, COLS] };
  const a = ours.createOutput(o.shape), b = before.createOutput(o.shape);
  const fs = { ours: () => ours.decodeInto(bytes, o, a), before: () => before.decodeInto(bytes, o, b), set: () => warm.set(src) };
  for (const f of Object.values(fs)) for (let t0 = performance.now(); performance.now() - t0 < 300; ) f();
  const n = mib >= 64 ? 3 : 10, ratios = [], best = { ours: 1e9, before: 1e9, set: 1e9 };
  for (let r = 0; r < 15; r++) {
    const tr = {};
    for (const [k, f] of Object.entries(fs)) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) f();
      tr[k] = (performance.now() - t0) / n;
      best[k] = Math.min(best[k], tr[k]);
    }
    ratios.push(tr.before / tr.ours);
  }
  ratios.sort((x, y) => x - y);
  console.log(`${mib} MiB ${name}: set ${best.set.toFixed(3)} | ours ${best.ours.toFixed(3)} (${(best.set / best.ours).toFixed(2)}) | before ${best.before.toFixed(3)} (${(best.set / best.before).toFixed(2)}) | paired speed-up median ${ratios[7].toFixed(2)} [${ratios[0].toFixed(2)}-${ratios[14].toFixed(2)}]`);
}
