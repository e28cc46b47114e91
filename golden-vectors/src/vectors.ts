/**
 * The catalog: every vector, built by hand from its intent. Clause names are spec sections
 * ("22.8.2") and DECISIONS.md sections ("D3").
 */
import {
  FP4,
  MIXED,
  T158,
  codePattern,
  expectedOutput,
  placeV2,
  recordLeaves,
  tiles,
  treeBits,
  type Intent,
  type LeafGeometry,
  type LeafIntent,
  type Mode,
  type QuadTree,
  type Shape,
  type V1BlockIntent,
  type V1Intent,
  type V2Intent,
  type V2RecordIntent,
} from "./intent.js";
import { assembleV2, getU32, patched, recordBytes, setU32, writeIntent } from "./streams.js";

// DECISIONS.md section 3's codes, written out here rather than imported from @sgfp4/format (its
// STREAM_ERROR_CODES): the vectors depend on no code under test. set.test.ts checks this list
// against the section itself.
export const REJECT_CODES = [
  "SIZE_MISMATCH",
  "BAD_MAGIC",
  "BAD_VERSION",
  "TRUNCATED",
  "NONZERO_PADDING",
  "RECORD_COUNT_MISMATCH",
  "MISALIGNED_OFFSET",
  "NONMONOTONIC_OFFSET",
  "OFFSET_OUT_OF_RANGE",
  "UNKNOWN_LAYOUT",
  "RESERVED_BITS",
  "NONFINITE_PARAMETER",
] as const;
export type RejectCode = (typeof REJECT_CODES)[number];

interface VectorBase {
  id: string;
  profile: "v1" | "v2";
  shape: Shape;
  clauses: string[];
  description: string;
  bytes: Uint8Array;
}

export interface DecodeVector extends VectorBase {
  kind: "decode";
  intent: Intent;
  expected: Float32Array;
  /** v2: absolute start of each record (structure check); v1: payload base of each block in the blob */
  recordStarts: number[];
  /** absolute payload offset of every leaf, in stream order */
  payloadOffsets: number[];
  /** warnings `validate --strict` must give (DECISIONS.md 4) */
  strictWarnings: string[];
}

export interface RejectVector extends VectorBase {
  kind: "reject";
  code: RejectCode;
  /** the valid stream the single fault was made in */
  base: { bytes: Uint8Array; shape: Shape };
}

export type Vector = DecodeVector | RejectVector;

// ---------------------------------------------------------------- leaf and record helpers

const ONE = 0x3c00;
const TWO = 0x4000;
const HALF = 0x3800;

function fp4(seed: number, scaleBits: number, biasBits: number, size = 64): LeafIntent {
  return { mode: FP4, scaleBits, biasBits, codes: codePattern(FP4, size * size, seed) };
}
function t158(seed: number, scaleBits: number, biasBits: number, size = 64): LeafIntent {
  return { mode: T158, scaleBits, biasBits, codes: codePattern(T158, size * size, seed) };
}
function leafOf(mode: Mode, seed: number, scaleBits: number, biasBits: number, size: number): LeafIntent {
  return mode === FP4 ? fp4(seed, scaleBits, biasBits, size) : t158(seed, scaleBits, biasBits, size);
}
/** FP4 codes where every value -8..7 sits in both the low and the high nibble of a byte. */
function allNibbles(scaleBits: number, biasBits: number, size = 64): LeafIntent {
  const codes = Array.from({ length: size * size }, (_, i) => (((i % size) + Math.floor(i / size)) % 16) - 8);
  return { mode: FP4, scaleBits, biasBits, codes };
}
/** T158 symbols 00, 01, 10, 11 at every position within a byte. */
function allSymbols(scaleBits: number, biasBits: number, size = 64): LeafIntent {
  const symbols = Array.from({ length: size * size }, (_, i) => ((i % size) + Math.floor(i / size)) % 4);
  return { mode: T158, scaleBits, biasBits, symbols };
}

function uniform(layout: 0 | 1 | 2 | 3 | 5, leaf: (i: number, g: LeafGeometry) => LeafIntent, gapBefore = 0): V2RecordIntent {
  const geo = recordLeaves({ layout, leaves: [] });
  return { layout, leaves: geo.map((g, i) => leaf(i, g)), ...(gapBefore ? { gapBefore } : {}) };
}
function mixed(tree: QuadTree, leaf: (i: number, g: LeafGeometry) => LeafIntent): V2RecordIntent {
  const geo = recordLeaves({ layout: MIXED, tree, leaves: [] });
  return { layout: MIXED, tree, leaves: geo.map((g, i) => leaf(i, g)) };
}
/** Alternating modes, varied codes, a small set of scales and biases (v2: bias low nibble clear). */
function varied(seed: number) {
  const scales = [ONE, 0x3400, TWO, 0x2e66, 0x4500];
  const biases = [0x0000, 0xb800, 0x3a00, 0x2c00, 0xc100];
  return (i: number, g: LeafGeometry): LeafIntent =>
    leafOf((i + seed) % 2 === 0 ? FP4 : T158, seed * 1000 + i, scales[(i + seed) % scales.length]!, biases[(i * 3 + seed) % biases.length]!, g.size);
}

const L = "leaf" as const;
const quad = (a: QuadTree, b: QuadTree, c: QuadTree, d: QuadTree): QuadTree => [a, b, c, d];
const split4: QuadTree = quad(L, L, L, L);
/** Every node split down to 4x4: all 85 split-map bits used and set. */
function fullTree(size = 64): QuadTree {
  if (size === 8) return split4;
  const c = fullTree(size / 2);
  return quad(c, c, c, c);
}
const deepTL: QuadTree = quad(quad(quad(split4, L, L, L), L, L, L), L, L, L);
const deepBR: QuadTree = quad(L, L, L, quad(L, L, L, quad(L, L, L, split4)));
const s16: QuadTree = split4; // a 16x16 node split into four 8x8 leaves
const s32: QuadTree = quad(s16, s16, s16, s16);
/** 73 bits: the walk crosses split-map words 0 -> 1 -> 2. */
const crossWords: QuadTree = quad(s32, s32, s32, quad(L, L, L, quad(split4, L, L, L)));

// ---------------------------------------------------------------- vector constructors

const vectors: Vector[] = [];

