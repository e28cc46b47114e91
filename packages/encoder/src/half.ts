/**
 * Correct rounding of a double to the FP16 values the container will store, using only exact
 * operations (multiplication by powers of two, floor, comparison), so every engine agrees.
 * `floatToHalf` from @sgfp4/format rounds through float32 first; rounding twice can differ from
 * rounding once at ties, so the encoder rounds the double directly.
 */
import { HALF_MAX, halfToFloat } from "@sgfp4/format";

/** 2^k for k in [-30, 30], built by exact doubling/halving. */
const POW2 = new Float64Array(61);
POW2[30] = 1;
for (let k = 1; k <= 30; k++) {
  POW2[30 + k] = POW2[29 + k]! * 2;
  POW2[30 - k] = POW2[31 - k]! / 2;
}
const pow2 = (k: number): number => POW2[30 + k]!;
/** One double and its two 32-bit words, to read its exponent field. */
const exponentView = new Float64Array(1);
const exponentWords = new Uint32Array(exponentView.buffer);
// the high word holds the exponent; it is word 1 on little-endian hosts (all Node targets)
if (((exponentView[0] = 1), exponentWords[1]) !== 0x3ff00000) throw new Error("@sgfp4/encoder needs a little-endian host");

/** Round to the nearest integer, ties to even (exact for |f| < 2^52). */
function roundHalfEven(f: number): number {
  const fl = Math.floor(f);
  const d = f - fl;
  if (d > 0.5) return fl + 1;
  if (d < 0.5) return fl;
  return fl % 2 === 0 ? fl : fl + 1;
}

/** Largest finite FP16 pattern whose low 4 bits are zero (v2 bias mask 0xFFF0): 65024. */
export const MASKED_HALF_MAX_BITS = 0x7bf0;

/**
 * Nearest FP16 bit pattern to `x` whose mantissa is a multiple of `quantum` (1: any half;
 * 16: the v2 bias, low 4 bits zero), ties to even (in units of the quantum). |x| is clipped to
 * 65504 first; a result that would round to Inf becomes the largest finite allowed value.
 * NaN gives +0.
 */
export function nearestHalfBits(x: number, quantum: 1 | 16 = 1): number {
  if (x !== x) return 0;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  let a = Math.abs(x);
  if (a > HALF_MAX) a = HALF_MAX;
  let bits: number;
  if (a < pow2(-14)) {
    // subnormal range: value = mant * 2^-24
    bits = roundHalfEven((a * pow2(24)) / quantum) * quantum; // may carry to 0x400 (smallest normal): correct
  } else {
    // e = floor(log2 a), read from the double's exponent field (exact; a is a normal double in
    // [2^-14, 65504] here): the old loop counted up from -14, ~15 steps per call
    exponentView[0] = a;
    const e = (exponentWords[1]! >>> 20) - 1023;
    const f = a * POW2[40 - e]!; // a * 2^(10 - e), in [1024, 2048)
    const r = roundHalfEven(f / quantum) * quantum; // up to 2048: the carry moves into the exponent
    bits = ((e + 15) << 10) + (r - 1024);
  }
  const maxBits = quantum === 16 ? MASKED_HALF_MAX_BITS : 0x7bff;
  if (bits > maxBits) bits = maxBits;
  return sign | bits;
}

/**
 * The value of FP16 bits, as halfToFloat gives it (exact: every half is a double), without its
 * float32 round trip: the leaf fits read it 20-40 times per leaf. Same number for every pattern.
 */
export function halfBitsValue(bits: number): number {
  const exponent = (bits >>> 10) & 0x1f;
  if (exponent === 0x1f) return halfToFloat(bits); // Inf / NaN: never from the rounding above
  const mantissa = bits & 0x3ff;
  // subnormal: mantissa * 2^-24; normal: (1024 + mantissa) * 2^(exponent - 25)
  const magnitude = exponent === 0 ? mantissa * POW2[6]! : (1024 + mantissa) * POW2[exponent + 5]!;
  return bits & 0x8000 ? -magnitude : magnitude;
}

/** Smallest normal FP16 value, 2^-14. */
const MIN_NORMAL_HALF = pow2(-14);

/**
 * Scale: non-negative, nearest FP16. Positive normal-range values (every candidate and refit
 * scale in practice, 20-40 per leaf) take nearestHalfBits' normal branch written out without
 * its sign, NaN and clipping steps; the rest go through nearestHalfBits.
 */
export function scaleToHalfBits(s: number): number {
  if (!(s >= MIN_NORMAL_HALF && s <= HALF_MAX)) return s > 0 ? nearestHalfBits(s, 1) : 0;
  exponentView[0] = s;
  const e = (exponentWords[1]! >>> 20) - 1023;
  const f = s * POW2[40 - e]!; // s * 2^(10 - e), in [1024, 2048)
  const floorF = Math.floor(f);
  const frac = f - floorF;
  // roundHalfEven(f); floorF is an integer below 2048, so & 1 is its parity
  const r = frac > 0.5 || (frac === 0.5 && (floorF & 1) === 1) ? floorF + 1 : floorF;
  const bits = ((e + 15) << 10) + (r - 1024); // r = 2048 carries into the exponent
  return bits > 0x7bff ? 0x7bff : bits;
}

/**
 * Bias: nearest FP16 (v1) or nearest FP16 with the low 4 bits zero (v2). Normal-range values
 * (every start and refit bias in practice, 20-40 per leaf) take nearestHalfBits' normal branch
 * written out without its NaN, -0 and clipping steps and with the quantum's division folded into
 * the power of two (both exact): the same bits; the rest go through nearestHalfBits.
 */
export function biasToHalfBits(b: number, v2: boolean): number {
  const a = b < 0 ? -b : b;
  if (!(a >= MIN_NORMAL_HALF && a <= HALF_MAX)) return nearestHalfBits(b, v2 ? 16 : 1);
  exponentView[0] = a;
  const e = (exponentWords[1]! >>> 20) - 1023;
  const f = a * POW2[(v2 ? 36 : 40) - e]!; // a * 2^(10 - e) / quantum, in [1024, 2048) / quantum
  const floorF = Math.floor(f);
  const frac = f - floorF;
  // roundHalfEven(f); floorF is a non-negative integer below 2048, so & 1 is its parity
  const r = frac > 0.5 || (frac === 0.5 && (floorF & 1) === 1) ? floorF + 1 : floorF;
  let bits = ((e + 15) << 10) + ((v2 ? r * 16 : r) - 1024); // a carry moves into the exponent
  const maxBits = v2 ? MASKED_HALF_MAX_BITS : 0x7bff;
  if (bits > maxBits) bits = maxBits;
  return b < 0 ? 0x8000 | bits : bits;
}
