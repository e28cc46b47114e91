// Encoding throughput on 4096x4096 tensors: v1 and v2 (defaults, and rate control), 1 and 2 (or the given list of)
// threads. Run after `pnpm --filter @sgfp4/encoder build`.
// Usage: node bench/throughput.mjs [size] [threads, e.g. 1,2,8] [dist folder, e.g. a build of an older commit] [settings filter, e.g. "v2 default"]
import { cpus, loadavg } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const distArg = process.argv[4];
const { WorkerPool, encodeTensor, synthetic } = await import(distArg ? pathToFileURL(resolve(distArg, "index.js")).href : "../dist/index.js");
const only = process.argv[5];

const size = Number(process.argv[2] ?? 4096);
const data = synthetic("gaussian", size, size, 1);
const heavy = synthetic("student-t", size, size, 2);
const rows = [];
console.log(`# encoder throughput, ${size}x${size} float32, node ${process.version}, ${cpus()[0]?.model ?? "?"} (${cpus().length} logical CPUs), ${distArg ?? "dist"}, load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
const threadList = (process.argv[3] ?? "1,2").split(",").map(Number);
for (const threads of threadList) {
  const pool = threads > 1 ? new WorkerPool(threads) : undefined;
  for (const [label, input, opts] of [
    ["v1", data, { profile: "v1" }],
    ["v2 default", data, { profile: "v2" }],
    ["v2 default (student-t)", heavy, { profile: "v2" }],
    ["v2 --bpw 3 (student-t)", heavy, { profile: "v2", bpw: 3 }],
  ]) {
    if (only && !label.startsWith(only)) continue;
    const t0 = performance.now();
    const r = await encodeTensor(input, [size, size], { ...opts, ...(pool ? { pool } : {}) });
    const s = (performance.now() - t0) / 1000;
    const wps = (size * size) / s;
    rows.push({ label, threads, seconds: s, weightsPerSecond: wps, perCore: wps / threads, bpw: r.stats.bitsPerWeight, snr: r.stats.snrDb });
    console.log(`${label.padEnd(24)} threads=${threads} ${s.toFixed(2)} s  ${(wps / 1e6).toFixed(2)} M weights/s (${(wps / threads / 1e6).toFixed(2)} M/s/core)  ${r.stats.bitsPerWeight.toFixed(3)} bpw  SNR ${r.stats.snrDb.toFixed(2)} dB`);
  }
  await pool?.close();
}
console.log(`# load average at the end ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log("\n| setting | threads | seconds | M weights/s | M weights/s/core | bpw | SNR dB |\n| --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) console.log(`| ${r.label} | ${r.threads} | ${r.seconds.toFixed(2)} | ${(r.weightsPerSecond / 1e6).toFixed(2)} | ${(r.perCore / 1e6).toFixed(2)} | ${r.bpw.toFixed(3)} | ${r.snr.toFixed(2)} |`);
