import { describe, expect, it } from "vitest";
import { Sgfp4Error, isSgfp4Error } from "../src/errors.js";
import { LAYOUT, MODE_FP4 } from "../src/geometry.js";
import { leafAt, parse, parseUntilFault } from "../src/parse.js";
import { validate } from "../src/validate.js";
import { writeV1, writeV2, type LeafSpec, type QuadTree, type V2RecordSpec } from "../src/writer.js";

const ONE = 0x3c00; // FP16 1.0
const codes = (n: number, mode: number) => Array.from({ length: n }, (_, i) => (mode ? (i % 3) - 1 : (i % 16) - 8));
const leaf = (size: number, mode: 0 | 1 = MODE_FP4, biasBits = 0x0010): LeafSpec => ({ mode, scaleBits: ONE, biasBits, codes: codes(size * size, mode) });
const uniform = (layout: number, size: number, mode: 0 | 1 = MODE_FP4): V2RecordSpec => ({
  layout: layout as V2RecordSpec["layout"],
  leaves: Array.from({ length: (64 / size) ** 2 }, () => leaf(size, mode)),
});
// one split at the root, then the top-right quadrant split again: 3 + 4 + 3 = 7 leaves... (TL 32, TR split -> 4x16, BL 32, BR 32)
const tree: QuadTree = ["leaf", ["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf"];
const mixed: V2RecordSpec = { layout: LAYOUT.MIXED, tree, leaves: [leaf(32), leaf(16, 1), leaf(16), leaf(16), leaf(16, 1), leaf(32, 1), leaf(32)] };

/** 65x63 -> B = 2 (tiles 2x1): record 0 MIXED, record 1 FULL_4x4 (T158: 4 payload bytes + 12 padding each). */
const shapeV2 = [65, 63] as const;
const validV2 = () => writeV2({ shape: shapeV2, records: [mixed, uniform(5, 4, 1)] });
const shapeV1 = [3, 200] as const; // B = 4
const validV1 = () => writeV1({ shape: shapeV1, blocks: [0, 1, 0, 1].map((m) => leaf(64, m as 0 | 1, 0x0011)), slots: [3, 1, 0, 2] });

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (!isSgfp4Error(e)) throw e;
    return e.code;
  }
  return "ACCEPTED";
}

const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const setU32 = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset).setUint32(at, v >>> 0, true);

describe("v2 structure", () => {
  it("rebuilds the leaf geometry, modes, headers and payload offsets of the description", () => {
    const c = parse(validV2(), { profile: "v2", shape: shapeV2 });
    expect(c.blockCount).toBe(2);
    expect(c.leafCount).toBe(7 + 256);
    const leaves = Array.from({ length: c.leafCount }, (_, i) => leafAt(c, i));
    expect(leaves.slice(0, 7).map((l) => [l.y, l.x, l.size, l.mode])).toEqual([
      [0, 0, 32, 0], [0, 32, 16, 1], [0, 48, 16, 0], [16, 32, 16, 0], [16, 48, 16, 1], [32, 0, 32, 1], [32, 32, 32, 0],
    ]);
    expect(leaves[7]).toMatchObject({ block: 1, y: 0, x: 0, size: 4, mode: 1, scaleBits: ONE, biasBits: 0x10 });
    expect(leaves[8]).toMatchObject({ block: 1, y: 0, x: 4 });
    expect(leaves[7 + 255]).toMatchObject({ block: 1, y: 60, x: 60 });
    // offsets: base = align16(16 + 8) = 32; record 0 header = 16 + 7*4 = 44 -> 48; first payload at 32 + 48
    expect(leaves[0]!.payloadOffset).toBe(80);
    expect(leaves[1]!.payloadOffset).toBe(80 + 512);
    expect(c.blocks[0]).toMatchObject({ layout: LAYOUT.MIXED, splitMap: [0b101, 0, 0] });
    expect(c.warnings).toEqual([]);
  });

  it("v1: headers, flags and out-of-order slots", () => {
    const c = parse(validV1(), { profile: "v1", shape: shapeV1 });
    expect(c.leafCount).toBe(4);
    expect(leafAt(c, 0)).toMatchObject({ size: 64, mode: 0, biasBits: 0x11, payloadOffset: 32 + 3 * 2048 });
    expect(leafAt(c, 1)).toMatchObject({ mode: 1, payloadOffset: 32 + 2048 });
  });

  it("the word-wise fast path and the byte-wise path agree (stream at an odd byte offset)", () => {
    const b = validV2();
    const shifted = new Uint8Array(b.length + 1).subarray(1);
    shifted.set(b);
    const fast = parse(b, { profile: "v2", shape: shapeV2 });
    const slow = parse(shifted, { profile: "v2", shape: shapeV2 });
    expect(Array.from(slow.leafTable)).toEqual(Array.from(fast.leafTable));
    const faulty = shifted.slice();
    faulty[48] = faulty[48]! | 2;
    expect(codeOf(() => parse(faulty.subarray(0), { profile: "v2", shape: shapeV2 }))).toBe("RESERVED_BITS");
  });

  it("auto profile: magic first, then length", () => {
    expect(parse(validV2(), { profile: "auto", shape: shapeV2 }).profile).toBe("v2");
    expect(parse(validV1(), { profile: "auto", shape: shapeV1 }).profile).toBe("v1");
  });
});

