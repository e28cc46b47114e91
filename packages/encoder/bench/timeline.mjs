// Timeline of a pooled v2 encode: when its jobs finish, counted from the call, so the serial work on the
// calling thread before the first job can start and after the last one ends shows up; then the one pass
// that must precede the jobs (the tensor's power) and one copy of the tensor, alone.
// A build is a folder with index.js (a `dist`) or index.mjs + worker.js (a bundle, see bench/ab.mjs).
// Usage: node bench/timeline.mjs [build, default ../dist] [threads, default 16] [size, default 2048] [family, default gaussian]
import { loadBuild } from "./load-build.mjs";

const dir = process.argv[2] || new URL("../dist", import.meta.url).pathname;
const m = await loadBuild(dir);
const threads = Number(process.argv[3] ?? 16);
const size = Number(process.argv[4] ?? 2048);
const family = process.argv[5] ?? "gaussian";
const data = m.synthetic(family, size, size, 1);
const pool = new m.WorkerPool(threads);
for (let r = 0; r < 8; r++) {
  const stamps = [];
  const t0 = performance.now();
  const out = await m.encodeTensor(data, [size, size], { profile: "v2", pool, onProgress: () => stamps.push(performance.now() - t0) });
  const t = performance.now() - t0;
  console.log(`${family} ${size}x${size}, ${threads} threads: total ${t.toFixed(1)} ms (${((size * size) / t / 1e3).toFixed(1)} M weights/s), ${stamps.length} jobs, first done at ${stamps[0].toFixed(1)} ms, last at ${stamps.at(-1).toFixed(1)} ms, ${(t - stamps.at(-1)).toFixed(1)} ms after it, ${out.bytes.length} bytes`);
}
let t1 = performance.now();
const power = m.tensorPower(data);
const tp = performance.now() - t1;
t1 = performance.now();
const copy = data.slice();
console.log(`tensorPower ${tp.toFixed(1)} ms (${power.toPrecision(6)}), one copy of the tensor ${(performance.now() - t1).toFixed(1)} ms (${copy.length} values)`);
await pool.close();
