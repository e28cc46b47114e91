/**
 * WebGPU rows of the load benchmark (issue 15), each next to its floor measured in the same run on
 * the same Dawn device, bits checked against the workload's reference decode:
 * - decodeToBuffer, one call (validate, stage, upload, tables, kernel) vs upload floor + kernel: goal 0.5 (within 2x);
 *   also with inputs through a new mappedAtCreation buffer per call (upload: "mapped"), to compare;
 * - prepare + decode (a new PreparedContainer per call), same floor, reported;
 * - the kernel alone (prepared) vs the WGSL copy kernel, in throughput ((container + output) / time
 *   against 2 x output / time): goal 0.80 on heavy-tailed v2 (Laplacian, Student-t, real weights),
 *   measured on >= 256 MiB of output per iteration (the container decoded into consecutive ranges);
 * - decode to the host vs the device-to-host floor (GPU copy, map, one host copy): goal 0.5;
 * - the model set through decodeMany into a reused arena vs the upload floor of its containers: goal 0.5;
 * - f16 / bf16 written by the kernel vs the copy kernel on the same (half-size) output bytes: reported.
 */
import type { DecodeOptions, WebGpuDecoder as Decoder } from "@sgfp4/webgpu-decoder";
import { GpuFloors } from "./webgpu-floors.js";
import { halfReference } from "./halves.js";
import { medianMs, ratioRow, sameBits, skippedRow } from "./timing.js";
import type { LoadContext, LoadRow, Workload } from "./types.js";

const HEAVY_TAILED = new Set(["laplacian", "student-t", "real"]);
const KERNEL_GOAL_BYTES = 256 * 2 ** 20;
const USAGE = { COPY_SRC: 0x4, COPY_DST: 0x8, STORAGE: 0x80 } as const;

export async function measure(ctx: LoadContext): Promise<LoadRow[]> {
  let device: GPUDevice;
  let WebGpuDecoder: typeof Decoder;
  try {
    const node = await import("@sgfp4/webgpu-decoder/node");
    ({ WebGpuDecoder } = await import("@sgfp4/webgpu-decoder"));
    device = await node.createNodeDevice();
  } catch (e) {
    return [skippedRow("webgpu", "(all paths)", "(all workloads)", `no WebGPU device: ${(e as Error).message}`)];
  }
  const decoder = new WebGpuDecoder(device);
  const mapped = new WebGpuDecoder(device, { upload: "mapped" });
  const floors = new GpuFloors(device, ctx.reps);
  const rows: LoadRow[] = [];
  try {
    for (const w of ctx.workloads) {
      ctx.log(`webgpu: ${w.name}`);
      rows.push(...(await workloadRows(ctx, device, decoder, mapped, floors, w)));
    }
    // without a model set (--quick) main.ts reports the model rows skipped
    if (ctx.model.length) rows.push(await modelRow(ctx, device, decoder, floors));
  } finally {
    decoder.destroy();
    mapped.destroy();
    device.destroy();
  }
  return rows;
}

async function workloadRows(ctx: LoadContext, device: GPUDevice, decoder: Decoder, mapped: Decoder, floors: GpuFloors, w: Workload): Promise<LoadRow[]> {
  const req: DecodeOptions = { profile: w.profile, shape: w.shape };
  const outBytes = w.reference.byteLength;
  const base = { backend: "webgpu" as const, workload: w.name };
  const out = device.createBuffer({ size: outBytes, usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST });
  const onDevice = async () => sameBits(await decoder.readBack(out, outBytes), w.reference);
  try {
    const upload = await floors.uploadMs([w.bytes]);
    // the kernel alone on a prepared container (tables built at prepare time)
    const prepared = decoder.prepare(w.bytes, req);
    const iters = Math.max(3, Math.min(50, Math.ceil(2 ** 30 / outBytes)));
    const kernelMs = await floors.passMs((pass) => decoder.encode(pass, prepared, out), iters);
    const kernelBits = await onDevice();
    const floorMs = upload.ms + kernelMs;
    const floor = `upload (${upload.how}) + kernel`;
    const rows: LoadRow[] = [];

    for (const [label, d] of [["decodeToBuffer (one call)", decoder], ["decodeToBuffer (one call, mappedAtCreation inputs)", mapped]] as const) {
      await clear(device, out); // a stale output must not pass the bit check
      const ms = await medianMs(() => d.decodeToBuffer(w.bytes, req, out), ctx.reps);
      rows.push(ratioRow({ ...base, path: label, ms, floor, floorMs, goal: label.includes("mapped") ? undefined : 0.5, bitsOk: await onDevice() }));
    }
    const prepMs = await medianMs(async () => {
      const p = decoder.prepare(w.bytes, req);
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      decoder.encode(pass, p, out);
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      p.destroy();
    }, ctx.reps);
    rows.push(ratioRow({ ...base, path: "prepare + decode", ms: prepMs, floor, floorMs, bitsOk: await onDevice() }));

    // kernel vs copy kernel on >= 256 MiB per iteration (unless --quick)
    const copies = ctx.quick ? 1 : Math.ceil(KERNEL_GOAL_BYTES / outBytes);
    const big = copies > 1 ? device.createBuffer({ size: copies * outBytes, usage: USAGE.STORAGE }) : out;
    const bigKernelMs = await floors.passMs((pass) => {
      for (let k = 0; k < copies; k++) decoder.encode(pass, prepared, big, k * outBytes);
    }, Math.max(3, Math.ceil(iters / copies)));
    if (big !== out) big.destroy();
    const copyMs = await floors.copyKernelMs(copies * outBytes, Math.max(3, Math.ceil(iters / copies)));
    const moved = copies * (w.bytes.length + outBytes);
    const heavy = w.profile === "v2" && HEAVY_TAILED.has(w.family);
    rows.push(
      ratioRow({
        ...base,
        path: `kernel alone (${((copies * outBytes) / 2 ** 20).toFixed(0)} MiB out per iteration)`,
        ms: bigKernelMs,
        floor: "WGSL copy kernel, same output bytes (ratio in throughput)",
        floorMs: (copyMs * moved) / (2 * copies * outBytes),
        goal: heavy && copies * outBytes >= KERNEL_GOAL_BYTES ? 0.8 : undefined,
        bitsOk: kernelBits,
        note: heavy ? (copies * outBytes >= KERNEL_GOAL_BYTES ? undefined : "under 256 MiB: goal not applied") : "goal applies to heavy-tailed v2 only",
      }),
    );
    prepared.destroy();

    rows.push(...(await halfRows(device, decoder, floors, w, iters)));

    const d2h = await floors.downloadMs(outBytes);
    let host: Float32Array | undefined;
    const readMs = await medianMs(async () => {
      host = await decoder.decode(w.bytes, { ...req, format: "f32" });
    }, ctx.reps);
    rows.push(ratioRow({ ...base, path: "decode (to host)", ms: readMs, floor: "device-to-host copy (GPU copy, map, one host copy)", floorMs: d2h, goal: 0.5, bitsOk: host !== undefined && sameBits(host, w.reference) }));
    return rows;
  } finally {
    out.destroy();
  }
}

