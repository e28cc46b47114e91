// Per-leaf fitting cost (ns per weight) on 512x512 synthetic data cut into size x size leaves.
// Run after `pnpm --filter @sgfp4/encoder build`. Usage: node bench/fit-leaf.mjs [family] [size] [fitFp4Plain|fitLeaf] [dist folder]
import { loadBuild } from "./load-build.mjs";

const [family = "gaussian", sizeArg = "64", what = "fitLeaf", dist] = process.argv.slice(2);
const m = await loadBuild(dist);
const size = Number(sizeArg);
const data = m.synthetic(family, 512, 512, 3);
const leaves = [];
for (let r = 0; r + size <= 512; r += size) {
  for (let c = 0; c + size <= 512; c += size) {
    const v = new Float64Array(size * size);
    for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) v[i * size + j] = data[(r + i) * 512 + c + j];
    leaves.push(v);
  }
}
const options = { ...m.DEFAULT_FIT_OPTIONS, v2: true };
const ws = new m.FitWorkspace();
const fit = what === "fitFp4Plain" ? (v) => m.fitFp4Plain(v, size * size, true, ws) : (v) => m.fitLeaf(v, size, options, ws);
for (let w = 0; w < 3; w++) for (const v of leaves) fit(v);
const t0 = performance.now();
let rounds = 0;
while (performance.now() - t0 < 1500) {
  for (const v of leaves) fit(v);
  rounds++;
}
const ns = ((performance.now() - t0) * 1e6) / (rounds * leaves.length * size * size);
console.log(`${what} ${family} ${size}x${size}: ${ns.toFixed(1)} ns/weight`);