function decode(id: string, intent: Intent, clauses: string[], description: string, opts: { bytes?: Uint8Array; recordStarts?: number[]; payloadOffsets?: number[]; strictWarnings?: string[] } = {}): DecodeVector {
  const bytes = opts.bytes ?? writeIntent(intent);
  let recordStarts: number[];
  let payloadOffsets: number[];
  if (intent.profile === "v2") {
    const p = placeV2(intent);
    recordStarts = opts.recordStarts ?? p.recordStarts;
    payloadOffsets = opts.payloadOffsets ?? p.payloadOffsets.flat();
  } else {
    const B = intent.blocks.length;
    recordStarts = opts.recordStarts ?? intent.blocks.map((_, b) => (intent.slots ? intent.slots[b]! : b) * 2048);
    payloadOffsets = opts.payloadOffsets ?? recordStarts.map((s) => 8 * B + s);
  }
  const v: DecodeVector = {
    kind: "decode",
    id,
    profile: intent.profile,
    shape: intent.shape,
    clauses,
    description,
    bytes,
    intent,
    expected: expectedOutput(intent),
    recordStarts,
    payloadOffsets,
    strictWarnings: opts.strictWarnings ?? [],
  };
  vectors.push(v);
  return v;
}

function reject(id: string, profile: "v1" | "v2", base: { bytes: Uint8Array; shape: Shape }, bytes: Uint8Array, code: RejectCode, clauses: string[], description: string, shape: Shape = base.shape): RejectVector {
  const v: RejectVector = { kind: "reject", id, profile, shape, clauses, description, bytes, code, base };
  vectors.push(v);
  return v;
}

const v1 = (shape: Shape, blocks: V1BlockIntent[], slots?: number[]): V1Intent => ({ profile: "v1", shape, blocks, ...(slots ? { slots } : {}) });
const v2 = (shape: Shape, records: V2RecordIntent[], trailing?: Uint8Array): V2Intent => ({ profile: "v2", shape, records, ...(trailing ? { trailing } : {}) });
const blocksFor = (shape: Shape, f: (b: number) => V1BlockIntent): V1BlockIntent[] => Array.from({ length: tiles(shape).count }, (_, b) => f(b));
const recordsFor = (shape: Shape, f: (b: number) => V2RecordIntent): V2RecordIntent[] => Array.from({ length: tiles(shape).count }, (_, b) => f(b));

// ================================================================= v1, decode

