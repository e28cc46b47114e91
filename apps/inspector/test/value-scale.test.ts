// The heat map's colour scale (value-scale.ts, painters.valueColor): symmetric, monotone,
// saturating, and showing real (heavy-tailed) weights instead of washing them out to white.
import { synthetic } from "@sgfp4/encoder";
import { describe, expect, it } from "vitest";
import { DIVERGING } from "../src/colors";
import { valueColor } from "../src/painters";
import { scalePosition, valueScale } from "../src/value-scale";

/** Laplacian(b) at evenly spaced quantiles: median |v| = b ln 2, 99.9th percentile of |v| = b ln 1000. */
function laplacian(n: number, b: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => {
    const u = (i + 0.5) / n - 0.5;
    return -b * Math.sign(u) * Math.log(1 - 2 * Math.abs(u));
  });
}

const rgbOf = (abgr: number) => [abgr & 255, (abgr >>> 8) & 255, (abgr >>> 16) & 255];
const WHITE = rgbOf(DIVERGING[128]!);
const distanceFromWhite = (abgr: number) => Math.hypot(...rgbOf(abgr).map((v, k) => v - WHITE[k]!));
/** share of values drawn within `d` (RGB distance) of the ramp's white centre */
const nearWhite = (data: Float32Array, color: (v: number) => number, d = 40) => data.filter((v) => distanceFromWhite(color(v)) < d).length / data.length;
/** the previous map: linear over [-p99.9, p99.9] */
const linearColor = (limit: number) => (v: number) => DIVERGING[Math.max(0, Math.min(255, Math.round(127.5 + (v * 127.5) / limit)))]!;

describe("value colour scale", () => {
  const weights = laplacian(100_000, 0.13);
  const scale = valueScale(weights);

  it("finds the robust range and the knee of the data", () => {
    expect(scale.limit).toBeCloseTo(0.13 * Math.log(1000), 2);
    expect(scale.knee).toBeCloseTo(0.13 * Math.LN2, 2);
    expect(scale.max).toBeGreaterThan(scale.limit);
  });

  it("is symmetric, monotone and saturates at the ends", () => {
    const xs = Array.from({ length: 401 }, (_, i) => ((i - 200) / 100) * scale.limit);
    const ps = xs.map((v) => scalePosition(v, scale));
    for (let i = 1; i < ps.length; i++) expect(ps[i]!).toBeGreaterThanOrEqual(ps[i - 1]!);
    for (const v of xs) expect(scalePosition(-v, scale)).toBeCloseTo(-scalePosition(v, scale), 12);
    expect(scalePosition(scale.limit, scale)).toBeCloseTo(1, 12);
    expect(scalePosition(5 * scale.limit, scale)).toBe(1);
    expect(scalePosition(0, scale)).toBe(0);
    expect(valueColor(NaN, scale)).not.toBe(valueColor(0, scale));
  });

  it("puts the median weight a third of the way out, where the linear map left it near white", () => {
    expect(scalePosition(scale.knee, scale)).toBeGreaterThan(0.25);
    expect(scale.knee / scale.limit).toBeLessThan(0.15); // what the linear map did with it
    // Near-zero weights stay near the white centre on any such map; the linear one left most there.
    const [linear, asinh] = [nearWhite(weights, linearColor(scale.limit)), nearWhite(weights, (v) => valueColor(v, scale))];
    console.log(`Laplacian: near white ${(100 * linear).toFixed(0)}% linear, ${(100 * asinh).toFixed(0)}% now`);
    expect(linear).toBeGreaterThan(0.6);
    expect(asinh).toBeLessThan(0.3);
  });

  it("shows heavier-tailed weights too (Student-t from the encoder's test families)", () => {
    const t = synthetic("student-t", 256, 256, 7);
    const s = valueScale(t);
    const [linear, asinh] = [nearWhite(t, linearColor(s.limit)), nearWhite(t, (v) => valueColor(v, s))];
    console.log(`Student-t: near white ${(100 * linear).toFixed(0)}% linear, ${(100 * asinh).toFixed(0)}% now`);
    expect(asinh).toBeLessThan(0.35);
    expect(linear).toBeGreaterThan(2 * asinh);
  });

  it("copes with all-zero and sparse tensors", () => {
    const zero = valueScale(new Float32Array(100));
    expect(zero.limit).toBe(0);
    expect(scalePosition(0, zero)).toBe(0);
    const sparse = new Float32Array(1000);
    sparse[3] = 2;
    sparse[500] = -1;
    const s = valueScale(sparse);
    expect(s.knee).toBeGreaterThan(0);
    expect(scalePosition(-1, s)).toBeLessThan(0);
  });
});
