/**
 * The reference these tests compare with: @sgfp4/cpu-decoder's `decodeReference`, the kit's plain,
 * readable loop over the leaf table (independent of the WGSL kernel).
 */
import type { Container } from "@sgfp4/format";
import { decodeReference } from "@sgfp4/cpu-decoder";

export function referenceDecode(bytes: Uint8Array, c: Container): Float32Array {
  return decodeReference(bytes, { profile: c.profile, shape: c.shape });
}

/** Index of the first element whose bit pattern differs, or -1. */
export function firstBitDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}
