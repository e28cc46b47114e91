/**
 * A small pool of worker threads for block jobs. Results are put back in job order, so the
 * output never depends on which thread finished first.
 */
import { Worker } from "node:worker_threads";
import { encodeBlockRows, statsBlockRows, type BlockJob, type EncodedRows } from "./blocks.js";

// Under vitest the sources are .ts; workers need the built JavaScript.
const workerUrl = new URL(import.meta.url.endsWith(".ts") ? "../dist/worker.js" : "./worker.js", import.meta.url);

type Kind = "encode" | "stats";
type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: { kind: Kind; job: BlockJob; id: number }[] = [];
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
   * of delaying every worker's start (a job may hold a view of the caller's tensor).
   */
  private pump(): void {
    while (this.idle.length && this.queue.length) {
      const w = this.idle.pop()!;
      const t = this.queue.shift()!;
      const job = { ...t.job, data: t.job.data.slice() };
      w.postMessage({ id: t.id, kind: t.kind, job }, [job.data.buffer as ArrayBuffer]);
    }
  }

  run<K extends Kind>(kind: K, job: BlockJob): Promise<K extends "stats" ? Float64Array : EncodedRows> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.queue.push({ kind, job, id });
      this.pump();
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * Run one kind of job over row chunks, in a pool or inline; results in chunk order. Jobs may hold
 * views of the caller's tensor (a pool copies each job's rows as a worker takes it).
 */
export async function runChunks<K extends Kind>(
  kind: K,
  jobs: BlockJob[],
  pool: WorkerPool | undefined,
  onChunk?: (done: number) => void,
  /**
   * where each encode job's decode goes (job.data.length values): jobs run inline decode into it,
   * a worker's rows are copied into it as they arrive (while other workers still run)
   */
  decodedInto?: (job: BlockJob) => Float32Array,
): Promise<(K extends "stats" ? Float64Array : EncodedRows)[]> {
  type R = K extends "stats" ? Float64Array : EncodedRows;
  if (!pool) {
    const out: R[] = [];
    for (const job of jobs) {
      out.push((kind === "stats" ? statsBlockRows(job) : encodeBlockRows(job, decodedInto?.(job))) as R);
      onChunk?.(out.length);
    }
    return out;
  }
  let done = 0;
  return Promise.all(
    jobs.map((job) =>
      pool.run(kind, job).then((r) => {
        if (kind === "encode" && decodedInto) {
          const rows = (r as EncodedRows).decoded;
          const into = decodedInto(job);
          into.set(rows);
          (r as EncodedRows).decoded = into;
        }
        onChunk?.(++done);
        return r as R;
      }),
    ),
  );
}
