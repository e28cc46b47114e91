/**
 * Node-only entry: decode on worker_threads into one shared output. The stream is copied once
 * into a shared WebAssembly.Memory; workers take bands of macroblock rows from a shared counter
 * (dynamic: heavy bands do not hold up the others) and write disjoint rows of the output.
 * Validation happens once: v2 records are validated by the worker that expands them (one pass,
 * validate_decode_v2_rows; each band also checks that its first offset rises above the previous
 * band's last), v1 streams by the caller before the workers start. Small outputs are decoded on
 * the calling thread (a worker round trip costs more than they take). Bits equal decode()'s.
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { Sgfp4Error } from "@sgfp4/format";
import { bandBytes, bandsOf, type BandTarget } from "./bands.js";
import { decode } from "./index.js";
import { MAX_WASM_BYTES, WASM_PAGE, instantiate, pagesFor, sharedKernelModule, type KernelExports } from "./kernel.js";
import { INPUT_SLACK_BYTES, validateInMemory, validatedLayout } from "./layouts.js";
import { asSgfp4Error, formatOf, type DecodeOptions, type DecodedArray, type OutputFormat } from "./options.js";
import { fastRequest, type FastRequest } from "./request.js";
import { fusedBands, validatedBands } from "./routes.js";

export type ParallelDecodeOptions = DecodeOptions & { threads?: number };

const MAX_THREADS = 64;
/** Each worker gets at least this much output, else fewer workers run (measured: bench-load cpu rows). */
const MIN_BYTES_PER_WORKER = 2 * 1024 * 1024;