decode("v1-fp4-all-nibbles", v1([64, 64], [allNibbles(ONE, 0x0000)]), ["22.3", "22.6.1", "22.9", "D2"], "Every FP4 nibble 0x0..0xF in both byte halves decodes as its two's-complement code -8..7 with S = 1, Bias = 0.");
decode("v1-t158-all-symbols", v1([64, 64], [allSymbols(TWO, HALF)]), ["22.3", "22.6.2", "22.9", "22.10", "D2"], "T158 symbols 00, 01, 10 and the reserved 11 at every position of a byte decode as 0, +1, -1 and 0 (S = 2, Bias = 0.5).");
decode("v1-t158-reserved-only", v1([64, 64], [{ mode: T158, scaleBits: 0x4900, biasBits: 0xc500, symbols: new Array(4096).fill(3) }]), ["22.6.2", "D2"], "A T158 block made only of reserved symbols 11 decodes to Bias everywhere, never an error.");
decode("v1-modes-2x2", v1([128, 128], [fp4(1, 0x3400, 0xb800), t158(2, TWO, 0x3a00), t158(3, 0x2e66, 0x0000), fp4(4, 0x4500, 0xc100)]), ["22.2", "22.3.1", "22.5", "22.9", "D1"], "Both modes mixed across a 2x2 grid: MODE is bit 0 of each offset and blocks land in row-major (by, bx) order.");
decode("v1-slots-out-of-order", v1([128, 128], [fp4(11, ONE, 0), t158(12, TWO, 0x3800), fp4(13, 0x3800, 0xbc00), t158(14, 0x4200, 0x4000)], [3, 0, 2, 1]), ["22.3", "22.3.1", "D1"], "v1 payload slots stored in the permuted order 3, 0, 2, 1: each block reads the payload its offset points to.");
decode("v1-error-hint", v1([64, 128], [{ ...fp4(21, ONE, 0x3000), errorHint: true }, { ...t158(22, 0x3a00, 0xb400), errorHint: true }]), ["22.3.1", "22.5", "D3"], "ERROR_HINT (flag bit 1) set on an FP4 and a T158 block is informational and changes nothing.");
decode("v1-crop-1x1", v1([1, 1], [fp4(31, 0x4400, 0x3c00)]), ["22.2", "22.9", "D1"], "Shape 1x1: only element (0, 0) of the 64x64 block is output.");
decode("v1-crop-3x200", v1([3, 200], blocksFor([3, 200], (b) => leafOf(b % 2 ? T158 : FP4, 40 + b, 0x3800 + b * 0x100, 0x3000 * (b % 2), 64))), ["22.2", "22.9", "D1"], "Shape 3x200 (B = 4 in one row): rows 3..63 and columns 200..255 of the padded grid are cropped.");
decode("v1-crop-65x63", v1([65, 63], blocksFor([65, 63], (b) => fp4(50 + b, ONE + b, 0xb000 + b * 0x10))), ["22.2", "22.9", "D1"], "Shape 65x63 (B = 2 stacked): one row of the second block row survives, column 63 never does.");
decode("v1-crop-130x70", v1([130, 70], blocksFor([130, 70], (b) => leafOf(b % 3 === 1 ? T158 : FP4, 60 + b, 0x3000 + b * 0x200, b * 0x0800, 64))), ["22.2", "22.9", "D1"], "Shape 130x70 (3x2 blocks): row-major block order with ragged right and bottom edges.");
decode("v1-scale-subnormal", v1([8, 128], [allNibbles(0x0001, 0x0000), allNibbles(0x03ff, 0x0000)]), ["22.4", "D2"], "Scales 0x0001 (2^-24) and 0x03ff (largest subnormal) decode exactly, no flush to zero.");
decode("v1-scale-normal-extremes", v1([8, 128], [allNibbles(0x0400, 0x0000), allNibbles(0x7bff, 0x0000)]), ["22.4", "D2"], "Scales 0x0400 (smallest normal, 2^-14) and 0x7bff (65504): S * code stays exact up to 65504 * -8.");
decode("v1-bias-edges", v1([4, 512], [0x0001, 0x03ff, 0x0400, 0x7bff, 0x8000, 0x8001, 0xfbff, 0xbc00].map((bias) => allNibbles(0x0400, bias))), ["22.4", "D2"], "v1 biases 0x0001, 0x03ff, 0x0400, 0x7bff, -0, -2^-24, -65504 and -1, one per block, used with all 16 bits (no mask in v1).");
decode("v1-bias-low-bits", v1([64, 64], [allSymbols(0x2000, 0x3c0f)]), ["22.4", "22.5", "D2"], "v1 keeps the bias's low 4 bits (0x3c0f = 1.0146484375) even in T158 mode: the mask is v2-only.");
decode("v1-signed-zeros", v1([2, 256], [allNibbles(0x8000, 0x8000), allNibbles(0x0000, 0x8000), allNibbles(0x8000, 0x0000), allNibbles(ONE, 0xbc00)]), ["22.4", "D2"], "Signed zeros: (-0)*code + -0 is -0 for code >= 0, (+0)*(negative) + -0 is -0, (+0) + (-0) is +0, and 1*1 + -1 is +0.");
decode("v1-rounding-ties", v1([4, 256], [allNibbles(ONE, 0x0001), allNibbles(ONE, 0x0003), allNibbles(0x3c01, 0x0001), allNibbles(0x7bff, 0x0001)]), ["22.4", "D2"], "One float32 rounding to nearest even: 1 + 2^-24 rounds down, 1 + 3*2^-24 rounds up, and a tiny bias vanishes beside 65504*code.");
decode(
  "v1-half-format-rounding",
  v1([4, 512], [allNibbles(0x1000, 0x3c00), allNibbles(0x1000, 0xbc00), allNibbles(0x1c00, 0x3c00), allNibbles(0x1c00, 0xbc00), allNibbles(0x0001, 0x0000), allNibbles(0x03ff, 0x8000), allNibbles(0x7bff, 0x0000), allNibbles(0x4c00, 0x7bff)]),
  ["22.4", "D2", "P10"],
  "Exact float32 outputs placed for the f16/bf16 output formats (P10, RNE of the float32): f16 ties both ways (1 + k*2^-11, -1 - k*2^-11, 65504 + 16k, 1023k*2^-24), f16 subnormals (k*2^-24), f16 overflow to +-Inf (65520, 65504*2, 65504*-8), bf16 ties both ways (+-(1 + k*2^-8)).",
);
decode("v1-negative-scale", v1([64, 64], [allNibbles(0xc000, 0x3800)]), ["22.4", "D3"], "A negative scale (-2) is accepted and decoded as S * code + Bias; validate --strict warns.", { strictWarnings: ["negative-scale"] });
decode("v1-shape-128x1", v1([128, 1], [fp4(71, ONE, 0), t158(72, 0x4400, 0xb800)]), ["22.2", "D1"], "Shape 128x1: tiles_x = 1, blocks stack vertically and only column 0 is output.");
{
  // Two blocks share slot 0 (D3 lists no reason to reject it); slot 1 is garbage nobody reads.
  const shared = codePattern(FP4, 4096, 81);
  const intent = v1([64, 128], [{ mode: FP4, scaleBits: ONE, biasBits: 0, codes: shared }, { mode: FP4, scaleBits: 0x3a00, biasBits: 0x4000, codes: shared }]);
  const bytes = patched(writeIntent(intent), (b) => {
    setU32(b, 8 + 4, 0); // block 1's offset -> slot 0, FP4
    b.fill(0xff, 16 + 2048, 16 + 4096); // slot 1: would decode as -1 everywhere if read
  });
  decode("v1-shared-payload", intent, ["22.3", "22.3.1", "D1", "D3", "P9"], "Two blocks may point at the same payload slot; the unreferenced slot (all 0xFF) is never read.", { bytes, recordStarts: [0, 0] });
}
{
  // Block 1's payload starts at blob offset 1024 (16-aligned, base + 2048 within the blob).
  const a = codePattern(FP4, 4096, 91);
  const c = codePattern(FP4, 2048, 92);
  const block1 = [...a.slice(2048), ...c];
  const intent = v1([64, 128], [{ mode: FP4, scaleBits: ONE, biasBits: 0, codes: a }, { mode: FP4, scaleBits: 0x3400, biasBits: 0xc000, codes: block1 }]);
  const valid = writeIntent(intent);
  const bytes = patched(valid, (b) => {
    setU32(b, 8 + 4, 1024);
    b.copyWithin(16 + 2048, 16 + 2048 + 1024, 16 + 4096); // C now sits at blob 2048..3071
    b.fill(0x77, 16 + 3072, 16 + 4096);
  });
  decode("v1-payload-straddles-slots", intent, ["22.3", "22.3.1", "D3", "P9"], "A v1 offset need only be 16-aligned with base + 2048 inside the blob: block 1 reads blob bytes 1024..3071 across two slots.", { bytes, recordStarts: [0, 1024] });
}

// ================================================================= v2, decode

