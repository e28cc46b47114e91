/// <reference types="node" />
/**
 * Node: a ValidatorPool on worker threads, so that `decodeMany` validates several tensors at once
 * while the calling thread uploads. Each stream is copied once to its worker (no copy when it lives
 * in a SharedArrayBuffer) and its leaf table comes back transferred. Workers are unref'd while
 * idle (an idle pool never keeps the process alive). A worker that cannot start or dies hands its
 * streams to the calling thread's validator, so a missing worker file costs speed, not results.
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

  constructor(url: URL) {
    this.worker = new Worker(url);
    this.worker.unref();
    this.worker.on("message", (r: ValidateReply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (this.pending.size === 0) this.worker.unref();
      if ("error" in r) p.reject(r.error.code ? new Sgfp4Error(r.error.code, r.error.message) : new Sgfp4Error("BACKEND_FAILURE", `validator worker: ${r.error.message}`));
      else p.resolve({ profile: r.profile, shape: r.shape, leafTable: r.leafTable });
    });
    const die = () => {
      this.dead = true;
      for (const p of this.pending.values()) inline(p);
      this.pending.clear();
    };
    this.worker.on("error", die);
    this.worker.on("exit", die);
  }

  post(id: number, p: Pending): void {
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(id, p);
    const shared = typeof SharedArrayBuffer !== "undefined" && p.bytes.buffer instanceof SharedArrayBuffer;
    const bytes = shared ? p.bytes : p.bytes.slice(); // only the stream's bytes, not the whole buffer it sits in
    const msg: ValidateMessage = { id, bytes, opts: p.opts };
    this.worker.postMessage(msg, shared ? [] : [bytes.buffer as ArrayBuffer]);
  }

  terminate(): Promise<number> {
    this.dead = true;
    return this.worker.terminate();
  }
}

export class WorkerValidatorPool implements ValidatorPool {
  readonly concurrency: number;
  private readonly workers: ValidateWorker[] = [];
  private nextId = 0;

  /** `threads` workers (default: the cores less one, at most 8); `workerUrl` is for tests. */
  constructor(threads = Math.min(8, availableParallelism() - 1), workerUrl: URL = WORKER_URL) {
    const n = Math.max(1, Math.floor(threads));
    for (let i = 0; i < n; i++) this.workers.push(new ValidateWorker(workerUrl));
    this.concurrency = 2 * n; // one validating and one queued per worker
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

  async terminate(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

let shared: WorkerValidatorPool | undefined;
/** The process-wide pool `createNodeDecoder` uses (made on first use). */
export function nodeValidatorPool(): WorkerValidatorPool {
  return (shared ??= new WorkerValidatorPool());
}
