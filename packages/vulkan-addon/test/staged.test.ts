/**
 * The discrete-GPU path (run by `pnpm test` under SGFP4_VULKAN_FORCE_STAGING=1 on lavapipe):
 * decodes in several submissions on both routes (direct: host-visible inputs and output; staged:
 * device buffers and GPU copies), `decode` / `decodeAsync` handing over the pooled
 * readback memory as the result (returned to the pool when the array is collected), decoder reuse
 * after a rejection. On a unified-memory device (the plain run) the same calls take the other
 * path and must give the same bits.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Sgfp4Error, type Shape } from "@sgfp4/format";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { decode, decodeAsync, decodeInto, decodeIntoAsync, nativeAddon, releaseBuffers } from "../src/index.js";
import { convertAll, toBf16, toF16 } from "./half-reference.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const staged = !!process.env.SGFP4_VULKAN_FORCE_STAGING;
const stats = () => nativeAddon().stats();
const turn = () => new Promise((r) => setImmediate(r));
/** Collects garbage and lets the external buffers' finalizers run (they are queued to the event loop). */
async function collect(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    gc();
    await turn();
  }
}

afterEach(() => {
  delete process.env.SGFP4_VULKAN_STAGE_BYTES;
  delete process.env.SGFP4_VULKAN_DIRECT;
  delete process.env.SGFP4_VULKAN_LEAF_TABLE;
  delete process.env.SGFP4_VULKAN_PARSE_COPY;
});

// 320 x 1030 float32: 1.26 MiB, over the hand-over threshold (1 MiB); five macroblock rows.
const SHAPE: Shape = [320, 1030];

/** Every call (decode, decodeInto, both async) and format (f32, f16, bf16) gives the bits of construction. */
async function everyCallAndFormat(seed: number, profile: "v1" | "v2"): Promise<void> {
  const built = generateValid(new Rng(seed), { profile, shape: SHAPE });
  const opts = { profile, shape: SHAPE };
  expect(firstBitDifference(decode(built.bytes, opts), built.expected)).toBe(-1);
  expect(firstBitDifference(await decodeAsync(built.bytes, opts), built.expected)).toBe(-1);
  const into = new Float32Array(SHAPE[0] * SHAPE[1]).fill(NaN);
  decodeInto(built.bytes, opts, into);
  expect(firstBitDifference(into, built.expected)).toBe(-1);
  const intoAsync = new Float32Array(SHAPE[0] * SHAPE[1]).fill(NaN);
  await decodeIntoAsync(built.bytes, opts, intoAsync);
  expect(firstBitDifference(intoAsync, built.expected)).toBe(-1);
  for (const [format, to] of [["f16", toF16], ["bf16", toBf16]] as const) {
    const want = convertAll(built.expected, to);
    expect(Buffer.compare(Buffer.from((decode(built.bytes, { ...opts, format }) as Uint16Array).buffer), Buffer.from(want.buffer))).toBe(0);
    const half = new Uint16Array(want.length).fill(0xffff);
    decodeInto(built.bytes, { ...opts, format }, half);
    expect(Buffer.compare(Buffer.from(half.buffer), Buffer.from(want.buffer))).toBe(0);
  }
}

