/** Timing and row helpers shared by the backend modules. */
import type { LoadRow } from "./types.js";

/**
 * Median wall time of `fn` in ms over `reps` timed calls, after a warm-up of at least 150 ms and
 * two calls (V8 runs new wasm on its baseline compiler until the optimised code is ready).
 */
export async function medianMs(fn: () => unknown, reps: number): Promise<number> {
  return (await interleavedMedianMs([fn], reps))[0]!;
}

/**
 * medianMs of each of `fns`, their timed calls interleaved (rep i runs them in an order rotated
 * by i), so that a path and the floor it is judged against see the same state of the host: on the
 * GPU machines' hosts the same 128 MiB copy took 14-22 ms from one workload's rows to the next
 * when each was timed in a block of its own (BENCHMARKS.md, session 18).
 */
export async function interleavedMedianMs<T extends ReadonlyArray<() => unknown>>(fns: readonly [...T], reps: number): Promise<{ [K in keyof T]: number }> {
  for (const fn of fns) {
    const warmUntil = performance.now() + 150;
    for (let i = 0; i < 2 || performance.now() < warmUntil; i++) await fn();
  }
  const times: number[][] = fns.map(() => []);
  for (let i = 0; i < reps; i++) {
    for (let j = 0; j < fns.length; j++) {
      const k = (i + j) % fns.length;
      // untimed, where --expose-gc allows: the previous call's outputs (fresh arrays, shared
      // buffers and memories, reclaimed only by a collection) are freed before the next; without
      // it the CPU model-set rows grew past 24 GiB and were killed on the 2-core container
      (globalThis as { gc?: () => void }).gc?.();
      const t0 = performance.now();
      await fns[k]!();
      times[k]!.push(performance.now() - t0);
    }
  }
  return times.map((t) => t.sort((a, b) => a - b)[Math.floor(t.length / 2)]!) as { [K in keyof T]: number };
}

/** Bit-for-bit equality of two outputs (f32 or f16/bf16 patterns); NaN payloads and -0 count. */
export function sameBits(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return Buffer.compare(x, y) === 0;
}

/** A measured row: ratio = floorMs / ms (1 = as fast as the floor); met when a goal is given. */
export function ratioRow(r: Omit<LoadRow, "ratio" | "met">): LoadRow {
  const ratio = r.floorMs / r.ms;
  return { ...r, ratio, ...(r.goal !== undefined ? { met: ratio >= r.goal } : {}) };
}

/** A row that could not run, with the reason (a skipped row never counts as met). */
export function skippedRow(backend: LoadRow["backend"], path: string, workload: string, reason: string): LoadRow {
  return { backend, path, workload, ms: NaN, floor: "", floorMs: NaN, ratio: NaN, bitsOk: false, skipped: reason };
}
