/**
 * Exact IEEE-754 binary16 <-> binary32 conversion with integer operations only, so every
 * backend (and every JS engine) gets the same bits: subnormals are kept, signed zeros kept,
 * float -> half rounds to nearest, ties to even.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** FP16 bits -> the float32 bit pattern of the same value. */
export function halfBitsToFloatBits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exp = (h >>> 10) & 0x1f;
  let mant = h & 0x3ff;
  if (exp === 0x1f) return (sign | 0x7f800000 | (mant << 13)) >>> 0; // Inf / NaN (payload kept)
  if (exp !== 0) return (sign | ((exp + 112) << 23) | (mant << 13)) >>> 0;
  if (mant === 0) return sign >>> 0; // signed zero
  // subnormal: value = mant * 2^-24; normalise into float32 (always representable)
  let e = 113; // exponent field of 2^-14
  while ((mant & 0x400) === 0) {
    mant <<= 1;
    e -= 1;
  }
  return (sign | (e << 23) | ((mant & 0x3ff) << 13)) >>> 0;
}

/** FP16 bits -> value (a float32, returned as a JS number). */
export function halfToFloat(h: number): number {
  u32[0] = halfBitsToFloatBits(h & 0xffff);
  return f32[0]!;
}

/** float32 bit pattern -> FP16 bits, round to nearest even; overflow gives Inf, NaN stays NaN. */
export function floatBitsToHalfBits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return mant ? sign | 0x7e00 | (mant >>> 13) : sign | 0x7c00;
  const e = exp - 127 + 15; // rebias
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // subnormal half (or zero): shift the full significand, round to nearest even
    if (e < -10) return sign; // below half the smallest subnormal: rounds to zero
    const full = mant | 0x800000;
    const shift = 14 - e; // 14..24
    let h = full >>> shift;
    const rem = full & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rem > halfway || (rem === halfway && (h & 1))) h += 1;
    return sign | h; // a carry into the exponent field is the correct result
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h += 1; // carry may reach Inf: correct
  return sign | h;
}

/** Round a number to float32 first, then to FP16 bits (round to nearest even both times). */
export function floatToHalf(x: number): number {
  f32[0] = x;
  return floatBitsToHalfBits(u32[0]!);
}

export function float32Bits(x: number): number {
  f32[0] = x;
  return u32[0]!;
}

export function bitsToFloat32(bits: number): number {
  u32[0] = bits >>> 0;
  return f32[0]!;
}

/** FP16 exponent field; all ones is Inf or NaN (rejected in a scale or a bias). */
export const HALF_EXPONENT_MASK = 0x7c00;

/** True when the FP16 pattern is Inf or NaN. */
export function isHalfNonFinite(h: number): boolean {
  return (h & HALF_EXPONENT_MASK) === HALF_EXPONENT_MASK;
}

export const HALF_MAX = 65504;
