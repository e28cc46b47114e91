// Expectations computed from the codes, scales and biases chosen here (never by the code under test):
// w = fround(halfToFloat(S) * code + halfToFloat(B)).
import { describe, expect, it } from "vitest";
import { LAYOUT, halfToFloat, writeV1, writeV2, float32Bits } from "@sgfp4/format";
import { decode, decodeInto, decodeReference } from "../src/index.js";
import { decodeParallel } from "../src/parallel.js";
import { bitsOf } from "@sgfp4/testkit";

const expectedBits = (scaleBits: number, code: number, biasBits: number) =>
  float32Bits(Math.fround(halfToFloat(scaleBits) * code + halfToFloat(biasBits)));

async function allDecoders(bytes: Uint8Array, profile: "v1" | "v2", shape: readonly [number, number]): Promise<number[][]> {
  const opts = { profile, shape } as const;
  const into = new Float32Array(shape[0] * shape[1]);
  decodeInto(bytes, opts, into);
  const parallel = await decodeParallel(bytes, { ...opts, threads: 2 });
  return [decode(bytes, opts), decodeReference(bytes, opts), into, parallel].map((a) => [...bitsOf(a)]);
}

describe("hand-computed expectations", () => {
  it("v1 FP4 1x1 crop: every code -8..7 with a subnormal scale and negative bias", async () => {
    for (let code = -8; code <= 7; code++) {
      const scaleBits = 0x0001; // 2^-24, FP16 subnormal: must not flush
      const biasBits = 0x8400; // -2^-14
      const codes = new Array(4096).fill(3);
      codes[0] = code;
      const bytes = writeV1({ shape: [1, 1], blocks: [{ mode: 0, scaleBits, biasBits, codes }] });
      for (const got of await allDecoders(bytes, "v1", [1, 1])) expect(got).toEqual([expectedBits(scaleBits, code, biasBits)]);
    }
  });

  it("v1 T158 3x5: symbols 00, 01, 10 and the reserved 11 (decodes as 0)", async () => {
    const scaleBits = 0x3c00; // 1.0
    const biasBits = 0xb800; // -0.5
    const payload = new Uint8Array(1024);
    // row 0: symbols 0,1,2,3 | 1 -> codes 0, +1, -1, 0 | +1 (code i at bits 2*(i%4) of byte i/4)
    payload[0] = 0b11_10_01_00;
    payload[1] = 0b01;
    // row 1 starts at code 64 (byte 16): symbol 10 -> -1
    payload[16] = 0b10;
    const bytes = writeV1({ shape: [3, 5], blocks: [{ mode: 1, scaleBits, biasBits, payload }] });
    const e = (code: number) => expectedBits(scaleBits, code, biasBits);
    const want = [e(0), e(1), e(-1), e(0), e(1), e(-1), e(0), e(0), e(0), e(0), e(0), e(0), e(0), e(0), e(0)];
    for (const got of await allDecoders(bytes, "v1", [3, 5])) expect(got).toEqual(want);
  });

  it("signed zeros: (-0)*0 + (-0) = -0, (+0)*0 + (-0) = +0", async () => {
    const negZero = 0x8000;
    const bytes = writeV1({
      shape: [1, 128],
      blocks: [
        { mode: 0, scaleBits: negZero, biasBits: negZero, codes: new Array(4096).fill(0) },
        { mode: 0, scaleBits: 0x0000, biasBits: negZero, codes: new Array(4096).fill(0) },
      ],
    });
    const want = [...new Array(64).fill(0x80000000), ...new Array(64).fill(0x00000000)];
    for (const got of await allDecoders(bytes, "v1", [1, 128])) expect(got).toEqual(want);
  });

  it("v2 uncropped 4x4, 8x8 and 16x16 leaves: subnormal, signed-zero and extreme scales/biases, FP4 and T158", async () => {
    // the SIMD fast path converts both FP16 halves at once; these values hit every FP16 class it handles
    const scales = [0x0001, 0x03ff, 0x8001, 0x8000, 0x0000, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0xb555, 0x0200];
    const biases = [0x0010, 0x83f0, 0x8000, 0x0000, 0x7bf0, 0xfbf0, 0x0400, 0x3c00, 0x8010, 0x0200];
    for (const [layout, size] of [[LAYOUT.FULL_4x4, 4], [LAYOUT.UNIFORM_8, 8], [LAYOUT.UNIFORM_16, 16]] as const) {
      const count = (64 / size) ** 2;
      const leaves = Array.from({ length: count }, (_, i) => {
        const mode = (i % 3 === 1 ? 1 : 0) as 0 | 1;
        const codes = Array.from({ length: size * size }, (_, k) => (mode ? ((k + i) % 3) - 1 : ((k * 7 + i) % 16) - 8));
        return { mode, scaleBits: scales[i % scales.length]!, biasBits: biases[(i * 5) % biases.length]!, codes };
      });
      const bytes = writeV2({ shape: [64, 64], records: [{ layout, leaves }] });
      const perRow = 64 / size;
      const want = Array.from({ length: 64 * 64 }, (_, idx) => {
        const r = Math.floor(idx / 64), c = idx % 64;
        const leaf = leaves[Math.floor(r / size) * perRow + Math.floor(c / size)]!;
        return expectedBits(leaf.scaleBits, leaf.codes[(r % size) * size + (c % size)]!, leaf.biasBits);
      });
      for (const got of await allDecoders(bytes, "v2", [64, 64])) expect(got).toEqual(want);
    }
  });

  it("v2 MIXED places leaves at their (y, x): quadrants of a 64x64 block, one split to 16x16", async () => {
    // tree: TL leaf 32, TR split into four 16 leaves, BL leaf 32, BR leaf 32; S = 0 so w = Bias per leaf
    const tree = ["leaf", ["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf"] as const;
    const biases = [0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700]; // 1, 2, 3, 4, 5, 6, 7 (low 4 bits zero)
    const sizes = [32, 16, 16, 16, 16, 32, 32];
    const leaves = biases.map((biasBits, i) => ({ mode: 0 as const, scaleBits: 0, biasBits, codes: new Array(sizes[i]! ** 2).fill(0) }));
    const bytes = writeV2({ shape: [64, 64], records: [{ layout: LAYOUT.MIXED, tree, leaves }] });
    const valueAt = (r: number, c: number): number => {
      if (r < 32 && c < 32) return 1;
      if (r < 32) return 2 + (r >= 16 ? 2 : 0) + (c >= 48 ? 1 : 0);
      return c < 32 ? 6 : 7;
    };
    const want = Array.from({ length: 64 * 64 }, (_, i) => float32Bits(valueAt(Math.floor(i / 64), i % 64)));
    for (const got of await allDecoders(bytes, "v2", [64, 64])) expect(got).toEqual(want);
  });

  it("v2 FULL_4x4 FP4 with the 0xFFF0 bias mask and a crop to 6x7", async () => {
    // leaf 0 (rows 0-3, cols 0-3): codes 0..15 - 8 = -8..7; leaf 1 (cols 4-7): all code 7; leaf 16 (rows 4-7, cols 0-3): code -1
    const scaleBits = 0x3800; // 0.5
    const biasBits = 0xc110; // -2.53125 (low 4 bits already clear)
    const leaves = Array.from({ length: 256 }, (_, i) => ({
      mode: 0 as const,
      scaleBits,
      biasBits,
      codes: Array.from({ length: 16 }, (_, k) => (i === 0 ? k - 8 : i === 1 ? 7 : i === 16 ? -1 : 0)),
    }));
    const bytes = writeV2({ shape: [6, 7], records: [{ layout: LAYOUT.FULL_4x4, leaves }] });
    const codeAt = (r: number, c: number) => (r < 4 && c < 4 ? r * 4 + c - 8 : r < 4 ? 7 : c < 4 ? -1 : 0);
    const want = Array.from({ length: 42 }, (_, i) => expectedBits(scaleBits, codeAt(Math.floor(i / 7), i % 7), biasBits));
    for (const got of await allDecoders(bytes, "v2", [6, 7])) expect(got).toEqual(want);
  });
});
