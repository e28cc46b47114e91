/**
 * Node-only entry: decode on worker_threads into one shared output. The stream is copied once
 * into a shared WebAssembly.Memory; the calling thread and pooled workers take bands of whole
 * macroblock rows (runs of macroblocks beyond 16384 columns) from a shared counter (dynamic: heavy
 * bands do not hold up the others; a worker that starts late finds the work done) and write
 * disjoint rows of the output. Validation happens once: v2 records by the thread that expands them
 * (one pass, validate_decode_v2_window; each band also checks that its first offset rises above
 * the previous band's last), v1 streams by the caller before the workers start. Small outputs are
 * decoded on the calling thread alone (a worker round trip costs more than they take). Bits equal
 * decode()'s.
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { Sgfp4Error } from "@sgfp4/format";
import { BAND_TARGET_BYTES, bandBytes, bandsOf, type BandTarget } from "./bands.js";
import { decode } from "./index.js";
import { MAX_WASM_BYTES, WASM_PAGE, instantiate, pagesFor, sharedKernelModule, type KernelExports } from "./kernel.js";
import { INPUT_SLACK_BYTES, validateInMemory, validatedLayout } from "./layouts.js";
import { asSgfp4Error, formatOf, type DecodeOptions, type DecodedArray, type OutputFormat } from "./options.js";
import { fastRequest, type FastRequest } from "./request.js";
import { fusedBands, validatedBands } from "./routes.js";

export type ParallelDecodeOptions = DecodeOptions & { threads?: number };

const MAX_THREADS = 64;
/**
 * Bands of whole macroblock rows up to this size (a 64-row slice of a tensor up to 16384 columns
 * wide), copied out in one contiguous set. Runs of macroblocks (the single-thread routes' 256 KiB
 * bands) copy 64 short rows each: on 16 threads of the H200's host that reached 0.39-0.55 of a
 * 16-thread copy against 0.70-0.98 with whole rows (tools/bench-load/results/h200-parallel-modes-s8.md).
 */
const PARALLEL_BAND_MAX_BYTES = 4 * 1024 * 1024;
/** Each thread gets at least this much output, else fewer threads run (a guess to be checked with bench-load's cpu rows on a many-core host). */
const MIN_BYTES_PER_THREAD = 2 * 1024 * 1024;

/** What every thread of one decode gets (a worker, plus its bandAt / scratchAt in the message). */
interface SharedJob {
  memory: WebAssembly.Memory;
  out: SharedArrayBuffer;
  format: OutputFormat;
  /** Int32Array view: [next band to take, bands done, fault: 0 none, 1 invalid stream, 2 kernel failure] */
  control: SharedArrayBuffer;
  /** [b0, b1, rowBase, colBase, keptRows, keptCols, stride] per band (bands.ts Band) */
  bands: Array<[number, number, number, number, number, number, number]>;
  profile: "v1" | "v2";
  streamAt: number;
  len: number;
  blocks: number;
  tableAt: number;
  blockFirstAt: number;
  rows: number;
  cols: number;
  tilesX: number;
}

/**
 * One thread's share: take bands from the shared counter until none is left, expand each into
 * this thread's band area and copy it into the output. Every band taken is counted done (also
 * after a fault, when the rest are only counted), so the caller waits exactly for the bands taken.
 * Self-contained: its source is also the workers' (Function.prototype.toString).
 */
