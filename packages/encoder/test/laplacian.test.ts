import { describe, expect, it } from "vitest";
import { LAPLACIAN_BAND_WEIGHTS, LAPLACIAN_LOWPASS_WEIGHT, laplacianWeightedError } from "../src/laplacian.js";

const tile = (n: number, f: (i: number, j: number) => number) => Float64Array.from({ length: n * n }, (_, k) => f(Math.floor(k / n), k % n));

describe("laplacianWeightedError", () => {
  it("sees a uniform (bias) error through the low-pass residual, with the largest weight", () => {
    for (const n of [4, 8, 64]) expect(laplacianWeightedError(tile(n, () => 0.5), n)).toBe(LAPLACIAN_LOWPASS_WEIGHT * 0.25);
    expect(LAPLACIAN_LOWPASS_WEIGHT).toBeGreaterThan(Math.max(...LAPLACIAN_BAND_WEIGHTS));
  });
  it("puts a pixel checkerboard in band 0", () => {
    expect(laplacianWeightedError(tile(8, (i, j) => ((i + j) % 2 ? 0.5 : -0.5)), 8)).toBe(LAPLACIAN_BAND_WEIGHTS[0]! * 0.25);
  });
  it("puts a 2x2-cell checkerboard in band 1 and a 4x4-cell one in band 2", () => {
    const c2 = tile(16, (i, j) => (((i >> 1) + (j >> 1)) % 2 ? 2 : -2));
    expect(laplacianWeightedError(c2, 16)).toBe(LAPLACIAN_BAND_WEIGHTS[1]! * 4);
    const c4 = tile(16, (i, j) => (((i >> 2) + (j >> 2)) % 2 ? 2 : -2));
    expect(laplacianWeightedError(c4, 16)).toBe(LAPLACIAN_BAND_WEIGHTS[2]! * 4);
  });
  it("adds bands: checkerboard plus offset", () => {
    const t = tile(4, (i, j) => 1 + ((i + j) % 2 ? 0.5 : -0.5));
    expect(laplacianWeightedError(t, 4)).toBe(LAPLACIAN_BAND_WEIGHTS[0]! * 0.25 + LAPLACIAN_LOWPASS_WEIGHT * 1);
  });
  it("is zero for no error and bounded by MSE times the weight range", () => {
    expect(laplacianWeightedError(new Float64Array(64 * 64), 64)).toBe(0);
    let s = 12345;
    const t = tile(32, () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5);
    const mse = t.reduce((a, v) => a + v * v, 0) / t.length;
    const lwe = laplacianWeightedError(t, 32);
    expect(lwe).toBeGreaterThanOrEqual(mse * 0.999999);
    expect(lwe).toBeLessThanOrEqual(mse * LAPLACIAN_LOWPASS_WEIGHT);
  });
});
