/**
 * Node-only entry: decode on worker_threads. All workers run the same wasm kernel over one shared
 * WebAssembly.Memory holding the inputs, each over its own run of macroblock-row bands (bands
 * cover disjoint output rows); the bits equal decode()'s.
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { Sgfp4Error } from "@sgfp4/format";
import { decode, type DecodeOptions } from "./index.js";
import { MAX_WASM_BYTES, WASM_PAGE, fillInputs, pagesFor, planMemory, sharedKernelModule } from "./kernel.js";
import { asSgfp4Error, parseForDecode } from "./options.js";

export type ParallelDecodeOptions = DecodeOptions & { threads?: number };

const MAX_THREADS = 64;

// CommonJS worker body (eval: true), so the same code runs from src (vitest) and dist.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
let cached = null; // the instance of the last memory seen (the pool reuses one scratch memory)
parentPort.on("message", (m) => {
  try {
    if (!cached || cached.memory !== m.memory) {
      cached = { memory: m.memory, kernel: new WebAssembly.Instance(m.module, { env: { memory: m.memory } }).exports };
    }
    const out = new Float32Array(m.out);
    for (const [table, count, rowBase, keptRows] of m.bands) {
      cached.kernel.decode_leaves(table, count, m.bandAt, m.rows, m.cols, m.tilesX, rowBase);
      out.set(new Float32Array(m.memory.buffer, m.bandAt, keptRows * m.cols), rowBase * m.cols);
    }
    parentPort.postMessage({ id: m.id, ok: true });
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: false, error: String((e && e.message) || e) });
  }
});`;

interface Job {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  out: SharedArrayBuffer;
  /** this worker's band area in `memory` */
  bandAt: number;
  /** [table address, leaf count, first row, rows kept] per band */
  bands: Array<[number, number, number, number]>;
  rows: number;
  cols: number;
  tilesX: number;
}

class PooledWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private nextId = 0;
  dead = false;

  constructor() {
    this.worker = new Worker(WORKER_SOURCE, { eval: true });
    this.worker.unref(); // an idle pool never keeps the process alive
    this.worker.on("message", (m: { id: number; ok: boolean; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.ok) p.resolve();
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

  run(job: Job): Promise<void> {
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

/** The kernel expands a band of macroblock rows at a time (per worker) into this much scratch. */
const BAND_TARGET_BYTES = 256 * 1024;
const SCRATCH_KEEP_BYTES = 128 * 1024 * 1024;
let scratch: WebAssembly.Memory | undefined;
let scratchBusy = false;

/** Shared scratch (inputs + one band area per worker); reused unless a concurrent call holds it. */
function takeScratch(bytes: number): { memory: WebAssembly.Memory; release: () => void } {
  const pages = pagesFor(bytes);
  if (scratchBusy || bytes > SCRATCH_KEEP_BYTES) {
    return { memory: new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true }), release: () => {} };
  }
  if (!scratch) scratch = new WebAssembly.Memory({ initial: pages, maximum: SCRATCH_KEEP_BYTES / WASM_PAGE, shared: true });
  else if (scratch.buffer.byteLength < bytes) scratch.grow(pages - scratch.buffer.byteLength / WASM_PAGE);
  scratchBusy = true;
  return { memory: scratch, release: () => (scratchBusy = false) };
}

/**
 * Decode on worker threads. Workers expand cache-sized bands of macroblock rows into their part
 * of a reused shared scratch memory and copy each band into the output, so the output pages are
 * first touched by the workers in parallel. The result views a SharedArrayBuffer.
 */
export async function decodeParallel(bytes: Uint8Array, opts: ParallelDecodeOptions): Promise<Float32Array> {
  const threads = opts.threads ?? Math.min(availableParallelism(), 8);
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
    throw new Sgfp4Error("INVALID_ARGUMENT", `threads must be an integer in 1..${MAX_THREADS}, got ${String(opts.threads)}`);
  }
  const c = parseForDecode(bytes, opts);
  const [rows, cols] = c.shape;
  const module = sharedKernelModule();
  const bandBlockRows = Math.max(1, Math.min(c.tilesY, Math.floor(BAND_TARGET_BYTES / (64 * cols * 4))));
  const bandBytes = bandBlockRows * 64 * cols * 4;
  const bands: Array<[number, number, number, number]> = [];
  for (let by0 = 0; by0 < c.tilesY; by0 += bandBlockRows) {
    const by1 = Math.min(c.tilesY, by0 + bandBlockRows);
    const firstLeaf = c.blocks[by0 * c.tilesX]!.firstLeaf;
    const last = c.blocks[by1 * c.tilesX - 1]!;
    bands.push([firstLeaf, last.firstLeaf + last.leafCount - firstLeaf, by0 * 64, Math.min(rows, by1 * 64) - by0 * 64]);
  }
  const parts = Math.min(threads, bands.length);
  // inputs after `parts` band areas
  const plan = planMemory(c, bandBytes * parts);
  if (!module || plan.totalBytes > MAX_WASM_BYTES) return decode(bytes, opts);
  let out: SharedArrayBuffer;
  let held: { memory: WebAssembly.Memory; release: () => void };
  try {
    out = new SharedArrayBuffer(rows * cols * 4);
    held = takeScratch(plan.totalBytes);
  } catch (e) {
    throw asSgfp4Error(e, "memory for parallel decode");
  }
  try {
    fillInputs(held.memory.buffer, c, bytes, plan);
    const crew = workers(parts);
    // contiguous runs of bands; every band but the last covers the same output area
    const share = Math.ceil(bands.length / parts);
    await Promise.all(
      crew.map((w, i) =>
        w.run({
          module,
          memory: held.memory,
          out,
          bandAt: i * bandBytes,
          bands: bands.slice(i * share, (i + 1) * share).map(([first, count, rowBase, kept]) => [plan.tableAt + first * 16, count, rowBase, kept]),
          rows,
          cols,
          tilesX: c.tilesX,
        }),
      ),
    );
  } finally {
    held.release();
  }
  return new Float32Array(out);
}
