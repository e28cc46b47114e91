// Two builds of the encoder timed against each other: v2 default encodes of every synthetic family (and,
// given an ONNX file, its weight tensors), builds A and B alternating in one process, medians of `reps`;
// every encode of B is compared byte for byte with A's. threads 1 encodes on the calling thread; more uses a
// worker pool per build (M weights/s are then for all threads together).
// A build is a folder with index.js (a `dist`) or index.mjs + worker.js (a bundle, e.g. for another machine:
//   esbuild <dist>/internal.js --bundle --platform=node --format=esm --outfile=<folder>/index.mjs
//   esbuild <dist>/worker.js --bundle --platform=node --format=esm --outfile=<folder>/worker.js).
// Usage: node bench/ab.mjs <build A> <build B> [size, default 2048] [reps, default 7] [threads, e.g. 1 or 8,16] [model.onnx]
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { loadBuild } from "./load-build.mjs";
import { onnxWeightTensors } from "@sgfp4/testkit/workloads";

const [dirA, dirB] = process.argv.slice(2, 4);
if (!dirA || !dirB) throw new Error("usage: node bench/ab.mjs <build A> <build B> [size] [reps] [threads] [model.onnx]");
const builds = [await loadBuild(dirA), await loadBuild(dirB)];
const size = Number(process.argv[4] ?? 2048);
const reps = Number(process.argv[5] ?? 7);
const threadList = (process.argv[6] ?? "1").split(",").map(Number);
const onnx = process.argv[7];

const { FAMILIES, synthetic } = builds[1];
const inputs = FAMILIES.map((family) => ({ label: family, tensors: [{ data: synthetic(family, size, size, 1), shape: [size, size] }] }));
if (onnx) {
  const tensors = onnxWeightTensors(readFileSync(onnx));
  inputs.push({ label: `real: ${onnx.split("/").pop()}`, tensors });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`# A = ${dirA}, B = ${dirB}; ${size}x${size}, ${reps} alternating repetitions, medians; ${cpus()[0]?.model ?? "?"} x${cpus().length}, load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log("| input | threads | A M weights/s | B M weights/s | B / A | same bytes |\n| --- | ---: | ---: | ---: | ---: | --- |");
for (const threads of threadList) {
  const pools = builds.map((m) => (threads > 1 ? new m.WorkerPool(threads) : undefined));
  for (const { label, tensors } of inputs) {
    const weights = tensors.reduce((s, t) => s + t.data.length, 0);
    const inner = Math.max(1, Math.ceil(4e6 / weights)); // small models: several encodes per timing
    const rates = [[], []];
    let same = true;
    for (let r = 0; r < reps; r++) {
      const outputs = [[], []];
      for (const i of [0, 1]) {
        const pool = pools[i];
        const t0 = performance.now();
        for (let k = 0; k < inner; k++) for (const t of tensors) outputs[i].push((await builds[i].encodeTensor(t.data, t.shape, { profile: "v2", ...(pool ? { pool } : {}) })).bytes);
        rates[i].push((weights * inner) / ((performance.now() - t0) / 1000) / 1e6);
      }
      same &&= outputs[0].every((a, k) => Buffer.compare(Buffer.from(a), Buffer.from(outputs[1][k])) === 0);
    }
    const [a, b] = rates.map(median);
    console.log(`| ${label} | ${threads} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(3)} | ${same} |`);
  }
  await Promise.all(pools.map((p) => p?.close()));
}
