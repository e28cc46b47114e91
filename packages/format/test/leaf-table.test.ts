import { describe, expect, it } from "vitest";
import {
  LEAF_WORDS,
  fp4Code,
  geometryLog2,
  geometryMode,
  geometryX,
  geometryY,
  leafPayloadBytes,
  packGeometry,
  packParams,
  paramsBiasBits,
  paramsScaleBits,
  readLeaf,
  t158Code,
  v2HeaderParams,
  writeLeaf,
} from "../src/leaf-table.js";

// Expected values below are written from docs/ARCHITECTURE.md's table and spec 22.6, not from the code.
describe("leaf-table accessors", () => {
  it("word 1: y in bits 0-5, x in 6-11, log2 in 12-14, mode in bit 15", () => {
    const g = 40 | (12 << 6) | (3 << 12) | (1 << 15);
    expect([geometryY(g), geometryX(g), geometryLog2(g), geometryMode(g)]).toEqual([40, 12, 3, 1]);
    expect(packGeometry(40, 12, 3, 1)).toBe(g);
    expect(packGeometry(0, 0, 6, 0)).toBe(0x6000);
  });

  it("word 2: scale FP16 in the high half, bias in the low half; a v2 header loses its 4 flag bits", () => {
    expect(packParams(0x3c00, 0xbc00)).toBe(0x3c00bc00);
    expect([paramsScaleBits(0xc000_8001), paramsBiasBits(0xc000_8001)]).toEqual([0xc000, 0x8001]);
    expect(v2HeaderParams(0x3c00_bc1f)).toBe(0x3c00_bc10);
  });

  it("payload bytes: FP4 size*size/2, T158 size*size/4", () => {
    for (const [log2, fp4, t158] of [[2, 8, 4], [3, 32, 16], [4, 128, 64], [5, 512, 256], [6, 2048, 1024]]) {
      expect([leafPayloadBytes(log2!, 0), leafPayloadBytes(log2!, 1)]).toEqual([fp4, t158]);
    }
  });

  it("codes: FP4 nibbles are two's complement, T158 00/01/10/11 -> 0/+1/-1/0", () => {
    expect(Array.from({ length: 16 }, (_, n) => fp4Code(n))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1]);
    expect([0, 1, 2, 3].map(t158Code)).toEqual([0, 1, -1, 0]);
  });

  it("readLeaf inverts writeLeaf", () => {
    const table = new Uint32Array(2 * LEAF_WORDS);
    const leaf = { block: 7, y: 32, x: 48, log2: 4, mode: 1, scaleBits: 0x8400, biasBits: 0x7bf0, payloadOffset: 4096 };
    writeLeaf(table, 1, leaf);
    expect(readLeaf(table, 1)).toEqual(leaf);
    expect(Array.from(table.subarray(0, 4))).toEqual([0, 0, 0, 0]);
  });
});
