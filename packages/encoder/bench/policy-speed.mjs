// One-thread encode speed of the two policies, alternating in one process (best of `reps`; M weights/s), v2 defaults.
// Usage: node bench/policy-speed.mjs [size, default 512] [reps, default 5] [families...]
import { encodeTensor, synthetic } from "../dist/index.js";

const [size = "512", reps = "5", ...families] = process.argv.slice(2);
const n = Number(size);
for (const family of families.length ? families : ["gaussian", "laplacian", "student-t", "row-scale"]) {
  const data = synthetic(family, n, n, 1);
  const times = { spec: [], rd: [] };
  for (let r = 0; r < Number(reps); r++) {
    for (const policy of ["spec", "rd"]) {
      const t0 = performance.now();
      await encodeTensor(data, [n, n], { policy });
      times[policy].push(performance.now() - t0);
    }
  }
  const rate = (p) => (n * n) / Math.min(...times[p]) / 1e3;
  console.log(`${family}: spec ${rate("spec").toFixed(2)}, rd ${rate("rd").toFixed(2)} M weights/s; rd / spec ${(rate("rd") / rate("spec")).toFixed(2)}`);
}
