// Per-level cost of the leaf fits a heavy-tailed v2 default encode makes (Student-t 1024x1024, seed 2): the nodes
// the threshold policy visits are collected once, then each level's fits are timed alone (ns per tensor weight;
// the levels add up to the fitting cost of the encode). With a second dist folder the two builds alternate and
// the best of the repetitions is kept (this box is shared: single runs swing 10-20%), and their fits are first
// checked to agree (chosen mode, parameters, codes and errors; T158 candidates not fitted under chosenOnly skipped).
// Usage: node bench/fit-levels.mjs [dist A] [dist B] [sizes, e.g. 64,32,16,8,4] [repetitions] [ms per timing]
import { loadBuild } from "./load-build.mjs";

const load = loadBuild;
const builds = [await load(process.argv[2])];
if (process.argv[3]) builds.push(await load(process.argv[3]));
const sizes = (process.argv[4] || "64,32,16,8,4").split(",").map(Number);
const repetitions = Number(process.argv[5] || 5);
const ms = Number(process.argv[6] || 250);
const m = builds[0];
const R = 1024;
const data = m.synthetic("student-t", R, R, 2);
const fit = m.resolveFit("v2");
const ws = new m.FitWorkspace();
const quadtree = m.resolveQuadtree();
const power = m.tensorPower(data);
const LEVEL_START = [0, 1, 5, 21, 85, 341];
const nodes = { 64: [], 32: [], 16: [], 8: [], 4: [] };
const block = new Float64Array(4096);
for (let by = 0; by < R / 64; by++) {
  for (let bx = 0; bx < R / 64; bx++) {
    m.extractBlock(data, R, R, by * 64, bx, block);
    const fitter = new m.MacroblockFitter(block, fit, new m.FitWorkspace());
    m.decideByThreshold(fitter, quadtree, power);
    // the fitter's cache (private in TypeScript) holds exactly the visited node ids
    for (const id of fitter.cache.keys()) {
      const level = LEVEL_START.findIndex((start, i) => id >= start && id < LEVEL_START[i + 1]);
      const size = m.LEVEL_SIZES[level];
      const perRow = 64 / size;
      const raster = id - LEVEL_START[level];
      const y = Math.floor(raster / perRow) * size;
      const x = (raster % perRow) * size;
      const v = new Float64Array(size * size);
      let sum = 0;
      for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) sum += v[i * size + j] = block[(y + i) * 64 + x + j];
      nodes[size].push([v, sum]);
    }
  }
}
if (builds.length === 2) {
  for (const size of sizes) {
    for (const [v, sum] of nodes[size]) {
      const a = builds[0].fitLeafChosen(v, size, fit, sum, ws);
      const b = builds[1].fitLeafChosen(v, size, fit, sum, ws);
      const same = (p, q) => p.mode === q.mode && p.scaleBits === q.scaleBits && p.biasBits === q.biasBits && p.lwe === q.lwe && p.sse === q.sse && String(p.codes) === String(q.codes);
      if (!same(a.chosen, b.chosen) || !same(a.fp4, b.fp4)) throw new Error(`the builds disagree on a ${size}x${size} leaf`);
    }
  }
}
const best = sizes.map(() => builds.map(() => Infinity));
for (let r = 0; r < repetitions; r++) {
  for (const [si, size] of sizes.entries()) {
    for (const [bi, build] of builds.entries()) {
      const list = nodes[size];
      const t0 = performance.now();
      let rounds = 0;
      while (performance.now() - t0 < ms) {
        for (const [v, sum] of list) build.fitLeafChosen(v, size, fit, sum, ws);
        rounds++;
      }
      best[si][bi] = Math.min(best[si][bi], ((performance.now() - t0) * 1e6) / rounds / (R * R));
    }
  }
}
const totals = builds.map(() => 0);
for (const [si, size] of sizes.entries()) {
  const perBlock = nodes[size].length / ((R * R) / 4096);
  const cells = best[si].map((ns, bi) => ((totals[bi] += ns), ns.toFixed(1)));
  console.log(`${String(size).padStart(2)}x${size}: ${perBlock.toFixed(1)} nodes/block, ns per tensor weight ${cells.join(" -> ")}${builds.length === 2 ? ` (${(best[si][0] / best[si][1]).toFixed(2)}x)` : ""}`);
}
console.log(`all levels: ${totals.map((t) => t.toFixed(1)).join(" -> ")} ns per tensor weight${builds.length === 2 ? ` (${(totals[0] / totals[1]).toFixed(2)}x)` : ""}`);
