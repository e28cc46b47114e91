/// <reference types="node" />
/**
 * Node: a ValidatorPool on worker threads, so that `decodeMany` validates several tensors at once
 * while the calling thread uploads. Each stream is copied once, into a SharedArrayBuffer the pool
 * keeps for the next streams (a fresh allocation costs its page faults, ~0.6 ms per MiB on the
 * H200's host, more than the copy), or not at all when it already lives in a SharedArrayBuffer;
 * its leaf table comes back transferred. Workers are unref'd while idle (an idle pool never keeps
 * the process alive). A worker that cannot start or dies hands its streams to the calling
 * thread's validator, so a missing worker file costs speed, not results.
 */
import { Worker } from "node:worker_threads";
import { availableParallelism } from "node:os";
import { Sgfp4Error } from "@sgfp4/format";
import { wasmValidator, type ValidatedStream } from "./job.js";
import type { ValidationRequest, ValidatorPool } from "./validation.js";
import type { ValidateMessage, ValidateReply } from "./validate-worker.js";

// from src (vitest) the built worker; from dist (or a bundle with validate-worker.js next to it) the sibling
const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "../dist/validate-worker.js" : "./validate-worker.js", import.meta.url);

interface Pending {
  bytes: Uint8Array;
  opts: ValidationRequest;
  resolve(s: ValidatedStream): void;
  reject(e: unknown): void;
  /** the pool's buffer the stream was copied into, given back with the answer */
  copy?: SharedArrayBuffer;
}

/** SharedArrayBuffers for streams on their way to a worker, reused across calls (freed with the pool). */
class Inputs {
  private readonly free: SharedArrayBuffer[] = [];

  /** `bytes` in a SharedArrayBuffer: its own, or a copy in one of the pool's. */
  share(p: Pending): Uint8Array {
    if (p.bytes.buffer instanceof SharedArrayBuffer) return p.bytes;
    const n = p.bytes.length;
    const fit = this.free.findIndex((b) => b.byteLength >= n);
    // none fits: a new one replaces the smallest free one (the pool holds one per stream in flight)
    if (fit < 0 && this.free.length) this.free.splice(this.free.indexOf(this.free.reduce((a, b) => (b.byteLength < a.byteLength ? b : a))), 1);
    p.copy = fit >= 0 ? this.free.splice(fit, 1)[0]! : new SharedArrayBuffer(2 ** Math.ceil(Math.log2(Math.max(n, 1 << 16))));
    const view = new Uint8Array(p.copy, 0, n);
    view.set(p.bytes);
    return view;
  }

  giveBack(p: Pending): void {
    if (p.copy) this.free.push(p.copy);
    p.copy = undefined;
  }

  clear(): void {
    this.free.length = 0;
  }
}

const inline = (p: Pending) => {
  try {
    p.resolve(wasmValidator(p.bytes, p.opts));
  } catch (e) {
    p.reject(e);
  }
};

class ValidateWorker {
  readonly pending = new Map<number, Pending>();
  private readonly worker: Worker;
  dead = false;

  constructor(url: URL, private readonly inputs: Inputs) {
    this.worker = new Worker(url);
    this.worker.on("message", (r: ValidateReply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (this.pending.size === 0) this.worker.unref();
      this.inputs.giveBack(p); // the worker is done reading it
      if ("error" in r) p.reject(r.error.code ? new Sgfp4Error(r.error.code, r.error.message) : new Sgfp4Error("BACKEND_FAILURE", `validator worker: ${r.error.message}`));
      else p.resolve({ profile: r.profile, shape: r.shape, leafTable: r.leafTable });
    });
    const die = () => {
      this.dead = true;
      for (const p of this.pending.values()) inline(p); // a dead worker's buffers are not reused
      this.pending.clear();
    };
    this.worker.on("error", die);
    this.worker.on("exit", die);
    // after the listeners: adding a "message" listener refs the worker again (Node 20)
    this.worker.unref();
  }

  post(id: number, p: Pending): void {
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(id, p);
    const msg: ValidateMessage = { id, bytes: this.inputs.share(p), opts: p.opts };
    this.worker.postMessage(msg);
  }

  terminate(): Promise<number> {
    this.dead = true;
    return this.worker.terminate();
  }
}

export class WorkerValidatorPool implements ValidatorPool {
  readonly concurrency: number;
  private readonly workers: ValidateWorker[] = [];
  private readonly inputs = new Inputs();
  private nextId = 0;

  /** `threads` workers (default: the cores less one, at most 8); `workerUrl` is for tests. */
  constructor(threads = Math.min(8, availableParallelism() - 1), workerUrl: URL = WORKER_URL) {
    const n = Math.max(1, Math.floor(threads));
    for (let i = 0; i < n; i++) this.workers.push(new ValidateWorker(workerUrl, this.inputs));
    this.concurrency = n + 2; // every worker busy, and the next streams already copied
  }

  /** Workers alive (0: every stream is validated on the calling thread). */
  get liveWorkers(): number {
    return this.workers.filter((w) => !w.dead).length;
  }

  validate(bytes: Uint8Array, opts: ValidationRequest): Promise<ValidatedStream> {
    return new Promise((resolve, reject) => {
      const p: Pending = { bytes, opts, resolve, reject };
      const live = this.workers.filter((w) => !w.dead);
      if (live.length === 0) return inline(p);
      live.reduce((a, b) => (b.pending.size < a.pending.size ? b : a)).post(this.nextId++, p);
    });
  }

  /** Stop the workers and drop the pool's buffers. */
  async terminate(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.inputs.clear();
  }
}

let shared: WorkerValidatorPool | undefined;
/** The process-wide pool `createNodeDecoder` uses (made on first use). */
export function nodeValidatorPool(): WorkerValidatorPool {
  return (shared ??= new WorkerValidatorPool());
}