/** f16 / bf16 straight from the kernel (prepared) vs the copy kernel moving the same output bytes, in throughput. */
async function halfRows(device: GPUDevice, decoder: Decoder, floors: GpuFloors, w: Workload, iters: number): Promise<LoadRow[]> {
  const rows: LoadRow[] = [];
  for (const format of ["f16", "bf16"] as const) {
    const prepared = decoder.prepare(w.bytes, { profile: w.profile, shape: w.shape, format });
    const bytes = prepared.outputBytes;
    const padded = Math.ceil(bytes / 16) * 16;
    const out = device.createBuffer({ size: padded, usage: USAGE.STORAGE | USAGE.COPY_SRC });
    try {
      const ms = await floors.passMs((pass) => decoder.encode(pass, prepared, out), iters);
      const got = await decoder.readBack(out, padded);
      const bitsOk = sameBits(new Uint16Array(got.buffer, got.byteOffset, bytes / 2), halfReference(w, format));
      const copyMs = await floors.copyKernelMs(padded, iters);
      rows.push(
        ratioRow({
          backend: "webgpu",
          path: `kernel alone, ${format} output`,
          workload: w.name,
          ms,
          floor: `WGSL copy kernel of the ${format} output bytes (ratio in throughput)`,
          floorMs: (copyMs * (w.bytes.length + bytes)) / (2 * bytes),
          bitsOk,
        }),
      );
    } finally {
      out.destroy();
      prepared.destroy();
    }
  }
  return rows;
}

async function clear(device: GPUDevice, buffer: GPUBuffer): Promise<void> {
  const encoder = device.createCommandEncoder();
  encoder.clearBuffer(buffer);
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
}

/** The model set in one decodeMany call into a reused arena, against the upload floor of all its containers. */
async function modelRow(ctx: LoadContext, device: GPUDevice, decoder: Decoder, floors: GpuFloors): Promise<LoadRow> {
  const tensors = ctx.model.map((w) => ({ name: w.name, bytes: w.bytes, profile: w.profile, shape: w.shape }));
  const arenaBytes = ctx.model.reduce((s, w) => s + Math.ceil(w.reference.byteLength / 256) * 256, 0);
  const arena = device.createBuffer({ size: arenaBytes, usage: USAGE.STORAGE | USAGE.COPY_SRC });
  try {
    const upload = await floors.uploadMs(ctx.model.map((w) => w.bytes));
    let placed: Awaited<ReturnType<Decoder["decodeMany"]>> = [];
    const ms = await medianMs(async () => {
      placed = await decoder.decodeMany(tensors, { arena });
    }, ctx.reps);
    let bitsOk = placed.length === ctx.model.length;
    for (const [i, t] of placed.entries()) {
      if (!bitsOk) break;
      bitsOk = sameBits(await decoder.readBack(t.buffer, t.byteLength, t.offset), ctx.model[i]!.reference);
    }
    const gib = (arenaBytes / 2 ** 30).toFixed(2);
    return ratioRow({
      backend: "webgpu",
      path: `decodeMany (${ctx.model.length} tensors, ${gib} GiB f32, reused arena)`,
      workload: "model set",
      ms,
      floor: `upload of all containers (${upload.how})`,
      floorMs: upload.ms,
      goal: 0.5,
      bitsOk,
    });
  } finally {
    arena.destroy();
  }
}
