/** The float32 bit patterns of an array (a view, no copy): tests compare bits, so -0 != +0. */
export const bitsOf = (a: Float32Array): Uint32Array => new Uint32Array(a.buffer, a.byteOffset, a.length);

/** Index of the first element whose bit pattern differs, or -1; the shorter length when the lengths differ. */
export function firstBitDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const x = bitsOf(a);
  const y = bitsOf(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}