function takeBands(k: KernelExports, m: SharedJob, bandAt: number, scratchAt: number): void {
  const control = new Int32Array(m.control);
  const blockAt = scratchAt + 256 * 16; // f16/bf16: one f32 macroblock (16 KiB) before the band
  const out = m.format === "f32" ? new Float32Array(m.out) : new Uint16Array(m.out);
  const blockFirst = m.profile === "v1" ? new Uint32Array(m.memory.buffer, m.blockFirstAt, m.blocks + 1) : null;
  const half = m.format !== "f32";
  const rowViews = new Map<number, Array<Float32Array | Uint16Array>>(); // per kept width: a view costs about a short row's copy
  for (let i = Atomics.add(control, 0, 1); i < m.bands.length; i = Atomics.add(control, 0, 1)) {
    if (Atomics.load(control, 2) === 0) {
      try {
        const [b0, b1, rowBase, colBase, keptRows, keptCols, stride] = m.bands[i]!;
        let valid = true;
        if (blockFirst) {
          const first = blockFirst[b0]!;
          if (half) k.decode_leaves_half_window(m.tableAt + first * 16, blockFirst[b1]! - first, blockAt, bandAt, stride, m.rows, m.cols, m.tilesX, rowBase, colBase, m.format === "bf16" ? 1 : 0);
          else k.decode_leaves_window(m.tableAt + first * 16, blockFirst[b1]! - first, bandAt, stride, m.rows, m.cols, m.tilesX, rowBase, colBase);
        } else if (half) {
          // the kernel writes the halves itself (the whole stream is the window: head = window, lo = 0)
          valid = k.validate_decode_v2_half_window(m.streamAt, m.streamAt, 0, m.len, m.len, m.blocks, b0, b1, scratchAt, blockAt, bandAt, stride, m.rows, m.cols, m.tilesX, rowBase, colBase, m.format === "bf16" ? 1 : 0) === 0;
        } else {
          valid = k.validate_decode_v2_window(m.streamAt, m.len, m.blocks, b0, b1, scratchAt, bandAt, stride, m.rows, m.cols, m.tilesX, rowBase, colBase) === 0;
        }
        if (!valid) Atomics.store(control, 2, 1);
        else {
          // f16/bf16: the kernel wrote the band's halves itself
          const outAt = rowBase * m.cols + colBase;
          if (keptCols === m.cols && stride === m.cols) {
            out.set(half ? new Uint16Array(m.memory.buffer, bandAt, keptRows * stride) : new Float32Array(m.memory.buffer, bandAt, keptRows * stride), outAt);
          } else {
            let views = rowViews.get(keptCols);
            if (!views) {
              views = [];
              for (let r = 0; r < 64; r++) {
                views.push(half ? new Uint16Array(m.memory.buffer, bandAt + r * stride * 2, keptCols) : new Float32Array(m.memory.buffer, bandAt + r * stride * 4, keptCols));
              }
              rowViews.set(keptCols, views);
            }
            for (let r = 0; r < keptRows; r++) out.set(views[r]!, outAt + r * m.cols);
          }
        }
      } catch {
        Atomics.store(control, 2, 2);
      }
    }
    Atomics.add(control, 1, 1);
    Atomics.notify(control, 1);
  }
}

