import { readFileSync } from "node:fs";
import { GOLDEN_DIR, goldenVectors, thrownCode } from "./golden.js";
import { join } from "node:path";
import { MODE_FP4, MODE_T158, Sgfp4Error, isSgfp4Error, writeV1, writeV2, type Shape } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { createConformanceBackend, decode, decodeInto, info, nativeAddon } from "../src/index.js";
import { Rng, firstBitDifference, generateValid, treeLeaves, weightValue } from "@sgfp4/testkit";

const bits = (f: Float32Array) => Array.from(new Uint32Array(f.buffer, f.byteOffset, f.length));

describe("device", () => {
  it("reports the device, driver and limits", () => {
    const i = info();
    expect(i.name.length).toBeGreaterThan(0);
    expect(i.devices.length).toBeGreaterThan(0);
    expect(i.limits.maxStorageBufferRange).toBeGreaterThan(0);
    expect(["discrete", "integrated", "virtual", "cpu", "other"]).toContain(i.type);
  });
});

describe("hand-built containers, expected values from construction", () => {
  it("v1 FP4: every nibble, scale 0.5, bias -1.25", () => {
    const codes = Array.from({ length: 4096 }, (_, i) => (i % 16) - 8);
    const bytes = writeV1({ shape: [64, 64], blocks: [{ mode: MODE_FP4, scaleBits: 0x3800, biasBits: 0xbd00, codes }] });
    const out = decode(bytes, { profile: "v1", shape: [64, 64] });
    expect(Array.from(out)).toEqual(codes.map((q) => 0.5 * q - 1.25));
  });

  it("v1 T158: symbols 00 01 10 11 decode as 0 +1 -1 0", () => {
    const payload = new Uint8Array(1024).fill(0b11_10_01_00);
    const bytes = writeV1({ shape: [1, 8], blocks: [{ mode: MODE_T158, scaleBits: 0x4000, biasBits: 0x3c00, payload }] });
    expect(Array.from(decode(bytes, { profile: "v1", shape: [1, 8] }))).toEqual([1, 3, -1, 1, 1, 3, -1, 1]);
  });

  it("FP16 subnormal scale and bias are not flushed", () => {
    // S = 2^-24 (0x0001), Bias = 3 * 2^-24 (0x0003): w = (q + 3) * 2^-24
    const codes = Array.from({ length: 4096 }, (_, i) => (i % 16) - 8);
    const bytes = writeV1({ shape: [1, 16], blocks: [{ mode: MODE_FP4, scaleBits: 0x0001, biasBits: 0x0003, codes }] });
    const out = decode(bytes, { profile: "v1", shape: [1, 16] });
    expect(Array.from(out)).toEqual(codes.slice(0, 16).map((q) => (q + 3) * 2 ** -24));
  });

  it("signed zeros: (+0)+(-0) = +0, (-0)+(-0) = -0, S*q with q<0 flips the sign", () => {
    // Bias -0 with S = -0: q=0 -> -0*0 = -0, + -0 = -0; q=1 -> -0; q=-1 -> +0, + -0 = +0
    const codes = Array.from({ length: 4096 }, (_, i) => [0, 1, -1, 0][i % 4]!);
    const negZero = writeV1({ shape: [1, 4], blocks: [{ mode: MODE_FP4, scaleBits: 0x8000, biasBits: 0x8000, codes }] });
    expect(bits(decode(negZero, { profile: "v1", shape: [1, 4] }))).toEqual([0x80000000, 0x80000000, 0, 0x80000000]);
    // Bias -0 with S = +1: q=0 -> +0 + -0 = +0
    const plusScale = writeV1({ shape: [1, 4], blocks: [{ mode: MODE_FP4, scaleBits: 0x3c00, biasBits: 0x8000, codes }] });
    expect(bits(decode(plusScale, { profile: "v1", shape: [1, 4] }))).toEqual([0, 0x3f800000, 0xbf800000, 0]);
    // S*q + Bias cancelling exactly gives +0: S = 1, q = 1, Bias = -1
    const cancel = writeV1({ shape: [1, 4], blocks: [{ mode: MODE_FP4, scaleBits: 0x3c00, biasBits: 0xbc00, codes }] });
    expect(bits(decode(cancel, { profile: "v1", shape: [1, 4] }))).toEqual([0xbf800000, 0, 0xc0000000, 0xbf800000]);
  });

  it("v2 MIXED leaves are placed spatially, with the 0xFFF0 bias mask applied by the writer's rule", () => {
    const tree = [["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"] as const;
    const geometry = treeLeaves(tree);
    const leaves = geometry.map((g, k) => ({ mode: MODE_FP4 as 0, scaleBits: 0x3c00, biasBits: (k * 0x40) & 0xfff0, codes: new Array(g.size * g.size).fill((k % 15) - 7) }));
    const bytes = writeV2({ shape: [64, 64], records: [{ layout: 4, tree, leaves }] });
    const out = decode(bytes, { profile: "v2", shape: [64, 64] });
    geometry.forEach((g, k) => {
      const want = weightValue(0x3c00, leaves[k]!.biasBits, (k % 15) - 7);
      expect(out[(g.y + g.size - 1) * 64 + g.x]).toBe(want);
      expect(out[g.y * 64 + g.x + g.size - 1]).toBe(want);
    });
  });

  it("v2 B % 4 != 0 uses record_region_base = align16(16 + 4B)", () => {
    const leaf = (v: number) => ({ mode: MODE_FP4 as 0, scaleBits: 0x3c00, biasBits: 0, codes: new Array(4096).fill(v) });
    const bytes = writeV2({ shape: [1, 130], records: [0, 1, 2].map((v) => ({ layout: 0 as const, leaves: [leaf(v + 1)] })) });
    const out = decode(bytes, { profile: "v2", shape: [1, 130] });
    expect([out[0], out[64], out[128], out[129]]).toEqual([1, 2, 3, 3]);
  });

  for (const shape of [[1, 1], [3, 200], [65, 63], [130, 70]] as Shape[]) {
    it(`crops ${shape.join("x")} (v1 and v2) bit-exactly`, () => {
      const r = new Rng(shape[0] * 1000 + shape[1]);
      for (const profile of ["v1", "v2"] as const) {
        const built = generateValid(r, { profile, shape });
        const out = decode(built.bytes, { profile, shape });
        expect(firstBitDifference(out, built.expected)).toBe(-1);
      }
    });
  }

  it("decodeInto writes into the caller's array and checks its length", () => {
    const built = generateValid(new Rng(7), { profile: "v2", shape: [65, 63] });
    const out = new Float32Array(65 * 63).fill(NaN);
    expect(decodeInto(built.bytes, { profile: "v2", shape: [65, 63] }, out)).toBe(out);
    expect(firstBitDifference(out, built.expected)).toBe(-1);
    expect(() => decodeInto(built.bytes, { profile: "v2", shape: [65, 63] }, new Float32Array(3))).toThrow(Sgfp4Error);
  });
});

describe("golden vectors", () => {
  const dir = GOLDEN_DIR;
  const vectors = goldenVectors();
  it("are present", () => expect(vectors.length).toBeGreaterThan(0));
  for (const v of vectors) {
    it(v.id, () => {
      const bytes = new Uint8Array(readFileSync(join(dir, v.container)));
      if (v.expect.reject) {
        let code: string | undefined;
        try {
          decode(bytes, { profile: v.profile, shape: v.shape });
        } catch (e) {
          code = isSgfp4Error(e) ? e.code : String(e);
        }
        if (v.expect.reject === "ANY") expect(code).toBeDefined();
        else expect(code).toBe(v.expect.reject);
        // The native side refuses it on its own too, with the same code.
        const nativeCode = thrownCode(() => nativeAddon().decodeInto(bytes, v.profile, v.shape[0], v.shape[1], new Float32Array(v.shape[0] * v.shape[1])));
        if (v.expect.reject === "ANY") expect(nativeCode).toBeDefined();
        else expect(nativeCode).toBe(v.expect.reject);
      } else {
        const want = new Uint8Array(readFileSync(join(dir, v.expect.decode!.output!)));
        const out = decode(bytes, { profile: v.profile, shape: v.shape });
        expect(Buffer.from(out.buffer, out.byteOffset, out.byteLength).equals(Buffer.from(want))).toBe(true);
      }
    });
  }
});

describe("conformance backend", () => {
  it("is named vulkan, available here, and decodes", async () => {
    const b = createConformanceBackend();
    expect(b.name).toBe("vulkan");
    const a = await b.available();
    expect(a.ok).toBe(true);
    const built = generateValid(new Rng(3), { profile: "v1", shape: [3, 200] });
    expect(firstBitDifference((await b.decode(built.bytes, { profile: "v1", shape: [3, 200] })) as Float32Array, built.expected)).toBe(-1);
    await expect(b.decode(built.bytes.subarray(1), { profile: "v1", shape: [3, 200] })).rejects.toMatchObject({ name: "Sgfp4Error", code: "SIZE_MISMATCH" });
  });
});
