// The wasm validator (native/decode.c validate_v1/validate_v2) against @sgfp4/format's parse():
// it must never accept a stream parse() rejects, and when both accept the leaf tables must be
// identical word for word. Inputs: the golden vectors, random valid containers and mutations of
// them (the fuzzer's generator and mutator), plus single-byte corruptions of every golden vector.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, tiling } from "@sgfp4/format";
import { WINDOW_UNDECIDED, validateInMemory, validateWindowed, validatedLayout, windowedLayout } from "../src/layouts.js";
import { instantiate, kernelModule, pagesFor } from "../src/kernel.js";
import { buildLeafTable, recordRanges, validateLeafTable, validateRecordRange } from "../src/validate.js";
import { Rng, generateValid, mutate } from "@sgfp4/testkit";
import { LAYOUT } from "@sgfp4/format";
import { corruptPadding, errorCode, parseOrNull, vectors, vectorsDir } from "./helpers.js";

type Profile = "v1" | "v2";

/** Returns a description of the disagreement, or "" when the two agree. */
function disagreement(bytes: Uint8Array, profile: Profile, shape: readonly [number, number]): string {
  const parsed = parseOrNull(bytes, profile, shape);
  const B = tiling(shape).blockCount;
  const wasm = validateLeafTable(bytes, { profile, shape });
  if (!parsed) return wasm ? "wasm accepted a stream parse() rejects" : "";
  if (!wasm) return "wasm rejected a stream parse() accepts";
  const table = wasm.leafTable;
  if (table.length !== parsed.leafTable.length || wasm.leafCount !== parsed.leafCount) return `leaf count ${wasm.leafCount} vs ${parsed.leafCount}`;
  for (let i = 0; i < table.length; i++) {
    if (table[i] !== parsed.leafTable[i]) return `table word ${i}: 0x${table[i]!.toString(16)} vs 0x${parsed.leafTable[i]!.toString(16)}`;
  }
  for (let b = 0; b < B; b++) if (wasm.blockFirst[b] !== parsed.blocks[b]!.firstLeaf) return `block ${b} first leaf`;
  if (wasm.blockFirst[B] !== parsed.leafCount) return "leaf count word";
  return "";
}

