import { describe, expect, it } from "vitest";
import { halfToFloat } from "@sgfp4/format";
import { biasToHalfBits, halfBitsValue, nearestHalfBits, scaleToHalfBits } from "../src/half.js";

const ULP1 = 2 ** -10; // FP16 spacing in [1, 2)

describe("nearestHalfBits", () => {
  it("rounds to nearest, ties to even", () => {
    expect(nearestHalfBits(1)).toBe(0x3c00);
    expect(nearestHalfBits(1 + ULP1 / 2)).toBe(0x3c00); // tie -> even mantissa 0
    expect(nearestHalfBits(1 + (3 * ULP1) / 2)).toBe(0x3c02); // tie between 0x3c01 and 0x3c02 -> even
    expect(nearestHalfBits(1 + ULP1 / 2 + 2 ** -30)).toBe(0x3c01); // just past the tie
    expect(nearestHalfBits(-2.5)).toBe(0xc100);
    expect(nearestHalfBits(2 - (3 * ULP1) / 4)).toBe(0x3fff); // nearer the largest value below 2
    expect(nearestHalfBits(2 - ULP1 / 2)).toBe(0x4000); // tie: carry into the exponent
  });
  it("keeps subnormals and rounds them exactly", () => {
    expect(nearestHalfBits(2 ** -24)).toBe(1);
    expect(nearestHalfBits(2 ** -25)).toBe(0); // tie -> even (0)
    expect(nearestHalfBits(3 * 2 ** -25)).toBe(2); // 1.5 units -> 2
    expect(nearestHalfBits(1023.5 * 2 ** -24)).toBe(0x400); // carry into the smallest normal
  });
  it("clips to +-65504", () => {
    expect(nearestHalfBits(1e9)).toBe(0x7bff);
    expect(nearestHalfBits(-70000)).toBe(0xfbff);
    expect(nearestHalfBits(65519)).toBe(0x7bff);
  });
  it("rounds the v2 bias to the nearest value under the 0xFFF0 mask (not truncation)", () => {
    const q = 16 * ULP1; // masked spacing in [1, 2)
    expect(biasToHalfBits(1 + (31 / 16) * q / 2 * 1, true) & 0xf).toBe(0);
    expect(biasToHalfBits(1 + 31 * ULP1, true)).toBe(0x3c20); // truncation would give 0x3c10
    expect(biasToHalfBits(1 + q / 2, true)).toBe(0x3c00); // tie -> even quantum
    expect(biasToHalfBits(1 + (3 * q) / 2, true)).toBe(0x3c20); // tie between 0x3c10 and 0x3c20 -> even
    expect(biasToHalfBits(-(1 + 31 * ULP1), true)).toBe(0xbc20);
    expect(biasToHalfBits(65504, true)).toBe(0x7bf0); // nearest would be Inf: largest finite masked
    expect(biasToHalfBits(1 + 31 * ULP1, false)).toBe(0x3c1f);
  });
  it("matches a reference that finds the exponent by counting (every binade, both quanta, near powers of two)", () => {
    // the pre-optimisation algorithm: exponent by counting up from -14
    const reference = (x: number, quantum: 1 | 16): number => {
      const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
      const a = Math.min(Math.abs(x), 65504);
      const even = (f: number): number => {
        const fl = Math.floor(f);
        return f - fl > 0.5 ? fl + 1 : f - fl < 0.5 ? fl : fl % 2 === 0 ? fl : fl + 1;
      };
      let bits: number;
      if (a < 2 ** -14) bits = even((a * 2 ** 24) / quantum) * quantum;
      else {
        let e = -14;
        while (e < 15 && a >= 2 ** (e + 1)) e++;
        bits = ((e + 15) << 10) + (even((a * 2 ** (10 - e)) / quantum) * quantum - 1024);
      }
      return sign | Math.min(bits, quantum === 16 ? 0x7bf0 : 0x7bff);
    };
    const values: number[] = [];
    for (let e = -26; e <= 17; e++) {
      const p = 2 ** e;
      values.push(p, p * (1 - 2 ** -53), p * (1 + 2 ** -52), p * 1.0004882812500002, p * 1.3, p * 1.99951171875, p * 1.999755859375);
    }
    let seed = 12345;
    for (let i = 0; i < 3000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      values.push((seed / 2 ** 31) * 2 ** ((i % 44) - 26));
    }
    for (const v of values) {
      for (const x of [v, -v]) {
        expect(nearestHalfBits(x, 1)).toBe(reference(x, 1));
        expect(nearestHalfBits(x, 16)).toBe(reference(x, 16));
      }
    }
  });
  it("biasToHalfBits (its normal-range fast path included) is nearestHalfBits at the bias quantum: every half, the midpoints, values one ulp off, both signs", () => {
    const check = (x: number): void => {
      expect(biasToHalfBits(x, true)).toBe(nearestHalfBits(x, 16));
      expect(biasToHalfBits(x, false)).toBe(nearestHalfBits(x, 1));
    };
    const bad: number[] = [];
    for (let bits = 0; bits < 0x7c00; bits += 1) {
      const h = halfToFloat(bits);
      const mid = (h + (bits < 0x7bff ? halfToFloat(bits + 1) : 65536)) / 2;
      for (const x of [h, mid, h * (1 + 2 ** -52), h * (1 - 2 ** -53), mid * (1 + 2 ** -52), mid * (1 - 2 ** -53)]) {
        for (const y of [x, -x]) {
          if (biasToHalfBits(y, true) !== nearestHalfBits(y, 16) || biasToHalfBits(y, false) !== nearestHalfBits(y, 1)) bad.push(y);
        }
      }
    }
    expect(bad).toEqual([]);
    for (const x of [0, -0, Number.NaN, Infinity, -Infinity, 65504, 65520, 1e30, -1e30, 2 ** -14, 2 ** -14 * (1 - 2 ** -53), 2 ** -25, 5e-324]) check(x);
  });
  it("scale is never negative", () => {
    expect(scaleToHalfBits(-1)).toBe(0);
    expect(scaleToHalfBits(0)).toBe(0);
    expect(scaleToHalfBits(0.25)).toBe(0x3400);
  });
});

describe("halfBitsValue", () => {
  it("is halfToFloat for every FP16 pattern (signed zeros, subnormals, Inf and NaN included)", () => {
    let wrong = 0;
    for (let bits = 0; bits < 0x10000; bits++) if (!Object.is(halfBitsValue(bits), halfToFloat(bits))) wrong++;
    expect(wrong).toBe(0);
  });
});

describe("scaleToHalfBits", () => {
  it("is nearestHalfBits for positive values and 0 otherwise (every binade, ties, the edges of the normal range)", () => {
    const values = [0, -0, -1, Number.NaN, Infinity, 65504, 65519, 65520, 1e9, 2 ** -14, 2 ** -14 * (1 - 2 ** -12), 2 ** -24, 2 ** -26];
    for (let e = -26; e <= 16; e++) {
      for (let m = 0; m < 64; m++) {
        const base = 2 ** e * (1 + m / 64);
        values.push(base, base * (1 + 2 ** -11), base * (1 + 3 * 2 ** -11), base * (1 - 2 ** -11), base * (1 + 2 ** -11 + 2 ** -40));
      }
    }
    let wrong = 0;
    for (const s of values) if (scaleToHalfBits(s) !== (s > 0 ? nearestHalfBits(s, 1) : 0)) wrong++;
    expect(wrong).toBe(0);
    expect(values.length).toBeGreaterThan(10000);
  });
});
