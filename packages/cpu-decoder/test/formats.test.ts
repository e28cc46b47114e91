// f16 / bf16 outputs (docs/decisions.md P10): every value must be the round-to-nearest-even
// conversion of the exact f32 result. Expectations: the f32 expectation from construction (golden
// vectors, testkit's generator), converted here by code independent of the kernel's SIMD
// conversion (@sgfp4/format's scalar floatBitsToHalfBits for f16, the bf16 rule spelled out below).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { floatBitsToHalfBits } from "@sgfp4/format";
import { Rng, generateValid, mutate } from "@sgfp4/testkit";
import { createDecoder, decode, decodeInto } from "../src/index.js";
import { instantiate, kernelModule } from "../src/kernel.js";
import { decodeParallel, terminateWorkers } from "../src/parallel.js";

afterAll(() => terminateWorkers());

/** bf16 by the definition: keep the top 16 bits, round the dropped 16 to nearest, ties to even. */
function bf16Bits(f32: number): number {
  const upper = f32 >>> 16;
  const dropped = f32 & 0xffff;
  return (dropped > 0x8000 || (dropped === 0x8000 && (upper & 1) === 1) ? upper + 1 : upper) & 0xffff;
}

function expectedHalves(expected: Float32Array, format: "f16" | "bf16"): number[] {
  return [...new Uint32Array(expected.buffer, expected.byteOffset, expected.length)].map(format === "f16" ? floatBitsToHalfBits : bf16Bits);
}

/** The first index where got differs from want, or -1. */
function firstDifference(got: Uint16Array, want: number[]): number {
  if (got.length !== want.length) return -2;
  for (let i = 0; i < want.length; i++) if (got[i] !== want[i]) return i;
  return -1;
}

describe("kernel conversion (convert_f16, convert_bf16) on chosen and random f32 patterns", () => {
  const chosen = [
    0, 0x80000000, 0x3f800000, 0x477fe000 /* 65504 */, 0x477fefff, 0x477ff000 /* 65520: ties to Inf */, 0x47800000, 0x7f7fffff,
    0x7f800000, 0xff800000, 0x38800000 /* 2^-14 */, 0x387fffff, 0x33800000 /* 2^-24 */, 0x33000000 /* 2^-25: tie to 0 */, 0x33000001,
    0x33c00000 /* 1.5 * 2^-24: tie to 2^-23 */, 0x3f801000 /* 1 + 2^-11: tie to even */, 0x3f803000, 0x3f808000, 0x3f818000, 1, 0x007fffff,
  ];
  it("matches the scalar references on chosen edge values and 200 000 random finite patterns (in place, odd lengths)", () => {
    const rng = new Rng(16, 1);
    const patterns = [...chosen];
    while (patterns.length < 200_003) {
      const p = rng.int(0, 0xffffffff) >>> 0;
      if (((p >>> 23) & 0xff) !== 0xff) patterns.push(p);
    }
    const memory = new WebAssembly.Memory({ initial: 16 });
    const kernel = instantiate(kernelModule()!, memory);
    for (const format of ["f16", "bf16"] as const) {
      const f32 = new Uint32Array(memory.buffer, 0, patterns.length);
      f32.set(patterns);
      (format === "f16" ? kernel.convert_f16 : kernel.convert_bf16)(0, 0, patterns.length);
      const got = new Uint16Array(memory.buffer, 0, patterns.length);
      const want = patterns.map(format === "f16" ? floatBitsToHalfBits : bf16Bits);
      expect(firstDifference(got, want), format).toBe(-1);
    }
  });
});

const vectorsDir = join(import.meta.dirname, "../../../golden-vectors/vectors");
interface Vector {
  id: string;
  profile: "v1" | "v2";
  container: string;
  shape: [number, number];
  expect: { decode?: { output: string } };
}
const vectors = (JSON.parse(readFileSync(join(vectorsDir, "index.json"), "utf8")).vectors as string[])
  .map((f) => JSON.parse(readFileSync(join(vectorsDir, f), "utf8")) as Vector)
  .filter((v) => v.expect.decode);

