/**
 * WebGPU rows of the load benchmark (issue 15), each next to its floor measured in the same run on
 * the same Dawn device, bits checked against the workload's reference decode:
 * - decodeToBuffer, one call (validate, stage, upload, tables, kernel) vs upload floor + kernel: goal 0.5 (within 2x);
 *   v2 is validated on the device by default (records on the host, leaves on the GPU); also with
 *   validation: "host" (the wasm validator on the calling thread, before the upload), with inputs through a new mappedAtCreation buffer per call (upload: "mapped"), to compare, and
 *   with the leaf table cached (a validator that returns it: everything but host validation), to show where the time goes;
 * - prepare + decode (a new PreparedContainer per call), same floor, reported;
 * - the kernel alone (prepared) vs the WGSL copy kernel, in throughput ((container + output) / time
 *   against 2 x output / time): goal 0.80 on heavy-tailed v2 (Laplacian, Student-t, real weights),
 *   measured on >= 256 MiB of output per iteration (the container decoded into consecutive ranges
 *   of a buffer made before any other, as the copy's buffers: see ReservedBuffers);
 * - decode to the host vs the device-to-host floor (GPU copy, map, one host copy): goal 0.5;
 * - the model set through decodeMany into a reused arena vs the upload floor of its containers: goal 0.5; validated
 *   on the calling thread, on worker threads (WorkerValidatorPool), and with the tables cached (diagnostic);
 * - f16 / bf16 written by the kernel vs the copy kernel on the same (half-size) output bytes: reported.
 * Kernel times are GPU timestamps around the pass where the adapter has 'timestamp-query' (Dawn's
 * timestamp quantization off), else wall clock per submission; each row says which.
 */
import type { DecodeOptions, StreamValidator, ValidatedStream, WebGpuDecoder as Decoder } from "@sgfp4/webgpu-decoder";
import type { WorkerValidatorPool } from "@sgfp4/webgpu-decoder/node";
import { GpuClock, withClock } from "./gpu-clock.js";
import { GpuFloors, reserveBuffers, type ReservedBuffers } from "./webgpu-floors.js";
import { halfReference } from "./halves.js";
import { medianMs, ratioRow, sameBits, skippedRow } from "./timing.js";
import type { LoadContext, LoadRow, Workload } from "./types.js";

const HEAVY_TAILED = new Set(["laplacian", "student-t", "real"]);
const KERNEL_GOAL_BYTES = 256 * 2 ** 20;
const USAGE = { COPY_SRC: 0x4, COPY_DST: 0x8, STORAGE: 0x80 } as const;

