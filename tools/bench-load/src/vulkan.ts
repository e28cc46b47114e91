/**
 * Vulkan rows (issue 15), per workload:
 * - the native parser alone, one thread and the shipped default (work pool);
 * - the readback paths of @sgfp4/vulkan-addon (`decode`, `decodeInto`, `decodeAsync`; f32, and
 *   `decode` to f16 / bf16), container bytes in host memory to a host array, against a plain
 *   device-to-host copy of the same output bytes on the same device (vkCmdCopyBuffer into mapped
 *   memory, submit and wait, wall clock), goal 0.5;
 * - the kernel alone, output kept on the device (the bench-only addon's `kernel`), against the
 *   copy shader of the same output bytes in the same rounds (GPU timestamps), goal 0.85 on v2 from
 *   256 MiB of output: v2 workloads are stacked (their records repeated down the rows) to reach it.
 *   Ratio as in the package's BENCHMARKS.md: (stream + output bytes) / kernel time against
 *   2 x output bytes / copy time, expressed as floorMs = copy time x (stream + output) / (2 x output).
 * - diagnostics in the same run: the staged route, and two costs beyond the copy (decodeInto's
 *   host copy alone; a fresh output-sized array alone).
 * Every output is compared bit for bit with the reference (f16 / bf16: its conversion, P10).
 *
 * The bench-only addon (built by packages/vulkan-addon/scripts/build-bench.mjs) exports the
 * shipped API too; this module points SGFP4_VULKAN_ADDON at it before the first call, so the public
 * API and the bench-only timings share one device. It is found at SGFP4_VULKAN_BENCH_ADDON, else
 * ../vulkan/sgfp4_vulkan_bench.node from this file (the bundle: .bench/vulkan/, put there by
 * scripts/bundle.mjs), else packages/vulkan-addon/.bench/ under the working directory or in this
 * file's repository.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { availability, decode, decodeAsync, decodeInto, releaseBuffers } from "@sgfp4/vulkan-addon";
import { halfReference } from "./halves.js";
import { GpuClock, withClock } from "./gpu-clock.js";
import { medianMs, ratioRow, sameBits, skippedRow } from "./timing.js";
import type { LoadContext, LoadRow, Workload } from "./types.js";

interface BenchAddon {
  stats(): { buffersMade: number; memoryFlags: { upload: number } };
  parseTime(bytes: Uint8Array, profile: string, rows: number, cols: number, o: object): { ns: number[]; leafCount: number };
  kernel(bytes: Uint8Array, profile: string, rows: number, cols: number, o: object): { decodeNs: number[]; copyShaderNs: number[]; streamBytes: number; outputBytes: number; output: Uint8Array; candidates: KernelCandidate[] };
  pipelineStatistics(): { pipeline: string; executable: string; statistic: string; value: number }[];
  transfer(bytes: number, direction: "toHost" | "toDevice", o: object): number[];
  hostCopy(out: Float32Array, o: object): number[];
}

/** A candidate pipeline of native/shaders/decode.comp, timed in the kernel's rounds (f32 only). */
interface KernelCandidate {
  name: string;
  ns: number[];
  /** its output equals the shipped kernel's, bit for bit (checked on the device) */
  exact: boolean;
}

const BENCH_ADDON = "packages/vulkan-addon/.bench/sgfp4_vulkan_bench.node";
const KERNEL_GOAL_BYTES = 256 * 2 ** 20;
/**
 * Untimed rounds (each the kernel and both copies, about 12 ms at 256 MiB on the H100) before the
 * kernel rows, so the GPU reaches its full clock first: with 2, the first v2 workload of session
 * 16's first run read 0.78 of the copy shader (its readback rows just before ran at an SM clock
 * of 1005-1245 MHz; the kernel rows are too short for nvidia-smi's samples), the others 0.88-0.89.
 */
const KERNEL_WARM_ROUNDS = 25;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function benchAddonPath(): string | undefined {
  const repo = fileURLToPath(new URL("../../../", import.meta.url));
  const bundled = fileURLToPath(new URL("../vulkan/sgfp4_vulkan_bench.node", import.meta.url));
  const candidates = [process.env.SGFP4_VULKAN_BENCH_ADDON, bundled, join(process.cwd(), BENCH_ADDON), join(repo, BENCH_ADDON)];
  return candidates.find((p): p is string => !!p && existsSync(p));
}