describe("decode to f16 / bf16", () => {
  it("every golden decode vector: decode, decodeInto and the Decoder adapter give the converted expectation", async () => {
    expect(vectors.length).toBeGreaterThan(40);
    const decoder = createDecoder();
    expect(decoder.formats).toEqual(["f32", "f16", "bf16"]);
    for (const v of vectors) {
      const bytes = new Uint8Array(readFileSync(join(vectorsDir, v.container)));
      const file = readFileSync(join(vectorsDir, v.expect.decode!.output));
      const expected = new Float32Array(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength));
      for (const format of ["f16", "bf16"] as const) {
        const want = expectedHalves(expected, format);
        const opts = { profile: v.profile, shape: v.shape, format };
        const into = new Uint16Array(want.length);
        decodeInto(bytes, opts, into);
        expect(firstDifference(decode(bytes, opts), want), `${v.id} ${format} decode`).toBe(-1);
        expect(firstDifference(into, want), `${v.id} ${format} decodeInto`).toBe(-1);
        expect(firstDifference((await decoder.decode(bytes, opts)) as Uint16Array, want), `${v.id} ${format} adapter`).toBe(-1);
      }
    }
  }, 60_000);

  it("random v1 and v2 streams (cropped shapes, several bands, wide bands of one macroblock row): decode, decodeInto, decodeParallel", async () => {
    const rng = new Rng(2026, 12);
    for (let i = 0; i < 40; i++) {
      // over 1024 columns a band is a run of macroblocks of one row, copied out row by row
      const wide = i % 8 === 1 || i % 8 === 2;
      const shape: [number, number] = wide
        ? [rng.int(1, 140), rng.int(1025, 2200)]
        : i % 4 === 0
          ? [64 * rng.int(17, 40) - rng.int(0, 63), rng.int(60, 200)]
          : [rng.int(1, 200), rng.int(1, 200)];
      const c = generateValid(rng, { profile: i % 2 ? "v2" : "v1", shape });
      for (const format of ["f16", "bf16"] as const) {
        const want = expectedHalves(c.expected, format);
        const opts = { profile: c.profile, shape: c.shape, format };
        const into = new Uint16Array(want.length);
        decodeInto(c.bytes, opts, into);
        expect(firstDifference(decode(c.bytes, opts), want), `case ${i} ${format}`).toBe(-1);
        expect(firstDifference(into, want), `case ${i} ${format} into`).toBe(-1);
        expect(firstDifference(await decodeParallel(c.bytes, { ...opts, threads: 2 }), want), `case ${i} ${format} parallel`).toBe(-1);
      }
    }
  }, 120_000);

  it("v2 by table (every layout, leaf size and mode, T158 included) and mutated streams: the converted f32 decode, or its error code", () => {
    const rng = new Rng(2026, 15);
    let decoded = 0;
    let rejected = 0;
    for (let i = 0; i < 150; i++) {
      const shape: [number, number] = i % 3 === 0 ? [64 * rng.int(1, 3), 64 * rng.int(1, 4)] : [rng.int(1, 220), rng.int(1, 220)];
      const c = generateValid(rng, { profile: "v2", shape });
      for (const bytes of [c.bytes, mutate(rng, c).bytes, mutate(rng, c).bytes]) {
        let f32: Float32Array | null = null;
        let code = "";
        try {
          f32 = decode(bytes, { profile: "v2", shape: c.shape });
        } catch (e) {
          code = (e as { code?: string }).code ?? String(e);
        }
        for (const format of ["f16", "bf16"] as const) {
          const opts = { profile: "v2" as const, shape: c.shape, format };
          if (!f32) {
            expect(() => decode(bytes, opts), `case ${i} ${format}`).toThrow(expect.objectContaining({ code }));
            rejected++;
            continue;
          }
          const want = expectedHalves(f32, format);
          const into = new Uint16Array(want.length);
          decodeInto(bytes, opts, into);
          expect(firstDifference(into, want), `case ${i} ${format}`).toBe(-1);
          expect(firstDifference(decode(bytes, opts), want), `case ${i} ${format} decode`).toBe(-1);
          decoded++;
        }
      }
    }
    expect(decoded).toBeGreaterThan(400);
    expect(rejected).toBeGreaterThan(100);
  }, 120_000);

  it("rejects an output array of the wrong type or format before decoding", () => {
    const c = generateValid(new Rng(3, 3), { profile: "v1", shape: [3, 5] });
    const code = (run: () => unknown) => {
      try {
        run();
      } catch (e) {
        return (e as { code?: string }).code;
      }
      return "none";
    };
    expect(code(() => decodeInto(c.bytes, { profile: "v1", shape: [3, 5], format: "f16" }, new Float32Array(15)))).toBe("INVALID_ARGUMENT");
    expect(code(() => decodeInto(c.bytes, { profile: "v1", shape: [3, 5] }, new Uint16Array(15)))).toBe("INVALID_ARGUMENT");
    expect(code(() => decode(c.bytes, { profile: "v1", shape: [3, 5], format: "f8" as "f16" }))).toBe("INVALID_ARGUMENT");
  });
});
