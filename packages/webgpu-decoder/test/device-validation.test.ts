/**
 * Device validation of v2 streams (records.ts on the host, leaves-shader.ts on the GPU): the same
 * verdict and code as parse() on valid and mutated streams, nothing written on a fault, the
 * decoder usable after one, and the host path untouched where device validation does not apply.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LAYOUT, floatToHalf, parse, writeV1, writeV2, type Shape } from "@sgfp4/format";
import { Rng, generateValid, mutate } from "@sgfp4/testkit";
import { WebGpuDecoder } from "../src/decoder.js";
import { wasmValidator, type StreamValidator } from "../src/job.js";
import { countRecordLeaves, v1LeafTable } from "../src/records.js";
import { device, noGpu } from "./device.js";

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

/** A 64x64 FULL_4x4 record: 256 FP4 leaves of 8 payload bytes, each padded to 16. */
function fullFourByFour(scale = 0.5): Uint8Array {
  const leaves = Array.from({ length: 256 }, (_, k) => ({ mode: 0 as const, scaleBits: floatToHalf(scale), biasBits: floatToHalf(k / 64) & 0xfff0, codes: Array.from({ length: 16 }, (_, i) => ((i + k) % 16) - 8) }));
  return writeV2({ shape: [64, 64], records: [{ layout: LAYOUT.FULL_4x4, leaves }] });
}

/** Where the payload of leaf `i` of a one-record FULL_4x4 stream starts. */
const payloadOf = (i: number) => 32 + 4 + 4 * 256 + 12 + 16 * i;

describe("countRecordLeaves (host half)", () => {
  it("counts every record's leaves as parse() does, and never accepts what parse() rejects at record level", () => {
    const rng = new Rng(5);
    let refused = 0;
    for (let k = 0; k < 600; k++) {
      const g = generateValid(rng, { profile: "v2", maxTiles: 3 });
      const m = k % 2 === 0 ? { bytes: g.bytes, shape: g.shape } : mutate(rng, { profile: "v2", shape: g.shape, bytes: g.bytes });
      let c: ReturnType<typeof parse> | undefined;
      try {
        c = parse(m.bytes, { profile: "v2", shape: m.shape });
      } catch {
        c = undefined;
      }
      let counts: ReturnType<typeof countRecordLeaves>;
      try {
        counts = countRecordLeaves(m.bytes, { profile: "v2", shape: m.shape });
      } catch {
        expect(c).toBeUndefined(); // a shape or limit error: parse() throws it too
        continue;
      }
      if (counts === null) {
        refused++;
        expect(c).toBeUndefined();
      } else if (c) {
        expect(counts!.leafCount).toBe(c.leafCount);
        expect(Array.from(counts!.blockFirst)).toEqual([...c.blocks.map((b) => b.firstLeaf), c.leafCount]);
      }
    }
    expect(refused).toBeGreaterThan(50);
  });

  it("answers only for v2 (auto-detected too)", () => {
    const v1 = writeV1({ shape: [1, 1], blocks: [{ mode: 0, scaleBits: 0x3c00, biasBits: 0, codes: new Array(4096).fill(1) }] });
    expect(countRecordLeaves(v1, { profile: "v1", shape: [1, 1] })).toBeUndefined();
    expect(countRecordLeaves(v1, { profile: "auto", shape: [1, 1] })).toBeUndefined();
    expect(v1LeafTable(fullFourByFour(), { profile: "auto", shape: [64, 64] })).toBeUndefined();
  });
});

describe("v1LeafTable (host half, v1)", () => {
  it("builds parse()'s leaf table, and refuses only what parse() rejects (the T158 halves left to the GPU)", () => {
    const rng = new Rng(6);
    let refused = 0;
    let halves = 0;
    for (let k = 0; k < 600; k++) {
      const g = generateValid(rng, { profile: "v1", maxTiles: 3 });
      const m = k % 2 === 0 ? { bytes: g.bytes, shape: g.shape } : mutate(rng, { profile: "v1", shape: g.shape, bytes: g.bytes });
      let c: ReturnType<typeof parse> | undefined;
      let code: string | undefined;
      try {
        c = parse(m.bytes, { profile: "v1", shape: m.shape });
      } catch (e) {
        code = (e as { code?: string }).code;
      }
      let table: ReturnType<typeof v1LeafTable>;
      try {
        table = v1LeafTable(m.bytes, { profile: "v1", shape: m.shape });
      } catch {
        expect(c).toBeUndefined();
        continue;
      }
      if (table === null) {
        refused++;
        expect(c).toBeUndefined();
      } else if (c) {
        expect(Array.from(table!)).toEqual(Array.from(c.leafTable));
      } else {
        expect(code).toBe("NONZERO_PADDING"); // accepted here, so only a T158 half can be at fault
        halves++;
      }
    }
    expect(refused).toBeGreaterThan(50);
    expect(halves).toBeGreaterThan(0);
  });
});