type Fault = [name: string, expected: string, make: () => Uint8Array, shape?: readonly [number, number]];

const v2Faults: Fault[] = [
  ["bad magic", "BAD_MAGIC", () => { const b = validV2(); b[0] = 0x54; return b; }],
  ["short magic", "TRUNCATED", () => validV2().slice(0, 3)],
  ["bad version", "BAD_VERSION", () => { const b = validV2(); b[4] = 1; return b; }],
  ["header cut", "TRUNCATED", () => validV2().slice(0, 12)],
  ["record count", "RECORD_COUNT_MISMATCH", () => { const b = validV2(); setU32(b, 5, 3); return b; }],
  ["header pad", "NONZERO_PADDING", () => { const b = validV2(); b[15] = 1; return b; }],
  ["table cut", "TRUNCATED", () => validV2().slice(0, 20)],
  ["table pad cut", "TRUNCATED", () => validV2().slice(0, 28)],
  ["table pad", "NONZERO_PADDING", () => { const b = validV2(); b[30] = 9; return b; }],
  ["misaligned", "MISALIGNED_OFFSET", () => { const b = validV2(); setU32(b, 20, u32(b, 20) + 4); return b; }],
  ["nonmonotonic", "NONMONOTONIC_OFFSET", () => { const b = validV2(); setU32(b, 20, 0); return b; }],
  ["offset past end", "OFFSET_OUT_OF_RANGE", () => { const b = validV2(); setU32(b, 20, b.length - 32); return b; }],
  ["layout 6", "UNKNOWN_LAYOUT", () => { const b = validV2(); b[32] = 6; return b; }],
  ["sb_header reserved", "RESERVED_BITS", () => { const b = validV2(); b[32] = 4 | 8; return b; }],
  ["split map past walk", "NONZERO_PADDING", () => { const b = validV2(); setU32(b, 44, 1 << 31); return b; }],
  ["leaf flags", "RESERVED_BITS", () => { const b = validV2(); b[48] = b[48]! | 2; return b; }],
  ["header section pad", "NONZERO_PADDING", () => { const b = validV2(); b[32 + 44] = 1; return b; }],
  ["payload pad", "NONZERO_PADDING", () => { const b = validV2(); const c = parse(validV2(), { profile: "v2", shape: shapeV2 }); b[leafAt(c, 7).payloadOffset + 4] = 1; return b; }],
  ["payload cut", "TRUNCATED", () => validV2().slice(0, -1)],
  ["scale inf", "NONFINITE_PARAMETER", () => { const b = validV2(); setU32(b, 48, 0x7c000000); return b; }],
  ["bias nan survives the mask", "NONFINITE_PARAMETER", () => { const b = validV2(); setU32(b, 48, (ONE << 16) | 0x7e01); return b; }],
];

const v1Faults: Fault[] = [
  ["size", "SIZE_MISMATCH", () => validV1().slice(0, -1)],
  ["flag bit 2", "RESERVED_BITS", () => { const b = validV1(); b[16] = b[16]! | 4; return b; }],
  ["offset range", "OFFSET_OUT_OF_RANGE", () => { const b = validV1(); setU32(b, 16, 3 * 2048 + 16); return b; }],
  ["T158 upper half", "NONZERO_PADDING", () => { const b = validV1(); b[32 + 2048 + 1024 + 7] = 1; return b; }],
  ["scale nan", "NONFINITE_PARAMETER", () => { const b = validV1(); setU32(b, 4, 0x7e010000); return b; }],
];

describe("rejections, one fault each (DECISIONS.md 3)", () => {
  it.each(v2Faults)("v2 %s -> %s", (_n, code, make) => {
    expect(codeOf(() => parse(make(), { profile: "v2", shape: shapeV2 }))).toBe(code);
  });
  it.each(v1Faults)("v1 %s -> %s", (_n, code, make) => {
    expect(codeOf(() => parse(make(), { profile: "v1", shape: shapeV1 }))).toBe(code);
  });
  it("v1 ERROR_HINT is informational", () => {
    const b = validV1();
    b[16] = b[16]! | 2;
    expect(codeOf(() => parse(b, { profile: "v1", shape: shapeV1 }))).toBe("ACCEPTED");
  });
  it("error messages say where", () => {
    const b = validV2();
    b[48] = b[48]! | 2;
    expect(() => parse(b, { profile: "v2", shape: shapeV2 })).toThrow(/record 0, leaf 0, byte offset 48/);
  });
});

