/**
 * Checks that the bytes say what the intent says, with the format package's parser as a second
 * reader: layouts, split maps, leaf geometry, modes, scale/bias bits, record and payload offsets,
 * and the payload bytes against the builder's own packing. Also that every reject vector is one
 * fault away from an accepted stream.
 */
import { halfToFloat, isSgfp4Error, leafAt, parse, validate } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { FP4, T158, halfValue, leafCodes, packLeaf, recordLeaves, splitMapWords, type LeafIntent, type V2Intent } from "../src/intent.js";
import { allVectors, type DecodeVector, type RejectVector } from "../src/vectors.js";

const vectors = allVectors();
const decodes = vectors.filter((v): v is DecodeVector => v.kind === "decode");
const rejects = vectors.filter((v): v is RejectVector => v.kind === "reject");

function intentLeaves(v: DecodeVector): { block: number; y: number; x: number; size: number; leaf: LeafIntent; layout: number }[] {
  if (v.intent.profile === "v1") return v.intent.blocks.map((leaf, b) => ({ block: b, y: 0, x: 0, size: 64, leaf, layout: -1 }));
  return v.intent.records.flatMap((rec, b) => recordLeaves(rec).map((g, i) => ({ block: b, ...g, leaf: rec.leaves[i]!, layout: rec.layout })));
}

describe.each(decodes.map((v) => [v.id, v] as const))("decode vector %s", (_id, v) => {
  it("parses into exactly the intended structure", () => {
    const c = parse(v.bytes, { profile: v.profile, shape: v.shape });
    const want = intentLeaves(v);
    expect(c.leafCount).toBe(want.length);
    if (v.intent.profile === "v2") {
      v.intent.records.forEach((rec, b) => {
        expect(c.blocks[b]!.layout).toBe(rec.layout);
        expect(c.blocks[b]!.offset).toBe(v.recordStarts[b]);
        if (rec.tree) expect(c.blocks[b]!.splitMap).toEqual(splitMapWords(rec.tree));
      });
    } else {
      v.intent.blocks.forEach((blk, b) => expect(((c.blocks[b]!.flags ?? 0) >> 1) & 1).toBe(blk.errorHint ? 1 : 0));
    }
    want.forEach((w, i) => {
      const got = leafAt(c, i);
      const biasBits = v.profile === "v2" ? w.leaf.biasBits & 0xfff0 : w.leaf.biasBits;
      expect({ block: got.block, y: got.y, x: got.x, size: got.size, mode: got.mode, scaleBits: got.scaleBits, biasBits: got.biasBits, payloadOffset: got.payloadOffset }).toEqual({
        block: w.block,
        y: w.y,
        x: w.x,
        size: w.size,
        mode: w.leaf.mode,
        scaleBits: w.leaf.scaleBits,
        biasBits,
        payloadOffset: v.payloadOffsets[i],
      });
      const packed = packLeaf(w.leaf, w.size);
      expect(Buffer.from(v.bytes.subarray(got.payloadOffset, got.payloadOffset + packed.length)).equals(Buffer.from(packed)), `payload of leaf ${i}`).toBe(true);
    });
  });

  it("gives exactly the strict warnings of DECISIONS.md 3-4 that its intent implies", () => {
    const r = validate(v.bytes, { profile: v.profile, shape: v.shape, strict: true });
    expect((r as { code?: string }).code).toBeUndefined();
    for (const kind of ["negative-scale", "gap-between-records", "trailing-bytes"]) {
      expect(r.warnings.some((w) => w.kind === kind), kind).toBe(v.strictWarnings.includes(kind));
    }
  });
});

describe.each(rejects.map((v) => [v.id, v] as const))("reject vector %s", (_id, v) => {
  it("is a single fault in an accepted stream", () => {
    expect(() => parse(v.base.bytes, { profile: v.profile, shape: v.base.shape })).not.toThrow();
  });

  it(`is refused by the format parser with its code`, () => {
    let code: string | undefined;
    try {
      parse(v.bytes, { profile: v.profile, shape: v.shape });
    } catch (e) {
      if (!isSgfp4Error(e)) throw e;
      code = e.code;
    }
    expect(code).toBe(v.code);
  });
});

