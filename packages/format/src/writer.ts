/**
 * Writer: builds v1 and v2 streams from a structured description. Used by the golden-vector
 * builder and the encoder. It writes canonical streams (zero pads, records packed in order)
 * unless the description asks for gaps or trailing bytes, and refuses values it would have to
 * alter (it never silently drops bits).
 */
import { Sgfp4Error } from "./errors.js";
import { LAYOUT, MACROBLOCK, MODE_FP4, MODE_T158, UNIFORM_LEAF_SIZE, V1_PAYLOAD_BYTES, align16, payloadBytes, tiling, type Layout, type Mode, type Shape } from "./geometry.js";
import { FP4_CODE_BITS, T158_CODES, T158_CODE_BITS, V1_OFFSET_FLAGS, V2_LEAF_HEADER, packParams } from "./leaf-table.js";

export interface LeafSpec {
  mode: Mode;
  /** FP16 bit patterns */
  scaleBits: number;
  biasBits: number;
  /**
   * Codes in row-major order within the leaf: FP4 in [-8, 7], T158 in {-1, 0, 1}.
   * Give either codes or payload.
   */
  codes?: ArrayLike<number>;
  /** Raw payload bytes (FP4 size*size/2, T158 size*size/4; v1: up to 2048), e.g. for reserved symbols. */
  payload?: Uint8Array;
}

export interface V1BlockSpec extends LeafSpec {
  /** ERROR_HINT flag (informational) */
  errorHint?: boolean;
}

export interface V1Spec {
  shape: Shape;
  blocks: readonly V1BlockSpec[];
  /** slot[b] = payload slot of block b (a permutation of 0..B-1); default identity */
  slots?: readonly number[];
}

/** A quadtree node: "leaf", or its four children TL, TR, BL, BR. */
export type QuadTree = "leaf" | readonly [QuadTree, QuadTree, QuadTree, QuadTree];

export interface V2RecordSpec {
  layout: Layout;
  /** MIXED only */
  tree?: QuadTree;
  /** leaves in storage order (uniform: raster; MIXED: pre-order DFS) */
  leaves: readonly LeafSpec[];
  /** extra bytes (a multiple of 16) left before this record; default 0 */
  gapBefore?: number;
}

export interface V2Spec {
  shape: Shape;
  records: readonly V2RecordSpec[];
  /** bytes appended after the last record (ignored by decoders) */
  trailing?: Uint8Array;
}

const MAGIC = [0x53, 0x47, 0x46, 0x34];

function fail(detail: string): never {
  throw new Sgfp4Error("INVALID_ARGUMENT", detail);
}

/** Pack codes into `out` (zeroed) per spec 22.6. */
export function packCodes(mode: Mode, codes: ArrayLike<number>, out: Uint8Array): void {
  packCodesAt(mode, codes, out, 0);
}

/** packCodes into out[at ..). */
function packCodesAt(mode: Mode, codes: ArrayLike<number>, out: Uint8Array, at: number): void {
  const n = codes.length;
  if (mode === MODE_FP4) {
    // two codes per byte; each checked in index order, so a bad one fails with the same message
    let i = 0;
    for (; i + 1 < n; i += 2) {
      const lo = codes[i]!;
      if (!(lo >= -8 && lo <= 7 && Number.isInteger(lo))) fail(`FP4 code ${lo} at ${i} is outside [-8, 7]`);
      const hi = codes[i + 1]!;
      if (!(hi >= -8 && hi <= 7 && Number.isInteger(hi))) fail(`FP4 code ${hi} at ${i + 1} is outside [-8, 7]`);
      out[at + (i >>> 1)]! |= (lo & 0xf) | ((hi & 0xf) << FP4_CODE_BITS);
    }
    if (i < n) {
      const q = codes[i]!;
      if (!(q >= -8 && q <= 7 && Number.isInteger(q))) fail(`FP4 code ${q} at ${i} is outside [-8, 7]`);
      out[at + (i >>> 1)]! |= q & 0xf;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const t = codes[i]!;
      // T158_CODES.indexOf(t): the first symbol of each code
      const sym = t === T158_CODES[0] ? 0 : t === T158_CODES[1] ? 1 : t === T158_CODES[2] ? 2 : -1;
      if (sym < 0) fail(`T158 code ${t} at ${i} is not -1, 0 or 1`);
      out[at + (i >>> 2)]! |= sym << ((i & 3) * T158_CODE_BITS);
    }
  }
}

