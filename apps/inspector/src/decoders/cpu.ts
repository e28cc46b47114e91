/** The CPU decoder of the page: the registry's "cpu" decoder run in one module worker, requests matched by id. */
import type { Availability, DecodeRequest, Decoder } from "@sgfp4/format";
import type { WorkerReply, WorkerRequest } from "./cpu-worker";
import { DecodeFailure } from "./failure";

export class CpuWorkerBackend implements Decoder {
  readonly name = "CPU";
  readonly formats = ["f32"] as const;
  /** what the worker said it ran (wasm kernel or JS loop), after the first decode */
  label = "";
  private worker: Worker | undefined;
  private nextId = 1;
  private pending = new Map<number, { resolve: (f: Float32Array) => void; reject: (e: DecodeFailure) => void }>();

  async available(): Promise<Availability> {
    return typeof Worker === "function" ? { ok: true, detail: "@sgfp4/cpu-decoder in a Web Worker" } : { ok: false, reason: "this browser has no Web Workers" };
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL("./cpu-worker.ts", import.meta.url), { type: "module", name: "sgfp4-cpu-decode" });
    w.onmessage = (ev: MessageEvent<WorkerReply>) => {
      const r = ev.data;
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (r.ok) {
        this.label = r.label;
        p.resolve(r.out);
      } else p.reject(new DecodeFailure(r.code, r.message));
    };
    w.onerror = (ev) => {
      // A worker that dies takes every pending request with it.
      for (const p of this.pending.values()) p.reject(new DecodeFailure("BACKEND_FAILURE", `CPU worker failed: ${ev.message}`));
      this.pending.clear();
      this.worker?.terminate();
      this.worker = undefined;
    };
    this.worker = w;
    return w;
  }

  decode(bytes: Uint8Array, req: DecodeRequest): Promise<Float32Array> {
    if ((req.format ?? "f32") !== "f32") return Promise.reject(new DecodeFailure("INVALID_ARGUMENT", `the page's CPU decoder writes f32, not ${req.format}`));
    const w = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A copy goes to the worker so the page keeps its bytes.
      const msg: WorkerRequest = { id, bytes: bytes.slice(), profile: req.profile, shape: [req.shape[0], req.shape[1]] };
      w.postMessage(msg, [msg.bytes.buffer]);
    });
  }

  async close(): Promise<void> {
    this.worker?.terminate();
    this.worker = undefined;
  }
}
