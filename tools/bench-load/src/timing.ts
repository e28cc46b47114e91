/** Timing and row helpers shared by the backend modules. */
import type { LoadRow } from "./types.js";

/**
 * Median wall time of `fn` in ms over `reps` timed calls, after a warm-up of at least 150 ms and
 * two calls (V8 runs new wasm on its baseline compiler until the optimised code is ready).
 */
export async function medianMs(fn: () => unknown, reps: number): Promise<number> {
  const warmUntil = performance.now() + 150;
  for (let i = 0; i < 2 || performance.now() < warmUntil; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    // untimed, where --expose-gc allows: the previous rep's outputs (fresh arrays, shared
    // buffers and memories, reclaimed only by a collection) are freed before the next; without
    // it the CPU model-set rows grew past 24 GiB and were killed on the 2-core container
    (globalThis as { gc?: () => void }).gc?.();
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
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