export async function measure(ctx: LoadContext): Promise<LoadRow[]> {
  const path = benchAddonPath();
  const all = (reason: string) => ctx.workloads.map((w) => skippedRow("vulkan", "(all paths)", w.name, reason));
  if (!path) return all(`bench-only addon not found (${BENCH_ADDON}); build it with node packages/vulkan-addon/scripts/build-bench.mjs`);
  process.env.SGFP4_VULKAN_ADDON ??= path;
  const a = availability();
  if (!a.ok) return all(a.reason);
  ctx.log(`vulkan: ${a.detail}, addon ${process.env.SGFP4_VULKAN_ADDON}`);
  const bench = createRequire(import.meta.url)(path) as BenchAddon;
  for (const s of bench.pipelineStatistics()) ctx.log(`vulkan: pipeline statistics: ${s.pipeline} / ${s.executable}: ${s.statistic} = ${s.value}`);
  const rows: LoadRow[] = [];
  const clock = GpuClock.start(); // each workload's rows note the SM clock's range (NVIDIA only)
  try {
    for (const w of ctx.workloads) {
      ctx.log(`vulkan: ${w.name}`);
      const paths = await clock.during(() => readback(w, ctx.reps, bench));
      const mine = [...parser(w, ctx.reps, bench), ...withClock(paths.value, paths.clock)];
      if (w.profile === "v2") {
        const k = await clock.during(async () => kernel(stacked(w, ctx.quick), ctx.reps, ctx.quick, bench));
        mine.push(...withClock(k.value, k.clock));
      }
      ctx.measured(mine);
      rows.push(...mine);
      if (process.env.BENCH_LOAD_VULKAN_PROBE && (w.name.startsWith("gaussian v1") || w.name.startsWith("student-t v2"))) await probe(w, ctx, bench);
    }
  } finally {
    clock.stop();
    releaseBuffers();
  }
  return rows;
}

/**
 * The native parser alone (validation and leaf table, nothing copied to JavaScript), on one thread
 * and with the shipped default (large streams split over the work pool), against the issue's
 * bar of 2 GB/s of container on one core (floorMs = container bytes / 2 GB/s); ns per leaf in the note.
 */
function parser(w: Workload, reps: number, bench: BenchAddon): LoadRow[] {
  const floorMs = w.bytes.length / 2e6;
  return ([["one thread", 1], ["work pool (shipped default)", 0]] as const).map(([how, ranges]) => {
    const r = bench.parseTime(w.bytes, w.profile, w.shape[0], w.shape[1], { reps, ranges });
    const ms = median(r.ns) / 1e6;
    return ratioRow({
      backend: "vulkan",
      path: `native parser (${how})`,
      workload: w.name,
      ms,
      floor: "2 GB/s of container",
      floorMs,
      ...(ranges === 1 ? { goal: 1 } : {}),
      bitsOk: true,
      note: `${((ms * 1e6) / r.leafCount).toFixed(1)} ns per leaf, ${(w.bytes.length / ms / 1e6).toFixed(2)} GB/s`,
    });
  });
}

const turn = () => new Promise((r) => setImmediate(r));
/** Collects garbage (with --expose-gc) and lets the finalizers queued to the event loop run. */
async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await turn();
  }
}

/**
 * Median ms of `fn` (a decode returning a new array) and its last result, the previous result
 * dropped and collected before each call, outside the timed region: the steady state of a loader
 * that keeps no result it is done with, where `decode` hands out the pooled readback memory the
 * finalizer of a collected result gave back.
 */
async function recycledMs<T>(fn: () => T | Promise<T>, reps: number, bench: BenchAddon): Promise<{ ms: number; last: T; note: string }> {
  const times: number[] = [];
  let last: T | undefined;
  let made = 0;
  for (let i = 0; i < reps + 2; i++) {
    last = undefined;
    await settle();
    const before = bench.stats().buffersMade;
    const t0 = performance.now();
    last = await fn();
    if (i >= 2) times.push(performance.now() - t0);
    if (i >= 2) made += bench.stats().buffersMade - before;
  }
  return { ms: median(times), last: last as T, note: `previous result collected before each call (outside the timing); ${made} buffers allocated in ${reps} timed calls` };
}

