/**
 * The judge's own float32 -> f16 / bf16 conversion (P10 in docs/decisions.md): IEEE
 * round-to-nearest-even of the exact float32 result. f16 keeps subnormals and overflows to
 * +-Inf; bf16 is RNE of the float32 bits. Written here on purpose, apart from every decoder's
 * conversion, so that the expectations of f16/bf16 cases never come from code under test.
 */
import type { OutputFormat } from "@sgfp4/format";

/** RNE of the float32 with these bits to IEEE binary16 bits. NaN stays NaN (quiet, sign kept). */
export function f32ToF16Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const man = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);
  const e = exp - 127 + 15; // binary16 biased exponent
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    // subnormal (or zero): units of 2^-24; values under 2^-25 round to zero
    if (e < -10) return sign;
    const m = man | 0x800000;
    const shift = 14 - e;
    let h = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rest > half || (rest === half && h & 1)) h++; // a carry into 0x400 is the smallest normal
    return sign | h;
  }
  let h = (e << 10) | (man >>> 13);
  const rest = man & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++; // a carry out of 0x7bff is +-Inf
  return sign | h;
}

/** RNE of the float32 with these bits to bfloat16 bits (the top half). NaN stays NaN (quiet). */
export function f32ToBf16Bits(bits: number): number {
  const b = bits >>> 0;
  if ((b & 0x7f800000) === 0x7f800000 && b & 0x7fffff) return (b >>> 16) | 0x40;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** The expected words of a case in `format`, from the vector's float32 words. */
export function expectedWords(f32: Uint32Array, format: OutputFormat): Uint32Array | Uint16Array {
  if (format === "f32") return f32;
  const convert = format === "f16" ? f32ToF16Bits : f32ToBf16Bits;
  const out = new Uint16Array(f32.length);
  for (let i = 0; i < f32.length; i++) out[i] = convert(f32[i]!);
  return out;
}
