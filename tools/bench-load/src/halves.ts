/**
 * f16 / bf16 expectations for bit checks: the reference f32 decode converted by scalar code that is
 * independent of every decoder's kernel (P10: round to nearest even of the exact f32 result).
 */
import { floatBitsToHalfBits } from "@sgfp4/format";
import type { Workload } from "./types.js";

export type HalfFormat = "f16" | "bf16";

const cache = new WeakMap<Float32Array, Map<HalfFormat, Uint16Array>>();

/** The workload's reference as f16 or bf16 bit patterns (computed once per workload). */
export function halfReference(w: Workload, format: HalfFormat): Uint16Array {
  let byFormat = cache.get(w.reference);
  if (!byFormat) cache.set(w.reference, (byFormat = new Map()));
  let out = byFormat.get(format);
  if (!out) {
    const bits = new Uint32Array(w.reference.buffer, w.reference.byteOffset, w.reference.length);
    out = new Uint16Array(bits.length);
    for (let i = 0; i < bits.length; i++) {
      const b = bits[i]!;
      if (format === "f16") out[i] = floatBitsToHalfBits(b);
      else {
        const dropped = b & 0xffff;
        const upper = b >>> 16;
        out[i] = dropped > 0x8000 || (dropped === 0x8000 && (upper & 1) === 1) ? upper + 1 : upper;
      }
    }
    byFormat.set(format, out);
  }
  return out;
}