async function readback(w: Workload, reps: number, bench: BenchAddon): Promise<LoadRow[]> {
  const opts = { profile: w.profile, shape: w.shape } as const;
  const n = w.shape[0] * w.shape[1];
  const d2h = (bytes: number) => median(bench.transfer(bytes, "toHost", { reps })) / 1e6;
  const base = { backend: "vulkan" as const, workload: w.name, goal: 0.5 };
  const floor32 = { floor: "device-to-host copy, same bytes", floorMs: d2h(n * 4) };
  // The first call on an empty pool: every buffer allocated (informational, no goal).
  releaseBuffers();
  await settle();
  const t0 = performance.now();
  let cold: Float32Array | undefined = decode(w.bytes, opts);
  const coldMs = performance.now() - t0;
  const coldOk = sameBits(cold, w.reference);
  cold = undefined; // collectable by the first settle() of the timed rows
  const plain = await recycledMs(() => decode(w.bytes, opts), reps, bench);
  const into = new Float32Array(n);
  const intoMs = await medianMs(() => decodeInto(w.bytes, opts, into), reps);
  const async = await recycledMs(() => decodeAsync(w.bytes, opts), reps, bench);
  // the staged route (device buffers, stages of uploads, kernel and device-to-host copies), which
  // the direct default replaced (hand-overs in session 13, decodeInto in session 14); switched per call
  process.env.SGFP4_VULKAN_DIRECT = "0";
  const stagedInto = new Float32Array(n);
  let staged: Awaited<ReturnType<typeof recycledMs<Float32Array>>>, stagedIntoMs: number;
  try {
    staged = await recycledMs(() => decode(w.bytes, opts), reps, bench);
    stagedIntoMs = await medianMs(() => decodeInto(w.bytes, opts, stagedInto), reps);
  } finally {
    delete process.env.SGFP4_VULKAN_DIRECT;
  }
  const rows = [
    ratioRow({ ...base, ...floor32, path: "decode (new Float32Array)", ms: plain.ms, bitsOk: sameBits(plain.last, w.reference), note: plain.note }),
    ratioRow({ ...base, ...floor32, goal: undefined, path: "decode (new Float32Array), SGFP4_VULKAN_DIRECT=0 (staged)", ms: staged.ms, bitsOk: sameBits(staged.last, w.reference), note: "diagnostic: the staged route the direct default replaced" }),
    ratioRow({ ...base, ...floor32, path: "decodeInto (caller's Float32Array)", ms: intoMs, bitsOk: sameBits(into, w.reference) }),
    ratioRow({ ...base, ...floor32, goal: undefined, path: "decodeInto (caller's Float32Array), SGFP4_VULKAN_DIRECT=0 (staged)", ms: stagedIntoMs, bitsOk: sameBits(stagedInto, w.reference), note: "diagnostic: the staged route the direct default replaced" }),
    ratioRow({ ...base, ...floor32, path: "decodeAsync (new Float32Array)", ms: async.ms, bitsOk: sameBits(async.last, w.reference), note: async.note }),
    ratioRow({ backend: "vulkan", workload: w.name, ...floor32, path: "decode, first call on an empty pool", ms: coldMs, bitsOk: coldOk, note: "every buffer allocated in the call (no goal)" }),
  ];
  const floor16 = { floor: "device-to-host copy, same bytes", floorMs: d2h(n * 2) };
  for (const format of ["f16", "bf16"] as const) {
    const half = await recycledMs(() => decode(w.bytes, { ...opts, format }), reps, bench);
    rows.push(ratioRow({ ...base, ...floor16, path: `decode (new Uint16Array, ${format})`, ms: half.ms, bitsOk: sameBits(half.last, halfReference(w, format)), note: half.note }));
  }
  rows.push(...(await gapRows(w, reps, bench, floor32, into)));
  return rows;
}