const byId = (id: string) => decodes.find((v) => v.id === id)!;
const bitsOf = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0]!;

describe("expected values, checked by hand", () => {
  it("halfValue agrees with the format package on every finite FP16 pattern", () => {
    for (let h = 0; h < 0x10000; h++) {
      if ((h & 0x7c00) === 0x7c00) continue;
      if (!Object.is(halfValue(h), halfToFloat(h))) throw new Error(`0x${h.toString(16)}`);
    }
  });

  it("decodes the all-nibbles block as code + 0 with S = 1", () => {
    const e = byId("v1-fp4-all-nibbles").expected;
    expect([e[0], e[1], e[7], e[8], e[15], e[64], e[64 + 15]]).toEqual([-8, -7, -1, 0, 7, -7, -8]);
  });

  it("maps T158 symbols 00, 01, 10, 11 to Bias, S + Bias, -S + Bias, Bias", () => {
    const e = byId("v1-t158-all-symbols").expected; // S = 2, Bias = 0.5
    expect([e[0], e[1], e[2], e[3]]).toEqual([0.5, 2.5, -1.5, 0.5]);
    expect(byId("v1-t158-reserved-only").expected.every((x) => x === -5)).toBe(true); // Bias 0xc500 = -5
  });

  it("keeps signed zeros as IEEE-754 says", () => {
    const e = byId("v1-signed-zeros").expected; // row 0 of blocks [(-0,-0), (+0,-0), (-0,+0), (1,-1)], codes -8.. at columns
    const row0 = (block: number, col: number) => bitsOf(e[block * 64 + col]!);
    expect(row0(0, 8)).toBe(0x80000000); // (-0)*0 + -0 = -0
    expect(row0(0, 9)).toBe(0x80000000); // (-0)*1 + -0 = -0
    expect(row0(0, 0)).toBe(0x00000000); // (-0)*-8 = +0, +0 + -0 = +0
    expect(row0(1, 0)).toBe(0x80000000); // (+0)*-8 = -0, -0 + -0 = -0
    expect(row0(1, 9)).toBe(0x00000000);
    expect(row0(2, 9)).toBe(0x00000000); // -0 + +0 = +0
    expect(row0(3, 9)).toBe(0x00000000); // 1 - 1 = +0
  });

  it("rounds once to nearest even", () => {
    const e = byId("v1-rounding-ties").expected; // row 0: code at column j is j - 8
    expect(e[9]).toBe(1); // 1 + 2^-24: tie, down to even
    expect(e[64 + 9]).toBe(1 + 2 ** -22); // 1 + 3*2^-24: tie, up to even
    expect(e[8]).toBe(2 ** -24); // 0 * 1 + 2^-24
    const v2 = byId("v2-rounding-ties").expected; // 32x32 leaves: S = 16; biases 2^-20, 3*2^-20
    expect(v2[9]).toBe(16);
    expect(v2[32 + 9]).toBe(16 + 2 ** -18);
  });

  it("masks the v2 bias but not the v1 bias", () => {
    expect(byId("v2-bias-mask").expected[0]).toBe(1); // T158 symbol 00 in leaf (S 1, Bias 0x3c00 | mode 1)
    expect(byId("v1-bias-low-bits").expected[0]).toBe(1.0146484375);
  });

  it("keeps subnormal scales", () => {
    const e = byId("v1-scale-subnormal").expected; // blocks S = 2^-24 and S = 1023 * 2^-24
    expect(e[15]).toBe(7 * 2 ** -24);
    expect(e[64 + 15]).toBe(7 * 1023 * 2 ** -24);
    expect(byId("v1-scale-normal-extremes").expected[64]).toBe(65504 * -8);
  });

  it("walks trees in pre-order DFS, TL TR BL BR", () => {
    const rec = (id: string) => (byId(id).intent as V2Intent).records[0]!;
    const pos = (id: string, i: number) => recordLeaves(rec(id))[i];
    expect(pos("v2-mixed-dfs-16", 2)).toEqual({ y: 16, x: 0, size: 16 });
    expect(pos("v2-mixed-dfs-16", 4)).toEqual({ y: 0, x: 32, size: 16 });
    expect(pos("v2-mixed-deepest", 1)).toEqual({ y: 0, x: 4, size: 4 });
    expect(pos("v2-mixed-deepest", 4)).toEqual({ y: 0, x: 8, size: 4 });
    expect(pos("v2-mixed-deepest", 255)).toEqual({ y: 60, x: 60, size: 4 });
    expect(splitMapWords(rec("v2-mixed-deepest").tree!)).toEqual([0xffffffff, 0xffffffff, 0x1fffff]);
    expect(splitMapWords(rec("v2-mixed-single-split").tree!)).toEqual([1, 0, 0]);
    expect(recordLeaves(rec("v2-mixed-asym-br")).at(-1)).toEqual({ y: 60, x: 60, size: 4 });
  });

  it("crops: 1x1 keeps one element, 3x200 keeps 600", () => {
    expect(byId("v1-crop-1x1").expected.length).toBe(1);
    expect(byId("v2-crop-3x200").expected.length).toBe(600);
  });
});

