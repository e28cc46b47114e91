/**
 * CPU rows (issue 15, CPU item): every public decode path of @sgfp4/cpu-decoder and its host
 * validator, end to end from container bytes in memory, next to host copies of the same output
 * measured in the same run.
 */
import { availableParallelism } from "node:os";
import { createOutput, decode, decodeInto } from "@sgfp4/cpu-decoder";
import { decodeParallel, terminateWorkers } from "@sgfp4/cpu-decoder/parallel";
import { buildLeafTable } from "@sgfp4/cpu-decoder/validate";
import { ParallelCopy, allocCopyCall, copyCall } from "./floors.js";
import { halfReference } from "./halves.js";
import { interleavedMedianMs, medianMs, ratioRow, sameBits } from "./timing.js";
import type { LoadContext, LoadRow, Workload } from "./types.js";

/** Single-thread goals hold from 16 MiB of output up (issue 15); smaller outputs are reported only. */
const GOAL_MIN_BYTES = 16 * 2 ** 20;

export async function measure(ctx: LoadContext): Promise<LoadRow[]> {
  const threads = ctx.threads ?? Math.min(availableParallelism(), 16);
  const copy = new ParallelCopy(threads);
  const rows: LoadRow[] = [];
  try {
    for (const w of ctx.workloads) {
      ctx.log(`cpu: ${w.name}`);
      const mine = [...(await validator(w, ctx.reps)), ...(await singleThread(w, ctx.reps)), ...(await halves(w, ctx.reps)), ...(await parallel(w, ctx.reps, threads, copy))];
      ctx.measured(mine);
      rows.push(...mine);
    }
    if (ctx.model.length) {
      const r = await parallelModel(ctx.model, Math.min(ctx.reps, 3), threads, copy);
      ctx.measured([r]);
      rows.push(r);
    }
  } finally {
    await copy.close();
    await terminateWorkers();
  }
  return rows;
}

/** The host validator for every backend: >= 2 GB/s of container and < 10 ns per leaf on one core. */
async function validator(w: Workload, reps: number): Promise<LoadRow[]> {
  let leaves = 0;
  const ms = await medianMs(() => (leaves = buildLeafTable(w.bytes, { profile: w.profile, shape: w.shape }).leafCount), reps);
  const base = { backend: "cpu" as const, path: "buildLeafTable (validate + leaf table, 1 thread)", workload: w.name, ms, goal: 1, bitsOk: true };
  const note = `${((w.bytes.length / ms) * 1e-6).toFixed(2)} GB/s of container, ${((ms * 1e6) / leaves).toFixed(2)} ns/leaf (${leaves} leaves)`;
  const rows = [ratioRow({ ...base, floor: "2 GB/s of container", floorMs: (w.bytes.length / 2e9) * 1e3, note })];
  // v1 leaves are whole 64x64 blocks: a per-leaf figure says nothing there
  if (w.profile === "v2") rows.push(ratioRow({ ...base, floor: "10 ns per leaf", floorMs: leaves * 10e-6 }));
  return rows;
}

async function singleThread(w: Workload, reps: number): Promise<LoadRow[]> {
  const opts = { profile: w.profile, shape: w.shape } as const;
  const n = w.shape[0] * w.shape[1];
  const goal = n * 4 >= GOAL_MIN_BYTES ? 0.6 : undefined;
  const base = { backend: "cpu" as const, workload: w.name, ...(goal === undefined ? { note: "under 16 MiB: goal not applied" } : {}) };
  const plain = new Float32Array(n);
  // each goal row and its floor timed in alternation (same host state); the createOutput row reuses the copy
  const [copy, intoMs] = await interleavedMedianMs([copyCall(w.reference), () => decodeInto(w.bytes, opts, plain)], reps);
  const kernelOut = createOutput(w.shape);
  const kernelMs = await medianMs(() => decodeInto(w.bytes, opts, kernelOut), reps);
  let fresh: Float32Array = new Float32Array(0);
  const [decodeMs, allocCopy] = await interleavedMedianMs([() => (fresh = decode(w.bytes, opts)), allocCopyCall(w.reference)], reps);
  return [
    ratioRow({ ...base, path: "decodeInto (Float32Array, 1 thread)", ms: intoMs, floor: "Float32Array.set (1 thread)", floorMs: copy, goal, bitsOk: sameBits(plain, w.reference) }),
    ratioRow({ ...base, path: "decodeInto (createOutput, 1 thread)", ms: kernelMs, floor: "Float32Array.set (1 thread)", floorMs: copy, bitsOk: sameBits(kernelOut, w.reference) }),
    ratioRow({ ...base, path: "decode (new array, 1 thread)", ms: decodeMs, floor: "new Float32Array + set", floorMs: allocCopy, goal, bitsOk: sameBits(fresh, w.reference) }),
  ];
}

