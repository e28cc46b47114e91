/**
 * f16 / bf16 outputs written by the shader (P10), against an independent conversion of the
 * expected f32 output (construction, or the golden vector's .f32 file), bit for bit.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MODE_FP4, writeV1 } from "@sgfp4/format";
import { Rng, generateValid } from "@sgfp4/testkit";
import { describe, expect, it } from "vitest";
import { createDecoder, decode, decodeAsync, decodeInto, decodeIntoAsync, info } from "../src/index.js";
import { GOLDEN_DIR, goldenVectors } from "./golden.js";
import { convertAll, toBf16, toF16 } from "./half-reference.js";

const CONVERT = { f16: toF16, bf16: toBf16 } as const;
const FORMATS = ["f16", "bf16"] as const;
const hex = (a: Uint16Array) => Array.from(a, (v) => v.toString(16));

describe("the independent conversion itself", () => {
  it("rounds the textbook cases", () => {
    expect([1, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504, 65519.99, 65520, 2 ** -25, 2 ** -25 * 1.5, 2 ** -24, -0].map(toF16)).toEqual([
      0x3c00, 0x3c00, 0x3c02, 0x7bff, 0x7bff, 0x7c00, 0, 1, 1, 0x8000,
    ]);
    expect([1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -3.4e38, 2 ** -130].map(toBf16)).toEqual([0x3f80, 0x3f80, 0x3f82, 0xff80, 0x0008]);
  });
});

describe("hand-built values: ties, subnormals, overflow", () => {
  const codes = Array.from({ length: 4096 }, (_, i) => (i % 16) - 8);
  const cases = [
    { what: "ties to even (S = 2^-11, Bias = 1)", scaleBits: 0x1000, biasBits: 0x3c00 },
    { what: "f16 subnormal results (S = 2^-24, Bias = 3 * 2^-24)", scaleBits: 0x0001, biasBits: 0x0003 },
    { what: "overflow past 65504 (S = 65504, Bias = 65504)", scaleBits: 0x7bff, biasBits: 0x7bff },
    { what: "signed zeros (S = -0, Bias = -0)", scaleBits: 0x8000, biasBits: 0x8000 },
  ];
  for (const c of cases) {
    it(c.what, () => {
      const bytes = writeV1({ shape: [4, 16], blocks: [{ mode: MODE_FP4, scaleBits: c.scaleBits, biasBits: c.biasBits, codes }] });
      const f32 = decode(bytes, { profile: "v1", shape: [4, 16] });
      for (const format of FORMATS) {
        expect(hex(decode(bytes, { profile: "v1", shape: [4, 16], format }) as Uint16Array)).toEqual(hex(convertAll(f32, CONVERT[format])));
      }
    });
  }
});

describe("random containers, both profiles, every path", () => {
  const rng = new Rng(0x4a1f);
  const shapes: [number, number][] = [[1, 1], [3, 200], [65, 63], [130, 70], [64, 129]];
  for (const profile of ["v1", "v2"] as const) {
    for (const shape of shapes) {
      it(`${profile} ${shape.join("x")}`, async () => {
        const built = generateValid(rng, { profile, shape });
        const opts = { profile, shape };
        for (const format of FORMATS) {
          const expected = hex(convertAll(built.expected, CONVERT[format]));
          expect(hex(decode(built.bytes, { ...opts, format }) as Uint16Array)).toEqual(expected);
          expect(hex(decodeInto(built.bytes, { ...opts, format }, new Uint16Array(shape[0] * shape[1])))).toEqual(expected);
          expect(hex((await decodeAsync(built.bytes, { ...opts, format })) as Uint16Array)).toEqual(expected);
          expect(hex(await decodeIntoAsync(built.bytes, { ...opts, format }, new Uint16Array(shape[0] * shape[1])))).toEqual(expected);
        }
      });
    }
  }
});

describe("golden vectors", () => {
  const vectors = goldenVectors().filter((v) => v.expect.decode?.output);
  it("are present", () => expect(vectors.length).toBeGreaterThan(10));
  for (const v of vectors) {
    it(v.id, () => {
      const bytes = new Uint8Array(readFileSync(join(GOLDEN_DIR, v.container)));
      const raw = readFileSync(join(GOLDEN_DIR, v.expect.decode!.output!));
      const f32 = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
      for (const format of FORMATS) {
        expect(hex(decode(bytes, { profile: v.profile, shape: v.shape, format }) as Uint16Array)).toEqual(hex(convertAll(f32, CONVERT[format])));
      }
    });
  }
});

describe("the Decoder adapter", () => {
  it("declares f16 and bf16 where the device has 16-bit storage, and writes them", async () => {
    const d = createDecoder();
    expect(d.formats).toEqual(info().formats);
    expect(d.formats).toEqual(["f32", "f16", "bf16"]); // lavapipe and current GPUs have storageBuffer16BitAccess
    const built = generateValid(new Rng(9), { profile: "v2", shape: [70, 90] });
    const out = await d.decode(built.bytes, { profile: "v2", shape: [70, 90], format: "bf16" });
    expect(out).toBeInstanceOf(Uint16Array);
    expect(hex(out as Uint16Array)).toEqual(hex(convertAll(built.expected, toBf16)));
  });

  it("refuses a wrong array type or an unknown format", () => {
    const built = generateValid(new Rng(10), { profile: "v1", shape: [2, 2] });
    expect(() => decodeInto(built.bytes, { profile: "v1", shape: [2, 2], format: "f16" }, new Float32Array(4))).toThrow(/Uint16Array/);
    expect(() => decode(built.bytes, { profile: "v1", shape: [2, 2], format: "f8" as "f16" })).toThrow(/format must be/);
  });
});