describe("wasm validator vs parse()", () => {
  it("agrees on every golden vector (accepts the decode ones, rejects the reject ones)", () => {
    expect(vectors.length).toBeGreaterThan(100);
    let accepted = 0;
    for (const v of vectors) {
      const bytes = new Uint8Array(readFileSync(join(vectorsDir, v.container)));
      expect(disagreement(bytes, v.profile, v.shape), v.id).toBe("");
      const wasm = validateLeafTable(bytes, { profile: v.profile, shape: v.shape });
      expect(wasm !== null, v.id).toBe(v.expect.decode !== undefined);
      if (wasm) accepted++;
    }
    expect(accepted).toBeGreaterThan(40);
  }, 60_000);

  it("agrees on single-byte corruptions of every golden vector", () => {
    const rng = new Rng(7, 1);
    let rejected = 0;
    for (const v of vectors) {
      const original = new Uint8Array(readFileSync(join(vectorsDir, v.container)));
      for (let k = 0; k < 40 && original.length > 0; k++) {
        const bytes = original.slice();
        // mostly the header region, where the rules are
        const at = rng.chance(0.7) ? rng.int(0, Math.min(bytes.length, 256) - 1) : rng.int(0, bytes.length - 1);
        bytes[at] = rng.chance(0.5) ? bytes[at]! ^ (1 << rng.int(0, 7)) : rng.int(0, 255);
        const why = disagreement(bytes, v.profile, v.shape);
        expect(why, `${v.id} byte ${at}`).toBe("");
        if (!parseOrNull(bytes, v.profile, v.shape)) rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(500); // the corruptions do hit reject rules
  }, 60_000);

  it("agrees on 3000 random valid containers and 6000 mutations of them", () => {
    const rng = new Rng(20240611, 2);
    let validAccepted = 0;
    let mutatedRejected = 0;
    let mutatedAccepted = 0;
    for (let i = 0; i < 3000; i++) {
      const c = generateValid(rng, { maxTiles: 3 });
      expect(disagreement(c.bytes, c.profile, c.shape), `valid case ${i}`).toBe("");
      if (parseOrNull(c.bytes, c.profile, c.shape)) validAccepted++;
      for (let j = 0; j < 2; j++) {
        const m = mutate(rng, c);
        expect(disagreement(m.bytes, m.profile, m.shape), `case ${i} ${m.ops.join(",")}`).toBe("");
        if (parseOrNull(m.bytes, m.profile, m.shape)) mutatedAccepted++;
        else mutatedRejected++;
      }
    }
    expect(validAccepted).toBe(3000);
    expect(mutatedRejected).toBeGreaterThan(2000);
    expect(mutatedAccepted).toBeGreaterThan(100);
  }, 120_000);

  it("v2 copied and validated in slices (validate_v2_from stops and resumes at any slice edge): parse()'s verdict and leaf table", () => {
    const rng = new Rng(20261205, 6);
    let resumed = 0;
    for (let i = 0; i < 400; i++) {
      const c = generateValid(rng, { profile: "v2", maxTiles: 4 });
      const cases = [c.bytes, mutate(rng, c).bytes, corruptPadding(rng, c.bytes, c.shape) ?? c.bytes];
      for (const bytes of cases) {
        const B = tiling(c.shape).blockCount;
        if (bytes.length < 16 + 4 * B) continue; // the fast route leaves these to parse()
        const layout = validatedLayout(0, "v2", bytes.length, B);
        const memory = new WebAssembly.Memory({ initial: pagesFor(layout.totalBytes) });
        const kernel = instantiate(kernelModule()!, memory);
        const slice = rng.int(1, 300);
        if (bytes.length > 32 + 4 * B + slice) resumed++;
        const count = validateInMemory(kernel, memory.buffer, bytes, "v2", B, layout, 0, slice);
        const parsed = parseOrNull(bytes, "v2", c.shape);
        expect(count >= 0, `case ${i} slice ${slice}: verdict`).toBe(parsed !== null);
        if (!parsed) continue;
        expect(count).toBe(parsed.leafCount);
        expect(Array.from(new Uint32Array(memory.buffer, layout.tableAt, count * 4)), `case ${i} table`).toEqual(Array.from(parsed.leafTable));
        const first = new Uint32Array(memory.buffer, layout.blockFirstAt, B + 1);
        for (let b = 0; b < B; b++) expect(first[b], `case ${i} block ${b}`).toBe(parsed.blocks[b]!.firstLeaf);
        expect(first[B]).toBe(parsed.leafCount);
      }
    }
    expect(resumed).toBeGreaterThan(600);
  }, 120_000);

  it("v2 validated through a sliding window (validate_v2_window, buildLeafTable's route) of any size: parse()'s verdict and leaf table, or undecided", () => {
    const rng = new Rng(20261206, 15);
    const seen = { windows: 0, undecided: 0, judged: 0 };
    for (let i = 0; i < 500; i++) {
      const c = generateValid(rng, { profile: "v2", maxTiles: 4 });
      const cases = [c.bytes, mutate(rng, c).bytes, mutate(rng, c).bytes, corruptPadding(rng, c.bytes, c.shape) ?? c.bytes];
      for (const bytes of cases) {
        const B = tiling(c.shape).blockCount;
        const windowBytes = rng.chance(0.2) ? rng.int(16, 600) : rng.int(600, 12000);
        const layout = windowedLayout(bytes.length, B, windowBytes);
        const memory = new WebAssembly.Memory({ initial: pagesFor(layout.totalBytes) });
        const kernel = instantiate(kernelModule()!, memory);
        const addrBase = rng.chance(0.5) ? 0 : 16 * rng.int(1, 1000);
        if (bytes.length > layout.headBytes + layout.windowBytes) seen.windows++;
        const count = validateWindowed(kernel, memory.buffer, bytes, B, layout, addrBase);
        if (count === WINDOW_UNDECIDED) {
          seen.undecided++; // a record longer than the window: the caller copies the stream whole instead
          continue;
        }
        seen.judged++;
        const parsed = parseOrNull(bytes, "v2", c.shape);
        expect(count >= 0, `case ${i} window ${windowBytes}: verdict`).toBe(parsed !== null);
        if (!parsed) continue;
        expect(count).toBe(parsed.leafCount);
        const want = Array.from(parsed.leafTable, (w, k) => (k % 4 === 3 ? (w + addrBase) >>> 0 : w));
        expect(Array.from(new Uint32Array(memory.buffer, layout.tableAt, count * 4)), `case ${i} window ${windowBytes} table`).toEqual(want);
        const first = new Uint32Array(memory.buffer, layout.blockFirstAt, B + 1);
        for (let b = 0; b < B; b++) expect(first[b], `case ${i} block ${b}`).toBe(parsed.blocks[b]!.firstLeaf);
        expect(first[B]).toBe(parsed.leafCount);
      }
    }
    expect(seen.windows).toBeGreaterThan(800);
    expect(seen.undecided).toBeGreaterThan(50);
    expect(seen.judged).toBeGreaterThan(900);
  }, 120_000);

  it("validateLeafTable through a window of any size, whole-stream copy where a record is longer than it: parse()'s verdict and table, in arrays of their own", () => {
    const rng = new Rng(20261206, 16);
    for (let i = 0; i < 300; i++) {
      const c = generateValid(rng, { profile: "v2", maxTiles: 3 });
      const opts = { profile: "v2" as const, shape: c.shape };
      for (const bytes of [c.bytes, mutate(rng, c).bytes]) {
        const windowBytes = rng.pick([16, rng.int(16, 3000), 1 << 19]);
        const parsed = parseOrNull(bytes, "v2", c.shape);
        const table = validateLeafTable(bytes, opts, windowBytes);
        expect(table !== null, `case ${i} window ${windowBytes}: verdict`).toBe(parsed !== null);
        if (!table || !parsed) continue;
        expect(Array.from(table.leafTable), `case ${i}`).toEqual(Array.from(parsed.leafTable));
        expect(table.leafTable.buffer.byteLength, `case ${i}: an array of its own`).toBe(parsed.leafCount * 16);
        expect(Array.from(table.blockFirst), `case ${i}`).toEqual([...parsed.blocks.map((b) => b.firstLeaf), parsed.leafCount]);
        expect(table.blockFirst.buffer.byteLength).toBe(4 * (parsed.blockCount + 1));
      }
    }
  }, 60_000);

  it("buildLeafTable of a table of 1 MiB and more (copied into uninitialised memory in Node): parse()'s table, arrays of their own", () => {
    const rng = new Rng(20261206, 17);
    const c = generateValid(rng, { profile: "v2", shape: [1024, 1024], layouts: [LAYOUT.FULL_4x4] });
    const opts = { profile: "v2" as const, shape: c.shape };
    const parsed = parse(c.bytes, opts);
    expect(parsed.leafCount * 16).toBeGreaterThanOrEqual(1 << 20);
    for (let k = 0; k < 3; k++) {
      const table = buildLeafTable(c.bytes, opts);
      expect(table.leafTable.buffer.byteLength).toBe(parsed.leafCount * 16);
      expect(Buffer.from(table.leafTable.buffer).equals(Buffer.from(parsed.leafTable.buffer, parsed.leafTable.byteOffset, parsed.leafTable.byteLength))).toBe(true);
      expect(Array.from(table.blockFirst)).toEqual([...parsed.blocks.map((b) => b.firstLeaf), parsed.leafCount]);
    }
  });

  it("v2 split into record ranges (validateRecordRange): every part accepted only when parse() accepts, and the parts joined are its leaf table", () => {
    const rng = new Rng(20261205, 11);
    const seen = { joined: 0, refused: 0, multi: 0 };
    for (let i = 0; i < 400; i++) {
      const c = generateValid(rng, { profile: "v2", maxTiles: 4 });
      const cases = [c.bytes, mutate(rng, c).bytes, mutate(rng, c).bytes, corruptPadding(rng, c.bytes, c.shape) ?? c.bytes];
      for (const bytes of cases) {
        const opts = { profile: "v2" as const, shape: c.shape };
        const ranges = recordRanges(bytes, opts, rng.int(1, 6));
        if (!ranges) continue; // the fast route leaves these to parse()
        const B = tiling(c.shape).blockCount;
        expect(ranges[0]!.b0).toBe(0);
        expect(ranges.at(-1)!.b1).toBe(B);
        ranges.forEach((r, k) => k && expect(r.b0).toBe(ranges[k - 1]!.b1));
        if (ranges.length > 1) seen.multi++;
        const parts = ranges.map((r) => validateRecordRange(bytes, opts, r));
        const parsed = parseOrNull(bytes, "v2", c.shape);
        if (parts.some((p) => p === null)) {
          seen.refused++; // the caller validates the whole stream instead: no verdict here
          continue;
        }
        expect(parsed, `case ${i}: every range accepted a stream parse() rejects`).not.toBeNull();
        const joined = parts.flatMap((p) => Array.from(p!));
        expect(joined, `case ${i} joined table`).toEqual(Array.from(parsed!.leafTable));
        seen.joined++;
      }
    }
    expect(seen.joined).toBeGreaterThan(300);
    expect(seen.refused).toBeGreaterThan(200);
    expect(seen.multi).toBeGreaterThan(300);
  }, 120_000);

  it("agrees per layout (the four-at-a-time leaf paths, the MIXED level walk): valid, mutated, padding, header and split-map faults", () => {
    const rng = new Rng(20261204, 5);
    const faults = { header: 0, map: 0, padding: 0 };
    for (const layout of [LAYOUT.MIXED, LAYOUT.FULL_4x4, LAYOUT.UNIFORM_8, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_64]) {
      for (let i = 0; i < 150; i++) {
        const shape: [number, number] | undefined = rng.chance(0.6) ? [64 * rng.int(1, 2), 64 * rng.int(1, 3)] : undefined;
        const c = generateValid(rng, { profile: "v2", maxTiles: 3, layouts: [layout], ...(shape ? { shape } : {}) });
        const what = `layout ${layout} case ${i}`;
        expect(disagreement(c.bytes, "v2", c.shape), what).toBe("");
        for (const m of [mutate(rng, c), mutate(rng, c)]) expect(disagreement(m.bytes, "v2", m.shape), `${what} ${m.ops.join(",")}`).toBe("");
        const parsed = parse(c.bytes, { profile: "v2", shape: c.shape });
        const block = rng.pick(parsed.blocks);
        // a leaf header made invalid (reserved bit, or an all-ones exponent in the scale or the bias), any lane of a group of four
        const leaf = block.firstLeaf + rng.int(0, block.leafCount - 1);
        const headerAt = block.offset + (block.layout === LAYOUT.MIXED ? 16 : 4) + 4 * (leaf - block.firstLeaf);
        const view = new DataView(c.bytes.buffer, c.bytes.byteOffset);
        expect((view.getUint32(headerAt, true) & 0xfffffff0) >>> 0, `${what}: header address`).toBe(parsed.leafTable[4 * leaf + 2]);
        const header = c.bytes.slice();
        const hv = new DataView(header.buffer);
        const h = hv.getUint32(headerAt, true);
        hv.setUint32(headerAt, rng.pick([h | (2 << rng.int(0, 2)), h | 0x7c000000, h | 0x7c00]) >>> 0, true);
        expect(parseOrNull(header, "v2", c.shape), `${what}: header fault`).toBeNull();
        expect(disagreement(header, "v2", c.shape), `${what} header`).toBe("");
        faults.header++;
        const padding = corruptPadding(rng, c.bytes, c.shape);
        if (padding) {
          expect(disagreement(padding, "v2", c.shape), `${what} padding`).toBe("");
          faults.padding++;
        }
        if (block.layout === LAYOUT.MIXED) {
          // one bit of the 96-bit split map flipped: a reached bit changes the tree (and the leaf count), an unreached one is a reject
          const map = c.bytes.slice();
          const bit = rng.int(0, 95);
          map[block.offset + 4 + (bit >> 3)]! ^= 1 << (bit & 7);
          expect(disagreement(map, "v2", c.shape), `${what} map bit ${bit}`).toBe("");
          faults.map++;
        }
      }
    }
    expect(faults.header).toBe(900);
    expect(faults.map).toBe(150);
    expect(faults.padding).toBeGreaterThan(150);
  }, 120_000);
});

describe("buildLeafTable (entry @sgfp4/cpu-decoder/validate)", () => {
  it("every golden vector: parse()'s leaf table and first leaves, or parse()'s exact error code", () => {
    for (const v of vectors) {
      const bytes = new Uint8Array(readFileSync(join(vectorsDir, v.container)));
      const opts = { profile: v.profile, shape: v.shape };
      if (v.expect.reject) {
        expect(errorCode(() => buildLeafTable(bytes, opts)), v.id).toBe(v.expect.reject);
        continue;
      }
      const got = buildLeafTable(bytes, opts);
      const parsed = parse(bytes, opts);
      expect([...got.leafTable], v.id).toEqual([...parsed.leafTable]);
      expect(got.leafCount).toBe(parsed.leafCount);
      expect([...got.blockFirst], v.id).toEqual([...parsed.blocks.map((b) => b.firstLeaf), parsed.leafCount]);
      expect([got.profile, got.tilesY, got.tilesX, [...got.shape]]).toEqual([parsed.profile, parsed.tilesY, parsed.tilesX, [...parsed.shape]]);
    }
  }, 60_000);
});