// CommonJS worker body (eval: true), so the same code runs from src (vitest) and dist.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
let cached = null; // the instance of the last memory seen (the pool reuses one scratch memory)
parentPort.on("message", (m) => {
  try {
    if (!cached || cached.memory !== m.memory) {
      cached = { memory: m.memory, kernel: new WebAssembly.Instance(m.module, { env: { memory: m.memory } }).exports };
    }
    const k = cached.kernel;
    const next = new Int32Array(m.counter);
    const out = m.format === "f32" ? new Float32Array(m.out) : new Uint16Array(m.out);
    const blockFirst = m.profile === "v1" ? new Uint32Array(m.memory.buffer, m.blockFirstAt, m.blocks + 1) : null;
    let valid = true;
    for (let i = Atomics.add(next, 0, 1); i < m.bands.length; i = Atomics.add(next, 0, 1)) {
      const [by0, by1, rowBase, keptRows] = m.bands[i];
      if (blockFirst) {
        const first = blockFirst[by0 * m.tilesX];
        k.decode_leaves(m.tableAt + first * 16, blockFirst[by1 * m.tilesX] - first, m.bandAt, m.rows, m.cols, m.tilesX, rowBase);
      } else if (k.validate_decode_v2_rows(m.streamAt, m.len, m.blocks, by0 * m.tilesX, by1 * m.tilesX, m.scratchAt, m.bandAt, m.rows, m.cols, m.tilesX, rowBase) !== 0) {
        valid = false;
        Atomics.store(next, 0, m.bands.length); // the others stop after their current band
        break;
      }
      const n = keptRows * m.cols;
      if (m.format === "f32") {
        out.set(new Float32Array(m.memory.buffer, m.bandAt, n), rowBase * m.cols);
      } else {
        (m.format === "f16" ? k.convert_f16 : k.convert_bf16)(m.bandAt, m.bandAt, n);
        out.set(new Uint16Array(m.memory.buffer, m.bandAt, n), rowBase * m.cols);
      }
    }
    parentPort.postMessage({ id: m.id, ok: true, valid });
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: false, error: String((e && e.message) || e) });
  }
});`;

/** What every worker of one decode gets (plus its own bandAt / scratchAt). */
interface Job {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  out: SharedArrayBuffer;
  format: OutputFormat;
  counter: SharedArrayBuffer;
  /** [by0, by1, rowBase, keptRows] per band */
  bands: Array<[number, number, number, number]>;
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

class PooledWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (valid: boolean) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  dead = false;

  constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true });
    this.worker.unref(); // an idle pool never keeps the process alive
    this.worker.on("message", (m: { id: number; ok: boolean; valid?: boolean; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.ok) p.resolve(m.valid === true);
      else p.reject(new Sgfp4Error("BACKEND_FAILURE", `worker decode failed: ${m.error}`));
    });
    const fail = (why: string) => {
      this.dead = true;
      for (const p of this.pending.values()) p.reject(new Sgfp4Error("BACKEND_FAILURE", why));
      this.pending.clear();
    };
    this.worker.on("error", (e) => fail(`worker error: ${e.message}`));
    this.worker.on("exit", (code) => fail(`worker exited (code ${code})`));
  }

  /** Resolves with false when a record of the stream was not valid. */
  run(job: Job & { bandAt: number; scratchAt: number }): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.worker.ref(); // keep the process alive while a decode is in flight
      this.worker.postMessage({ id, ...job });
    });
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

/** Shared scratch (per-worker areas + inputs); reused unless a concurrent call holds it. */
function takeScratch(module: WebAssembly.Module, bytes: number): { memory: WebAssembly.Memory; kernel: KernelExports; release: () => void } {
  const pages = pagesFor(bytes);
  if (scratchBusy || bytes > SCRATCH_KEEP_BYTES) {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    return { memory, kernel: instantiate(module, memory), release: () => {} };
  }
  if (!scratch) {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: SCRATCH_KEEP_BYTES / WASM_PAGE, shared: true });
    scratch = { memory, kernel: instantiate(module, memory) };
  } else if (scratch.memory.buffer.byteLength < bytes) {
    scratch.memory.grow(pages - scratch.memory.buffer.byteLength / WASM_PAGE);
  }
  scratchBusy = true;
  return { ...scratch, release: () => (scratchBusy = false) };
}

function sharedOutput(format: OutputFormat, elements: number): DecodedArray {
  try {
    return format === "f32" ? new Float32Array(new SharedArrayBuffer(elements * 4)) : new Uint16Array(new SharedArrayBuffer(elements * 2));
  } catch (e) {
    throw asSgfp4Error(e, "allocating the shared output");
  }
}

/**
 * Decode on worker threads (default min(cores, 8)); the result views a SharedArrayBuffer (a
 * Float32Array, or a Uint16Array of f16/bf16 patterns). Throws the Sgfp4Error decode() throws.
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
  const bands = bandsOf(r.tilesY, r.rows, r.cols);
  const parts = Math.min(threads, bands.length, Math.max(1, Math.floor(outBytes / MIN_BYTES_PER_WORKER)));
  if (parts === 1) {
    const target: BandTarget = { tilesY: r.tilesY, rows: r.rows, cols: r.cols, format, out: () => sharedOutput(format, r.rows * r.cols) };
    const out = r.profile === "v2" ? fusedBands(bytes, r, target) : validatedBands(bytes, r, target);
    return out ?? copyToShared(decode(bytes, opts), format);
  }
  const out = await onWorkers(bytes, r, format, bands, parts, module);
  return out ?? copyToShared(decode(bytes, opts), format); // not ok: decode() runs parse(), which throws why
}

/** The shared output, or null when the stream is not valid (or does not fit the kernel's memory). */
async function onWorkers(bytes: Uint8Array, r: FastRequest, format: OutputFormat, bands: ReturnType<typeof bandsOf>, parts: number, module: WebAssembly.Module): Promise<DecodedArray | null> {
  // per worker: a one-record leaf table (4 KiB, v2) and its band; then the inputs
  const area = 256 * 16 + bandBytes(r.tilesY, r.cols);
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
    const job: Job = {
      module,
      memory: held.memory,
      out: out.buffer as SharedArrayBuffer,
      format,
      counter: new SharedArrayBuffer(4),
      bands: bands.map((b) => [b.by0, b.by1, b.rowBase, b.keptRows]),
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
    const valid = await Promise.all(workers(parts).map((w, i) => w.run({ ...job, scratchAt: i * area, bandAt: i * area + 256 * 16 })));
    return valid.every(Boolean) ? out : null;
  } finally {
    held.release();
  }
}

/** Fallback routes (parse(), no kernel): the output copied into a SharedArrayBuffer, as the fast routes return. */
function copyToShared(a: DecodedArray, format: OutputFormat): DecodedArray {
  const out = sharedOutput(format, a.length);
  out.set(a);
  return out;
}

