/**
 * GPU decode, bit for bit: hand-built containers with expected values from the chosen codes,
 * scales and biases; random containers against a plain reference decode; rejections with the
 * codes of `parse`. Without a WebGPU adapter the tests are reported skipped, with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LAYOUT, Sgfp4Error, bitsToFloat32, float32Bits, halfToFloat, parse, writeV1, writeV2, type Shape } from "@sgfp4/format";
import { WebGpuDecoder } from "../src/decoder.js";
import { parseValidator } from "../src/job.js";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { referenceDecode } from "./reference.js";
import { device, noGpu } from "./device.js";

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

describe.skipIf(noGpu)("WebGPU decode", () => {
  let plain: WebGpuDecoder;
  let tinyChunks: WebGpuDecoder;
  let rowChunks: WebGpuDecoder;
  let compacted: WebGpuDecoder;
  // inputs written through a new mappedAtCreation buffer per call instead of the pooled staging
  let mapped: WebGpuDecoder;
  // the reference validator instead of the default (wasm) one
  let parsed: WebGpuDecoder;
  beforeAll(() => {
    parsed = new WebGpuDecoder(device!, { validator: parseValidator });
    plain = new WebGpuDecoder(device!);
    tinyChunks = new WebGpuDecoder(device!, { maxChunkBytes: 256 });
    rowChunks = new WebGpuDecoder(device!, { maxChunkBytes: 64 * 4 * 200 });
    compacted = new WebGpuDecoder(device!, { maxChunkBytes: 64 * 4 * 200, maxInputBytes: 256 });
    mapped = new WebGpuDecoder(device!, { upload: "mapped", maxChunkBytes: 256 });
  });
  afterAll(() => device?.destroy());

  it("v1 FP4: S * q + Bias for every code, cropped to 3x200", async () => {
    const shape: Shape = [3, 200];
    // 4 blocks; block b has codes (i*5 + b) mod 16 - 8 and its own scale and bias
    const scales = [0x3c00, 0x3800, 0x4200, 0x0001];
    const biases = [0x3800, 0xbc00, 0x0000, 0x8000];
    const codesOf = (b: number) => Array.from({ length: 4096 }, (_, i) => ((i * 5 + b) % 16) - 8);
    const bytes = writeV1({ shape, blocks: scales.map((s, b) => ({ mode: 0, scaleBits: s, biasBits: biases[b]!, codes: codesOf(b) })), slots: [2, 0, 3, 1] });
    const expected = new Float32Array(3 * 200);
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c < 200; c++) {
        const b = Math.floor(c / 64);
        const q = codesOf(b)[r * 64 + (c % 64)]!;
        expected[r * 200 + c] = Math.fround(halfToFloat(scales[b]!) * q + halfToFloat(biases[b]!));
      }
    }
    for (const d of [plain, tinyChunks, rowChunks, compacted, mapped]) {
      expect(bits(await d.decode(bytes, { profile: "v1", shape }))).toEqual(bits(expected));
    }
  });

  it("v1 T158: ternary codes, the reserved symbol 11 decodes as 0, subnormal scale", async () => {
    const shape: Shape = [64, 64];
    const payload = new Uint8Array(1024);
    // symbols cycle 00, 01, 10, 11 -> 0, +1, -1, 0
    for (let i = 0; i < 1024; i++) payload[i] = 0b11100100;
    const bytes = writeV1({ shape, blocks: [{ mode: 1, scaleBits: 0x0003, biasBits: 0xb400, payload }] });
    const s = 3 * 2 ** -24; // FP16 0x0003, a subnormal that must not flush
    const b = -0.25;
    const expected = Float32Array.from({ length: 4096 }, (_, i) => Math.fround(s * [0, 1, -1, 0][i % 4]! + b));
    for (const d of [plain, tinyChunks]) expect(bits(await d.decode(bytes, { profile: "v1", shape }))).toEqual(bits(expected));
  });

  it("signed zeros follow IEEE-754 round to nearest", async () => {
    const shape: Shape = [64, 64];
    const codes = Array.from({ length: 4096 }, (_, i) => [0, 1, -1, 3][i % 4]!);
    // S = -0, Bias = -0: -0*0 = -0 (+ -0 = -0), -0*1 = -0, -0*-1 = +0 (+ -0 = +0)
    const bytes = writeV1({ shape, blocks: [{ mode: 0, scaleBits: 0x8000, biasBits: 0x8000, codes }] });
    // S = 2, Bias = -2: 2*1 - 2 = +0 exactly
    const bytes2 = writeV1({ shape, blocks: [{ mode: 0, scaleBits: 0x4000, biasBits: 0xc000, codes }] });
    for (const d of [plain, compacted]) {
      const out = bits(await d.decode(bytes, { profile: "v1", shape }));
      expect(out.slice(0, 4)).toEqual([0x80000000, 0x80000000, 0x00000000, 0x80000000]);
      const out2 = bits(await d.decode(bytes2, { profile: "v1", shape }));
      expect(out2.slice(0, 4)).toEqual([float32Bits(-2), 0, float32Bits(-4), float32Bits(4)]);
    }
  });

  it("v2 MIXED: leaves land at their (y, x), crop 65x63, bias masked to 0xFFF0", async () => {
    const shape: Shape = [65, 63];
    // block 0: TL a 32 leaf, TR four 16s, BL split down to four 4x4 leaves, BR a 32 leaf
    const tree = ["leaf", ["leaf", "leaf", "leaf", "leaf"], [[["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"], "leaf"] as const;
    const sizes = [32, 16, 16, 16, 16, 4, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32];
    const pos = [[0, 0], [0, 32], [0, 48], [16, 32], [16, 48], [32, 0], [32, 4], [36, 0], [36, 4], [32, 8], [40, 0], [40, 8], [32, 16], [48, 0], [48, 16], [32, 32]];
    const leaves = sizes.map((size, k) => ({
      mode: (k % 2) as 0 | 1,
      scaleBits: 0x3c00 + k * 0x100,
      biasBits: (0x1230 + k * 0x40) | (k === 3 ? 0x8000 : 0),
      codes: Array.from({ length: size * size }, (_, i) => (k % 2 ? ((i + k) % 3) - 1 : ((i * 3 + k) % 16) - 8)),
    }));
    const other = (layout: 0 | 1 | 2 | 3 | 5, size: number, base: number) => ({
      layout,
      leaves: Array.from({ length: (64 / size) ** 2 }, (_, k) => ({ mode: 0 as const, scaleBits: base + k, biasBits: 0x0010 * (k % 7), codes: Array.from({ length: size * size }, (_, i) => (i % 16) - 8) })),
    });
    const bytes = writeV2({ shape, records: [{ layout: LAYOUT.MIXED, tree, leaves }, other(3, 8, 0x3000)] });
    const expected = new Float32Array(65 * 63);
    leaves.forEach((leaf, k) => {
      const size = sizes[k]!;
      const [y, x] = pos[k]!;
      for (let i = 0; i < size; i++) for (let j = 0; j < size && x! + j < 63; j++) {
        expected[(y! + i) * 63 + x! + j] = Math.fround(halfToFloat(leaf.scaleBits) * leaf.codes[i * size + j]! + halfToFloat(leaf.biasBits));
      }
    });
    // record 1 (UNIFORM_8) holds row 64 of columns 0..62: leaf k = column / 8 of its first leaf row
    for (let c = 0; c < 63; c++) {
      const k = Math.floor(c / 8);
      expected[64 * 63 + c] = Math.fround(halfToFloat(0x3000 + k) * ((c % 8) - 8) + halfToFloat(0x0010 * (k % 7)));
    }
    expect(plain.prepare(bytes, { profile: "v2", shape }).variant).toBe("tree");
    for (const d of [plain, tinyChunks, rowChunks, compacted, mapped]) {
      const out = await d.decode(bytes, { profile: "v2", shape });
      expect(firstBitDifference(out, expected)).toBe(-1);
    }
  });

  const SHAPES: Shape[] = [[1, 1], [3, 200], [65, 63], [130, 70], [64, 64], [200, 3], [129, 257]];

  it("random containers: bit-identical to the reference decode, plain and chunked", async () => {
    let n = 0;
    for (let seed = 1; seed <= 36; seed++) {
      const r = new Rng(seed);
      const shape = SHAPES[seed % SHAPES.length]!;
      const profile = seed % 2 ? "v1" : "v2";
      const built = generateValid(r, { profile, shape });
      const bytes = built.bytes;
      const expected = referenceDecode(bytes, parse(bytes, { profile, shape }));
      // the reference itself against the output known from construction
      expect(firstBitDifference(expected, built.expected)).toBe(-1);
      const decoders = seed % 3 === 0 ? [plain, tinyChunks, mapped] : seed % 3 === 1 ? [plain, rowChunks, parsed] : [plain, compacted, tinyChunks];
      for (const d of decoders) {
        const out = await d.decode(bytes, { profile, shape });
        const at = firstBitDifference(out, expected);
        if (at >= 0) throw new Error(`seed ${seed} ${profile} [${shape}]: element ${at} is 0x${float32Bits(out[at]!).toString(16)}, expected 0x${float32Bits(expected[at]!).toString(16)} (${expected[at]})`);
        n++;
      }
    }
    expect(n).toBe(12 * 3 + 12 * 3 + 12 * 3);
  });

  it("picks the kernel by layout: one leaf per macroblock needs no tables", () => {
    const v1 = generateValid(new Rng(5), { profile: "v1", shape: [130, 70] }).bytes;
    const one = plain.prepare(v1, { profile: "v1", shape: [130, 70] });
    expect(one.variant).toBe("single");
    one.destroy();
    const v2 = writeV2({ shape: [64, 64], records: [{ layout: LAYOUT.UNIFORM_32, leaves: Array.from({ length: 4 }, () => ({ mode: 0 as const, scaleBits: 0x3c00, biasBits: 0, codes: new Array(1024).fill(1) })) }] });
    const many = plain.prepare(v2, { profile: "v2", shape: [64, 64] });
    expect(many.variant).toBe("tree");
    many.destroy();
  });

  it("decodes into a caller's GPU buffer at an offset, which stays on the device", async () => {
    const shape: Shape = [130, 70];
    const bytes = generateValid(new Rng(99), { profile: "v2", shape }).bytes;
    const expected = referenceDecode(bytes, parse(bytes, { profile: "v2", shape }));
    const size = 512 + 130 * 70 * 4;
    const target = device!.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    device!.queue.writeBuffer(target, 0, new Uint8Array(size).fill(0xaa));
    expect(await plain.decodeToBuffer(bytes, { profile: "v2", shape }, target, 512)).toBe(target);
    const all = await plain.readBack(target, size);
    target.destroy();
    expect(new Uint32Array(all.buffer, 0, 128).every((w) => w === 0xaaaaaaaa)).toBe(true);
    expect(firstBitDifference(all.subarray(128), expected)).toBe(-1);
  });

  it("rejects invalid streams with the code parse reports, before any dispatch", async () => {
    const shape: Shape = [65, 63];
    let rejected = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const r = new Rng(1000 + seed);
      const profile = seed % 2 ? "v1" : "v2";
      const good = generateValid(r, { profile, shape }).bytes;
      const bad = good.slice(0, seed % 5 === 0 ? Math.floor(r.float() * good.length) : good.length);
      for (let k = 0; k < 3; k++) {
        const at = Math.floor(r.float() * Math.min(bad.length, 200));
        bad[at] = bad[at]! ^ (1 << Math.floor(r.float() * 8));
      }
      let parseCode: string | undefined;
      try {
        parse(bad, { profile, shape });
      } catch (e) {
        parseCode = (e as Sgfp4Error).code;
      }
      const d = seed % 2 ? plain : parsed;
      const result = await d.decode(bad, { profile, shape }).then((out) => ({ out }), (e: Sgfp4Error) => ({ code: e.code }));
      if (parseCode) {
        expect(result).toEqual({ code: parseCode });
        rejected++;
      } else {
        expect("out" in result && firstBitDifference(result.out, referenceDecode(bad, parse(bad, { profile, shape })))).toBe(-1);
      }
    }
    expect(rejected).toBeGreaterThan(10);
    await expect(plain.decode(new Uint8Array([1, 2, 3]), { profile: "v2", shape })).rejects.toMatchObject({ code: "BAD_MAGIC" });
    const nonfinite = writeV1({ shape: [1, 1], blocks: [{ mode: 0, scaleBits: 0x7c00, biasBits: 0, codes: new Array(4096).fill(0) }] });
    await expect(plain.decode(nonfinite, { profile: "v1", shape: [1, 1] })).rejects.toMatchObject({ code: "NONFINITE_PARAMETER" });
    await expect(plain.decode(new Uint8Array(16), { profile: "v1", shape: [50000, 50000] })).rejects.toMatchObject({ code: "LIMIT_EXCEEDED" });
  });

  it("keeps -0 apart from +0 and subnormals exact across every FP16 scale class", async () => {
    const shape: Shape = [64, 64];
    const halves = [0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0x8000, 0x0000];
    for (const s of halves) {
      const bytes = writeV1({ shape, blocks: [{ mode: 0, scaleBits: s, biasBits: 0x8000, codes: Array.from({ length: 4096 }, (_, i) => (i % 16) - 8) }] });
      const want = Array.from({ length: 16 }, (_, i) => float32Bits(Math.fround(halfToFloat(s) * (i - 8) + -0)));
      for (const d of [plain, tinyChunks]) expect(bits(await d.decode(bytes, { profile: "v1", shape })).slice(0, 16)).toEqual(want);
      expect(bitsToFloat32(want[8]!) === 0).toBe(true); // code 0 lands on a zero, whose sign the test pins
    }
  });
});

// Without an adapter the suite above is skipped; this names the reason in the report.
if (noGpu) it.skip(`WebGPU decode: no adapter (${noGpu})`, () => {});