decode("v2-uniform64-fp4", v2([64, 64], [uniform(0, () => allNibbles(ONE, 0xb800))]), ["22.8.2", "22.6.1", "22.8.3"], "LAYOUT 0 (UNIFORM_64), one FP4 leaf holding all 16 nibble values.");
decode("v2-uniform64-t158", v2([64, 64], [uniform(0, () => allSymbols(0x4100, 0x3800))]), ["22.8.2", "22.6.2", "22.10", "D2"], "LAYOUT 0 with one T158 leaf holding all four symbols, reserved 11 decoding as 0.");
decode("v2-uniform32", v2([64, 64], [uniform(1, varied(1))]), ["22.8.2", "22.8.3"], "LAYOUT 1 (UNIFORM_32): four leaves in raster order, modes alternating.");
decode("v2-uniform16", v2([64, 64], [uniform(2, varied(2))]), ["22.8.2", "22.8.3"], "LAYOUT 2 (UNIFORM_16): sixteen leaves in raster order, modes alternating.");
decode("v2-uniform8", v2([64, 64], [uniform(3, varied(3))]), ["22.8.2", "22.8.3"], "LAYOUT 3 (UNIFORM_8): 64 leaves; T158 8x8 payloads are exactly 16 bytes, FP4 32.");
decode("v2-full4x4", v2([64, 64], [uniform(5, varied(4))]), ["22.8.2", "22.6", "22.8.3"], "LAYOUT 5 (FULL_4x4): 256 leaves, FP4 payloads padded 8 -> 16 bytes and T158 4 -> 16 bytes.");
decode("v2-all-layouts", v2([64, 384], [uniform(0, varied(5)), uniform(1, varied(6)), uniform(2, varied(7)), uniform(3, varied(8)), mixed(deepTL, varied(9)), uniform(5, varied(10))]), ["22.8.1", "22.8.2", "D1"], "Layouts 0-5 side by side in one stream (B = 6, so the record region starts at align16(40) = 48).");
decode("v2-mixed-single-split", v2([64, 64], [mixed(split4, varied(11))]), ["22.8.2"], "MIXED with one split: bits 1,0,0,0,0 give four 32x32 leaves in TL, TR, BL, BR order.");
decode("v2-mixed-root-leaf", v2([64, 64], [mixed(L, () => fp4(12, ONE, 0x3400))]), ["22.8.2", "D3", "P2"], "Project decision (docs/decisions.md): a MIXED record whose split map says 'leaf' at the root (one 64x64 leaf, same geometry as UNIFORM_64) is accepted.");
decode("v2-mixed-deepest", v2([64, 64], [mixed(fullTree(), varied(13))]), ["22.8.2"], `MIXED split to 4x4 everywhere: all ${treeBits(fullTree()).length} split-map bits set, 256 leaves in DFS order (not raster order).`);
decode("v2-mixed-asym-tl", v2([64, 64], [mixed(deepTL, varied(14))]), ["22.8.2"], "Asymmetric MIXED tree: the top-left path splits 64 -> 32 -> 16 -> 8 -> 4, siblings stay large (13 leaves, 13 bits).");
decode("v2-mixed-asym-br", v2([64, 64], [mixed(deepBR, varied(15))]), ["22.8.2"], "Asymmetric MIXED tree split down the bottom-right path, so quadrant order TL, TR, BL, BR decides every position.");
decode("v2-mixed-cross-words", v2([64, 64], [mixed(crossWords, varied(16))]), ["22.8.2"], `MIXED tree whose ${treeBits(crossWords).length}-bit walk crosses split-map words 0 -> 1 -> 2 (bit k is bit k%32 of word k/32).`);
/** Every node of size > `floor` split: the geometry of a uniform layout, stored in DFS order. */
function splitTo(floor: number, size = 64): QuadTree {
  if (size === floor) return L;
  const c = splitTo(floor, size / 2);
  return quad(c, c, c, c);
}
decode("v2-mixed-dfs-16", v2([64, 64], [mixed(splitTo(16), varied(17))]), ["22.8.2"], "MIXED tree split evenly to 16x16 (21 bits): the 16 leaves of UNIFORM_16 in DFS storage order, so the third stored leaf sits at (16, 0), not at (0, 32) as in raster order.");
decode("v2-mixed-dfs-8", v2([64, 64], [mixed(splitTo(8), varied(18))]), ["22.8.2"], "MIXED tree split evenly to 8x8 (85 bits, only the 21 of nodes above 8x8 set): UNIFORM_8 geometry in DFS storage order.");
decode("v2-mixed-reserved-symbol", v2([64, 64], [mixed(deepTL, (i, g) => (i % 2 ? allSymbols(0x3a00 + i * 0x10, 0xb000, g.size) : { mode: T158, scaleBits: 0x3c00, biasBits: 0x3400, symbols: new Array(g.size * g.size).fill(3) }))]), ["22.6.2", "22.8.2", "22.10", "D2"], "T158 leaves of every size in a MIXED tree, with reserved symbol 11 decoding as 0.");
decode("v2-bias-mask", v2([64, 64], [uniform(1, (i) => [allSymbols(ONE, 0x3c00, 32), allSymbols(0x3800, 0x0010, 32), allNibbles(ONE, 0x3c00, 32), allSymbols(0x0400, 0x8010, 32)][i]!)]), ["22.4", "22.5", "D2"], "v2 bias = half(header & 0xFFF0): T158 leaves whose header low 4 bits (mode 1) would turn 0x3c00 into 0x3c01 and 0x0010 into 0x0011 if not masked.");
decode("v2-scale-edges", v2([64, 64], [uniform(2, (i, g) => allNibbles([0x0001, 0x03ff, 0x0400, 0x7bff, 0x8000, 0x0000, 0x0002, 0x3555, 0x0200, 0x7800, 0x3c00, 0x0401, 0x07ff, 0x7bfe, 0x1400, 0x5bff][i]!, 0x0000, g.size))]), ["22.4", "D2"], "Scales at the FP16 edges, one per 16x16 leaf: 0x0001, 0x03ff, 0x0400, 0x7bff, -0, +0 and others, all exact.");
decode("v2-bias-edges", v2([64, 64], [uniform(2, (i, g) => leafOf(i % 2 ? T158 : FP4, 200 + i, 0x0400, [0x0010, 0x03f0, 0x0400, 0x7bf0, 0x8000, 0x8010, 0x83f0, 0xfbf0, 0xbc00, 0x0000, 0x3c00, 0x7800, 0xf800, 0x0100, 0x8400, 0x5550][i]!, g.size))]), ["22.4", "D2"], "Biases at the FP16 edges a v2 header can hold: 0x0010, 0x03f0 (subnormals), 0x0400, 0x7bf0, -0, negative subnormals, -65504.");
decode("v2-signed-zeros", v2([64, 64], [uniform(1, (i) => [allNibbles(0x8000, 0x8000, 32), allNibbles(0x0000, 0x8000, 32), allSymbols(0x8000, 0x0000, 32), allNibbles(ONE, 0xbc00, 32)][i]!)]), ["22.4", "D2"], "Signed zeros in v2: (-0)*code + -0 = -0 for code >= 0, (+0)*(negative) + -0 = -0, (+0) + (-0) = +0, exact cancellation = +0.");
decode("v2-rounding-ties", v2([64, 64], [uniform(1, (i) => allNibbles(0x4c00, [0x0010, 0x0030, 0x8030, 0x8010][i]!, 32))]), ["22.4", "D2"], "16*code + 2^-20 ties round to even (down), 16*code + 3*2^-20 ties round up: one float32 rounding, no double rounding.");
decode("v2-negative-scale", v2([64, 64], [uniform(1, (i) => allNibbles([0xc000, 0x8001, 0xfbff, ONE][i]!, 0x3800, 32))]), ["22.4", "D3"], "Negative scales (-2, -2^-24, -65504) are accepted and decoded; validate --strict warns.", { strictWarnings: ["negative-scale"] });
decode("v2-crop-1x1", v2([1, 1], [uniform(0, () => fp4(300, 0x4400, 0x3c00))]), ["22.2", "22.8.3", "D1"], "Shape 1x1 in v2: only element (0, 0) of the record is output.");
decode("v2-crop-3x200", v2([3, 200], recordsFor([3, 200], (b) => (b === 1 ? mixed(deepTL, varied(310 + b)) : uniform((b % 4) as 0 | 1 | 2 | 3, varied(310 + b))))), ["22.2", "22.8.3", "D1"], "Shape 3x200 (B = 4 in one row, record region at 32): leaves are cropped to their first 3 rows and column 200.");
decode("v2-crop-200x3", v2([200, 3], recordsFor([200, 3], (b) => uniform(([5, 3, 2, 1] as const)[b]!, varied(320 + b)))), ["22.2", "22.8.3", "D1"], "Shape 200x3, the transpose of 3x200: tiles_x = 1, records stack vertically.");
decode("v2-crop-65x63", v2([65, 63], [uniform(2, varied(330)), mixed(crossWords, varied(331))]), ["22.2", "22.8.1", "22.8.3", "D1"], "Shape 65x63 (B = 2, record region at align16(24) = 32): only the top row of the second record survives.");
decode("v2-crop-130x70", v2([130, 70], recordsFor([130, 70], (b) => (b === 4 ? mixed(deepBR, varied(340 + b)) : uniform(([0, 1, 2, 3, 0, 5] as const)[b]!, varied(340 + b))))), ["22.2", "22.8.1", "22.8.3", "D1"], "Shape 130x70 (3x2 records, B = 6): every layout cropped at a ragged right and bottom edge.");
decode("v2-b3-region-base", v2([1, 129], recordsFor([1, 129], (b) => uniform(([1, 0, 2] as const)[b]!, varied(350 + b)))), ["22.8.1", "D1"], "B = 3: record_region_base = align16(28) = 32, not 16 + 4B = 28.");
decode("v2-b5-region-base", v2([1, 257], recordsFor([1, 257], (b) => uniform(([0, 1, 2, 3, 5] as const)[b]!, varied(360 + b)))), ["22.8.1", "D1"], "B = 5: record_region_base = align16(36) = 48, not 16 + 4B = 36.");
decode("v2-b7-region-base", v2([1, 385], recordsFor([1, 385], (b) => uniform(([0, 1, 2, 3, 5, 0, 1] as const)[b]!, varied(370 + b)))), ["22.8.1", "D1"], "B = 7: record_region_base = align16(44) = 48, not 16 + 4B = 44.");
{
  const intent = v2([1, 192], [uniform(1, varied(380), 16), uniform(0, varied(381)), uniform(2, varied(382), 48)]);
  const p = placeV2(intent);
  const bytes = patched(writeIntent(intent), (b) => {
    // The gaps carry nonzero bytes: they are not padding, and a decoder must not read them.
    b.fill(0xa5, p.regionBase, p.recordStarts[0]!);
    b.fill(0x5a, p.recordEnds[1]!, p.recordStarts[2]!);
  });
  decode("v2-gaps-between-records", intent, ["22.8.1", "D1", "D4"], "Gaps filled with nonzero bytes before record 0 (offset 16) and between records 1 and 2 are ignored: each record is read where its offset points.", { bytes, strictWarnings: ["gap-between-records"] });
}
decode("v2-trailing-bytes", v2([64, 64], [uniform(1, varied(390))], new Uint8Array([0x53, 0x47, 0x46, 0x34, 0xff, 0x01, 0x80])), ["22.8.1", "D4"], "Seven nonzero bytes after the last record are ignored.", { strictWarnings: ["trailing-bytes"] });
{
  // Lead decision: records may overlap. Record 1 starts 32 bytes before the end of record 0's
  // 2048-byte FP4 payload; those 32 bytes are both record 0's last codes and record 1's
  // sb_header, leaf header, header pad and first 16 payload bytes.
  const rec1Leaf = fp4(400, 0x3800, 0x4000);
  const rec1 = recordBytes(v2([64, 64], [uniform(0, () => rec1Leaf)]));
  const shared = rec1.slice(0, 32);
  // Record 0's last 64 codes, read back from those shared bytes nibble by nibble (22.6.1).
  const tail = Array.from({ length: 64 }, (_, i) => (((shared[i >> 1]! >> (4 * (i & 1))) & 0xf) ^ 8) - 8);
  const rec0Leaf: LeafIntent = { mode: FP4, scaleBits: ONE, biasBits: 0xb400, codes: [...codePattern(FP4, 4096 - 64, 401), ...tail] };
  const rec0 = recordBytes(v2([64, 64], [uniform(0, () => rec0Leaf)]));
  const rec1Offset = rec0.length - 32;
  if (rec0.subarray(rec1Offset).some((x, i) => x !== shared[i])) throw new Error("overlap bytes disagree");
  const bytes = assembleV2(2, [{ offset: 0, bytes: rec0 }, { offset: rec1Offset, bytes: rec1 }], [0, rec1Offset]);
  const intent = v2([64, 128], [uniform(0, () => rec0Leaf), uniform(0, () => rec1Leaf)]);
  decode("v2-overlapping-records", intent, ["22.8.1", "22.8.2", "D1", "D3", "P1"], "Project decision (docs/decisions.md): record 1's offset points inside record 0's payload (the last 32 bytes are shared); overlap is not a reject reason, so each record is read where its offset points.", { bytes, recordStarts: [32, 32 + rec1Offset], payloadOffsets: [48, 32 + rec1Offset + 16] });
}
decode("v2-both-modes-4x4", v2([64, 64], [mixed(quad(quad(quad(split4, split4, L, L), L, L, L), L, L, quad(L, L, L, quad(split4, L, L, split4))), (i, g) => leafOf(i % 3 === 0 ? T158 : FP4, 410 + i, 0x3800 + i * 0x40, 0xb000 + i * 0x30, g.size))]), ["22.6", "22.8.2"], "4x4 leaves of both modes interleaved in a MIXED record: each payload padded to 16 bytes, next leaf read after the pad.");

