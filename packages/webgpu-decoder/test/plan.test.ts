/** Host planning without a GPU: windows, leaf ranges, compaction, the upload region's layout. */
import { describe, expect, it } from "vitest";
import { LEAF_WORDS, parse, tiling, type Shape } from "@sgfp4/format";
import { Rng, generateValid } from "@sgfp4/testkit";
import { compactLeaves, compactSize, firstLeafOf, geometryPayloadBytes, planWindows } from "../src/plan.js";
import { PIECE_ALIGN, planJob, writeJob, type JobLimits } from "../src/job.js";

const SHAPES: Shape[] = [[1, 1], [3, 200], [65, 63], [130, 70], [64, 64], [200, 3], [129, 257], [64, 8192]];

describe("planWindows", () => {
  for (const shape of SHAPES) {
    for (const maxElems of [64, 128, 64 * 200, 64 * 8192, 2 ** 24]) {
      it(`[${shape}] in windows of ${maxElems} elements: every element once, every touched block dispatched`, () => {
        const [rows, cols] = shape;
        const { tilesX } = tiling(shape);
        const windows = planWindows(shape, maxElems);
        let next = 0;
        for (const w of windows) {
          expect(w.outBase).toBe(next);
          expect(w.outCount).toBeGreaterThan(0);
          expect(w.outCount).toBeLessThanOrEqual(maxElems);
          next += w.outCount;
          // the macroblocks of the window's first and last elements are inside its block range
          for (const e of [w.outBase, w.outBase + w.outCount - 1]) {
            const b = Math.floor(Math.floor(e / cols) / 64) * tilesX + Math.floor((e % cols) / 64);
            expect(b).toBeGreaterThanOrEqual(w.firstBlock);
            expect(b).toBeLessThan(w.firstBlock + w.blockCount);
          }
        }
        expect(next).toBe(rows * cols);
      });
    }
  }

  it("uses whole macroblock rows when one fits", () => {
    expect(planWindows([130, 70], 64 * 70 * 2)).toEqual([
      { outBase: 0, outCount: 128 * 70, firstBlock: 0, blockCount: 4 },
      { outBase: 128 * 70, outCount: 2 * 70, firstBlock: 4, blockCount: 2 },
    ]);
  });

  it("refuses windows that are not a multiple of 64 elements", () => {
    expect(() => planWindows([1, 1], 100)).toThrow(RangeError);
  });
});

describe("leaf ranges and compaction", () => {
  it("firstLeafOf finds each block's first leaf (v2 random containers)", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const c = parse(generateValid(new Rng(seed), { profile: "v2", shape: [130, 257] }).bytes, { profile: "v2", shape: [130, 257] });
      for (let b = 0; b <= c.blockCount; b++) expect(firstLeafOf(c.leafTable, b)).toBe(b < c.blockCount ? c.blocks[b]!.firstLeaf : c.leafCount);
    }
  });

  it("compactLeaves packs payloads 16-byte aligned and points word 3 at them", () => {
    const shape: Shape = [65, 63];
    const bytes = generateValid(new Rng(7), { profile: "v2", shape }).bytes;
    const t = parse(bytes, { profile: "v2", shape }).leafTable;
    const l0 = 1;
    const l1 = t.length / LEAF_WORDS;
    const size = compactSize(t, l0, l1);
    const payload = new Uint8Array(size.payload);
    const leaves = new Uint32Array(size.leaves / 4);
    compactLeaves(bytes, t, l0, l1, payload, leaves);
    for (let i = l0; i < l1; i++) {
      const k = (i - l0) * LEAF_WORDS;
      expect(Array.from(leaves.subarray(k, k + 3))).toEqual(Array.from(t.subarray(i * LEAF_WORDS, i * LEAF_WORDS + 3))); // all but the payload word
      expect(leaves[k + 3]! % 16).toBe(0);
      const n = geometryPayloadBytes(t[i * LEAF_WORDS + 1]!);
      const from = t[i * LEAF_WORDS + 3]!;
      expect(payload.subarray(leaves[k + 3]!, leaves[k + 3]! + n)).toEqual(bytes.subarray(from, from + n));
    }
  });
});

describe("planJob / writeJob", () => {
  const limits: JobLimits = { maxChunkBytes: 2 ** 27, maxBinding: 2 ** 27, maxBuffer: 2 ** 28, maxInputBytes: Infinity, maxWorkgroupsPerDimension: 65535 };
  const shape: Shape = [130, 70];
  const bytes = generateValid(new Rng(3), { profile: "v2", shape }).bytes;
  const stream = (() => {
    const c = parse(bytes, { profile: "v2", shape });
    return { profile: c.profile, shape: c.shape, leafTable: c.leafTable };
  })();

  it("one window: parameters, then the container and the leaf table, each 256-byte aligned", () => {
    const job = planJob("t", bytes, stream, "f32", limits);
    expect(job.windows).toHaveLength(1);
    const w = job.windows[0]!;
    expect([w.params, w.payload.offset % PIECE_ALIGN, w.leaves.offset % PIECE_ALIGN]).toEqual([0, 0, 0]);
    const region = new Uint8Array(job.regionBytes);
    writeJob(job, region, limits);
    expect(region.subarray(w.payload.offset, w.payload.offset + bytes.length)).toEqual(bytes);
    expect(new Uint32Array(region.buffer, w.leaves.offset, stream.leafTable.length)).toEqual(stream.leafTable);
    const p = new Uint32Array(region.buffer, w.params, 16);
    // rows, cols, tilesX, firstBlock, blockCount, groupsX, leafBase, outBase, outCount, outOrigin, leafCount, leafEnd
    expect(Array.from(p.subarray(0, 12))).toEqual([130, 70, 2, 0, 6, 6, 0, 0, 130 * 70, 0, stream.leafTable.length / 4, stream.leafTable.length / 4]);
  });

  it("half outputs in 64-element windows: each binding starts at the 256-byte boundary before its window", () => {
    const job = planJob("t", bytes, stream, "f16", { ...limits, maxChunkBytes: 256 });
    const region = new Uint8Array(job.regionBytes);
    writeJob(job, region, limits);
    for (const w of job.windows) {
      const p = new Uint32Array(region.buffer, w.params, 16);
      expect(p[7]).toBe(w.outBase);
      expect(((w.outBase - p[9]!) * 2) % 256).toBe((w.outBase * 2) % 256);
      expect(p[9]! % 4).toBe(0);
    }
  });

  it("over maxInputBytes: each window gets its own compact inputs and leaf base", () => {
    const job = planJob("t", bytes, stream, "f32", { ...limits, maxChunkBytes: 64 * 4 * 70, maxInputBytes: 256 });
    expect(job.compacted).toBe(true);
    expect(job.windows.length).toBeGreaterThan(1);
    expect(job.windows.map((w) => w.leafBase)).toEqual(job.windows.map((w) => w.l0));
  });

  it("inputs over the device's largest buffer: LIMIT_EXCEEDED", () => {
    expect(() => planJob("t", bytes, stream, "f32", { ...limits, maxBuffer: 1024 })).toThrow(/LIMIT_EXCEEDED.*maxBufferSize/);
  });

  it("a window's inputs over the binding limit: LIMIT_EXCEEDED", () => {
    expect(() => planJob("t", bytes, stream, "f32", { ...limits, maxBinding: 256, maxInputBytes: 256 })).toThrow(/LIMIT_EXCEEDED/);
  });
});
