/**
 * The quality benchmark's baselines against their published definitions, on blocks small
 * enough to work out by hand: storage accounting, exact reconstruction of values on a block's
 * grid, and the published rounding and clamping rules.
 */
import { describe, expect, it } from "vitest";
import { BASELINES, Q4_0, Q4_1, Q4_K, groupMinMax, groupSearched, makeQkx2, nearestInt, quantize } from "../bench/baselines.mjs";

const range = (n: number, f: (k: number) => number) => Float32Array.from({ length: n }, (_, k) => f(k));
const bpw = (name: string) => {
  const b = BASELINES.find((x) => x.name === name)!;
  return quantize(b, new Float32Array(2 * 768).fill(1)).bits / (2 * 768);
};

describe("storage per weight", () => {
  it("matches the published block sizes", () => {
    expect(bpw("ggml Q4_0")).toBe(4.5); // 2 + 16 bytes per 32
    expect(bpw("ggml Q4_1")).toBe(5); // 4 + 16 bytes per 32
    expect(bpw("ggml Q4_K")).toBe(4.5); // 2 + 2 + 12 + 128 bytes per 256
    expect([32, 64, 128].map((g) => bpw(`4-bit g${g} min-max`))).toEqual([5, 4.5, 4.25]);
    expect([32, 64, 128].map((g) => bpw(`4-bit g${g} searched`))).toEqual([5, 4.5, 4.25]);
    expect([32, 64, 128].map((g) => bpw(`3-bit g${g} searched`))).toEqual([4, 3.5, 3.25]);
    expect([32, 64, 128].map((g) => bpw(`2-bit g${g} searched`))).toEqual([3, 2.5, 2.25]);
  });
  it("counts a short last block as a whole block", () => {
    expect(quantize(Q4_0, new Float32Array(3 * 40)).bits).toBe(4 * 144); // 120 values: 3 blocks + 24
  });
});

describe("ggml Q4_0", () => {
  it("reconstructs a block on its grid exactly (d = -4 / -8)", () => {
    const x = range(32, (k) => ((k % 16) - 8) * 0.5); // -4 .. 3.5
    expect(Array.from(quantize(Q4_0, x).decoded)).toEqual(Array.from(x));
  });
  it("takes the sign of the largest magnitude: +4 gives d = -0.5, so -4 clamps to -3.5", () => {
    const x = new Float32Array(32);
    x.set([4, -4, -3.5, 1.2, 0.3]);
    // codes min(15, trunc(x / -0.5 + 8.5)): 4 -> 0, -4 -> 15 (16 clamped), -3.5 -> 15, 1.2 -> trunc(6.1) = 6, 0.3 -> trunc(7.9) = 7
    expect(Array.from(quantize(Q4_0, x).decoded.subarray(0, 6))).toEqual([4, -3.5, -3.5, 1, 0.5, -0]);
  });
});

describe("ggml Q4_1", () => {
  it("reconstructs min + k*d exactly and rounds half up", () => {
    const x = range(32, (k) => 1 + 0.25 * (k % 16));
    expect(Array.from(quantize(Q4_1, x).decoded)).toEqual(Array.from(x));
    x[5] = 1 + 0.25 * 2.5; // (x - min) / d = 2.5 -> trunc(3.0) = 3
    x[6] = 1 + 0.25 * 2.4; // -> trunc(2.9) = 2
    const d = quantize(Q4_1, x).decoded;
    expect([d[5], d[6]]).toEqual([1.75, 1.5]);
  });
});

describe("ggml Q4_K", () => {
  it("reconstructs sub-blocks k*s_j - m_j exactly when the 6-bit scales and mins hit them", () => {
    // d = max scale / 63 = 1/16 and dmin = max min / 63 = 1/8; s_j = c_j/16, m_j = c'_j/8
    const c = [63, 21, 9, 7, 3, 1, 63, 10];
    const cm = [0, 63, 5, 1, 0, 30, 2, 63];
    const x = range(256, (i) => (((i % 32) % 16) * c[i >> 5]!) / 16 - cm[i >> 5]! / 8);
    expect(Array.from(quantize(Q4_K, x).decoded)).toEqual(Array.from(x));
  });
  it("a constant sub-block (scale 0) decodes to its 6-bit min", () => {
    const x = range(256, (i) => (i < 32 ? -2 : ((i % 16) - 8) / 4)); // every sub-block's min is -2
    const d = quantize(Q4_K, x).decoded;
    // dmin = fp16(2/63) = 2^-5 + 16 * 2^-15 = 0.03173828125 (2/63 = 2^-5 + 16.25 steps), m = 63
    expect(Array.from(d.subarray(0, 32))).toEqual(new Array(32).fill(-63 * 0.03173828125));
  });
});

describe("plain groups", () => {
  it("min-max: codes round((x - min) / d) with d = (max - min) / (2^b - 1)", () => {
    // 2 bits, group of 4: min 0, max 3, d = 1; 0.9 -> 1, 2.2 -> 2
    expect(Array.from(quantize(groupMinMax(2, 4), Float32Array.from([0, 0.9, 2.2, 3])).decoded)).toEqual([0, 1, 2, 3]);
  });
  it("searched: make_qkx2 moves the grid when that lowers the error (x = 0, 1, 2, 6 at 2 bits)", () => {
    // candidates give codes [0,0,1,2] (error 1.8), [0,0,1,3] (scale 2, min 0: error 1) and [0,1,1,3]:
    // least squares scale 39/19, min -6/19, error 266/361 = 0.737, the best
    const fit = makeQkx2([0, 1, 2, 6], [1, 1, 1, 1], 3);
    expect(fit.scale).toBeCloseTo(39 / 19, 12);
    expect(fit.min).toBeCloseTo(-6 / 19, 12);
    const d = quantize(groupSearched(2, 4), Float32Array.from([0, 1, 2, 6])).decoded;
    [-6 / 19, 33 / 19, 33 / 19, 111 / 19].forEach((v, i) => expect(d[i]).toBeCloseTo(v, 2)); // FP16 scale and min
  });
  it("searched reconstructs values on a grid exactly", () => {
    const x = range(64, (k) => -1.5 + 0.125 * (k % 8));
    expect(Array.from(quantize(groupSearched(3, 64), x).decoded)).toEqual(Array.from(x));
  });
});

it("nearestInt rounds ties to even, like ggml's nearest_int", () => {
  expect([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6].map(nearestInt)).toEqual([0, 2, 2, -0, -2, 2, 3]);
});