describe("decodes in stages give the bits of construction", () => {
  for (const profile of ["v1", "v2"] as const) {
    it(`${profile}, staged route (SGFP4_VULKAN_DIRECT=0), one stage per macroblock row: every call and format`, async () => {
      process.env.SGFP4_VULKAN_STAGE_BYTES = "1"; // each stage is one macroblock row
      process.env.SGFP4_VULKAN_DIRECT = "0";
      await everyCallAndFormat(profile === "v1" ? 901 : 902, profile);
    });
  }

  for (const profile of ["v1", "v2"] as const) {
    for (const stageBytes of ["1", undefined]) {
      const stages = stageBytes ? "one stage per macroblock row" : "default stages";
      it(`${profile}, direct route (the default: inputs and output in host-visible memory), ${stages}: every call and format`, async () => {
        if (stageBytes) process.env.SGFP4_VULKAN_STAGE_BYTES = stageBytes;
        await everyCallAndFormat(profile === "v1" ? 903 : 904, profile);
      });
    }
  }

  it("v2, direct route, the leaf table on the heap and copied into upload memory (SGFP4_VULKAN_LEAF_TABLE=copy, as before it was parsed there): every call and format", async () => {
    process.env.SGFP4_VULKAN_LEAF_TABLE = "copy";
    process.env.SGFP4_VULKAN_STAGE_BYTES = "1";
    await everyCallAndFormat(906, "v2");
  });

  it("decodeAsync handing over (its input copied into the upload memory the kernel reads): overwriting bytes right after the call changes nothing", async () => {
    process.env.SGFP4_VULKAN_STAGE_BYTES = "1";
    const built = generateValid(new Rng(905), { profile: "v2", shape: SHAPE });
    const bytes = built.bytes.slice();
    const pending = decodeAsync(bytes, { profile: "v2", shape: SHAPE });
    bytes.fill(0xff);
    expect(firstBitDifference(await pending, built.expected)).toBe(-1);
  });

  it("a stage size over the whole output (one stage) and the default give the same bits", () => {
    process.env.SGFP4_VULKAN_DIRECT = "0";
    const built = generateValid(new Rng(903), { profile: "v2", shape: SHAPE });
    const a = decode(built.bytes, { profile: "v2", shape: SHAPE });
    process.env.SGFP4_VULKAN_STAGE_BYTES = String(1 << 30);
    const b = decode(built.bytes, { profile: "v2", shape: SHAPE });
    expect(firstBitDifference(a, built.expected)).toBe(-1);
    expect(firstBitDifference(b, built.expected)).toBe(-1);
  });
});

describe("results over pooled memory", () => {
  it("two live results never share memory; a collected result's buffer serves the next decode", async () => {
    releaseBuffers();
    await collect();
    const x = generateValid(new Rng(911), { profile: "v2", shape: SHAPE });
    const y = generateValid(new Rng(912), { profile: "v2", shape: SHAPE });
    const opts = { profile: "v2" as const, shape: SHAPE };
    let first: Float32Array | null = decode(x.bytes, opts);
    const second = await decodeAsync(y.bytes, opts);
    expect(firstBitDifference(first, x.expected)).toBe(-1); // not overwritten by the second decode
    expect(firstBitDifference(second, y.expected)).toBe(-1);
    second.fill(1); // the caller's memory to write
    expect(firstBitDifference(first, x.expected)).toBe(-1);
    const idleWhileHeld = stats().idleBuffers;
    first = null;
    await collect();
    if (staged) expect(stats().idleBuffers).toBe(idleWhileHeld + 1); // the result's readback is back in the pool
    const made = stats().buffersMade;
    const third = decode(x.bytes, opts);
    expect(firstBitDifference(third, x.expected)).toBe(-1);
    expect(stats().buffersMade).toBe(made); // every buffer of this call came from the pool
    expect(second[0]).toBe(1);
  });

  it("a result outlives releaseBuffers() (it is lent, not idle) and stays correct", async () => {
    const x = generateValid(new Rng(913), { profile: "v1", shape: SHAPE });
    const r = decode(x.bytes, { profile: "v1", shape: SHAPE });
    releaseBuffers();
    await collect();
    expect(firstBitDifference(r, x.expected)).toBe(-1);
  });
});