describe("coverage", () => {
  const v2Records = decodes.flatMap((v) => (v.intent.profile === "v2" ? v.intent.records : []));
  const allLeaves = decodes.flatMap((v) => intentLeaves(v).map((w) => ({ ...w, profile: v.profile })));

  it("covers layouts 0-5, both modes in both profiles, every nibble and symbol", () => {
    expect(new Set(v2Records.map((r) => r.layout))).toEqual(new Set([0, 1, 2, 3, 4, 5]));
    for (const p of ["v1", "v2"]) for (const m of [FP4, T158]) expect(allLeaves.some((l) => l.profile === p && l.leaf.mode === m), `${p} mode ${m}`).toBe(true);
    const nibbles = new Set(allLeaves.filter((l) => l.leaf.mode === FP4).flatMap((l) => leafCodes(l.leaf, l.size * l.size)));
    expect(nibbles.size).toBe(16);
    const symbols = new Set(allLeaves.flatMap((l) => l.leaf.symbols ?? []));
    expect(symbols).toEqual(new Set([0, 1, 2, 3]));
  });

  it("covers MIXED trees from one split to all 85 bits", () => {
    const bitCounts = v2Records.filter((r) => r.tree).map((r) => recordLeaves(r).length);
    expect(bitCounts).toContain(1); // root leaf
    expect(bitCounts).toContain(4); // single split
    expect(bitCounts).toContain(256); // deepest
  });

  it("covers FP16 edge values in scale and bias", () => {
    const scales = new Set(allLeaves.map((l) => l.leaf.scaleBits));
    const biases = new Set(allLeaves.map((l) => l.leaf.biasBits));
    for (const s of [0x0001, 0x03ff, 0x0400, 0x7bff, 0x8000]) expect(scales.has(s), `scale 0x${s.toString(16)}`).toBe(true);
    for (const b of [0x0001, 0x03ff, 0x0400, 0x7bff, 0x8000, 0xfbff]) expect(biases.has(b), `bias 0x${b.toString(16)}`).toBe(true);
  });

  it("covers record counts with B % 4 != 0 and the crop shapes", () => {
    const shapes = decodes.map((v) => v.shape.join("x"));
    for (const s of ["1x1", "3x200", "65x63", "130x70"]) expect(shapes).toContain(s);
    const counts = new Set(decodes.filter((v) => v.profile === "v2").map((v) => v.recordStarts.length % 4));
    expect(counts).toEqual(new Set([0, 1, 2, 3]));
  });
});