// CommonJS worker body (eval: true), so the same code runs from src (vitest) and dist.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
${takeBands.toString()}
let cached = null; // the instance of the last memory seen (the pool reuses one scratch memory)
parentPort.on("message", (m) => {
  try {
    if (!cached || cached.memory !== m.memory) {
      cached = { memory: m.memory, kernel: new WebAssembly.Instance(m.module, { env: { memory: m.memory } }).exports };
    }
    ${takeBands.name}(cached.kernel, m, m.bandAt, m.scratchAt);
  } finally {
    parentPort.postMessage(0); // a worker that cannot start took no band: the caller does its share
  }
});`;

/** A pooled worker; it is ref'd only while it holds a job. */
class PooledWorker {
  private readonly worker: Worker;
  /** control buffers of the jobs posted and not yet answered, in order (a worker answers in order) */
  private readonly inFlight: SharedArrayBuffer[] = [];
  dead = false;

  constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true });
    this.worker.unref(); // an idle pool never keeps the process alive
    this.worker.on("message", () => {
      this.inFlight.shift();
      if (this.inFlight.length === 0) this.worker.unref();
    });
    // A worker that dies may hold a band it never finishes: fault its jobs so their callers stop waiting.
    const die = () => {
      this.dead = true;
      for (const control of this.inFlight.splice(0)) {
        const c = new Int32Array(control);
        Atomics.store(c, 2, 2);
        Atomics.notify(c, 1);
      }
    };
    this.worker.on("error", die);
    this.worker.on("exit", die);
  }

  /** Not awaited: the caller waits for the bands (SharedJob.control), not for the workers. */
  post(job: SharedJob & { module: WebAssembly.Module; bandAt: number; scratchAt: number }): void {
    if (this.inFlight.push(job.control) === 1) this.worker.ref();
    this.worker.postMessage(job);
  }

  terminate(): Promise<number> {
    this.dead = true;
    return this.worker.terminate();
  }
}

const pool: PooledWorker[] = [];

function workers(n: number): PooledWorker[] {
  for (let i = pool.length - 1; i >= 0; i--) if (pool[i]!.dead) pool.splice(i, 1);
  while (pool.length < n) pool.push(new PooledWorker());
  return pool.slice(0, n);
}

/** Stop the pooled workers (they are unref'd, so this is optional). */
export async function terminateWorkers(): Promise<void> {
  const all = pool.splice(0, pool.length);
  await Promise.all(all.map((w) => w.terminate()));
}

const SCRATCH_KEEP_BYTES = 128 * 1024 * 1024;
let scratch: { memory: WebAssembly.Memory; kernel: KernelExports } | undefined;
let scratchBusy = false;

/** Shared scratch (per-thread areas + inputs); reused unless a concurrent call holds it or it was abandoned. */
function takeScratch(module: WebAssembly.Module, bytes: number): { memory: WebAssembly.Memory; kernel: KernelExports; release: () => void; abandon: () => void } {
  const pages = pagesFor(bytes);
  if (scratchBusy || bytes > SCRATCH_KEEP_BYTES) {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    return { memory, kernel: instantiate(module, memory), release: () => {}, abandon: () => {} };
  }
  if (!scratch) {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: SCRATCH_KEEP_BYTES / WASM_PAGE, shared: true });
    scratch = { memory, kernel: instantiate(module, memory) };
  } else if (scratch.memory.buffer.byteLength < bytes) {
    scratch.memory.grow(pages - scratch.memory.buffer.byteLength / WASM_PAGE);
  }
  scratchBusy = true;
  return { ...scratch, release: () => (scratchBusy = false), abandon: () => (scratch = undefined) };
}

function sharedOutput(format: OutputFormat, elements: number): DecodedArray {
  try {
    return format === "f32" ? new Float32Array(new SharedArrayBuffer(elements * 4)) : new Uint16Array(new SharedArrayBuffer(elements * 2));
  } catch (e) {
    throw asSgfp4Error(e, "allocating the shared output");
  }
}

/**
 * Decode on `threads` threads (default min(cores, 8)): the calling thread and threads - 1 pooled
 * workers. The result views a SharedArrayBuffer (a Float32Array, or a Uint16Array of f16/bf16
 * patterns). Throws the Sgfp4Error decode() throws.
 */
export async function decodeParallel(bytes: Uint8Array, opts: ParallelDecodeOptions & { format?: "f32" }): Promise<Float32Array>;
export async function decodeParallel(bytes: Uint8Array, opts: ParallelDecodeOptions & { format: "f16" | "bf16" }): Promise<Uint16Array>;
export async function decodeParallel(bytes: Uint8Array, opts: ParallelDecodeOptions): Promise<DecodedArray>;
export async function decodeParallel(bytes: Uint8Array, opts: ParallelDecodeOptions): Promise<DecodedArray> {
  const threads = opts?.threads ?? Math.min(availableParallelism(), 8);
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
    throw new Sgfp4Error("INVALID_ARGUMENT", `threads must be an integer in 1..${MAX_THREADS}, got ${String(opts?.threads)}`);
  }
  const format = formatOf(opts);
  const r = fastRequest(bytes, opts);
  const module = sharedKernelModule();
  if (!r || !module) return copyToShared(decode(bytes, opts), format); // parse() route (or its error)
  const outBytes = r.rows * r.cols * (format === "f32" ? 4 : 2);
  const bandTarget = Math.max(BAND_TARGET_BYTES, Math.min(PARALLEL_BAND_MAX_BYTES, 64 * r.cols * 4));
  const bands = bandsOf(r.tilesY, r.tilesX, r.rows, r.cols, bandTarget);
  const parts = Math.min(threads, bands.length, Math.max(1, Math.floor(outBytes / MIN_BYTES_PER_THREAD)));
  if (parts === 1) {
    const target: BandTarget = { tilesY: r.tilesY, tilesX: r.tilesX, rows: r.rows, cols: r.cols, format, out: () => sharedOutput(format, r.rows * r.cols) };
    const out = r.profile === "v2" ? fusedBands(bytes, r, target) : validatedBands(bytes, r, target);
    return out ?? copyToShared(decode(bytes, opts), format);
  }
  const out = await onWorkers(bytes, r, format, bands, parts, module, bandTarget);
  return out ?? copyToShared(decode(bytes, opts), format); // not ok: decode() runs parse(), which throws why
}

/**
 * The caller and parts - 1 pooled workers take bands from one shared counter. The shared output,
 * or null when the stream is not valid (or does not fit the kernel's memory).
 */
async function onWorkers(bytes: Uint8Array, r: FastRequest, format: OutputFormat, bands: ReturnType<typeof bandsOf>, parts: number, module: WebAssembly.Module, bandTarget: number): Promise<DecodedArray | null> {
  // per thread: a one-record leaf table (4 KiB, v2), an f32 macroblock (16 KiB, f16/bf16) and its band; then the inputs
  const blockBytes = format !== "f32" ? 64 * 64 * 4 : 0;
  const area = 256 * 16 + blockBytes + bandBytes(r.tilesY, r.tilesX, r.cols, bandTarget);
  const layout = validatedLayout(parts * area, r.profile, bytes.length, r.blockCount);
  const streamAt = r.profile === "v2" ? parts * area : layout.streamAt; // v2 needs no leaf table
  const totalBytes = r.profile === "v2" ? streamAt + bytes.length + INPUT_SLACK_BYTES : layout.totalBytes;
  if (totalBytes > MAX_WASM_BYTES) return null;
  let held: ReturnType<typeof takeScratch>;
  try {
    held = takeScratch(module, totalBytes);
  } catch (e) {
    throw asSgfp4Error(e, "memory for parallel decode");
  }
  try {
    if (r.profile === "v1") {
      if (validateInMemory(held.kernel, held.memory.buffer, bytes, "v1", r.blockCount, layout, streamAt) < 0) return null;
    } else {
      new Uint8Array(held.memory.buffer, streamAt, bytes.length).set(bytes);
    }
    const out = sharedOutput(format, r.rows * r.cols);
    const job: SharedJob = {
      memory: held.memory,
      out: out.buffer as SharedArrayBuffer,
      format,
      control: new SharedArrayBuffer(12),
      bands: bands.map((b) => [b.b0, b.b1, b.rowBase, b.colBase, b.keptRows, b.keptCols, b.stride]),
      profile: r.profile,
      streamAt,
      len: bytes.length,
      blocks: r.blockCount,
      tableAt: layout.tableAt,
      blockFirstAt: layout.blockFirstAt,
      rows: r.rows,
      cols: r.cols,
      tilesX: r.tilesX,
    };
    workers(parts - 1).forEach((w, i) => w.post({ ...job, module, scratchAt: i * area, bandAt: i * area + 256 * 16 + blockBytes }));
    // the caller's share: on a busy machine it may do every band itself, before a worker starts
    takeBands(held.kernel, job, (parts - 1) * area + 256 * 16 + blockBytes, (parts - 1) * area);
    const control = new Int32Array(job.control);
    for (let done = Atomics.load(control, 1); done < bands.length && Atomics.load(control, 2) !== 2; done = Atomics.load(control, 1)) {
      const waited = (Atomics as unknown as AtomicsWaitAsync).waitAsync(control, 1, done);
      if (waited.async) await waited.value;
    }
    const fault = Atomics.load(control, 2);
    if (fault === 2) {
      held.abandon(); // a thread may still write into it: never reuse this memory
      throw new Sgfp4Error("BACKEND_FAILURE", "parallel decode: a worker died or the kernel failed in a thread");
    }
    return fault === 0 ? out : null;
  } finally {
    held.release();
  }
}

/** Atomics.waitAsync (Node >= 16; not in this TypeScript lib target). */
interface AtomicsWaitAsync {
  waitAsync(a: Int32Array, index: number, value: number): { async: false; value: string } | { async: true; value: Promise<string> };
}

/** Fallback routes (parse(), no kernel): the output copied into a SharedArrayBuffer, as the fast routes return. */
function copyToShared(a: DecodedArray, format: OutputFormat): DecodedArray {
  const out = sharedOutput(format, a.length);
  out.set(a);
  return out;
}

