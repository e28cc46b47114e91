/**
 * Node-only entry: decode on worker_threads. All workers run the same wasm kernel on one shared
 * WebAssembly.Memory, each over a contiguous range of leaves (leaves tile the output, so the
 * ranges write disjoint elements); the bits equal decode()'s.
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { Sgfp4Error, type Container } from "@sgfp4/format";
import { decode, type DecodeOptions } from "./index.js";
import { MAX_WASM_BYTES, fillInputs, pagesFor, planMemory, sharedKernelModule } from "./kernel.js";
import { asSgfp4Error, parseForDecode } from "./options.js";

export type ParallelDecodeOptions = DecodeOptions & { threads?: number };

const MAX_THREADS = 64;

// CommonJS worker body (eval: true), so the same code runs from src (vitest) and dist.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", (m) => {
  try {
    const kernel = new WebAssembly.Instance(m.module, { env: { memory: m.memory } }).exports;
    kernel.decode_leaves(m.table, m.count, 0, m.rows, m.cols, m.tilesX, 0);
    parentPort.postMessage({ id: m.id, ok: true });
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: false, error: String((e && e.message) || e) });
  }
});`;

interface Job {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  table: number;
  count: number;
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

/** Split the leaves into at most `parts` contiguous ranges of about equal area. */
export function splitLeaves(c: Container, parts: number): Array<[number, number]> {
  const t = c.leafTable;
  let total = 0;
  for (let n = 0; n < c.leafCount; n++) total += 1 << (2 * ((t[4 * n + 1]! >>> 12) & 7));
  const ranges: Array<[number, number]> = [];
  let start = 0;
  let done = 0;
  for (let n = 0; n < c.leafCount; n++) {
    done += 1 << (2 * ((t[4 * n + 1]! >>> 12) & 7));
    if (done >= (total * (ranges.length + 1)) / parts || n === c.leafCount - 1) {
      ranges.push([start, n + 1]);
      start = n + 1;
    }
  }
  return ranges;
}

export async function decodeParallel(bytes: Uint8Array, opts: ParallelDecodeOptions): Promise<Float32Array> {
  const threads = opts.threads ?? Math.min(availableParallelism(), 8);
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
    throw new Sgfp4Error("INVALID_ARGUMENT", `threads must be an integer in 1..${MAX_THREADS}, got ${String(opts.threads)}`);
  }
  const c = parseForDecode(bytes, opts);
  const count = c.shape[0] * c.shape[1];
  const module = sharedKernelModule();
  const plan = planMemory(c, count * 4);
  if (!module || plan.totalBytes > MAX_WASM_BYTES) return decode(bytes, opts);
  let memory: WebAssembly.Memory;
  try {
    const pages = pagesFor(plan.totalBytes);
    memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
    fillInputs(memory.buffer, c, bytes, plan);
  } catch (e) {
    throw asSgfp4Error(e, "shared memory for parallel decode");
  }
  const ranges = splitLeaves(c, threads);
  const crew = workers(ranges.length);
  await Promise.all(
    ranges.map(([from, to], i) =>
      crew[i]!.run({ module, memory, table: plan.tableAt + from * 16, count: to - from, rows: c.shape[0], cols: c.shape[1], tilesX: c.tilesX }),
    ),
  );
  // The array views the shared memory (a SharedArrayBuffer); the workers are done with it.
  return new Float32Array(memory.buffer, 0, count);
}
