import { describe, expect, it } from "vitest";
import { float32Bits, floatBitsToHalfBits, floatToHalf, halfBitsToFloatBits, halfToFloat } from "../src/fp16.js";

/** The value of a half pattern from the IEEE-754 definition, in float64 (independent of the code under test). */
function halfValueByDefinition(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  if (exp === 0) return sign * mant * 2 ** -24;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

describe("FP16 -> float32, all 65536 patterns", () => {
  it("matches the IEEE definition, signed zeros and subnormals included", () => {
    for (let h = 0; h < 0x10000; h++) {
      const want = halfValueByDefinition(h);
      const got = halfToFloat(h);
      if (Number.isNaN(want)) {
        expect(Number.isNaN(got), `0x${h.toString(16)}`).toBe(true);
        continue;
      }
      if (got !== want || Object.is(got, -0) !== Object.is(want, -0)) throw new Error(`0x${h.toString(16)}: ${got} != ${want}`);
      // the bit helper agrees with the float32 encoding of that exact value
      if (halfBitsToFloatBits(h) !== float32Bits(want)) throw new Error(`bits of 0x${h.toString(16)}`);
    }
  });

  it("round-trips every pattern through float32 (NaNs stay NaN, quieted)", () => {
    for (let h = 0; h < 0x10000; h++) {
      const back = floatToHalf(halfToFloat(h));
      if ((h & 0x7c00) === 0x7c00 && h & 0x3ff) {
        expect(back & 0x7c00).toBe(0x7c00);
        expect(back & 0x3ff).not.toBe(0);
      } else if (back !== h) throw new Error(`0x${h.toString(16)} -> 0x${back.toString(16)}`);
    }
  });
});

describe("float32 -> FP16 rounding, to nearest even", () => {
  /** The float32 next to x, toward zero (-1) or away from it (+1). */
  const f32next = (x: number, dir: 1 | -1) => {
    const b = new Float32Array([x]);
    const u = new Uint32Array(b.buffer);
    u[0] = u[0]! + dir; // toward (-1) or away from (+1) zero
    return b[0]!;
  };
  it("every midpoint between neighbouring finite halves rounds to the even one, and its float32 neighbours to the nearer", () => {
    for (let h = 0; h < 0x7bff; h++) {
      for (const sign of [0, 0x8000]) {
        const a = halfValueByDefinition(h | sign);
        const b = halfValueByDefinition((h + 1) | sign);
        const mid = (a + b) / 2; // 12 significant bits: exact in float32
        expect(Math.fround(mid)).toBe(mid);
        const even = (h & 1) === 0 ? h : h + 1;
        if (floatToHalf(mid) !== (even | sign)) throw new Error(`midpoint after 0x${(h | sign).toString(16)}`);
        if (floatToHalf(f32next(mid, -1)) !== (h | sign)) throw new Error(`below midpoint after 0x${(h | sign).toString(16)}`);
        if (floatToHalf(f32next(mid, 1)) !== ((h + 1) | sign)) throw new Error(`above midpoint after 0x${(h | sign).toString(16)}`);
      }
    }
  });
  it("overflow, underflow and specials", () => {
    expect(floatToHalf(65504)).toBe(0x7bff);
    expect(floatToHalf(65519.99)).toBe(0x7bff);
    expect(floatToHalf(65520)).toBe(0x7c00); // tie between 65504 and 2^16 goes to even (Inf)
    expect(floatToHalf(-1e9)).toBe(0xfc00);
    expect(floatToHalf(2 ** -25)).toBe(0); // half the smallest subnormal: tie to even zero
    expect(floatToHalf(f32next(2 ** -25, 1))).toBe(1);
    expect(floatToHalf(-(2 ** -26))).toBe(0x8000);
    expect(floatToHalf(-0)).toBe(0x8000);
    expect(floatToHalf(Infinity)).toBe(0x7c00);
    expect(floatToHalf(NaN) & 0x7e00).toBe(0x7e00);
    expect(floatBitsToHalfBits(0x7f800001) & 0x7e00).toBe(0x7e00); // signalling NaN is quieted, not Inf
  });
});
