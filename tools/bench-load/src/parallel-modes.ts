/**
 * Diagnostic (not part of the headline table): decodeParallel's band strategies side by side on
 * one machine, in one run, next to the N-thread copy floor of bench-load. Run on a many-core host:
 * `node .bench/load/parallel-modes.mjs [threads]` (bundle.mjs writes it).
 */
import { availableParallelism } from "node:os";
import { decode } from "@sgfp4/cpu-decoder";
import { decodeParallel, terminateWorkers } from "@sgfp4/cpu-decoder/parallel";
import { WorkerPool, encodeTensor, synthetic, type Family } from "@sgfp4/encoder";
import { ParallelCopy } from "./floors.js";
import { medianMs, sameBits } from "./timing.js";

const threads = Number(process.argv[2] ?? availableParallelism());
const pool = new WorkerPool(threads);
const cases: Array<[Family, "v1" | "v2", [number, number]]> = [
  ["gaussian", "v1", [4096, 8192]],
  ["gaussian", "v2", [4096, 8192]],
  ["student-t", "v2", [4096, 8192]],
  ["student-t", "v2", [4096, 4096]],
  ["student-t", "v2", [4096, 11008]],
];
const copy = new ParallelCopy(threads);
console.log(`| workload | mode | ms | ${threads}-thread copy ms | ratio | bits |`);
console.log("| --- | --- | ---: | ---: | ---: | --- |");
for (const [family, profile, shape] of cases) {
  const data = synthetic(family, shape[0], shape[1], 1000);
  const { bytes } = await encodeTensor(data, shape, { profile, pool });
  const opts = { profile, shape };
  const ref = decode(bytes, opts);
  const floor = await copy.ms(ref, 7, true);
  for (const mode of ["runs", "rows", "direct"]) {
    process.env.SGFP4_PAR_MODE = mode;
    let out: Float32Array | undefined;
    const ms = await medianMs(async () => (out = await decodeParallel(bytes, { ...opts, threads })), 7);
    console.log(`| ${family} ${profile} ${shape.join("x")} | ${mode} | ${ms.toFixed(2)} | ${floor.toFixed(2)} | ${(floor / ms).toFixed(2)} | ${sameBits(out!, ref) ? "ok" : "DIFFER"} |`);
  }
}
await copy.close();
await terminateWorkers();
await pool.close();
