/**
 * Host memory floors measured in the same run as the paths they judge: a copy of the same output
 * on one thread (Float32Array.set), a new array plus that copy, and an N-thread copy in which each
 * worker copies a disjoint band of one shared output (as decodeParallel's workers write it).
 */
import { Worker } from "node:worker_threads";
import { medianMs } from "./timing.js";

/** Float32Array.set of `source` into a reused array of the same length (one call, to be timed). */
export function copyCall(source: ArrayBufferView): () => void {
  const src = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  const dst = new Uint8Array(src.length);
  return () => dst.set(src);
}

/** new Float32Array(n) + set: what decode() (a new array) is held to (one call, to be timed). */
export function allocCopyCall(source: Float32Array): () => void {
  return () => new Float32Array(source.length).set(source);
}

// CommonJS worker body (eval): copies bytes [from, to) of a shared source into a shared destination.
const COPY_WORKER = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", (m) => {
  new Uint8Array(m.dst, m.from, m.to - m.from).set(new Uint8Array(m.src, m.from, m.to - m.from));
  parentPort.postMessage(0);
});`;

/** N workers copying disjoint bands of one SharedArrayBuffer into another. */
export class ParallelCopy {
  private readonly workers: Worker[];
  constructor(readonly threads: number) {
    this.workers = Array.from({ length: threads }, () => new Worker(COPY_WORKER, { eval: true }));
  }

  /** Median ms of call(source, fresh). */
  async ms(source: ArrayBufferView, reps: number, fresh: boolean): Promise<number> {
    return medianMs(this.call(source, fresh), reps);
  }

  /**
   * An N-thread copy of `source` (its bytes in a shared buffer), one call to be timed: into one
   * reused shared output (fresh = false), or into a new SharedArrayBuffer each call (fresh = true,
   * first touched by the workers, as decodeParallel's own output is).
   */
  call(source: ArrayBufferView, fresh: boolean): () => Promise<void> {
    const bytes = source.byteLength;
    const src = new SharedArrayBuffer(bytes);
    new Uint8Array(src).set(new Uint8Array(source.buffer, source.byteOffset, bytes));
    const reused = fresh ? null : new SharedArrayBuffer(bytes);
    const band = Math.ceil(bytes / this.threads / 64) * 64;
    return async () => {
      const dst = reused ?? new SharedArrayBuffer(bytes);
      await Promise.all(
        this.workers.map(
          (w, i) =>
            new Promise((resolve) => {
              w.once("message", resolve);
              w.postMessage({ src, dst, from: Math.min(bytes, i * band), to: Math.min(bytes, (i + 1) * band) });
            }),
        ),
      );
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