/** f16 / bf16 straight from the kernel vs a copy of the same (half-size) output. No goal in issue 15: reported. */
async function halves(w: Workload, reps: number): Promise<LoadRow[]> {
  const rows: LoadRow[] = [];
  for (const format of ["f16", "bf16"] as const) {
    const want = halfReference(w, format);
    const out = new Uint16Array(want.length);
    const [ms, floorMs] = await interleavedMedianMs([() => decodeInto(w.bytes, { profile: w.profile, shape: w.shape, format }, out), copyCall(want)], reps);
    rows.push(ratioRow({ backend: "cpu", path: `decodeInto (${format}, 1 thread)`, workload: w.name, ms, floor: "Uint16Array.set (1 thread)", floorMs, bitsOk: sameBits(out, want) }));
  }
  return rows;
}

async function parallel(w: Workload, reps: number, threads: number, copy: ParallelCopy): Promise<LoadRow[]> {
  const opts = { profile: w.profile, shape: w.shape, threads } as const;
  const base = { backend: "cpu" as const, workload: w.name };
  let out: Float32Array = new Float32Array(0);
  // the one-thread decode is timed in the same rotation as the parallel call and its copy floor,
  // so "never slower than one thread" compares calls that saw the same state of the host
  const [ms, floorMs, oneThreadMs] = await interleavedMedianMs(
    [async () => (out = await decodeParallel(w.bytes, opts)), copy.call(w.reference, true), () => decode(w.bytes, { profile: w.profile, shape: w.shape })],
    reps,
  );
  const bitsOk = sameBits(out, w.reference);
  return [
    ratioRow({ ...base, path: `decodeParallel (${threads} threads)`, ms, floor: `${threads}-thread copy (new SharedArrayBuffer)`, floorMs, goal: 0.6, bitsOk }),
    ratioRow({ ...base, path: `decodeParallel (${threads} threads) vs one thread`, ms, floor: "decode (1 thread)", floorMs: oneThreadMs, goal: 1, bitsOk }),
  ];
}

/** The whole model set, tensor after tensor, vs the N-thread copy of the same outputs. */
async function parallelModel(model: Workload[], reps: number, threads: number, copy: ParallelCopy): Promise<LoadRow> {
  const ms = await medianMs(async () => {
    for (const w of model) await decodeParallel(w.bytes, { profile: w.profile, shape: w.shape, threads });
  }, reps);
  // the bits, outside the timing (until session 13 the comparison of each 64-172 MiB output ran
  // inside the timed loop, on one thread, and made most of the row's time)
  let bitsOk = true;
  for (const w of model) bitsOk &&= sameBits(await decodeParallel(w.bytes, { profile: w.profile, shape: w.shape, threads }), w.reference);
  let floorMs = 0;
  for (const w of model) floorMs += await copy.ms(w.reference, reps, true);
  const gib = model.reduce((s, w) => s + w.reference.byteLength, 0) / 2 ** 30;
  return ratioRow({ backend: "cpu", path: `decodeParallel (${threads} threads), each tensor`, workload: `model set (${model.length} tensors, ${gib.toFixed(2)} GiB f32)`, ms, floor: `${threads}-thread copy of each output`, floorMs, goal: 0.6, bitsOk });
}
