import { describe, expect, it } from "vitest";
import { biasToHalfBits, nearestHalfBits, scaleToHalfBits } from "../src/half.js";

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
  it("scale is never negative", () => {
    expect(scaleToHalfBits(-1)).toBe(0);
    expect(scaleToHalfBits(0)).toBe(0);
    expect(scaleToHalfBits(0.25)).toBe(0x3400);
  });
});