describe.skipIf(noGpu)("device validation (WebGPU)", () => {
  let hostCalls = 0;
  const counting: StreamValidator = (bytes, opts) => (hostCalls++, wasmValidator(bytes, opts));
  let onDevice: WebGpuDecoder;
  let onHost: WebGpuDecoder;
  beforeAll(() => {
    onDevice = new WebGpuDecoder(device!, { validator: counting, validation: "device" });
    onHost = new WebGpuDecoder(device!, { validation: "host" });
  });
  afterAll(() => device?.destroy());

  it("validates v2 and v1 without the host validator; prepare() uses it", async () => {
    hostCalls = 0;
    const v2 = fullFourByFour();
    expect(bits(await onDevice.decode(v2, { profile: "v2", shape: [64, 64] }))).toEqual(bits(await onHost.decode(v2, { profile: "v2", shape: [64, 64] })));
    const v1 = writeV1({ shape: [2, 2], blocks: [{ mode: 0, scaleBits: 0x3c00, biasBits: 0, codes: new Array(4096).fill(2) }] });
    expect(Array.from(await onDevice.decode(v1, { profile: "v1", shape: [2, 2] }))).toEqual([2, 2, 2, 2]);
    expect(hostCalls).toBe(0);
    onDevice.prepare(v1, { profile: "v1", shape: [2, 2] }).destroy();
    expect(hostCalls).toBe(1);
  });

  it("v1: a nonzero word in a T158 payload's upper half is refused on the GPU, nothing written", async () => {
    const shape: Shape = [64, 128];
    const t158 = { mode: 1 as const, scaleBits: 0x3c00, biasBits: 0, codes: Array.from({ length: 4096 }, (_, i) => (i % 3) - 1) };
    const good = writeV1({ shape, blocks: [{ mode: 0, scaleBits: 0x3800, biasBits: 0x3c00, codes: new Array(4096).fill(3) }, t158] });
    const bad = good.slice();
    bad[16 + 2048 + 1024 + 700] = 0x40; // block 1's payload (slot 1), upper half
    expect(() => parse(bad, { profile: "v1", shape })).toThrow("NONZERO_PADDING");
    const sentinel = new Float32Array(64 * 128).fill(3.5);
    const out = device!.createBuffer({ size: sentinel.byteLength, usage: 0x80 | 0x4 | 0x8 });
    device!.queue.writeBuffer(out, 0, sentinel);
    await expect(onDevice.decodeToBuffer(bad, { profile: "v1", shape }, out)).rejects.toMatchObject({ code: "NONZERO_PADDING" });
    expect(bits(await onDevice.readBack(out, sentinel.byteLength))).toEqual(bits(sentinel));
    expect(bits(await onDevice.decode(good, { profile: "v1", shape }))).toEqual(bits(await onHost.decode(good, { profile: "v1", shape })));
    out.destroy();
  });

  it("a leaf-level fault: parse()'s code, the caller's buffer untouched, the decoder reusable", async () => {
    const shape: Shape = [64, 64];
    const good = fullFourByFour();
    const faults: [string, (b: Uint8Array) => void][] = [
      ["NONZERO_PADDING", (b) => (b[payloadOf(200) + 9] = 1)], // padding after leaf 200's 8 payload bytes
      ["RESERVED_BITS", (b) => (b[36 + 4 * 17] = b[36 + 4 * 17]! | 0x4)], // leaf 17's flag bit 2
      ["NONFINITE_PARAMETER", (b) => (b[36 + 4 * 255 + 3] = 0x7c)], // leaf 255's scale: +Inf
    ];
    const sentinel = new Float32Array(64 * 64).fill(-7.25);
    const out = device!.createBuffer({ size: sentinel.byteLength, usage: 0x80 | 0x4 | 0x8 });
    for (const [code, corrupt] of faults) {
      const bad = good.slice();
      corrupt(bad);
      device!.queue.writeBuffer(out, 0, sentinel);
      await expect(onDevice.decodeToBuffer(bad, { profile: "v2", shape }, out)).rejects.toMatchObject({ code });
      expect(() => parse(bad, { profile: "v2", shape })).toThrow(code);
      expect(bits(await onDevice.readBack(out, sentinel.byteLength))).toEqual(bits(sentinel));
      await expect(onDevice.decode(bad, { profile: "v2", shape })).rejects.toMatchObject({ code });
      // then a valid stream decodes as before
      expect(bits(await onDevice.decode(good, { profile: "v2", shape }))).toEqual(bits(await onHost.decode(good, { profile: "v2", shape })));
    }
    out.destroy();
  });

  it("a truncated last payload is refused, and one extra byte of padding is not needed past 16", async () => {
    const good = fullFourByFour();
    await expect(onDevice.decode(good.subarray(0, good.length - 1), { profile: "v2", shape: [64, 64] })).rejects.toMatchObject({ code: "TRUNCATED" });
    const longer = new Uint8Array(good.length + 5);
    longer.set(good);
    expect(bits(await onDevice.decode(longer, { profile: "v2", shape: [64, 64] }))).toEqual(bits(await onHost.decode(good, { profile: "v2", shape: [64, 64] })));
  });

  it("random and mutated streams, v1 and v2: the verdict, code and bits of host validation", async () => {
    const rng = new Rng(9);
    let rejected = 0;
    let decoded = 0;
    for (let k = 0; k < 200; k++) {
      const profile: "v1" | "v2" = k % 4 === 0 ? "v1" : "v2";
      const g = generateValid(rng, { profile, maxTiles: 3 });
      const m = k % 3 === 0 ? { bytes: g.bytes, shape: g.shape } : mutate(rng, { profile, shape: g.shape, bytes: g.bytes });
      const opts = { profile, shape: m.shape };
      const host = await onHost.decode(m.bytes, opts).then(bits, (e: { code?: string }) => e.code ?? String(e));
      const dev = await onDevice.decode(m.bytes, opts).then(bits, (e: { code?: string }) => e.code ?? String(e));
      expect(dev).toEqual(host);
      if (typeof host === "string") rejected++;
      else decoded++;
    }
    expect(rejected).toBeGreaterThan(30);
    expect(decoded).toBeGreaterThan(30);
  });
});