describe("ignored bytes and strict warnings (DECISIONS.md 4)", () => {
  it("gaps and trailing bytes decode the same and warn under strict", () => {
    const b = writeV2({ shape: shapeV2, records: [mixed, { ...uniform(5, 4, 1), gapBefore: 32 }], trailing: new Uint8Array([1, 2, 3]) });
    const r = validate(b, { profile: "v2", shape: shapeV2, strict: true });
    expect(r.ok).toBe(false);
    expect(r.code).toBeUndefined();
    expect(r.warnings.map((w) => w.kind).sort()).toEqual(["gap-between-records", "trailing-bytes"]);
    expect(validate(b, { profile: "v2", shape: shapeV2 }).ok).toBe(true);
  });
  it("negative scale is accepted with a strict warning", () => {
    const b = writeV2({ shape: [1, 1], records: [{ layout: 0, leaves: [{ ...leaf(64), scaleBits: 0xbc00 }] }] });
    const r = validate(b, { profile: "v2", shape: [1, 1], strict: true });
    expect(r.warnings.map((w) => w.kind)).toEqual(["negative-scale"]);
  });
});

describe("limits and arguments (DECISIONS.md 5)", () => {
  it("rejects outputs over the limit before reading the stream", () => {
    expect(codeOf(() => parse(new Uint8Array(0), { profile: "v2", shape: [65536, 65536] }))).toBe("LIMIT_EXCEEDED");
    expect(codeOf(() => parse(validV2(), { profile: "v2", shape: shapeV2, limits: { maxOutputBytes: 65 * 63 * 4 - 1 } }))).toBe("LIMIT_EXCEEDED");
  });
  it("rejects bad shapes and profiles", () => {
    expect(codeOf(() => parse(validV2(), { profile: "v2", shape: [0, 5] }))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => parse(validV2(), { profile: "v2", shape: [1.5, 5] }))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => parse(validV2(), { profile: "v3" as "v2", shape: shapeV2 }))).toBe("INVALID_ARGUMENT");
  });
});

describe("hostile input", () => {
  it("random mutations only ever produce a container or an Sgfp4Error", () => {
    let seed = 12345;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    const sources: [Uint8Array, "v1" | "v2", readonly [number, number]][] = [[validV2(), "v2", shapeV2], [validV1(), "v1", shapeV1]];
    const seen = new Set<string>();
    for (let i = 0; i < 4000; i++) {
      const [src, profile, shape] = sources[i & 1]!;
      let b = src.slice();
      const kind = rnd(4);
      if (kind === 0) { const at = rnd(b.length); b[at] = b[at]! ^ (1 << rnd(8)); }
      else if (kind === 1) b = b.slice(0, rnd(b.length));
      else if (kind === 2) setU32(b, 4 * rnd(b.length >> 2), rnd(2 ** 24) * 256 + rnd(256));
      else { const ext = new Uint8Array(b.length + 16 * rnd(4)); ext.set(b); b = ext; }
      try {
        const c = parse(b, { profile, shape });
        seen.add("ok");
        // every leaf's payload lies inside the stream
        for (let l = 0; l < c.leafCount; l++) {
          const lf = leafAt(c, l);
          expect(lf.payloadOffset + lf.payloadBytes).toBeLessThanOrEqual(b.length);
        }
      } catch (e) {
        expect(e).toBeInstanceOf(Sgfp4Error);
        seen.add((e as Sgfp4Error).code);
      }
    }
    expect(seen.size).toBeGreaterThan(6);
  }, 60_000);
});

describe("parseUntilFault", () => {
  it("a valid stream: the whole container, no fault", () => {
    const r = parseUntilFault(validV2(), { profile: "v2", shape: shapeV2 });
    expect(r.fault).toBeUndefined();
    expect(r.container!.blocks).toHaveLength(2);
  });

  it("a fault in record 1: record 0 and its 7 leaves, then the fault", () => {
    const b = validV2();
    const record1 = 32 + u32(b, 16 + 4); // region base 32 + record 1's offset
    setU32(b, record1, u32(b, record1) | 8); // sb_header reserved bit 3
    const r = parseUntilFault(b, { profile: "v2", shape: shapeV2 });
    expect(r.fault).toMatchObject({ code: "RESERVED_BITS", location: { record: 1, offset: record1 } });
    expect(r.container!.blockCount).toBe(2);
    expect(r.container!.blocks).toHaveLength(1);
    expect(r.container!.leafCount).toBe(7);
    expect(Array.from(r.container!.leafTable)).toEqual(Array.from(parse(validV2(), { profile: "v2", shape: shapeV2 }).leafTable.subarray(0, 7 * 4)));
  });

  it("a v1 fault in block 2: blocks 0 and 1", () => {
    const b = validV1();
    setU32(b, 4 * 4 + 4 * 2, u32(b, 4 * 4 + 4 * 2) | 4); // block 2's offset word: reserved flag bit 2
    const r = parseUntilFault(b, { profile: "v1", shape: shapeV1 });
    expect(r.fault?.code).toBe("RESERVED_BITS");
    expect(r.container!.blocks.map((x) => x.index)).toEqual([0, 1]);
    expect(r.container!.leafCount).toBe(2);
  });

  it("a header fault: no container", () => {
    const r = parseUntilFault(new Uint8Array(16), { profile: "v2", shape: shapeV2 });
    expect(r.fault?.code).toBe("BAD_MAGIC");
    expect(r.container).toBeUndefined();
  });
});