describe("command pools, buffers and fences are kept for the next submissions", () => {
  it("a staged decode of five stages leaves them idle; repeating it creates none and keeps at most 32", async () => {
    process.env.SGFP4_VULKAN_STAGE_BYTES = "1";
    const built = generateValid(new Rng(931), { profile: "v2", shape: SHAPE });
    const opts = { profile: "v2" as const, shape: SHAPE };
    expect(firstBitDifference(decode(built.bytes, opts), built.expected)).toBe(-1);
    const idle = stats().idleSubmissions;
    expect(idle).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 3; i++) {
      const into = new Float32Array(SHAPE[0] * SHAPE[1]);
      decodeInto(built.bytes, opts, into);
      expect(firstBitDifference(into, built.expected)).toBe(-1);
      expect(firstBitDifference(await decodeAsync(built.bytes, opts), built.expected)).toBe(-1);
    }
    expect(stats().idleSubmissions).toBe(idle); // every submission came from (and went back to) the idle ones
    expect(stats().idleSubmissions).toBeLessThanOrEqual(32);
  });

  for (const depth of ["1", "4"]) {
    it(`${depth} stage(s) in flight: the same bits`, () => {
      process.env.SGFP4_VULKAN_STAGE_BYTES = "1";
      process.env.SGFP4_VULKAN_STAGES_IN_FLIGHT = depth;
      try {
        const built = generateValid(new Rng(940 + Number(depth)), { profile: "v1", shape: SHAPE });
        const into = new Float32Array(SHAPE[0] * SHAPE[1]).fill(NaN);
        decodeInto(built.bytes, { profile: "v1", shape: SHAPE }, into);
        expect(firstBitDifference(into, built.expected)).toBe(-1);
        expect(firstBitDifference(decode(built.bytes, { profile: "v1", shape: SHAPE }), built.expected)).toBe(-1);
      } finally {
        delete process.env.SGFP4_VULKAN_STAGES_IN_FLIGHT;
      }
    });
  }
});

describe("a stream over 1 MiB: the parser splits its records over the work pool", () => {
  const shape: Shape = [1024, 2048];
  const built = generateValid(new Rng(951), { profile: "v2", shape });
  it("decodes to construction", async () => {
    expect(built.bytes.length).toBeGreaterThan(1 << 20); // the parallel parse's threshold
    expect(firstBitDifference(decode(built.bytes, { profile: "v2", shape }), built.expected)).toBe(-1);
    expect(firstBitDifference(await decodeAsync(built.bytes, { profile: "v2", shape }), built.expected)).toBe(-1);
  });
  it("decodeAsync: its input copied into upload memory by the parse's ranges, or after it (SGFP4_VULKAN_PARSE_COPY=0): the same bits, and overwriting the input after the call changes nothing", async () => {
    const opts = { profile: "v2" as const, shape };
    for (const knob of ["0", undefined]) {
      if (knob) process.env.SGFP4_VULKAN_PARSE_COPY = knob;
      else delete process.env.SGFP4_VULKAN_PARSE_COPY;
      const bytes = built.bytes.slice();
      const pending = decodeAsync(bytes, opts);
      bytes.fill(0xff);
      expect(firstBitDifference(await pending, built.expected)).toBe(-1);
    }
  });
  it("two faults in different ranges: the first record's fault is reported, as a sequential parse does", () => {
    const B = (shape[0] / 64) * (shape[1] / 64);
    const bad = built.bytes.slice();
    const dv = new DataView(bad.buffer);
    dv.setUint32(16 + 4 * (B - 3), dv.getUint32(16 + 4 * (B - 3), true) + 8, true); // late: misaligned
    dv.setUint32(16 + 4 * 40, dv.getUint32(16 + 4 * 39, true), true); // early: not above record 39
    const native = nativeParseError(bad, shape);
    expect(native.code).toBe("NONMONOTONIC_OFFSET");
    expect(native.message).toContain("at record 40,");
    expect(() => decode(bad, { profile: "v2", shape })).toThrow(expect.objectContaining({ code: "NONMONOTONIC_OFFSET" }));
  });
  it("faults in two ranges' leaf headers (found while the table is filled, into upload memory on the direct route): the earlier record's", async () => {
    const B = (shape[0] / 64) * (shape[1] / 64);
    const bad = built.bytes.slice();
    const dv = new DataView(bad.buffer);
    const base = (16 + 4 * B + 15) & ~15;
    const firstHeader = (b: number) => {
      const start = base + dv.getUint32(16 + 4 * b, true);
      return start + (dv.getUint32(start, true) === 4 ? 16 : 4);
    };
    const late = firstHeader(B - 2), early = firstHeader(100);
    dv.setUint32(late, dv.getUint32(late, true) | 4, true); // late: a reserved flag bit
    dv.setUint32(early, (dv.getUint32(early, true) & 0x0000ffff) | 0x7c000000, true); // early: an Inf scale
    const native = nativeParseError(bad, shape);
    expect(native.code).toBe("NONFINITE_PARAMETER");
    expect(native.message).toContain("at record 100,");
    const opts = { profile: "v2" as const, shape };
    expect(() => decode(bad, opts)).toThrow(expect.objectContaining({ code: "NONFINITE_PARAMETER" }));
    await expect(decodeAsync(bad, opts)).rejects.toMatchObject({ code: "NONFINITE_PARAMETER" });
    expect(() => decodeInto(bad, opts, new Float32Array(shape[0] * shape[1]))).toThrow(expect.objectContaining({ code: "NONFINITE_PARAMETER" }));
    expect(firstBitDifference(decode(built.bytes, opts), built.expected)).toBe(-1);
  });
});

