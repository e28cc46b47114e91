/**
 * f16 and bf16 outputs written by the kernel: each value the round-to-nearest-even conversion of
 * the exact f32 result. Hand-built ties and overflows (expected bits from the construction), and
 * random streams against an independent conversion (test/half.ts) of the reference decode.
 */
import { afterAll, describe, expect, it } from "vitest";
import { parse, writeV1, type Shape } from "@sgfp4/format";
import { Rng, generateValid } from "@sgfp4/testkit";
import { WebGpuDecoder } from "../src/decoder.js";
import { device, noGpu } from "./device.js";
import { referenceDecode } from "./reference.js";
import { convertAll, toBf16, toF16 } from "./half.js";

const CODES = [0, 1, -1, 3, 5, 7, -8, 2];
/** v1, one block: S * code + Bias over CODES (cycled), 64x64. */
const block = (scaleBits: number, biasBits: number) =>
  writeV1({ shape: [64, 64], blocks: [{ mode: 0, scaleBits, biasBits, codes: Array.from({ length: 4096 }, (_, i) => CODES[i % CODES.length]!) }] });
const first8 = async (d: WebGpuDecoder, bytes: Uint8Array, format: "f16" | "bf16") => Array.from((await d.decode(bytes, { profile: "v1", shape: [64, 64], format })).subarray(0, 8));

describe.skipIf(noGpu)("half-precision outputs", () => {
  const plain = new WebGpuDecoder(device!);
  const tiny = new WebGpuDecoder(device!, { maxChunkBytes: 256 });
  afterAll(() => device?.destroy());

  it("f16 ties round to even: S = 2^-11, Bias = 1", async () => {
    // 1, 1 + 2^-11 (tie -> 1), 1 - 2^-11 (exact), 1 + 3*2^-11 (tie -> 1 + 2^-9), 1 + 5*2^-11 (tie -> 1 + 2^-9),
    // 1 + 7*2^-11 (tie -> 1 + 2^-8), 1 - 2^-8 (exact), 1 + 2^-10 (exact)
    expect(await first8(plain, block(0x1000, 0x3c00), "f16")).toEqual([0x3c00, 0x3c00, 0x3bff, 0x3c02, 0x3c02, 0x3c04, 0x3bf8, 0x3c01]);
  });

  it("f16 overflow: 65520 and up round to Inf, 65488 ties down to 65472; -Inf", async () => {
    // S = 16, Bias = 65504: 65504, 65520 (tie, odd neighbour 65504 -> Inf), 65488 (tie -> 65472), 65552, 65584, 65616, 65376, 65536
    expect(await first8(plain, block(0x4c00, 0x7bff), "f16")).toEqual([0x7bff, 0x7c00, 0x7bfe, 0x7c00, 0x7c00, 0x7c00, 0x7bfb, 0x7c00]);
    // S = 65504, Bias = 0: code -8 -> -524032 -> -Inf
    expect((await first8(plain, block(0x7bff, 0x0000), "f16"))[6]).toBe(0xfc00);
  });

  it("f16 keeps subnormals and signed zeros; bf16 ties round to even", async () => {
    // S = 2^-24, Bias = -0: code * 2^-24 exactly; code 0: +0 + -0 = +0
    expect(await first8(plain, block(0x0001, 0x8000), "f16")).toEqual([0x0000, 0x0001, 0x8001, 0x0003, 0x0005, 0x0007, 0x8008, 0x0002]);
    // S = -0, Bias = -0: -0 * code + -0 is -0 for code >= 0 and +0 for code < 0
    expect(await first8(plain, block(0x8000, 0x8000), "f16")).toEqual([0x8000, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, 0x0000, 0x8000]);
    // bf16, S = 2^-8, Bias = 1: 1, 1 + 2^-8 (tie -> 1), 1 - 2^-8 (exact), 1 + 3*2^-8 (tie -> 1 + 2^-6), 1 + 5*2^-8 (tie -> 1 + 2^-6),
    // 1 + 7*2^-8 (tie -> 1 + 2^-5), 1 - 2^-5 (exact), 1 + 2^-7 (exact)
    expect(await first8(tiny, block(0x1c00, 0x3c00), "bf16")).toEqual([0x3f80, 0x3f80, 0x3f7f, 0x3f82, 0x3f82, 0x3f84, 0x3f78, 0x3f81]);
  });

  it("the independent conversion agrees with those constructions", () => {
    expect([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520, 65488, -524032, 3 * 2 ** -24].map(toF16)).toEqual([0x3c00, 0x3c02, 0x7c00, 0x7bfe, 0xfc00, 0x0003]);
    expect([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 - 2 ** -5, -0].map(toBf16)).toEqual([0x3f80, 0x3f82, 0x3f78, 0x8000]);
  });

  const SHAPES: Shape[] = [[1, 1], [3, 200], [65, 63], [130, 70], [64, 64], [200, 3], [129, 257], [67, 130]];
  it("random streams, every shape (odd columns: per-element stores), windowed and whole: bits of the converted reference", async () => {
    let n = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const shape = SHAPES[seed % SHAPES.length]!;
      const profile = seed % 2 ? "v1" : "v2";
      const bytes = generateValid(new Rng(500 + seed), { profile, shape }).bytes;
      const ref = referenceDecode(bytes, parse(bytes, { profile, shape }));
      for (const [format, to] of [["f16", toF16], ["bf16", toBf16]] as const) {
        const want = convertAll(ref, to);
        for (const d of seed % 3 ? [plain] : [plain, tiny]) {
          const got = await d.decode(bytes, { profile, shape, format });
          expect(got).toBeInstanceOf(Uint16Array);
          const at = got.findIndex((h, i) => h !== want[i]);
          if (at >= 0) throw new Error(`seed ${seed} ${format} [${shape}]: element ${at} is 0x${got[at]!.toString(16)}, expected 0x${want[at]!.toString(16)} (${ref[at]})`);
          n++;
        }
      }
    }
    expect(n).toBe(2 * (8 + 4 * 2));
  });

  it("decodeToBuffer with f16 leaves the bytes around the output alone", async () => {
    const shape: Shape = [65, 63]; // 4095 halves: the last word is shared with the next bytes
    const bytes = generateValid(new Rng(77), { profile: "v2", shape }).bytes;
    const want = convertAll(referenceDecode(bytes, parse(bytes, { profile: "v2", shape })), toF16);
    const size = 256 + 8192 + 256;
    const target = device!.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    device!.queue.writeBuffer(target, 0, new Uint8Array(size).fill(0xaa));
    await tiny.decodeToBuffer(bytes, { profile: "v2", shape, format: "f16" }, target, 256);
    const all = new Uint16Array((await plain.readBack(target, size)).buffer);
    target.destroy();
    expect(all.subarray(0, 128).every((h) => h === 0xaaaa)).toBe(true);
    expect(Array.from(all.subarray(128, 128 + 4095))).toEqual(Array.from(want));
    expect(all.subarray(128 + 4095).every((h) => h === 0xaaaa)).toBe(true);
  });
});

if (noGpu) it.skip(`half-precision outputs: no adapter (${noGpu})`, () => {});