/** The leaf's payload written at out[at ..) (zeroed). */
function writeLeafPayload(leaf: LeafSpec, size: number, r: number, i: number, out: Uint8Array, at: number): void {
  const n = payloadBytes(size, leaf.mode);
  if (leaf.payload) {
    if (leaf.codes) fail(`record ${r} leaf ${i}: give codes or payload, not both`);
    if (leaf.payload.length !== n) fail(`record ${r} leaf ${i}: payload of ${leaf.payload.length} bytes, expected ${n}`);
    out.set(leaf.payload, at);
    return;
  }
  if (!leaf.codes || leaf.codes.length !== size * size) fail(`record ${r} leaf ${i}: expected ${size * size} codes`);
  packCodesAt(leaf.mode, leaf.codes, out, at);
}

function leafPayload(leaf: LeafSpec, size: number, where: string): Uint8Array {
  const n = payloadBytes(size, leaf.mode);
  if (leaf.payload) {
    if (leaf.codes) fail(`${where}: give codes or payload, not both`);
    if (leaf.payload.length !== n) fail(`${where}: payload of ${leaf.payload.length} bytes, expected ${n}`);
    return leaf.payload;
  }
  if (!leaf.codes || leaf.codes.length !== size * size) fail(`${where}: expected ${size * size} codes`);
  const out = new Uint8Array(n);
  packCodes(leaf.mode, leaf.codes, out);
  return out;
}

function checkHalf(bits: number, what: string): void {
  if (!Number.isInteger(bits) || bits < 0 || bits > 0xffff) fail(`${what} 0x${bits.toString(16)} is not a 16-bit pattern`);
}

/** checkHalf of leaf i of record r's scale or bias (its message made only when it fails). */
function checkLeafHalf(bits: number, r: number, i: number, what: string): void {
  if (!Number.isInteger(bits) || bits < 0 || bits > 0xffff) checkHalf(bits, `record ${r} leaf ${i}: ${what}`);
}

export function writeV1(spec: V1Spec): Uint8Array {
  const { blockCount: B } = tiling(spec.shape);
  if (spec.blocks.length !== B) fail(`shape needs ${B} blocks, got ${spec.blocks.length}`);
  const slots = spec.slots ?? spec.blocks.map((_, i) => i);
  if (slots.length !== B || new Set(slots).size !== B || slots.some((s) => !(s >= 0 && s < B))) fail("slots must be a permutation of 0..B-1");
  const out = new Uint8Array((8 + V1_PAYLOAD_BYTES) * B);
  const dv = new DataView(out.buffer);
  spec.blocks.forEach((blk, b) => {
    checkHalf(blk.scaleBits, "scale");
    checkHalf(blk.biasBits, "bias");
    if (blk.mode !== MODE_FP4 && blk.mode !== MODE_T158) fail(`block ${b}: mode must be 0 or 1`);
    let payload: Uint8Array;
    if (blk.payload && blk.payload.length === V1_PAYLOAD_BYTES) payload = blk.payload;
    else payload = leafPayload(blk, MACROBLOCK, `block ${b}`);
    const base = slots[b]! * V1_PAYLOAD_BYTES;
    dv.setUint32(4 * b, packParams(blk.scaleBits, blk.biasBits), true);
    dv.setUint32(4 * B + 4 * b, (base | blk.mode | (blk.errorHint ? V1_OFFSET_FLAGS.ERROR_HINT_MASK : 0)) >>> 0, true);
    out.set(payload, 8 * B + base);
  });
  return out;
}

/** Split-map bits and leaf geometry of a tree, pre-order DFS. */
export function encodeTree(tree: QuadTree): { map: [number, number, number]; leaves: { y: number; x: number; size: number }[] } {
  const map: [number, number, number] = [0, 0, 0];
  const leaves: { y: number; x: number; size: number }[] = [];
  let bit = 0;
  const visit = (node: QuadTree, y: number, x: number, size: number): void => {
    if (size > 4) {
      const k = bit++;
      if (node !== "leaf") {
        map[k >>> 5] = (map[k >>> 5]! | (1 << (k & 31))) >>> 0;
        const h = size / 2;
        visit(node[0], y, x, h);
        visit(node[1], y, x + h, h);
        visit(node[2], y + h, x, h);
        visit(node[3], y + h, x + h, h);
        return;
      }
    } else if (node !== "leaf") fail("a 4x4 node cannot split");
    leaves.push({ y, x, size });
  };
  visit(tree, 0, 0, MACROBLOCK);
  return { map, leaves };
}

/**
 * One v2 record's bytes as a stream holds them: layout word, split map (MIXED), leaf headers,
 * then the payloads, each part zero-padded to 16 bytes. Records are independent, so they can be
 * written apart (the encoder's worker threads do) and joined with assembleV2. `r` numbers the
 * record in error messages.
 */