export async function measure(ctx: LoadContext): Promise<LoadRow[]> {
  let device: GPUDevice;
  let WebGpuDecoder: typeof Decoder;
  let wasmValidator: StreamValidator;
  let pool: WorkerValidatorPool;
  // exact timestamps (Dawn quantizes them by default); read when the node entry creates its GPU
  process.env.SGFP4_DAWN_FLAGS ??= "enable-dawn-features=allow_unsafe_apis disable-dawn-features=timestamp_quantization";
  try {
    const node = await import("@sgfp4/webgpu-decoder/node");
    ({ WebGpuDecoder, wasmValidator } = await import("@sgfp4/webgpu-decoder"));
    device = await node.createNodeDevice({ timestamps: true });
    pool = new node.WorkerValidatorPool();
  } catch (e) {
    return [skippedRow("webgpu", "(all paths)", "(all workloads)", `no WebGPU device: ${(e as Error).message}`)];
  }
  // the diagnostic rows' validator: the table of a stream already validated once (same bytes object)
  const tables = new Map<Uint8Array, ValidatedStream>();
  const cached: StreamValidator = (bytes, opts) => tables.get(bytes) ?? (tables.set(bytes, wasmValidator(bytes, opts)), tables.get(bytes)!);
  const d: Decoders = {
    plain: new WebGpuDecoder(device),
    host: new WebGpuDecoder(device, { validation: "host" }),
    mapped: new WebGpuDecoder(device, { upload: "mapped" }),
    cached: new WebGpuDecoder(device, { validator: cached }),
    pooled: new WebGpuDecoder(device, { validatorPool: pool }),
    threads: () => pool.liveWorkers,
    validate: wasmValidator,
  };
  const floors = new GpuFloors(device, ctx.reps);
  // the kernel rows' buffers, made first (see ReservedBuffers)
  const kernelBytes = Math.max(16, ...ctx.workloads.map((w) => kernelCopies(ctx, w.reference.byteLength) * w.reference.byteLength));
  const reserved = reserveBuffers(device, Math.ceil(kernelBytes / 16) * 16);
  ctx.log(`webgpu: kernel times by ${floors.timer}`);
  const rows: LoadRow[] = [];
  // each workload's kernel time per decode from its kernel rows: the kernel term of the one-call floor
  const cleanKernelMs = new Map<Workload, number>();
  const clock = GpuClock.start(); // rows note the SM clock's range while they ran (NVIDIA only)
  try {
    // Kernel rows of every workload first, on a device that has run nothing else: measured after
    // the user paths of a workload they ran 1.8-4.4x slower, and the copy kernel with them
    // (ReservedBuffers): the GPU's idle clock between short passes, session 15 (gpu-clock.ts).
    if (process.env.BENCH_LOAD_WEBGPU_KERNELS_LAST !== "1") {
      for (const w of ctx.workloads) {
        ctx.log(`webgpu: kernel rows, ${w.name}`);
        const k = await clock.during(() => kernelRows(ctx, d.plain, floors, w, reserved, cleanKernelMs));
        rows.push(...withClock(k.value, k.clock));
      }
    }
    for (const w of ctx.workloads) {
      ctx.log(`webgpu: ${w.name}`);
      const paths = await clock.during(() => workloadRows(ctx, device, d, floors, w, reserved, cleanKernelMs.get(w)));
      rows.push(...withClock(paths.value, paths.clock));
      if (process.env.BENCH_LOAD_WEBGPU_KERNELS_LAST === "1") rows.push(...(await kernelRows(ctx, d.plain, floors, w, reserved, cleanKernelMs)));
      tables.clear();
    }
    // without a model set (--quick) main.ts reports the model rows skipped
    if (ctx.model.length) rows.push(...(await modelRows(ctx, device, d, floors)));
  } finally {
    clock.stop();
    for (const x of [d.plain, d.host, d.mapped, d.cached, d.pooled]) x.destroy();
    reserved.out.destroy();
    reserved.src.destroy();
    device.destroy();
    await pool.terminate();
  }
  return rows;
}

interface Decoders {
  plain: Decoder;
  /** validation: "host" (v2 validated by the wasm validator before the upload) */
  host: Decoder;
  mapped: Decoder;
  /** validator: the cached leaf table (diagnostic rows) */
  cached: Decoder;
  /** decodeMany validates on worker threads */
  pooled: Decoder;
  /** workers alive (read after the runs: a worker that failed to start leaves the calling thread validating) */
  threads: () => number;
  validate: StreamValidator;
}

/** Decodes of one workload per kernel-row iteration: enough for 256 MiB of output (one with --quick). */
const kernelCopies = (ctx: LoadContext, outBytes: number): number => (ctx.quick ? 1 : Math.ceil(KERNEL_GOAL_BYTES / outBytes));

