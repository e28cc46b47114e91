// The decode routes built on the wasm validator (src/routes.ts and the one-pass v2 kernel) against
// @sgfp4/format's parse() and decodeReference: the same verdict, parse()'s exact error code, and
// the same bits, through every route (whole stream, windows, bands of each width, f16/bf16).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, tiling } from "@sgfp4/format";
import { BAND_MIN_OUTPUT_BYTES, WIDE_BAND_MIN_OUTPUT_BYTES } from "../src/layouts.js";
import { bandedDecodeV1, fusedDecodeV2, windowedDecodeV2 } from "./kernel-harness.js";
import { createOutput, decode, decodeInto, decodeReference } from "../src/index.js";
import { Rng, firstBitDifference, generateValid, mutate } from "@sgfp4/testkit";
import { LAYOUT, floatBitsToHalfBits, leafAt } from "@sgfp4/format";
import { corruptPadding, errorCode, parseOrNull, vectors, vectorsDir } from "./helpers.js";

describe("decode paths that use the wasm validator", () => {
  it("report each golden reject vector's exact code (decode, decodeInto plain and kernel-memory arrays)", () => {
    for (const v of vectors) {
      if (!v.expect.reject) continue;
      const bytes = new Uint8Array(readFileSync(join(vectorsDir, v.container)));
      const opts = { profile: v.profile, shape: v.shape };
      const elements = v.shape[0] * v.shape[1];
      expect(errorCode(() => decode(bytes, opts)), v.id).toBe(v.expect.reject);
      expect(errorCode(() => decodeInto(bytes, opts, new Float32Array(elements))), v.id).toBe(v.expect.reject);
      expect(errorCode(() => decodeInto(bytes, opts, createOutput(v.shape))), v.id).toBe(v.expect.reject);
    }
  }, 60_000);

  it("decode each golden decode vector to its expected bits (all three paths, profile auto too)", () => {
    for (const v of vectors) {
      if (!v.expect.decode) continue;
      const bytes = new Uint8Array(readFileSync(join(vectorsDir, v.container)));
      const file = readFileSync(join(vectorsDir, v.expect.decode.output));
      const expected = new Uint32Array(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength));
      const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
      const plain = new Float32Array(expected.length);
      const kmem = createOutput(v.shape);
      decodeInto(bytes, { profile: v.profile, shape: v.shape }, plain);
      decodeInto(bytes, { profile: "auto", shape: v.shape }, kmem);
      expect(bits(decode(bytes, { profile: v.profile, shape: v.shape })), v.id).toEqual(Array.from(expected));
      expect(bits(plain), v.id).toEqual(Array.from(expected));
      expect(bits(kmem), v.id).toEqual(Array.from(expected));
    }
  }, 60_000);
});

/**
 * The one-pass v2 path (validate_decode_v2: per-record validation, specialised expansion of
 * uniform records) against parse() and decodeReference: it must reject exactly what parse()
 * rejects, and decode what it accepts to the same bits. "" when they agree.
 */
function onePassDisagreement(bytes: Uint8Array, shape: readonly [number, number]): string {
  const parsed = parseOrNull(bytes, "v2", shape);
  const { tilesX, blockCount } = tiling(shape);
  const reference = parsed ? decodeReference(bytes, { profile: "v2", shape }) : null;
  // no band, a one-macroblock band (a copy per row), a band as wide as the tensor (one copy)
  for (const chunkBlocks of [0, 1, tilesX]) {
    const got = fusedDecodeV2(bytes, shape, tilesX, blockCount, chunkBlocks);
    if (!reference) {
      if (got) return `one pass (band ${chunkBlocks}) accepted a stream parse() rejects`;
      continue;
    }
    if (!got) return `one pass (band ${chunkBlocks}) rejected a stream parse() accepts`;
    const d = firstBitDifference(reference, got);
    if (d >= 0) return `band ${chunkBlocks}: first differing element ${d}`;
  }
  // decodeInto's route for createOutput() arrays: each macroblock row read through a window
  for (const chunkBlocks of [0, 1, tilesX]) {
    const got = windowedDecodeV2(bytes, shape, tilesX, blockCount, chunkBlocks);
    if (got === "no window") break;
    if (!reference) {
      if (got) return `windowed (band ${chunkBlocks}) accepted a stream parse() rejects`;
      continue;
    }
    if (!got) return `windowed (band ${chunkBlocks}) rejected a stream parse() accepts`;
    const d = firstBitDifference(reference, got);
    if (d >= 0) return `windowed band ${chunkBlocks}: first differing element ${d}`;
  }
  return "";
}

