// createOutput: arrays in the kernel's memory that decodeInto fills in place.
// Expected values come from decodeReference (tested separately against hand-computed values), from
// the output @sgfp4/testkit knows from construction and,
// for one case, from the codes, scale and bias chosen here.
import { describe, expect, it, vi } from "vitest";
import { LAYOUT, Sgfp4Error, float32Bits, halfToFloat, writeV1, writeV2 } from "@sgfp4/format";
import { createOutput, decode, decodeInto, decodeReference, isKernelOutput } from "../src/index.js";
import { Rng, bitsOf, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { SHAPES } from "./helpers.js";

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(Sgfp4Error);
    return (e as Sgfp4Error).code;
  }
  return "no error";
}

describe("createOutput + decodeInto (kernel writes in place)", () => {
  it("returns O*I zeros living in a WebAssembly.Memory that decodeInto recognises", () => {
    const out = createOutput([65, 63]);
    expect(out).toBeInstanceOf(Float32Array);
    expect(out.length).toBe(65 * 63);
    expect(out.every((x) => Object.is(x, 0))).toBe(true);
    expect(isKernelOutput(out)).toBe(true);
    expect(isKernelOutput(new Float32Array(65 * 63))).toBe(false);
    // decode() still returns a plain, independent array
    const bytes = generateValid(new Rng(1), { profile: "v1", shape: [65, 63] }).bytes;
    const a = decode(bytes, { profile: "v1", shape: [65, 63] });
    const b = decode(bytes, { profile: "v1", shape: [65, 63] });
    expect(isKernelOutput(a)).toBe(false);
    expect(a.buffer).not.toBe(b.buffer);
    expect(a.buffer.byteLength).toBe(65 * 63 * 4);
  });

  it("hand-computed: v1 FP4 codes -8..7 with scale 0.5 and bias -1 land in place", () => {
    const codes = Array.from({ length: 4096 }, (_, i) => (i % 16) - 8);
    const scaleBits = 0x3800; // 0.5
    const biasBits = 0xbc00; // -1
    const bytes = writeV1({ shape: [3, 5], blocks: [{ mode: 0, scaleBits, biasBits, codes }] });
    const out = createOutput([3, 5]);
    decodeInto(bytes, { profile: "v1", shape: [3, 5] }, out);
    const expected: number[] = [];
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c < 5; c++) expected.push(float32Bits(Math.fround(halfToFloat(scaleBits) * ((r * 64 + c) % 16 - 8) + halfToFloat(biasBits))));
    }
    expect([...bitsOf(out)]).toEqual(expected);
  });

  for (const profile of ["v1", "v2"] as const) {
    it(`${profile}: identical bits to decodeReference for every test shape, output reused across calls`, () => {
      for (const shape of SHAPES) {
        const rnd = new Rng(shape[0] * 31 + shape[1] + (profile === "v2" ? 7 : 0));
        const out = createOutput(shape);
        const buffer = out.buffer;
        for (let round = 0; round < 3; round++) {
          const { bytes, expected } = generateValid(rnd, { profile, shape });
          const opts = { profile, shape };
          decodeInto(bytes, opts, out);
          expect(firstBitDifference(out, decodeReference(bytes, opts))).toBe(-1);
          expect(firstBitDifference(out, expected)).toBe(-1);
          // same array, same memory, never detached
          expect(out.buffer).toBe(buffer);
          expect(out.length).toBe(shape[0] * shape[1]);
        }
      }
    });
  }

  it("one output serves v1 and v2 containers of its shape in turn", () => {
    const shape = [130, 70] as const;
    const rnd = new Rng(77);
    const out = createOutput(shape);
    for (let i = 0; i < 4; i++) {
      const profile = i % 2 ? "v2" : "v1";
      const bytes = generateValid(rnd, { profile, shape }).bytes;
      decodeInto(bytes, { profile: "auto", shape }, out);
      expect(firstBitDifference(out, decodeReference(bytes, { profile, shape }))).toBe(-1);
    }
  });

  it("a subarray of a kernel output is filled in place without touching its neighbours", () => {
    const backing = createOutput([3, 100]);
    backing.fill(7);
    const view = backing.subarray(100, 200);
    expect(isKernelOutput(view)).toBe(true);
    const shape = [1, 100] as const;
    const bytes = generateValid(new Rng(3), { profile: "v2", shape }).bytes;
    decodeInto(bytes, { profile: "v2", shape }, view);
    expect(firstBitDifference(view, decodeReference(bytes, { profile: "v2", shape }))).toBe(-1);
    expect([...backing.subarray(0, 100), ...backing.subarray(200)].every((x) => x === 7)).toBe(true);
  });

  it("inputs larger than the reserved space (a 256 KiB gap between v2 records) still decode correctly", () => {
    const shape = [64, 128] as const;
    const leaf = { mode: 0 as const, scaleBits: 0x3c00, biasBits: 0x3800, codes: Array.from({ length: 4096 }, (_, i) => (i % 15) - 7) };
    const bytes = writeV2({ shape, records: [{ layout: LAYOUT.UNIFORM_64, leaves: [leaf] }, { layout: LAYOUT.UNIFORM_64, leaves: [leaf], gapBefore: 256 * 1024 }] });
    const out = createOutput(shape);
    decodeInto(bytes, { profile: "v2", shape }, out);
    expect(firstBitDifference(out, decodeReference(bytes, { profile: "v2", shape }))).toBe(-1);
    expect(out.length).toBe(64 * 128); // not detached
  });

  it("a stream that lies inside the output's own memory decodes (inputs are copied before the kernel writes)", () => {
    const shape = [64, 64] as const;
    const bytes = generateValid(new Rng(11), { profile: "v1", shape }).bytes;
    const reference = decodeReference(bytes, { profile: "v1", shape });
    const out = createOutput(shape);
    const inside = new Uint8Array(out.buffer, out.byteOffset, bytes.length); // overlaps the output region
    inside.set(bytes);
    decodeInto(inside, { profile: "v1", shape }, out);
    expect(firstBitDifference(out, reference)).toBe(-1);
  });

  it("errors: bad shape, over-limit output (nothing allocated), wrong length, stream faults", () => {
    expect(codeOf(() => createOutput([0, 5]))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => createOutput([1.5, 5]))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => createOutput([5] as unknown as [number, number]))).toBe("INVALID_ARGUMENT");
    const memorySpy = vi.spyOn(WebAssembly, "Memory");
    try {
      expect(codeOf(() => createOutput([100_000, 100_000]))).toBe("LIMIT_EXCEEDED");
      expect(codeOf(() => createOutput([64, 128], { limits: { maxOutputBytes: 64 * 128 * 4 - 1 } }))).toBe("LIMIT_EXCEEDED");
      // over 4 GiB of wasm memory even when the caller raises the limit
      expect(codeOf(() => createOutput([65536, 16384], { limits: { maxOutputBytes: 2 ** 33 } }))).toBe("LIMIT_EXCEEDED");
      expect(memorySpy).not.toHaveBeenCalled();
    } finally {
      memorySpy.mockRestore();
    }
    const bytes = generateValid(new Rng(2), { profile: "v1", shape: [64, 128] }).bytes;
    const wrongShape = createOutput([64, 64]);
    expect(codeOf(() => decodeInto(bytes, { profile: "v1", shape: [64, 128] }, wrongShape))).toBe("INVALID_ARGUMENT");
    const out = createOutput([64, 128]);
    const truncated = bytes.subarray(0, bytes.length - 16);
    expect(codeOf(() => decodeInto(truncated, { profile: "v1", shape: [64, 128] }, out))).toBe("SIZE_MISMATCH");
    const bad = bytes.slice();
    new DataView(bad.buffer).setUint32(0, 0x7c000000, true); // a block header with scale = FP16 infinity
    expect(codeOf(() => decodeInto(bad, { profile: "v1", shape: [64, 128] }, out))).toBe("NONFINITE_PARAMETER");
    // still usable after errors
    decodeInto(bytes, { profile: "v1", shape: [64, 128] }, out);
    expect(firstBitDifference(out, decodeReference(bytes, { profile: "v1", shape: [64, 128] }))).toBe(-1);
  });
});
