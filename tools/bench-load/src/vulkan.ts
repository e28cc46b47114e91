/**
 * Vulkan rows (issue 15), per workload:
 * - the readback paths of @sgfp4/vulkan-addon (`decode`, `decodeInto`, `decodeAsync`; f32, and
 *   `decode` to f16 / bf16), container bytes in host memory to a host array, against a plain
 *   device-to-host copy of the same output bytes on the same device (vkCmdCopyBuffer into mapped
 *   memory, submit and wait, wall clock), goal 0.5;
 * - the kernel alone, output kept on the device (the bench-only addon's `kernel`), against the
 *   copy shader of the same output bytes in the same rounds (GPU timestamps), goal 0.85 on v2 from
 *   256 MiB of output: v2 workloads are stacked (their records repeated down the rows) to reach it.
 *   Ratio as in the package's BENCHMARKS.md: (stream + output bytes) / kernel time against
 *   2 x output bytes / copy time, expressed as floorMs = copy time x (stream + output) / (2 x output).
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
import { medianMs, ratioRow, sameBits, skippedRow } from "./timing.js";
import type { LoadContext, LoadRow, Workload } from "./types.js";

interface BenchAddon {
  kernel(bytes: Uint8Array, profile: string, rows: number, cols: number, o: object): { decodeNs: number[]; copyShaderNs: number[]; streamBytes: number; outputBytes: number; output: Uint8Array };
  transfer(bytes: number, direction: "toHost" | "toDevice", o: object): number[];
}

const BENCH_ADDON = "packages/vulkan-addon/.bench/sgfp4_vulkan_bench.node";
const KERNEL_GOAL_BYTES = 256 * 2 ** 20;
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
  const rows: LoadRow[] = [];
  try {
    for (const w of ctx.workloads) {
      ctx.log(`vulkan: ${w.name}`);
      rows.push(...(await readback(w, ctx.reps, bench)));
      if (w.profile === "v2") rows.push(...kernel(stacked(w, ctx.quick), ctx.reps, ctx.quick, bench));
    }
  } finally {
    releaseBuffers();
  }
  return rows;
}

async function readback(w: Workload, reps: number, bench: BenchAddon): Promise<LoadRow[]> {
  const opts = { profile: w.profile, shape: w.shape } as const;
  const n = w.shape[0] * w.shape[1];
  const d2h = (bytes: number) => median(bench.transfer(bytes, "toHost", { reps })) / 1e6;
  const base = { backend: "vulkan" as const, workload: w.name, goal: 0.5 };
  const floor32 = { floor: "device-to-host copy, same bytes", floorMs: d2h(n * 4) };
  let fresh: Float32Array = new Float32Array(0);
  const decodeMs = await medianMs(() => (fresh = decode(w.bytes, opts)), reps);
  const into = new Float32Array(n);
  const intoMs = await medianMs(() => decodeInto(w.bytes, opts, into), reps);
  let async: Float32Array = new Float32Array(0);
  const asyncMs = await medianMs(async () => (async = await decodeAsync(w.bytes, opts)), reps);
  const rows = [
    ratioRow({ ...base, ...floor32, path: "decode (new Float32Array)", ms: decodeMs, bitsOk: sameBits(fresh, w.reference) }),
    ratioRow({ ...base, ...floor32, path: "decodeInto (caller's Float32Array)", ms: intoMs, bitsOk: sameBits(into, w.reference) }),
    ratioRow({ ...base, ...floor32, path: "decodeAsync (new Float32Array)", ms: asyncMs, bitsOk: sameBits(async, w.reference) }),
  ];
  const floor16 = { floor: "device-to-host copy, same bytes", floorMs: d2h(n * 2) };
  for (const format of ["f16", "bf16"] as const) {
    let half: Uint16Array | Float32Array = new Uint16Array(0);
    const ms = await medianMs(() => (half = decode(w.bytes, { ...opts, format })), reps);
    rows.push(ratioRow({ ...base, ...floor16, path: `decode (new Uint16Array, ${format})`, ms, bitsOk: sameBits(half, halfReference(w, format)) }));
  }
  return rows;
}

function kernel(w: Workload, reps: number, quick: boolean, bench: BenchAddon): LoadRow[] {
  const rows: LoadRow[] = [];
  for (const format of ["f32", "f16", "bf16"] as const) {
    const r = bench.kernel(w.bytes, w.profile, w.shape[0], w.shape[1], { reps, warmup: quick ? 1 : 2, maxBatch: quick ? 2 : 200, format, maxOutputBytes: 2 ** 40, check: true });
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