export function writeV2Record(rec: V2RecordSpec, r = 0): Uint8Array {
  // MIXED: the tree's leaves (encodeTree once, for the sizes and the header's map); uniform: one size
  let tree: ReturnType<typeof encodeTree> | undefined;
  let uniform = 0;
  let count: number;
  if (rec.layout === LAYOUT.MIXED) {
    if (!rec.tree) fail(`record ${r}: MIXED needs a tree`);
    tree = encodeTree(rec.tree);
    count = tree.leaves.length;
  } else {
    const size = UNIFORM_LEAF_SIZE[rec.layout];
    if (size === undefined) fail(`record ${r}: layout ${rec.layout} is not 0-5`);
    uniform = size;
    count = (MACROBLOCK / size) ** 2;
  }
  const sizeOf = (i: number): number => (tree ? tree.leaves[i]!.size : uniform);
  const leaves = rec.leaves;
  if (leaves.length !== count) fail(`record ${r}: layout has ${count} leaves, got ${leaves.length}`);
  const headerBytes = align16((tree ? 16 : 4) + 4 * count);
  let total = headerBytes;
  for (let i = 0; i < count; i++) total += align16(payloadBytes(sizeOf(i), leaves[i]!.mode));
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, rec.layout, true);
  let h = 4;
  if (tree) {
    const { map } = tree;
    for (let i = 0; i < map.length; i++) dv.setUint32(4 + 4 * i, map[i]!, true);
    h += 12;
  }
  let p = headerBytes;
  for (let i = 0; i < count; i++) {
    const leaf = leaves[i]!;
    checkLeafHalf(leaf.scaleBits, r, i, "scale");
    checkLeafHalf(leaf.biasBits, r, i, "bias");
    if (leaf.biasBits & ~V2_LEAF_HEADER.BIAS_MASK) fail(`record ${r} leaf ${i}: v2 bias 0x${leaf.biasBits.toString(16)} has low 4 bits set; round it to the 0xFFF0 mask first`);
    if (leaf.mode !== MODE_FP4 && leaf.mode !== MODE_T158) fail(`record ${r} leaf ${i}: mode must be 0 or 1`);
    dv.setUint32(h + 4 * i, (packParams(leaf.scaleBits, leaf.biasBits) | leaf.mode) >>> 0, true);
    const size = sizeOf(i);
    writeLeafPayload(leaf, size, r, i, out, p);
    p += align16(payloadBytes(size, leaf.mode));
  }
  return out;
}

/**
 * A v2 stream from its records' bytes (each as writeV2Record writes it), one per block in
 * raster order: header, offset table, records packed in order.
 */
export function assembleV2(shape: Shape, records: readonly Uint8Array[]): Uint8Array {
  return assemble(shape, records);
}

/**
 * The bytes of a v2 stream before its records: header and offset table, for records of these
 * lengths (each a multiple of 16) packed in block order after it, record r after gaps[r] bytes.
 * A stream can then be written piece by piece: this prefix, then each record (assembleV2 joins them).
 */
export function v2Prefix(shape: Shape, recordLengths: ArrayLike<number>, gaps?: readonly number[]): Uint8Array {
  const { blockCount: B } = tiling(shape);
  if (recordLengths.length !== B) fail(`shape needs ${B} records, got ${recordLengths.length}`);
  const base = align16(16 + 4 * B);
  const out = new Uint8Array(base);
  const dv = new DataView(out.buffer);
  out.set(MAGIC, 0);
  out[4] = 2;
  dv.setUint32(5, B, true);
  let at = 0;
  for (let r = 0; r < B; r++) {
    const length = recordLengths[r]!;
    if (length % 16 !== 0) fail(`record ${r}: ${length} bytes is not a multiple of 16`);
    at += gaps?.[r] ?? 0;
    dv.setUint32(16 + 4 * r, at, true);
    at += length;
  }
  return out;
}

function assemble(shape: Shape, records: readonly Uint8Array[], gaps?: readonly number[], trailing?: Uint8Array): Uint8Array {
  const prefix = v2Prefix(shape, records.map((r) => r.length), gaps);
  let total = prefix.length + (trailing?.length ?? 0);
  records.forEach((rec, r) => (total += (gaps?.[r] ?? 0) + rec.length));
  const out = new Uint8Array(total);
  out.set(prefix, 0);
  let at = prefix.length;
  records.forEach((rec, r) => {
    at += gaps?.[r] ?? 0;
    out.set(rec, at);
    at += rec.length;
  });
  if (trailing) out.set(trailing, at);
  return out;
}

export function writeV2(spec: V2Spec): Uint8Array {
  const { blockCount: B } = tiling(spec.shape);
  if (spec.records.length !== B) fail(`shape needs ${B} records, got ${spec.records.length}`);
  const gaps = spec.records.map((rec, r) => {
    const gap = rec.gapBefore ?? 0;
    if (gap % 16 !== 0 || gap < 0) fail(`record ${r}: gapBefore must be a non-negative multiple of 16`);
    return gap;
  });
  return assemble(spec.shape, spec.records.map(writeV2Record), gaps, spec.trailing);
}
