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

  constructor(readonly threads: number) {
    for (let i = 0; i < threads; i++) {
      const w = new Worker(workerUrl);
      w.on("message", (m: { id: number; result?: unknown; error?: string }) => {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        this.idle.push(w);
        this.pump();
        if (!p) return;
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.result);
      });
      w.on("error", (e: Error) => {
        for (const p of this.pending.values()) p.reject(e);
        this.pending.clear();
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
      const id = this.nextId++;
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.queue.push({ kind, job, id, owned });
      this.pump();
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
