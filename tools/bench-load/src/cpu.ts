/**
 * CPU rows (issue 15, CPU item): every public decode path of @sgfp4/cpu-decoder, end to end from
 * container bytes in memory, next to host copies of the same output measured in the same run.
 */
import { availableParallelism } from "node:os";
import { createOutput, decode, decodeInto } from "@sgfp4/cpu-decoder";
import { decodeParallel, terminateWorkers } from "@sgfp4/cpu-decoder/parallel";
import { ParallelCopy, allocCopyMs, copyMs } from "./floors.js";
import { medianMs, ratioRow, sameBits } from "./timing.js";
import type { LoadContext, LoadRow, Workload } from "./types.js";

/** Single-thread goals hold from 16 MiB of output up (issue 15); smaller outputs are reported only. */
const GOAL_MIN_BYTES = 16 * 2 ** 20;

export async function measure(ctx: LoadContext): Promise<LoadRow[]> {
  const threads = Math.min(availableParallelism(), 16);
  const copy = new ParallelCopy(threads);
  const rows: LoadRow[] = [];
  try {
    for (const w of ctx.workloads) {
      ctx.log(`cpu: ${w.name}`);
      rows.push(...(await singleThread(w, ctx.reps)));
      rows.push(...(await parallel(w, ctx.reps, threads, copy)));
    }
  } finally {
    await copy.close();
    await terminateWorkers();
  }
  return rows;
}

async function singleThread(w: Workload, reps: number): Promise<LoadRow[]> {
  const opts = { profile: w.profile, shape: w.shape } as const;
  const n = w.shape[0] * w.shape[1];
  const goal = n * 4 >= GOAL_MIN_BYTES ? 0.6 : undefined;
  const base = { backend: "cpu" as const, workload: w.name, ...(goal === undefined ? { note: "under 16 MiB: goal not applied" } : {}) };
  const copy = await copyMs(w.reference, reps);

  const plain = new Float32Array(n);
  const intoMs = await medianMs(() => decodeInto(w.bytes, opts, plain), reps);
  const kernelOut = createOutput(w.shape);
  const kernelMs = await medianMs(() => decodeInto(w.bytes, opts, kernelOut), reps);
  let fresh: Float32Array = new Float32Array(0);
  const decodeMs = await medianMs(() => (fresh = decode(w.bytes, opts)), reps);
  const allocCopy = await allocCopyMs(w.reference, reps);
  return [
    ratioRow({ ...base, path: "decodeInto (Float32Array, 1 thread)", ms: intoMs, floor: "Float32Array.set (1 thread)", floorMs: copy, goal, bitsOk: sameBits(plain, w.reference) }),
    ratioRow({ ...base, path: "decodeInto (createOutput, 1 thread)", ms: kernelMs, floor: "Float32Array.set (1 thread)", floorMs: copy, bitsOk: sameBits(kernelOut, w.reference) }),
    ratioRow({ ...base, path: "decode (new array, 1 thread)", ms: decodeMs, floor: "new Float32Array + set", floorMs: allocCopy, goal, bitsOk: sameBits(fresh, w.reference) }),
  ];
}

async function parallel(w: Workload, reps: number, threads: number, copy: ParallelCopy): Promise<LoadRow[]> {
  const opts = { profile: w.profile, shape: w.shape, threads } as const;
  const base = { backend: "cpu" as const, workload: w.name };
  let out: Float32Array = new Float32Array(0);
  const ms = await medianMs(async () => (out = await decodeParallel(w.bytes, opts)), reps);
  const floorMs = await copy.ms(w.reference, reps, true);
  const oneThreadMs = await medianMs(() => decode(w.bytes, { profile: w.profile, shape: w.shape }), reps);
  const bitsOk = sameBits(out, w.reference);
  return [
    ratioRow({ ...base, path: `decodeParallel (${threads} threads, new output)`, ms, floor: `${threads}-thread copy (new SharedArrayBuffer)`, floorMs, goal: 0.6, bitsOk }),
    ratioRow({ ...base, path: `decodeParallel (${threads} threads) vs one thread`, ms, floor: "decode (1 thread)", floorMs: oneThreadMs, goal: 1, bitsOk }),
  ];
}
