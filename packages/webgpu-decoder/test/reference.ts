/**
 * The reference these tests compare with: @sgfp4/cpu-decoder's `decodeReference`, the kit's plain,
 * readable loop over the leaf table (independent of the WGSL kernel).
 */
import type { Container } from "@sgfp4/format";
import { decodeReference } from "@sgfp4/cpu-decoder";

export function referenceDecode(bytes: Uint8Array, c: Container): Float32Array {
  return decodeReference(bytes, { profile: c.profile, shape: c.shape });
}


// bench/bench.ts takes the comparison from here too.
export { firstBitDifference } from "@sgfp4/testkit";