// ================================================================= reject vectors

const V1_BASE = { shape: [64, 64] as Shape, bytes: writeIntent(v1([64, 64], [fp4(500, ONE, 0x3400)])) };
const V1_T158 = { shape: [64, 64] as Shape, bytes: writeIntent(v1([64, 64], [t158(501, TWO, 0x3400)])) };
const V1_TWO = { shape: [64, 128] as Shape, bytes: writeIntent(v1([64, 128], [fp4(502, ONE, 0), t158(503, 0x3800, 0xb800)])) };
const v1Offset = (B: number, b: number): number => 4 * B + 4 * b;

reject("v1-reject-size-short", "v1", V1_BASE, V1_BASE.bytes.slice(0, -1), "SIZE_MISMATCH", ["22.3", "D3"], "A v1 stream one byte shorter than 8*B + 2048*B is refused.");
reject("v1-reject-size-extra-byte", "v1", V1_BASE, new Uint8Array([...V1_BASE.bytes, 0]), "SIZE_MISMATCH", ["22.3", "D3", "D4"], "One trailing zero byte makes a v1 stream the wrong size: unlike v2, v1 has no ignored trailing bytes.");
reject("v1-reject-size-shape", "v1", V1_BASE, V1_BASE.bytes, "SIZE_MISMATCH", ["22.2", "22.3", "D3"], "A valid one-block stream given shape 64x65 (B = 2) is refused: the length follows from the manifest's shape.", [64, 65]);
reject("v1-reject-flag-bit2", "v1", V1_BASE, patched(V1_BASE.bytes, (b) => setU32(b, v1Offset(1, 0), 0x4)), "RESERVED_BITS", ["22.3.1", "22.5", "D3"], "v1 offset flag bit 2 (reserved) set.");
reject("v1-reject-flag-bit3", "v1", V1_T158, patched(V1_T158.bytes, (b) => setU32(b, v1Offset(1, 0), 0x8 | 1)), "RESERVED_BITS", ["22.3.1", "22.5", "D3"], "v1 offset flag bit 3 (reserved) set on a T158 block.");
reject("v1-reject-offset-past-blob", "v1", V1_TWO, patched(V1_TWO.bytes, (b) => setU32(b, v1Offset(2, 1), 4096 | 1)), "OFFSET_OUT_OF_RANGE", ["22.3", "D3"], "Block 1's payload base equals the blob length (4096), so base + 2048 is past the blob.");
reject("v1-reject-offset-straddles-end", "v1", V1_TWO, patched(V1_TWO.bytes, (b) => setU32(b, v1Offset(2, 0), 2064)), "OFFSET_OUT_OF_RANGE", ["22.3", "D3"], "Block 0's payload base 2064 is 16-aligned but base + 2048 runs 16 bytes past the blob.");
reject("v1-reject-offset-wraps-u32", "v1", V1_TWO, patched(V1_TWO.bytes, (b) => setU32(b, v1Offset(2, 0), 0xfffff800)), "OFFSET_OUT_OF_RANGE", ["22.3", "D3", "D5"], "Payload base 0xFFFFF800: base + 2048 wraps to 0 in 32-bit arithmetic, and must still be refused.");
reject("v1-reject-t158-upper-last-word", "v1", V1_T158, patched(V1_T158.bytes, (b) => (b[8 + 2047] = 0x40)), "NONZERO_PADDING", ["22.6.2", "D3"], "A nonzero byte in word 511 (the last word of the zero upper half) of a v1 T158 payload.");
reject("v1-reject-t158-upper-first-word", "v1", V1_T158, patched(V1_T158.bytes, (b) => (b[8 + 1024] = 0x01)), "NONZERO_PADDING", ["22.6.2", "D3"], "A nonzero byte in word 256 (the first word of the zero upper half) of a v1 T158 payload.");
reject("v1-reject-scale-inf", "v1", V1_BASE, patched(V1_BASE.bytes, (b) => setU32(b, 0, (0x7c00 << 16) | 0x3400)), "NONFINITE_PARAMETER", ["22.4", "D3"], "v1 scale +Inf (0x7c00).");
reject("v1-reject-bias-nan", "v1", V1_TWO, patched(V1_TWO.bytes, (b) => setU32(b, 4, (0x3800 << 16) | 0x7e00)), "NONFINITE_PARAMETER", ["22.4", "D3"], "v1 bias NaN (0x7e00) in the second block.");
reject("v1-reject-bias-neg-inf", "v1", V1_BASE, patched(V1_BASE.bytes, (b) => setU32(b, 0, (ONE << 16) | 0xfc00)), "NONFINITE_PARAMETER", ["22.4", "D3"], "v1 bias -Inf (0xfc00).");
reject("v1-reject-scale-min-nan", "v1", V1_T158, patched(V1_T158.bytes, (b) => setU32(b, 0, (0x7c01 << 16) | 0x3400)), "NONFINITE_PARAMETER", ["22.4", "D3"], "v1 scale 0x7c01, the NaN closest to Inf.");