/**
 * Diagnostic rows that measure, in the same run, two costs the readback paths carry beyond the
 * device-to-host copy (no goal):
 * - decodeInto's one host copy alone (the addon's work pool, pooled readback memory into the
 *   caller's array): on a discrete GPU decodeInto takes at least the longer of it and the copy;
 * - a fresh output-sized array alone, right after a collection, as `decode` and `decodeAsync`
 *   hand one over: V8 counts its bytes as external memory, and a rise of more than 64 MiB over
 *   the lowest count since the last full collection starts incremental marking on the JS thread
 *   (session-16 trace: the hand-over's "result array" phase took 0.3-4.7 ms).
 */
async function gapRows(w: Workload, reps: number, bench: BenchAddon, floor32: { floor: string; floorMs: number }, into: Float32Array): Promise<LoadRow[]> {
  const n = w.shape[0] * w.shape[1];
  const base = { backend: "vulkan" as const, workload: w.name, ...floor32, bitsOk: true };
  const copyMs = median(bench.hostCopy(into, { reps })) / 1e6;
  const fresh = await recycledMs(() => new Float32Array(n), reps, bench);
  return [
    ratioRow({ ...base, path: "host copy alone (readback memory into the caller's array, work pool)", ms: copyMs, note: `diagnostic: decodeInto's one host copy, ${((n * 4) / copyMs / 1e6).toFixed(1)} GB/s` }),
    ratioRow({ ...base, path: "new Float32Array(n) alone, after a collection", ms: fresh.ms, note: "diagnostic: V8's cost of the fresh output-sized array decode and decodeAsync hand over" }),
  ];
}

/**
 * BENCH_LOAD_VULKAN_PROBE=1 (diagnostic, logged only): the readback calls (default route) at a few
 * stage sizes and stages in flight (the addon reads SGFP4_VULKAN_STAGE_BYTES /
 * SGFP4_VULKAN_STAGES_IN_FLIGHT per call), for f32 and f16, then one traced call of each kind
 * (SGFP4_VULKAN_TRACE: per-stage host and GPU phases, and the call's host phases, on stderr).
 * Sessions 14 and 15 compared the upload memory kinds and the host copies' streaming stores.
 */
async function probe(w: Workload, ctx: LoadContext, bench: BenchAddon): Promise<void> {
  const opts = { profile: w.profile, shape: w.shape } as const;
  const f16 = { ...opts, format: "f16" } as const;
  const into = new Float32Array(w.shape[0] * w.shape[1]);
  const env = process.env;
  try {
    for (const [stage, depth] of [[16, 3], [8, 4], [32, 2], [4, 8]] as const) {
      env.SGFP4_VULKAN_STAGE_BYTES = String(stage * 2 ** 20);
      env.SGFP4_VULKAN_STAGES_IN_FLIGHT = String(depth);
      const plain = await recycledMs(() => decode(w.bytes, opts), 5, bench);
      const intoMs = await medianMs(() => decodeInto(w.bytes, opts, into), 5);
      const async = await recycledMs(() => decodeAsync(w.bytes, opts), 5, bench);
      const half = await recycledMs(() => decode(w.bytes, f16), 5, bench);
      const ok = sameBits(plain.last, w.reference) && sameBits(into, w.reference) && sameBits(async.last, w.reference) && sameBits(half.last, halfReference(w, "f16"));
      ctx.log(
        `probe ${w.name} stage ${stage} MiB, ${depth} in flight: decode ${plain.ms.toFixed(3)} ms, decodeInto ${intoMs.toFixed(3)} ms, ` +
          `decodeAsync ${async.ms.toFixed(3)} ms, decode f16 ${half.ms.toFixed(3)} ms${ok ? "" : " BITS DIFFER"}`,
      );
    }
    delete env.SGFP4_VULKAN_STAGE_BYTES;
    delete env.SGFP4_VULKAN_STAGES_IN_FLIGHT;
    env.SGFP4_VULKAN_TRACE = "1";
    ctx.log(`probe ${w.name}: traced decode, decodeInto, decodeAsync, decode f16 (twice each)`);
    for (let i = 0; i < 2; i++) {
      decode(w.bytes, opts);
      decodeInto(w.bytes, opts, into);
      await decodeAsync(w.bytes, opts);
      decode(w.bytes, f16);
    }
    delete env.SGFP4_VULKAN_TRACE;
  } finally {
    for (const k of ["SGFP4_VULKAN_STAGE_BYTES", "SGFP4_VULKAN_STAGES_IN_FLIGHT", "SGFP4_VULKAN_TRACE"]) delete env[k];
    releaseBuffers();
  }
}

