import { decode } from "@sgfp4/cpu-decoder";
import { leafAt, parse, type Shape } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { CLIP_HIGH, CLIP_LOW } from "../src/blocks.js";
import { synthetic } from "../src/random.js";
import { encodeTensor, robustPower, tensorPower } from "../src/tensor.js";

const shape: Shape = [64, 64];
const OUTLIER = 37 * 64 + 21; // row 37, column 21

/** Encode, check the container parses clean and decodes bit for bit on the CPU decoder; the leaf holding OUTLIER. */
async function encodeWithOutlier(value: number, opts: Parameters<typeof encodeTensor>[2] = {}) {
  const data = synthetic("gaussian", 64, 64, 3);
  data[OUTLIER] = value;
  const r = await encodeTensor(data, shape, opts);
  const c = parse(r.bytes, { profile: "v2", shape });
  expect(c.warnings).toEqual([]);
  expect(Buffer.from(decode(r.bytes, { profile: "v2", shape }).buffer).equals(Buffer.from(r.decoded.buffer))).toBe(true);
  let leafSize = 0;
  for (let i = 0; i < c.leafCount; i++) {
    const l = leafAt(c, i);
    if (l.y <= 37 && 37 < l.y + l.size && l.x <= 21 && 21 < l.x + l.size) leafSize = l.size;
  }
  // SNR of the weights outside the outlier's 8x8 neighbourhood
  let sig = 0;
  let err = 0;
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < 64; j++) {
      if (i >> 3 === 37 >> 3 && j >> 3 === 21 >> 3) continue;
      const w = data[i * 64 + j]!;
      sig += w * w;
      err += (w - r.decoded[i * 64 + j]!) ** 2;
    }
  }
  return { r, data, leafSize, restSnr: 10 * Math.log10(sig / err) };
}

describe("outliers (policy rd)", () => {
  it("a weight beyond the format's range is clipped, counted and isolated in a small leaf; the other weights keep their quality", async () => {
    for (const value of [1e6, -1e6, 1e30]) {
      const { r, data, leafSize, restSnr } = await encodeWithOutlier(value);
      expect(r.stats.clipped).toBe(1);
      const nearest = value > 0 ? CLIP_HIGH : CLIP_LOW;
      expect(r.stats.maxAbsError).toBe(Math.abs(data[OUTLIER]! - r.decoded[OUTLIER]!));
      // decoded close to the end of the range it was clipped to (FP16 scale and masked bias)
      expect(Math.abs(r.decoded[OUTLIER]! - nearest)).toBeLessThan(0.01 * Math.abs(nearest));
      expect(leafSize).toBeLessThanOrEqual(8);
      expect(restSnr).toBeGreaterThan(18);
      // no other weight moves much further than to 0 (its leaf's bias stays within a unit of zero, not thousands)
      for (let k = 0; k < 4096; k++) if (k !== OUTLIER) expect(Math.abs(data[k]! - r.decoded[k]!)).toBeLessThan(Math.abs(data[k]!) + 1);
    }
  });
  it("a large weight the format can represent is not clipped, and gets a leaf of its own size class", async () => {
    const { r, leafSize, restSnr } = await encodeWithOutlier(3e4);
    expect(r.stats.clipped).toBe(0);
    expect(Math.abs(r.decoded[OUTLIER]! - 3e4)).toBeLessThan(3e4 * 0.01);
    expect(leafSize).toBeLessThanOrEqual(8);
    expect(restSnr).toBeGreaterThan(18);
  });
  it("policy spec (bytes as before 0.2, bench/wide-digest.mjs covers 1e6 and 1e30 inputs): the clipped weight is counted too", async () => {
    const { r, data } = await encodeWithOutlier(1e6, { policy: "spec" });
    expect(r.stats.clipped).toBe(1);
    expect(r.stats.maxAbsError).toBe(Math.abs(data[OUTLIER]! - r.decoded[OUTLIER]!));
    expect(r.stats.maxAbsError).toBeGreaterThan(1e5);
  });
  it("robustPower ignores the top 1/1024 of the magnitudes; without outliers it is about the power", () => {
    const data = synthetic("gaussian", 64, 64, 3);
    const plain = tensorPower(data);
    expect(robustPower(data)).toBeGreaterThan(0.95 * plain);
    expect(robustPower(data)).toBeLessThanOrEqual(plain);
    data[OUTLIER] = 1e6;
    expect(tensorPower(data)).toBeGreaterThan(1e8);
    expect(robustPower(data)).toBeLessThan(1.1 * plain);
  });
});