// v2 bases: one record (B = 1, record region at 32) unless said otherwise.
const U64 = v2([64, 64], [uniform(0, () => fp4(600, ONE, 0x3400))]);
const U32 = v2([64, 64], [uniform(1, varied(601))]);
const U8 = v2([64, 64], [uniform(3, varied(602))]);
const SPLIT = v2([64, 64], [mixed(split4, varied(603))]);
const DEEP = v2([64, 64], [mixed(fullTree(), varied(604))]);
const F4 = v2([64, 64], [uniform(5, (i) => leafOf(i === 255 || i === 5 ? T158 : FP4, 605 + i, 0x3800, 0x3000, 4))]);
const TWO_REC = v2([64, 128], [uniform(1, varied(606)), uniform(0, varied(607))]);
const base = (intent: V2Intent) => ({ shape: intent.shape, bytes: writeIntent(intent) });
const B_U64 = base(U64);
const B_U32 = base(U32);
const B_U8 = base(U8);
const B_SPLIT = base(SPLIT);
const B_DEEP = base(DEEP);
const B_F4 = base(F4);
const B_TWO = base(TWO_REC);
const at = (intent: V2Intent) => placeV2(intent);

reject("v2-reject-magic", "v2", B_U64, patched(B_U64.bytes, (b) => (b[3] = 0x35)), "BAD_MAGIC", ["22.8.1", "D3"], "Magic 'SGF5' instead of 'SGF4'.");
reject("v2-reject-magic-lowercase", "v2", B_U64, patched(B_U64.bytes, (b) => b.set([0x73, 0x67, 0x66], 0)), "BAD_MAGIC", ["22.8.1", "D3"], "Magic 'sgf4': the comparison is exact bytes, not case-insensitive.");
reject("v2-reject-v1-stream", "v2", B_U64, V1_BASE.bytes, "BAD_MAGIC", ["22.8.1", "D3"], "A valid v1 stream read as profile v2 fails the magic check.");
reject("v2-reject-version-1", "v2", B_U64, patched(B_U64.bytes, (b) => (b[4] = 0x01)), "BAD_VERSION", ["22.8.1", "D3"], "Version byte 0x01.");
reject("v2-reject-version-3", "v2", B_U64, patched(B_U64.bytes, (b) => (b[4] = 0x03)), "BAD_VERSION", ["22.8.1", "D3"], "Version byte 0x03.");
reject("v2-reject-shorter-than-magic", "v2", B_U64, B_U64.bytes.slice(0, 3), "TRUNCATED", ["22.8.1", "D3", "P4"], "A 3-byte stream that is a prefix of SGF4 ends inside the magic: TRUNCATED, not BAD_MAGIC (docs/decisions.md 4).");
reject("v2-reject-truncated-fixed-header", "v2", B_U64, B_U64.bytes.slice(0, 12), "TRUNCATED", ["22.8.1", "D3"], "The stream ends at byte 12, inside the 16-byte fixed header.");
reject("v2-reject-truncated-offset-table", "v2", B_TWO, B_TWO.bytes.slice(0, 22), "TRUNCATED", ["22.8.1", "D3"], "The stream ends at byte 22, inside the 2-entry record offset table.");
reject("v2-reject-truncated-table-pad", "v2", B_U64, B_U64.bytes.slice(0, 24), "TRUNCATED", ["22.8.1", "D1", "D3"], "The stream ends at byte 24, inside the offset-table pad (B = 1, region base 32).");
reject("v2-reject-truncated-sb-header", "v2", B_U64, B_U64.bytes.slice(0, 34), "TRUNCATED", ["22.8.2", "D3"], "The stream ends 2 bytes into the record's sb_header.");
reject("v2-reject-truncated-split-map", "v2", B_SPLIT, B_SPLIT.bytes.slice(0, 32 + 10), "TRUNCATED", ["22.8.2", "D3"], "The stream ends 6 bytes into a MIXED record's 12-byte split map.");
reject("v2-reject-truncated-leaf-headers", "v2", B_U8, B_U8.bytes.slice(0, 32 + 4 + 4 * 10 + 2), "TRUNCATED", ["22.8.2", "D3"], "The stream ends inside the 11th of 64 leaf headers of a UNIFORM_8 record.");
reject("v2-reject-truncated-header-pad", "v2", B_U64, B_U64.bytes.slice(0, 32 + 12), "TRUNCATED", ["22.8.2", "D3"], "The stream ends inside the record header pad (headers end at 40, payloads start at 48).");
reject("v2-reject-truncated-payload", "v2", B_U64, B_U64.bytes.slice(0, 32 + 16 + 1000), "TRUNCATED", ["22.8.2", "22.6", "D3"], "The stream ends 1000 bytes into a 2048-byte FP4 payload.");
reject("v2-reject-truncated-payload-pad", "v2", B_F4, B_F4.bytes.slice(0, at(F4).payloadOffsets[0]![255]! + 8), "TRUNCATED", ["22.8.2", "22.6", "D3"], "The stream ends inside the 12-byte padding of the last (T158 4x4) leaf payload.");
reject("v2-reject-pad-fixed-header", "v2", B_U64, patched(B_U64.bytes, (b) => (b[15] = 0x01)), "NONZERO_PADDING", ["22.8.1", "D3"], "A nonzero byte in the 7-byte fixed-header pad.");
reject("v2-reject-pad-offset-table", "v2", B_U64, patched(B_U64.bytes, (b) => (b[31] = 0x80)), "NONZERO_PADDING", ["22.8.1", "D1", "D3"], "A nonzero byte at 31, in the offset-table pad 20..31 (B = 1).");
reject("v2-reject-pad-record-header", "v2", B_U64, patched(B_U64.bytes, (b) => (b[32 + 15] = 0x01)), "NONZERO_PADDING", ["22.8.2", "D3"], "A nonzero byte in the record header pad (bytes 8..15 of a UNIFORM_64 record).");
reject("v2-reject-pad-leaf-payload", "v2", B_F4, patched(B_F4.bytes, (b) => (b[at(F4).payloadOffsets[0]![5]! + 4] = 0x10)), "NONZERO_PADDING", ["22.8.2", "22.6", "D3"], "A nonzero byte right after the 4 payload bytes of a T158 4x4 leaf, in its padding to 16.");
reject("v2-reject-pad-fp4-leaf-payload", "v2", B_F4, patched(B_F4.bytes, (b) => (b[at(F4).payloadOffsets[0]![0]! + 15] = 0x01)), "NONZERO_PADDING", ["22.8.2", "22.6", "D3"], "A nonzero last byte in the 8-byte padding of an FP4 4x4 leaf payload.");
reject("v2-reject-splitmap-bit-after-walk", "v2", B_SPLIT, patched(B_SPLIT.bytes, (b) => setU32(b, 36, getU32(b, 36) | (1 << 5))), "NONZERO_PADDING", ["22.8.2", "D3"], "Split-map bit 5 set while the walk of a single split consumes bits 0..4.");
reject("v2-reject-splitmap-bit-85", "v2", B_DEEP, patched(B_DEEP.bytes, (b) => setU32(b, 44, getU32(b, 44) | (1 << 21))), "NONZERO_PADDING", ["22.8.2", "D3"], "Split-map bit 85 set after a full tree that uses all 85 bits.");
reject("v2-reject-record-count-low", "v2", B_U64, B_U64.bytes, "RECORD_COUNT_MISMATCH", ["22.8.1", "22.8.3", "D3"], "A valid B = 1 stream given shape 64x65, which needs B = 2.", [64, 65]);
reject("v2-reject-record-count-high", "v2", B_TWO, B_TWO.bytes, "RECORD_COUNT_MISMATCH", ["22.8.1", "22.8.3", "D3"], "A valid B = 2 stream given shape 64x64, which needs B = 1.", [64, 64]);
{
  // Offset 8 with a record whose payload is all zero: read at base+8 with either a relative or
  // an absolute header pad, the record is otherwise valid, so misalignment is the only fault.
  const zeroRec = recordBytes(v2([64, 64], [uniform(0, () => ({ mode: FP4, scaleBits: ONE, biasBits: 0, codes: new Array(4096).fill(0) }))]));
  const bytes = assembleV2(1, [{ offset: 8, bytes: zeroRec }], [8]);
  reject("v2-reject-misaligned-offset", "v2", { shape: [64, 64], bytes: assembleV2(1, [{ offset: 0, bytes: zeroRec }], [0]) }, bytes, "MISALIGNED_OFFSET", ["22.8.1", "D3"], "Record offset 8 is not a multiple of 16; the record there (all-zero payload) is otherwise valid whichever way its header pad is read.");
}
{
  const r0 = recordBytes(v2([64, 64], [uniform(1, varied(620))]));
  const r1 = recordBytes(v2([64, 64], [uniform(0, varied(621))]));
  const valid = { shape: [64, 128] as Shape, bytes: assembleV2(2, [{ offset: 0, bytes: r0 }, { offset: r0.length, bytes: r1 }], [0, r0.length]) };
  reject("v2-reject-offsets-descending", "v2", valid, assembleV2(2, [{ offset: r1.length, bytes: r0 }, { offset: 0, bytes: r1 }], [r1.length, 0]), "NONMONOTONIC_OFFSET", ["22.8.1", "D1", "D3"], `Records stored in reverse order (offsets [${r1.length}, 0]); v2 offsets must strictly increase.`);
  reject("v2-reject-offsets-equal", "v2", B_TWO, patched(B_TWO.bytes, (b) => setU32(b, 20, 0)), "NONMONOTONIC_OFFSET", ["22.8.1", "D1", "D3"], "Both records at offset 0: equal offsets are not increasing.");
}
reject("v2-reject-offset-at-end", "v2", B_TWO, patched(B_TWO.bytes, (b) => setU32(b, 20, B_TWO.bytes.length - 32)), "OFFSET_OUT_OF_RANGE", ["22.8.1", "D3"], "Record 1 starts exactly at the end of the stream.");
reject("v2-reject-offset-wraps-u32", "v2", B_TWO, patched(B_TWO.bytes, (b) => setU32(b, 20, 0xfffffff0)), "OFFSET_OUT_OF_RANGE", ["22.8.1", "D3", "D5"], "Record offset 0xFFFFFFF0: base + offset wraps to 16 in 32-bit arithmetic, and must still be refused.");
reject("v2-reject-layout-6", "v2", B_U64, patched(B_U64.bytes, (b) => setU32(b, 32, 6)), "UNKNOWN_LAYOUT", ["22.8.2", "D3"], "sb_header layout value 6.");
reject("v2-reject-layout-7", "v2", B_U32, patched(B_U32.bytes, (b) => setU32(b, 32, 7)), "UNKNOWN_LAYOUT", ["22.8.2", "D3"], "sb_header layout value 7.");
reject("v2-reject-sb-bit3", "v2", B_U64, patched(B_U64.bytes, (b) => setU32(b, 32, 0x8)), "RESERVED_BITS", ["22.8.2", "D3"], "sb_header bit 3 set over layout 0 (a decoder must not read the layout as 4 bits).");
reject("v2-reject-sb-bit31", "v2", B_U32, patched(B_U32.bytes, (b) => setU32(b, 32, 0x80000001)), "RESERVED_BITS", ["22.8.2", "D3"], "sb_header bit 31 set over layout 1.");
reject("v2-reject-leaf-flag-bit1", "v2", B_U32, patched(B_U32.bytes, (b) => (b[at(U32).leafHeaderOffsets[0]![2]!]! |= 0x2)), "RESERVED_BITS", ["22.5", "22.8.2", "D3"], "Leaf flag bit 1 (log mode, reserved) set in the third leaf header.");
reject("v2-reject-leaf-flag-bit2", "v2", B_U32, patched(B_U32.bytes, (b) => (b[at(U32).leafHeaderOffsets[0]![1]!]! |= 0x4)), "RESERVED_BITS", ["22.5", "22.8.2", "D3"], "Leaf flag bit 2 (reserved) set in the second leaf header.");
reject("v2-reject-leaf-flag-bit3", "v2", B_SPLIT, patched(B_SPLIT.bytes, (b) => (b[at(SPLIT).leafHeaderOffsets[0]![3]!]! |= 0x8)), "RESERVED_BITS", ["22.5", "22.8.2", "D3"], "Leaf flag bit 3 (reserved) set in the last leaf header of a MIXED record.");
{
  // Leaf header = (scale << 16) | bias | mode; pick leaves of each mode from the intent.
  const hdr = (i: number) => at(U32).leafHeaderOffsets[0]![i]!;
  const leavesOfMode = (m: Mode) => U32.records[0]!.leaves.flatMap((l, i) => (l.mode === m ? [i] : []));
  const [fp4A, fp4B] = leavesOfMode(FP4) as [number, number];
  const [t158A] = leavesOfMode(T158) as [number];
  const setHalf = (b: Uint8Array, off: number, which: "scale" | "bias", bits: number) => {
    const h = getU32(b, off);
    setU32(b, off, which === "scale" ? (bits << 16) | (h & 0xffff) : (h & 0xffff0000) | bits);
  };
  reject("v2-reject-scale-inf", "v2", B_U32, patched(B_U32.bytes, (b) => setHalf(b, hdr(t158A), "scale", 0x7c00)), "NONFINITE_PARAMETER", ["22.4", "D3"], "Leaf scale +Inf (0x7c00) in a T158 leaf of a UNIFORM_32 record.");
  reject("v2-reject-scale-nan", "v2", B_U32, patched(B_U32.bytes, (b) => setHalf(b, hdr(fp4B), "scale", 0xfe00)), "NONFINITE_PARAMETER", ["22.4", "D3"], "Leaf scale NaN (0xfe00) in an FP4 leaf of a UNIFORM_32 record.");
  reject("v2-reject-bias-inf-t158", "v2", B_U32, patched(B_U32.bytes, (b) => setHalf(b, hdr(t158A), "bias", 0x7c01)), "NONFINITE_PARAMETER", ["22.4", "D2", "D3"], "T158 leaf whose header low half is 0x7c01: the masked bias is +Inf (unmasked it would read as NaN).");
  reject("v2-reject-bias-nan-masked", "v2", B_U32, patched(B_U32.bytes, (b) => setHalf(b, hdr(fp4A), "bias", 0x7e10)), "NONFINITE_PARAMETER", ["22.4", "D2", "D3"], "FP4 leaf bias 0x7e10: still NaN after the 0xFFF0 mask.");
  reject("v2-reject-bias-neg-inf", "v2", B_U64, patched(B_U64.bytes, (b) => setHalf(b, 36, "bias", 0xfc00)), "NONFINITE_PARAMETER", ["22.4", "D3"], "Leaf bias -Inf (0xfc00).");
}

export function allVectors(): readonly Vector[] {
  const seen = new Set<string>();
  for (const v of vectors) {
    if (seen.has(v.id)) throw new Error(`duplicate vector id ${v.id}`);
    seen.add(v.id);
  }
  return vectors;
}