describe("after a rejection the staged decoder goes on", () => {
  it("a corrupt stream between good decodes: its code, then the same bits as before", async () => {
    process.env.SGFP4_VULKAN_STAGE_BYTES = "1";
    const good = generateValid(new Rng(921), { profile: "v2", shape: SHAPE });
    const opts = { profile: "v2" as const, shape: SHAPE };
    const bad = good.bytes.slice();
    new DataView(bad.buffer).setUint32(16 + 4 * 7, 3, true); // record 7's offset: not a multiple of 16
    expect(firstBitDifference(decode(good.bytes, opts), good.expected)).toBe(-1);
    expect(() => decode(bad, opts)).toThrow(expect.objectContaining({ code: "MISALIGNED_OFFSET" }));
    await expect(decodeAsync(bad, opts)).rejects.toBeInstanceOf(Sgfp4Error);
    const into = new Float32Array(SHAPE[0] * SHAPE[1]).fill(5);
    expect(() => decodeInto(bad, opts, into)).toThrow(expect.objectContaining({ code: "MISALIGNED_OFFSET" }));
    expect(into.every((v) => v === 5)).toBe(true); // rejected before anything was written
    expect(firstBitDifference(decode(good.bytes, opts), good.expected)).toBe(-1);
    expect(firstBitDifference(await decodeAsync(good.bytes, opts), good.expected)).toBe(-1);
  });

  // On the direct route the parser writes the v2 leaf table straight into pooled upload memory,
  // taken once the records are counted: a fault found after that must give it back.
  it("a fault found after the leaf table is sized (a reserved bit in the last record's first leaf header): its code, nothing written, no buffer kept", async () => {
    const good = generateValid(new Rng(922), { profile: "v2", shape: SHAPE });
    const opts = { profile: "v2" as const, shape: SHAPE };
    const bad = good.bytes.slice();
    const dv = new DataView(bad.buffer);
    const B = Math.ceil(SHAPE[0] / 64) * Math.ceil(SHAPE[1] / 64);
    const start = ((16 + 4 * B + 15) & ~15) + dv.getUint32(16 + 4 * (B - 1), true);
    const header = start + (dv.getUint32(start, true) === 4 ? 16 : 4); // MIXED: after the split map
    dv.setUint32(header, dv.getUint32(header, true) | 2, true);
    const into = new Float32Array(SHAPE[0] * SHAPE[1]).fill(NaN);
    decodeInto(good.bytes, opts, into); // the device and its pooled buffers, made once
    expect(firstBitDifference(into, good.expected)).toBe(-1);
    const made = stats().buffersMade;
    for (let i = 0; i < 3; i++) {
      expect(() => decode(bad, opts)).toThrow(expect.objectContaining({ code: "RESERVED_BITS" }));
      await expect(decodeAsync(bad, opts)).rejects.toMatchObject({ code: "RESERVED_BITS" });
      into.fill(5);
      expect(() => decodeInto(bad, opts, into)).toThrow(expect.objectContaining({ code: "RESERVED_BITS" }));
      expect(into.every((v) => v === 5)).toBe(true);
    }
    decodeInto(good.bytes, opts, into);
    expect(firstBitDifference(into, good.expected)).toBe(-1);
    expect(stats().buffersMade).toBe(made); // every buffer the rejected calls took went back to the pool
  });
});

/** The error the addon's native parse throws for a v2 stream (code and message), or {} when it accepts it. */
function nativeParseError(bytes: Uint8Array, shape: readonly [number, number]): { code?: string; message?: string } {
  try {
    nativeAddon().parse(bytes, "v2", shape[0], shape[1]);
    return {};
  } catch (e) {
    return e as { code?: string; message?: string };
  }
}
