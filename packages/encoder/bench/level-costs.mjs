// Where a v2 default encode's decision time goes: every MacroblockFitter.fitOrBound call is timed by node
// size and by what it did (a bound proving the node must split, a bound that failed and became a full fit,
// a resumed fit, a plain fit), after three untimed warm-up passes; then the uninstrumented decide time.
// ns per tensor weight add up to the instrumented total; ns per node weight is that cost over the node's own
// area. Also the share of weights per final leaf size.
// Usage: node bench/level-costs.mjs [dist, default ../dist] [family or model.onnx, default student-t] [size, default 1024]
import { readFileSync } from "node:fs";
import { loadBuild } from "./load-build.mjs";
import { onnxWeightTensors } from "@sgfp4/testkit/workloads";

const m = await loadBuild(process.argv[2] || new URL("../dist", import.meta.url).pathname);
const input = process.argv[3] || "student-t";
const size = Number(process.argv[4] || 1024);
const fit = m.resolveFit("v2");
const q = m.resolveQuadtree();
// [block, tensor power] of every macroblock (padded blocks of a model's tensors included)
const blocks = [];
const addTensor = (data, rows, cols) => {
  const power = m.tensorPower(data);
  for (let by = 0; by < Math.ceil(rows / 64); by++) {
    for (let bx = 0; bx < Math.ceil(cols / 64); bx++) {
      const b = new Float64Array(4096);
      m.extractBlock(data, cols, rows, by * 64, bx, b);
      blocks.push([b, power]);
    }
  }
};
if (input.endsWith(".onnx")) {
  for (const t of onnxWeightTensors(readFileSync(input))) addTensor(t.data, ...t.shape);
} else addTensor(m.synthetic(input, size, size, 2), size, size);
const W = blocks.length * 4096;
const decideAll = () => {
  for (const [b, power] of blocks) m.decideByThreshold(new m.MacroblockFitter(b, fit, new m.FitWorkspace(), true), q, power);
};
for (let r = 0; r < 3; r++) decideAll();

const P = m.MacroblockFitter.prototype;
const original = P.fitOrBound;
const stats = {};
P.fitOrBound = function (y, x, s, limitOf) {
  const id = m.nodeId(y, x, s);
  // cache and resumes are private in TypeScript, plain fields here
  const kind = this.cache.has(id) ? "cached" : this.resumes.has(id) ? "resumed fit" : limitOf ? "bound?" : "fit";
  const t0 = performance.now();
  const r = original.call(this, y, x, s, limitOf);
  const dt = performance.now() - t0;
  const what = kind === "bound?" ? ("lowerBound" in r ? "bound (split proven)" : "bound failed, full fit") : kind;
  const k = `${String(s).padStart(2)}x${s} ${what}`;
  const e = (stats[k] ??= { calls: 0, ms: 0, area: 0 });
  e.calls++;
  e.ms += dt;
  e.area += s * s;
  return r;
};
const leafWeights = {};
const t0 = performance.now();
for (const [b, power] of blocks) {
  const root = m.decideByThreshold(new m.MacroblockFitter(b, fit, new m.FitWorkspace(), true), q, power);
  for (const l of m.leavesOfNode(root)) leafWeights[l.size] = (leafWeights[l.size] ?? 0) + l.size * l.size;
}
const total = performance.now() - t0;
P.fitOrBound = original;
console.log(`# ${input}${input.endsWith(".onnx") ? "" : ` ${size}x${size}`}: ${blocks.length} macroblocks; instrumented decide ${((total * 1e6) / W).toFixed(1)} ns per weight`);
console.log("| node, what | calls per block | ns per tensor weight | ns per node weight |\n| --- | ---: | ---: | ---: |");
for (const [k, e] of Object.entries(stats).sort((a, b) => b[1].ms - a[1].ms)) {
  console.log(`| ${k} | ${(e.calls / blocks.length).toFixed(2)} | ${((e.ms * 1e6) / W).toFixed(1)} | ${((e.ms * 1e6) / e.area).toFixed(1)} |`);
}
console.log(`share of weights per final leaf size: ${Object.entries(leafWeights).map(([s, w]) => `${s}x${s} ${((100 * w) / W).toFixed(1)}%`).join(", ")}`);
for (let r = 0; r < 3; r++) {
  const t = performance.now();
  decideAll();
  console.log(`uninstrumented decide ${(((performance.now() - t) * 1e6) / W).toFixed(1)} ns per weight`);
}
