/**
 * An independent f32 -> f16 / bf16 conversion for the tests (P10: round to nearest, ties to
 * even; f16 keeps subnormals and overflows to +-Inf): by search over the representable values,
 * compared as exact doubles, not by the bit arithmetic the shader uses.
 */
import { halfValue } from "@sgfp4/testkit";

/** Every non-negative finite binary16 value, index = bit pattern; then 2^16 standing for Inf. */
const F16 = Float64Array.from({ length: 0x7c01 }, (_, h) => (h === 0x7c00 ? 65536 : halfValue(h)));
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The nearer of lo and lo + 1 (patterns of adjacent values vLo < a < vHi), ties to the even pattern. */
function nearer(a: number, lo: number, vLo: number, vHi: number): number {
  const down = a - vLo;
  const up = vHi - a;
  return down < up || (down === up && lo % 2 === 0) ? lo : lo + 1;
}

export function toF16(x: number): number {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  let lo = 0;
  let hi = 0x7c00;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1; // largest pattern whose value is <= a
    if (F16[mid]! <= a) lo = mid;
    else hi = mid - 1;
  }
  if (lo === 0x7c00 || F16[lo] === a) return sign | lo;
  return sign | nearer(a, lo, F16[lo]!, F16[lo + 1]!);
}

export function toBf16(x: number): number {
  f32[0] = x;
  const bits = u32[0]!;
  const sign = bits & 0x80000000 ? 0x8000 : 0;
  const a = Math.abs(x);
  const lo = (bits & 0x7fffffff) >>> 16; // truncation toward zero
  u32[0] = lo << 16;
  const vLo = f32[0]!;
  u32[0] = (lo + 1) << 16;
  const vHi = lo + 1 === 0x7f80 ? 2 ** 128 : f32[0]!; // past the largest finite: the rounding grid goes on to 2^128 (Inf)
  return vLo === a ? sign | lo : sign | nearer(a, lo, vLo, vHi);
}

export const convertAll = (values: Float32Array, to: (x: number) => number): Uint16Array => Uint16Array.from(values, to);