async function workloadRows(ctx: LoadContext, device: GPUDevice, d: Decoders, floors: GpuFloors, w: Workload, reserved: ReservedBuffers, kernelFirstMs?: number): Promise<LoadRow[]> {
  const decoder = d.plain;
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
    // the kernel term of the floor: from the kernel rows measured first when they were (the faster:
    // the kernel measured here, after earlier workloads' paths, can run slower; see measure())
    const hereMs = await floors.passMs((pass) => decoder.encode(pass, prepared, out), iters);
    const kernelMs = Math.min(hereMs, kernelFirstMs ?? hereMs);
    const kernelBits = await onDevice();
    const floorMs = upload.ms + kernelMs;
    const floor = `upload (${upload.how}) + kernel (${floors.timer})`;
    const rows: LoadRow[] = [];

    const oneCall = [
      ["decodeToBuffer (one call)", d.plain, 0.5],
      ["decodeToBuffer (one call, validation: host)", d.host, undefined],
      ["decodeToBuffer (one call, mappedAtCreation inputs)", d.mapped, undefined],
      ["decodeToBuffer (one call, leaf table cached: all but host validation)", d.cached, undefined],
    ] as const;
    for (const [label, dec, goal] of oneCall) {
      await clear(device, out); // a stale output must not pass the bit check
      const ms = await medianMs(() => dec.decodeToBuffer(w.bytes, req, out), ctx.reps);
      rows.push(ratioRow({ ...base, path: label, ms, floor, floorMs, goal, bitsOk: await onDevice(), ...(dec === d.cached ? { note: "diagnostic" } : {}) }));
    }
    // where the one call's time goes: the host validation it starts with (the rest is the cached row)
    const validateMs = await medianMs(() => d.validate(w.bytes, req), ctx.reps);
    rows.push(ratioRow({ ...base, path: "host validation alone (wasmValidator, calling thread)", ms: validateMs, floor, floorMs, bitsOk: kernelBits, note: "diagnostic" }));
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

    prepared.destroy();

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

/**
 * The kernel alone on a prepared container against the WGSL copy kernel, in throughput, on >= 256
 * MiB of output per iteration (unless --quick): the container decoded into consecutive ranges of
 * the reserved output; then f16 / bf16. Bits: the first range read back against the reference.
 */
async function kernelRows(ctx: LoadContext, decoder: Decoder, floors: GpuFloors, w: Workload, reserved: ReservedBuffers, perDecodeMs: Map<Workload, number>): Promise<LoadRow[]> {
  const outBytes = w.reference.byteLength;
  const prepared = decoder.prepare(w.bytes, { profile: w.profile, shape: w.shape });
  try {
    const iters = Math.max(3, Math.min(50, Math.ceil(2 ** 30 / outBytes)));
    const copies = kernelCopies(ctx, outBytes);
    await clear(decoder.device, reserved.out, Math.ceil(outBytes / 16) * 16); // a stale output must not pass the bit check
    const bigKernelMs = await floors.passMs((pass) => {
      for (let k = 0; k < copies; k++) decoder.encode(pass, prepared, reserved.out, k * outBytes);
    }, Math.max(3, Math.ceil(iters / copies)));
    perDecodeMs.set(w, bigKernelMs / copies);
    const bitsOk = sameBits(await decoder.readBack(reserved.out, outBytes), w.reference);
    const copyMs = await floors.copyKernelMs(Math.ceil((copies * outBytes) / 16) * 16, Math.max(3, Math.ceil(iters / copies)), reserved);
    const moved = copies * (w.bytes.length + outBytes);
    const heavy = w.profile === "v2" && HEAVY_TAILED.has(w.family);
    const rows: LoadRow[] = [
      ratioRow({
        backend: "webgpu",
        workload: w.name,
        path: `kernel alone (${floors.timer}, ${((copies * outBytes) / 2 ** 20).toFixed(0)} MiB out per iteration)`,
        ms: bigKernelMs,
        floor: "WGSL copy kernel, same output bytes (ratio in throughput)",
        floorMs: (copyMs * moved) / (2 * copies * outBytes),
        goal: heavy && copies * outBytes >= KERNEL_GOAL_BYTES ? 0.8 : undefined,
        bitsOk,
        note: heavy ? (copies * outBytes >= KERNEL_GOAL_BYTES ? undefined : "under 256 MiB: goal not applied") : "goal applies to heavy-tailed v2 only",
      }),
    ];
    rows.push(...(await halfRows(decoder, floors, w, iters, reserved)));
    return rows;
  } finally {
    prepared.destroy();
  }
}

/** f16 / bf16 straight from the kernel (prepared) vs the copy kernel moving the same output bytes, in throughput. */
async function halfRows(decoder: Decoder, floors: GpuFloors, w: Workload, iters: number, reserved: ReservedBuffers): Promise<LoadRow[]> {
  const rows: LoadRow[] = [];
  for (const format of ["f16", "bf16"] as const) {
    const prepared = decoder.prepare(w.bytes, { profile: w.profile, shape: w.shape, format });
    const bytes = prepared.outputBytes;
    const padded = Math.ceil(bytes / 16) * 16;
    const out = reserved.out;
    try {
      await clear(decoder.device, out, padded); // a stale output must not pass the bit check
      const ms = await floors.passMs((pass) => decoder.encode(pass, prepared, out), iters);
      const got = await decoder.readBack(out, padded);
      const bitsOk = sameBits(new Uint16Array(got.buffer, got.byteOffset, bytes / 2), halfReference(w, format));
      const copyMs = await floors.copyKernelMs(padded, iters, reserved);
      rows.push(
        ratioRow({
          backend: "webgpu",
          path: `kernel alone, ${format} output (${floors.timer})`,
          workload: w.name,
          ms,
          floor: `WGSL copy kernel of the ${format} output bytes (ratio in throughput)`,
          floorMs: (copyMs * (w.bytes.length + bytes)) / (2 * bytes),
          bitsOk,
        }),
      );
    } finally {
      prepared.destroy();
    }
  }
  return rows;
}

async function clear(device: GPUDevice, buffer: GPUBuffer, bytes?: number): Promise<void> {
  const encoder = device.createCommandEncoder();
  encoder.clearBuffer(buffer, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
}

/** The model set in one decodeMany call into a reused arena, against the upload floor of all its containers. */
async function modelRows(ctx: LoadContext, device: GPUDevice, d: Decoders, floors: GpuFloors): Promise<LoadRow[]> {
  const tensors = ctx.model.map((w) => ({ name: w.name, bytes: w.bytes, profile: w.profile, shape: w.shape }));
  const arenaBytes = ctx.model.reduce((s, w) => s + Math.ceil(w.reference.byteLength / 256) * 256, 0);
  const arena = device.createBuffer({ size: arenaBytes, usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST });
  const rows: LoadRow[] = [];
  try {
    const upload = await floors.uploadMs(ctx.model.map((w) => w.bytes));
    const gib = (arenaBytes / 2 ** 30).toFixed(2);
    const variants = [
      [() => "validated on the calling thread", d.plain, 0.5],
      [() => `validated on ${d.threads()} worker threads`, d.pooled, 0.5],
      [() => "leaf tables cached: all but host validation", d.cached, undefined],
    ] as const;
    for (const [how, dec, goal] of variants) {
      await clear(device, arena);
      let placed: Awaited<ReturnType<Decoder["decodeMany"]>> = [];
      const ms = await medianMs(async () => {
        placed = await dec.decodeMany(tensors, { arena });
      }, ctx.reps);
      let bitsOk = placed.length === ctx.model.length;
      for (const [i, t] of placed.entries()) {
        if (!bitsOk) break;
        bitsOk = sameBits(await dec.readBack(t.buffer, t.byteLength, t.offset), ctx.model[i]!.reference);
      }
      rows.push(
        ratioRow({
          backend: "webgpu",
          path: `decodeMany (${ctx.model.length} tensors, ${gib} GiB f32, reused arena; ${how()})`,
          workload: "model set",
          ms,
          floor: `upload of all containers (${upload.how})`,
          floorMs: upload.ms,
          goal,
          bitsOk,
          ...(goal === undefined ? { note: "diagnostic" } : {}),
        }),
      );
    }
  } finally {
    arena.destroy();
  }
  return rows;
}