function kernel(w: Workload, reps: number, quick: boolean, bench: BenchAddon): LoadRow[] {
  const rows: LoadRow[] = [];
  for (const format of ["f32", "f16", "bf16"] as const) {
    const r = bench.kernel(w.bytes, w.profile, w.shape[0], w.shape[1], { reps, warmup: quick ? 1 : KERNEL_WARM_ROUNDS, maxBatch: quick ? 2 : 200, format, maxOutputBytes: 2 ** 40, check: true });
    const expected = format === "f32" ? w.reference : halfReference(w, format);
    const ms = median(r.decodeNs) / 1e6;
    const floorMs = ((median(r.copyShaderNs) / 1e6) * (r.streamBytes + r.outputBytes)) / (2 * r.outputBytes);
    const big = r.outputBytes >= KERNEL_GOAL_BYTES;
    rows.push(
      ratioRow({
        backend: "vulkan",
        path: `kernel (device-resident, bench-only, ${format})`,
        workload: w.name,
        ms,
        floor: "copy shader, same output bytes (throughput ratio)",
        floorMs,
        ...(big && format === "f32" ? { goal: 0.85 } : {}),
        bitsOk: sameBits(r.output, expected),
        note: `${(r.outputBytes / 2 ** 20).toFixed(0)} MiB output${big ? "" : ", under 256 MiB: goal not applied"}`,
      }),
    );
    // Candidates (bench-only, not shipped) against the same copy floor; a diagnostic one is not
    // meant to be exact, any other must match the shipped kernel's bits.
    for (const c of r.candidates) {
      const diagnostic = c.name.startsWith("diagnostic");
      rows.push(
        ratioRow({
          backend: "vulkan",
          path: `kernel candidate ${c.name} (bench-only, f32)`,
          workload: w.name,
          ms: median(c.ns) / 1e6,
          floor: "copy shader, same output bytes (throughput ratio)",
          floorMs,
          bitsOk: diagnostic || c.exact,
          note: diagnostic ? `output not checked (${c.exact ? "happens to match" : "differs, as expected"})` : "bits checked against the shipped kernel on the device",
        }),
      );
    }
  }
  return rows;
}

/**
 * A v2 workload with its records repeated down the rows until the f32 output reaches 256 MiB
 * (64-row multiples only; --quick keeps the workload as is): same content, the size the kernel
 * goal is stated for. Offsets of the copies are shifted by the records region's length.
 */
export function stacked(w: Workload, quick: boolean): Workload {
  const outBytes = w.shape[0] * w.shape[1] * 4;
  const times = Math.ceil(KERNEL_GOAL_BYTES / outBytes);
  if (quick || times <= 1 || w.shape[0] % 64 !== 0) return w;
  const view = new DataView(w.bytes.buffer, w.bytes.byteOffset, w.bytes.byteLength);
  const count = view.getUint32(5, true);
  const align16 = (x: number) => Math.ceil(x / 16) * 16;
  const base = align16(16 + 4 * count);
  const region = w.bytes.subarray(base);
  const stride = align16(region.length);
  const newBase = align16(16 + 4 * count * times);
  const out = new Uint8Array(newBase + stride * times);
  out.set(w.bytes.subarray(0, 16));
  const dv = new DataView(out.buffer);
  dv.setUint32(5, count * times, true);
  for (let t = 0; t < times; t++) {
    for (let b = 0; b < count; b++) dv.setUint32(16 + 4 * (t * count + b), view.getUint32(16 + 4 * b, true) + t * stride, true);
    out.set(region, newBase + t * stride);
  }
  const reference = new Float32Array(w.reference.length * times);
  for (let t = 0; t < times; t++) reference.set(w.reference, t * w.reference.length);
  return { ...w, name: `${w.name} x${times} rows`, shape: [w.shape[0] * times, w.shape[1]], bytes: out, reference };
}
