/**
 * f32 -> f16 / bf16, round to nearest even, computed in double arithmetic from the value (not
 * from its bits as the kernel does): an independent conversion of the reference decode for the
 * tests (docs/decisions.md P10: f16 keeps subnormals and overflows to +-Inf).
 */
function roundToGrid(a: number, quantum: number): number {
  const m = a / quantum; // exact: quantum is a power of two
  let r = Math.floor(m);
  const frac = m - r;
  if (frac > 0.5 || (frac === 0.5 && r % 2 === 1)) r++;
  return r * quantum;
}

function exponentOf(a: number): number {
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  return e;
}

/** IEEE binary16 bits of the f32 value x. */
export function toF16(x: number): number {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === 0) return sign;
  const e = exponentOf(a);
  const v = roundToGrid(a, e < -14 ? 2 ** -24 : 2 ** (e - 10));
  if (v >= 65536) return sign | 0x7c00;
  if (v === 0) return sign;
  if (v < 2 ** -14) return sign | (v / 2 ** -24);
  const ev = exponentOf(v);
  return sign | ((ev + 15) << 10) | (v / 2 ** (ev - 10) - 1024);
}

/** bfloat16 bits of the f32 value x (normal f32 values only, as decoded weights are). */
export function toBf16(x: number): number {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === 0) return sign;
  const v = roundToGrid(a, 2 ** (exponentOf(a) - 7));
  if (v >= 2 ** 128) return sign | 0x7f80;
  const ev = exponentOf(v);
  return sign | ((ev + 127) << 7) | (v / 2 ** (ev - 7) - 128);
}

export const convertAll = (f32: Float32Array, to: (x: number) => number): Uint16Array => Uint16Array.from(f32, to);
