// Cost of the v2 threshold policy with its fits: decideByThreshold over every macroblock of a 512x512 tensor (seed 2),
// 5 passes per timing, ns per tensor weight. With a second dist folder the two builds alternate (10 times by default,
// first A then B, then B then A, ...) and their trees are first checked to be the same leaves with the same parameters.
// Usage: node bench/tree-decisions.mjs [dist A] [dist B] [family, default student-t] [alternations]
import { loadBuild } from "./load-build.mjs";

const load = loadBuild;
const builds = [await load(process.argv[2])];
if (process.argv[3]) builds.push(await load(process.argv[3]));
const family = process.argv[4] ?? "student-t";
const alternations = Number(process.argv[5] ?? 10);
const m = builds[0];
const data = m.synthetic(family, 512, 512, 2);
const fit = m.resolveFit("v2");
const q = m.resolveQuadtree();
const power = m.tensorPower(data);
const blocks = [];
for (let by = 0; by < 8; by++) {
  for (let bx = 0; bx < 8; bx++) {
    const b = new Float64Array(4096);
    m.extractBlock(data, 512, 512, by * 64, bx, b);
    blocks.push(b);
  }
}
const leavesOf = (build) => JSON.stringify(blocks.map((b) => build.leavesOfNode(build.decideByThreshold(new build.MacroblockFitter(b, fit, new build.FitWorkspace(), true), q, power)).map((l) => [l.y, l.x, l.size, l.mode, l.scaleBits, l.biasBits])));
if (builds.length === 2 && leavesOf(builds[0]) !== leavesOf(builds[1])) throw new Error("the two builds choose different trees");
const times = builds.map(() => []);
for (let r = 0; r < alternations; r++) {
  const order = r % 2 ? [...builds.keys()].reverse() : [...builds.keys()];
  for (const i of order) {
    const build = builds[i];
    const t0 = performance.now();
    for (let pass = 0; pass < 5; pass++) for (const b of blocks) build.decideByThreshold(new build.MacroblockFitter(b, fit, new build.FitWorkspace(), true), q, power);
    times[i].push(((performance.now() - t0) * 1e6) / (5 * 512 * 512));
  }
}
const sorted = times.map((t) => t.slice().sort((a, b) => a - b));
sorted.forEach((t, i) => console.log(`${i ? "B" : "A"} ${process.argv[2 + i] ?? "dist"}: best ${t[0].toFixed(1)}, median ${t[t.length >> 1].toFixed(1)} ns per weight (${times[i].map((x) => x.toFixed(0)).join(" ")})`));
if (sorted.length === 2) console.log(`A / B: best ${(sorted[0][0] / sorted[1][0]).toFixed(3)}, median ${(sorted[0][sorted[0].length >> 1] / sorted[1][sorted[1].length >> 1]).toFixed(3)}`);