/**
 * A stream parse() must reject (the one-pass routes too, onePassDisagreement): `bytes` with a
 * reserved bit or an all-ones scale or bias exponent set in the header at `headerAt`.
 */
function expectHeaderFaultRejected(rng: Rng, bytes: Uint8Array, shape: readonly [number, number], headerAt: number, label: string): void {
  const header = bytes.slice();
  const hv = new DataView(header.buffer);
  const h = hv.getUint32(headerAt, true);
  hv.setUint32(headerAt, rng.pick([h | (2 << rng.int(0, 2)), h | 0x7c000000, h | 0x7c00]) >>> 0, true);
  expectRejected(header, shape, `${label}: header fault`);
}

/** parse() rejects `bytes`, and so does every one-pass route. */
function expectRejected(bytes: Uint8Array, shape: readonly [number, number], label: string): void {
  expect(parseOrNull(bytes, "v2", shape), label).toBeNull();
  expect(onePassDisagreement(bytes, shape), label).toBe("");
}


describe("one-pass v2 validate + decode (kernel-memory outputs) vs parse() and decodeReference", () => {
  const UNIFORM = [LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_8, LAYOUT.FULL_4x4];

  it("agrees on every v2 golden vector and 40 single-byte corruptions of each", () => {
    const rng = new Rng(11, 3);
    let checked = 0;
    for (const v of vectors) {
      if (v.profile !== "v2") continue;
      const original = new Uint8Array(readFileSync(join(vectorsDir, v.container)));
      expect(onePassDisagreement(original, v.shape), v.id).toBe("");
      for (let k = 0; k < 40 && original.length > 0; k++) {
        const bytes = original.slice();
        const at = rng.int(0, bytes.length - 1);
        bytes[at] = rng.chance(0.5) ? bytes[at]! ^ (1 << rng.int(0, 7)) : rng.int(0, 255);
        expect(onePassDisagreement(bytes, v.shape), `${v.id} byte ${at}`).toBe("");
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  }, 60_000);

  /** A valid case, two mutations of it and one padding fault, each held to parse(); counts what parse() rejects. */
  function checkWithFaults(rng: Rng, c: ReturnType<typeof generateValid>, i: number, counts: { rejected: number; paddingFaults: number }): void {
    expect(onePassDisagreement(c.bytes, c.shape), `valid case ${i}`).toBe("");
    for (let j = 0; j < 2; j++) {
      const m = mutate(rng, c);
      expect(onePassDisagreement(m.bytes, m.shape), `case ${i} ${m.ops.join(",")}`).toBe("");
      if (!parseOrNull(m.bytes, m.profile, m.shape)) counts.rejected++;
    }
    const bad = corruptPadding(rng, c.bytes, c.shape);
    if (bad) {
      expect(parseOrNull(bad, "v2", c.shape)).toBeNull();
      expect(onePassDisagreement(bad, c.shape), `case ${i} padding`).toBe("");
      counts.paddingFaults++;
    }
  }

  it("agrees on 1500 random valid containers (uniform layouts, whole tiles and cropped), their mutations and padding faults", () => {
    const rng = new Rng(20261202, 4);
    const counts = { rejected: 0, paddingFaults: 0 };
    for (let i = 0; i < 1500; i++) {
      // whole 64x64 tiles take the specialised record paths; cropped edge tiles the generic one
      const shape: [number, number] | undefined = rng.chance(0.6) ? [64 * rng.int(1, 3), 64 * rng.int(1, 3)] : undefined;
      const c = generateValid(rng, { profile: "v2", maxTiles: 3, ...(rng.chance(0.7) ? { layouts: UNIFORM } : {}), ...(shape ? { shape } : {}) });
      checkWithFaults(rng, c, i, counts);
    }
    expect(counts.rejected).toBeGreaterThan(1000);
    expect(counts.paddingFaults).toBeGreaterThan(500);
  }, 120_000);

  it("UNIFORM_8 four leaves a step (one header load for an all-FP4 group, else pair by pair): valid, header faults in each lane, cut payloads", () => {
    const rng = new Rng(20261207, 18);
    const seen = { fp4Groups: 0, mixedGroups: 0, headerFaults: 0, cuts: 0, lastCuts: 0 };
    for (let i = 0; i < 300; i++) {
      const shape: [number, number] = [64 * rng.int(1, 2), 64 * rng.int(1, 3)];
      const c = generateValid(rng, { profile: "v2", shape, layouts: [LAYOUT.UNIFORM_8] });
      expect(onePassDisagreement(c.bytes, c.shape), `valid case ${i}`).toBe("");
      const parsed = parse(c.bytes, { profile: "v2", shape: c.shape });
      const view = new DataView(c.bytes.buffer, c.bytes.byteOffset);
      const fp4: number[] = []; // first leaf of each all-FP4 group of four (leaves 4j..4j+3 of a record)
      for (const block of parsed.blocks) {
        for (let g = 0; g < 64; g += 4) {
          let modes = 0;
          for (let k = 0; k < 4; k++) modes |= view.getUint32(block.offset + 4 + 4 * (g + k), true) & 1;
          if (modes) {
            seen.mixedGroups++;
          } else {
            fp4.push(block.firstLeaf + g);
            seen.fp4Groups++;
          }
        }
      }
      if (fp4.length === 0) continue;
      const first = rng.pick(fp4);
      const block = parsed.blocks.find((b) => b.firstLeaf <= first && first < b.firstLeaf + b.leafCount)!;
      // a reserved bit, an all-ones exponent in the scale or in the bias, in lane 0-3 of the group
      expectHeaderFaultRejected(rng, c.bytes, c.shape, block.offset + 4 + 4 * (first - block.firstLeaf + rng.int(0, 3)), `case ${i}`);
      seen.headerFaults++;
      // the stream cut inside the group's 128 payload bytes
      expectRejected(c.bytes.slice(0, parsed.leafTable[4 * first + 3]! + rng.int(0, 127)), c.shape, `case ${i}: cut`);
      seen.cuts++;
      // the last record's last group all FP4: the stream cut 1-32 bytes before its payloads end
      // (only the group's own bound check sees that: no record is read after it)
      const last = parsed.blocks[parsed.blocks.length - 1]!;
      if (fp4.includes(last.firstLeaf + 60)) {
        const end = parsed.leafTable[4 * (last.firstLeaf + 60) + 3]! + 128;
        expectRejected(c.bytes.slice(0, end - rng.int(1, 32)), c.shape, `case ${i}: short last group`);
        seen.lastCuts++;
      }
    }
    expect(seen.lastCuts).toBeGreaterThan(20);
    expect(seen.fp4Groups).toBeGreaterThan(500);
    expect(seen.mixedGroups).toBeGreaterThan(500);
    expect(seen.headerFaults).toBeGreaterThan(100);
  }, 120_000);

  it("MIXED 16x16 nodes split into four FP4 8x8 leaves (one header load, one mode test): valid, header faults in each lane, cut payloads", () => {
    const rng = new Rng(20261207, 19);
    const seen = { groups: 0, headerFaults: 0, lastCuts: 0 };
    for (let i = 0; i < 1000; i++) {
      const shape: [number, number] = rng.chance(0.5) ? [64, 64] : [64 * rng.int(1, 2), 64 * rng.int(1, 3)];
      const c = generateValid(rng, { profile: "v2", shape, layouts: [LAYOUT.MIXED] });
      expect(onePassDisagreement(c.bytes, c.shape), `valid case ${i}`).toBe("");
      const parsed = parse(c.bytes, { profile: "v2", shape: c.shape });
      // first leaf of each group of four FP4 8x8 leaves that are the TL, TR, BL, BR children of one 16x16 node
      const groups: number[] = [];
      for (let l = 0; l + 3 < parsed.leafCount; l++) {
        const a = leafAt(parsed, l), q = [1, 2, 3].map((k) => leafAt(parsed, l + k));
        const children = a.size === 8 && a.x % 16 === 0 && a.y % 16 === 0 && q.every((b) => b.size === 8 && b.block === a.block);
        if (!children || [a, ...q].some((b) => b.mode !== 0)) continue;
        if (q[0]!.x === a.x + 8 && q[0]!.y === a.y && q[1]!.x === a.x && q[1]!.y === a.y + 8 && q[2]!.x === a.x + 8 && q[2]!.y === a.y + 8) groups.push(l);
      }
      seen.groups += groups.length;
      if (groups.length === 0) continue;
      const first = rng.pick(groups);
      const block = parsed.blocks[leafAt(parsed, first).block]!;
      expectHeaderFaultRejected(rng, c.bytes, c.shape, block.offset + 16 + 4 * (first - block.firstLeaf + rng.int(0, 3)), `case ${i}`);
      seen.headerFaults++;
      // the stream's last four leaves such a group: cut 1-32 bytes before their payloads end
      const lastGroup = groups[groups.length - 1]!;
      if (lastGroup + 4 === parsed.leafCount) {
        expectRejected(c.bytes.slice(0, parsed.leafTable[4 * lastGroup + 3]! + 128 - rng.int(1, 32)), c.shape, `case ${i}: short last group`);
        seen.lastCuts++;
      }
    }
    expect(seen.groups).toBeGreaterThan(300);
    expect(seen.headerFaults).toBeGreaterThan(150);
    expect(seen.lastCuts).toBeGreaterThan(10);
  }, 120_000);

  it("agrees on 600 MIXED-only containers of whole tiles (the split-map walker), their mutations and padding faults", () => {
    const rng = new Rng(20261203, 7);
    const counts = { rejected: 0, paddingFaults: 0 };
    for (let i = 0; i < 600; i++) {
      const shape: [number, number] = [64 * rng.int(1, 2), 64 * rng.int(1, 3)];
      checkWithFaults(rng, generateValid(rng, { profile: "v2", shape, layouts: [LAYOUT.MIXED] }), i, counts);
    }
    expect(counts.rejected).toBeGreaterThan(400);
    expect(counts.paddingFaults).toBeGreaterThan(200);
  }, 120_000);
});

describe("decode() of v2: one pass per band of macroblock rows (validate_decode_v2_window)", () => {
  function codeOf(run: () => unknown): string {
    try {
      run();
    } catch (e) {
      return (e as { code?: string }).code ?? `not an Sgfp4Error: ${String(e)}`;
    }
    return "decoded";
  }

  it("tall tensors (several bands): same bits as construction; mutations rejected with parse()'s code or decoded like decodeReference", () => {
    const rng = new Rng(20261204, 8);
    let rejected = 0;
    for (let i = 0; i < 60; i++) {
      // 64 columns: a band is 16 macroblock rows, so these shapes take 2-4 bands (the last cropped half the time)
      const shape: [number, number] = [64 * rng.int(17, 50) - (rng.chance(0.5) ? rng.int(1, 63) : 0), rng.chance(0.5) ? 64 : rng.int(65, 128)];
      const c = generateValid(rng, { profile: "v2", shape });
      expect(firstBitDifference(c.expected, decode(c.bytes, { profile: "v2", shape })), `valid case ${i}`).toBe(-1);
      for (let j = 0; j < 3; j++) {
        const m = mutate(rng, c);
        const opts = { profile: "v2" as const, shape: m.shape };
        const parsed = parseOrNull(m.bytes, "v2", m.shape);
        if (!parsed) {
          rejected++;
          expect(codeOf(() => decode(m.bytes, opts)), `case ${i} ${m.ops.join(",")}`).toBe(codeOf(() => parse(m.bytes, opts)));
        } else {
          expect(firstBitDifference(decodeReference(m.bytes, opts), decode(m.bytes, opts)), `case ${i} ${m.ops.join(",")}`).toBe(-1);
        }
      }
    }
    expect(rejected).toBeGreaterThan(60);
  }, 120_000);

  it("a record offset not above the previous one is rejected at every record, band starts included", () => {
    const rng = new Rng(20261205, 9);
    const shape: [number, number] = [64 * 40, 64]; // 40 records, bands of 16
    const c = generateValid(rng, { profile: "v2", shape, gaps: false });
    const opts = { profile: "v2" as const, shape };
    for (let k = 1; k < 40; k++) {
      const bytes = c.bytes.slice();
      const view = new DataView(bytes.buffer);
      view.setUint32(16 + 4 * k, view.getUint32(16 + 4 * (k - 1), true), true);
      expect(codeOf(() => decode(bytes, opts)), `record ${k}`).toBe("NONMONOTONIC_OFFSET");
    }
  });
});

describe("output bands (outputs over BAND_MIN_OUTPUT_BYTES)", () => {
  it("v1 through decode_v1_banded: same bits as decodeReference for random containers, every band width", () => {
    const rng = new Rng(99, 5);
    for (let i = 0; i < 200; i++) {
      const c = generateValid(rng, { profile: "v1", maxTiles: 4 });
      const { tilesX, blockCount } = tiling(c.shape);
      const reference = decodeReference(c.bytes, { profile: "v1", shape: c.shape });
      for (const chunkBlocks of [1, 2, tilesX]) {
        const got = bandedDecodeV1(c.bytes, c.shape, tilesX, blockCount, chunkBlocks);
        expect(got, `case ${i}`).not.toBeNull();
        expect(firstBitDifference(reference, got!), `case ${i} band ${chunkBlocks} shape ${c.shape.join("x")}`).toBe(-1);
      }
    }
  }, 60_000);

  it("decodeInto a createOutput array larger than the threshold (v1 and v2, cropped shape) matches decodeReference", () => {
    const shape: [number, number] = [2113, 1000]; // > 8 MiB, cropped in both directions
    expect(shape[0] * shape[1] * 4).toBeGreaterThan(BAND_MIN_OUTPUT_BYTES);
    const rng = new Rng(5, 6);
    const out = createOutput(shape);
    for (const profile of ["v1", "v2"] as const) {
      const c = generateValid(rng, { profile, shape });
      decodeInto(c.bytes, { profile, shape }, out);
      expect(firstBitDifference(c.expected, out), profile).toBe(-1);
    }
  }, 60_000);
});

describe("outputs of WIDE_BAND_MIN_OUTPUT_BYTES and more (bands of whole macroblock rows, copied out in one piece)", () => {
  // cropped in both directions; exact tiles (the kernel-memory band is the whole width: one memory.copy);
  // wider than 16384 columns (a macroblock row is over 4 MiB: runs of macroblocks again)
  const shapes: [number, number][] = [
    [1090, 3900],
    [1088, 4096],
    [260, 17000],
  ];
  it("decodeInto a plain array, decode() and decodeInto a createOutput array match the construction (v1 and v2)", () => {
    const rng = new Rng(13, 1);
    for (const shape of shapes) {
      expect(shape[0] * shape[1] * 4).toBeGreaterThanOrEqual(WIDE_BAND_MIN_OUTPUT_BYTES);
      for (const profile of ["v1", "v2"] as const) {
        const c = generateValid(rng, { profile, shape });
        const opts = { profile, shape };
        const plain = new Float32Array(shape[0] * shape[1]);
        decodeInto(c.bytes, opts, plain);
        expect(firstBitDifference(c.expected, plain), `${profile} ${shape.join("x")} decodeInto plain`).toBe(-1);
        expect(firstBitDifference(c.expected, decode(c.bytes, opts)), `${profile} ${shape.join("x")} decode`).toBe(-1);
        const kernelOut = createOutput(shape);
        decodeInto(c.bytes, opts, kernelOut);
        expect(firstBitDifference(c.expected, kernelOut), `${profile} ${shape.join("x")} createOutput`).toBe(-1);
      }
    }
  }, 120_000);

  it("f16 and bf16 outputs of 16 MiB and more: the RNE conversion of the construction", () => {
    const shape: [number, number] = [2113, 4000]; // 16.1 MiB of halves, cropped both ways
    expect(shape[0] * shape[1] * 2).toBeGreaterThanOrEqual(WIDE_BAND_MIN_OUTPUT_BYTES);
    const c = generateValid(new Rng(13, 2), { profile: "v2", shape });
    const bits = new Uint32Array(c.expected.buffer, c.expected.byteOffset, c.expected.length);
    const f16 = decode(c.bytes, { profile: "v2", shape, format: "f16" });
    let bad = -1;
    for (let i = 0; i < bits.length && bad < 0; i++) if (f16[i] !== floatBitsToHalfBits(bits[i]!)) bad = i;
    expect(bad, "f16").toBe(-1);
    const bf16 = new Uint16Array(shape[0] * shape[1]);
    decodeInto(c.bytes, { profile: "v2", shape, format: "bf16" }, bf16);
    for (let i = 0; i < bits.length && bad < 0; i++) {
      const x = bits[i]!; // finite values only: round the dropped 16 bits to nearest, ties to even
      if (bf16[i] !== ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16)) bad = i;
    }
    expect(bad, "bf16").toBe(-1);
  }, 120_000);
});
