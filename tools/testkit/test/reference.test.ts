// Every generated container, decoded here from parse()'s leaf table with the plain arithmetic of
// DECISIONS.md section 2 (Math.fround(S * code + Bias), S and Bias from @sgfp4/format's exact
// halfToFloat), must give the generator's expected output bit for bit.
import { describe, expect, it } from "vitest";
import { LAYOUT, halfToFloat, parse } from "@sgfp4/format";
import { Rng, bitsOf, firstBitDifference, generateValid, type GeneratedCase } from "../src/index.js";

const T158_CODE = [0, 1, -1, 0]; // symbol 11 is reserved and decodes as 0

function decodeFromLeafTable(g: GeneratedCase): Float32Array {
  const c = parse(g.bytes, { profile: g.profile, shape: g.shape });
  const [rows, cols] = g.shape;
  const tilesX = Math.ceil(cols / 64);
  const out = new Float32Array(rows * cols).fill(Number.NaN);
  for (let l = 0; l < c.leafCount; l++) {
    const [b, geo, params, offset] = [0, 1, 2, 3].map((k) => c.leafTable[4 * l + k]!) as [number, number, number, number];
    const y = geo & 63;
    const x = (geo >>> 6) & 63;
    const size = 1 << ((geo >>> 12) & 7);
    const mode = (geo >>> 15) & 1;
    const s = halfToFloat(params >>> 16);
    const bias = halfToFloat(params & 0xffff);
    for (let i = 0; i < size; i++) {
      for (let j = 0; j < size; j++) {
        const r = Math.floor(b / tilesX) * 64 + y + i;
        const col = (b % tilesX) * 64 + x + j;
        if (r >= rows || col >= cols) continue;
        const k = i * size + j;
        let code: number;
        if (mode === 0) {
          const nibble = (g.bytes[offset + (k >>> 1)]! >>> ((k & 1) * 4)) & 15;
          code = nibble >= 8 ? nibble - 16 : nibble;
        } else {
          code = T158_CODE[(g.bytes[offset + (k >>> 2)]! >>> ((k & 3) * 2)) & 3]!;
        }
        out[r * cols + col] = Math.fround(s * code + bias);
      }
    }
  }
  return out;
}

describe("generateValid against a decode of parse()'s leaf table", () => {
  it("is deterministic: same seed and stream, same bytes, shape and expected bits", () => {
    for (let i = 0; i < 20; i++) {
      const a = generateValid(new Rng(21, i));
      const b = generateValid(new Rng(21, i));
      expect(a.profile).toBe(b.profile);
      expect(a.shape).toEqual(b.shape);
      expect(a.bytes).toEqual(b.bytes);
      expect(firstBitDifference(a.expected, b.expected)).toBe(-1);
    }
    expect(generateValid(new Rng(21, 0)).bytes).not.toEqual(generateValid(new Rng(21, 1)).bytes);
  });

  it("every container parses and its expected output equals the reference arithmetic, bit for bit", () => {
    let v1 = 0;
    let v2 = 0;
    for (let i = 0; i < 300; i++) {
      const g = generateValid(new Rng(22, i));
      const got = decodeFromLeafTable(g);
      expect(g.expected.length, `case ${i}`).toBe(g.shape[0] * g.shape[1]);
      expect(firstBitDifference(got, g.expected), `case ${i} ${g.profile} [${g.shape}]`).toBe(-1);
      if (g.profile === "v1") v1++;
      else v2++;
    }
    expect(v1).toBeGreaterThan(50);
    expect(v2).toBeGreaterThan(50);
  });

  it("a given shape and layout list are used as asked, and still decode to the expected output", () => {
    for (const shape of [[1, 1], [65, 63], [3, 200], [130, 70]] as const) {
      for (const layout of [LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_8, LAYOUT.MIXED, LAYOUT.FULL_4x4]) {
        const g = generateValid(new Rng(23, shape[0] * 7 + layout), { profile: "v2", shape, layouts: [layout] });
        expect(g.shape).toEqual(shape);
        expect(new Set(g.features.layouts)).toEqual(new Set([layout]));
        expect(firstBitDifference(decodeFromLeafTable(g), g.expected)).toBe(-1);
      }
      const g = generateValid(new Rng(24, shape[1]), { profile: "v1", shape });
      expect([g.profile, g.shape]).toEqual(["v1", shape]);
      expect(firstBitDifference(decodeFromLeafTable(g), g.expected)).toBe(-1);
    }
  });
});

describe("firstBitDifference", () => {
  it("tells -0 from +0, finds the first differing index, reports a length mismatch", () => {
    const a = new Float32Array([1, 0, 2, 3]);
    expect(firstBitDifference(a, new Float32Array([1, 0, 2, 3]))).toBe(-1);
    expect(firstBitDifference(a, new Float32Array([1, -0, 2, 4]))).toBe(1);
    expect(firstBitDifference(a, new Float32Array([1, 0, 2, 3.0000002]))).toBe(3);
    expect(firstBitDifference(a, new Float32Array([1, 0]))).toBe(2);
    expect(firstBitDifference(a.subarray(1), new Float32Array([0, 2, 3]))).toBe(-1);
    expect(Array.from(bitsOf(new Float32Array([-0, 1])))).toEqual([0x80000000, 0x3f800000]);
  });
});
