/**
 * A small pool of worker threads for block jobs. Results are put back in job order, so the
 * output never depends on which thread finished first.
 */
import { Worker } from "node:worker_threads";
import type { BlockJob, EncodedRows } from "./blocks.js";

// Under vitest the sources are .ts; workers need the built JavaScript.
const workerUrl = new URL(import.meta.url.endsWith(".ts") ? "../dist/worker.js" : "./worker.js", import.meta.url);

type Kind = "encode" | "stats";
type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: { kind: Kind; job: BlockJob; id: number; owned: boolean }[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private closing = false;
  /** set when a worker failed: every pending and later job is rejected with it */
  private failure: Error | undefined;

  private fail(e: Error): void {
    this.failure ??= e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.queue.length = 0;
  }

  constructor(readonly threads: number) {
    for (let i = 0; i < threads; i++) {
      // Inherit the parent's flags (Node handles per-process ones such as --expose-gc), except
      // --input-type (from `node -e`), which a worker refuses to start with.
      const inherited = process.execArgv.filter((a) => !a.startsWith("--input-type"));
      const w = new Worker(workerUrl, inherited.length === process.execArgv.length ? {} : { execArgv: inherited });
      w.on("message", (m: { id: number; result?: unknown; error?: string }) => {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        this.idle.push(w);
        this.pump();
        if (!p) return;
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.result);
      });
      w.on("error", (e: Error) => this.fail(e));
      // a worker that ends (killed, out of memory) fails the pool rather than leaving jobs unsettled
      w.on("exit", (code: number) => {
        if (!this.closing) this.fail(new Error(`a worker thread exited (code ${code})`));
      });
      this.workers.push(w);
      this.idle.push(w);
    }
  }

  /**
   * Hands queued jobs to idle workers. A job's rows are copied here, when a worker takes it, and
   * the copy is transferred: the copying of later jobs overlaps the work on earlier ones instead
   * of delaying every worker's start (a job may hold a view of the caller's tensor). An owned
   * job's rows (an array of its own) are transferred as they are.
   */
  private pump(): void {
    while (this.idle.length && this.queue.length) {
      const w = this.idle.pop()!;
      const t = this.queue.shift()!;
      const d = t.job.data;
      const whole = t.owned && d.byteOffset === 0 && d.byteLength === d.buffer.byteLength && d.buffer instanceof ArrayBuffer;
      const job = { ...t.job, data: whole ? d : d.slice() };
      w.postMessage({ id: t.id, kind: t.kind, job }, [job.data.buffer as ArrayBuffer]);
    }
  }

  /** owned: job.data is the caller's to give away (it is transferred, and unusable after). */
  run<K extends Kind>(kind: K, job: BlockJob, owned = false): Promise<K extends "stats" ? Float64Array : EncodedRows> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const id = this.nextId++;
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.queue.push({ kind, job, id, owned });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
