/**
 * Parser for v1 and v2 streams. It applies every rule of DECISIONS.md section 3 (first fault
 * found wins) and produces the leaf table that all decoders consume (docs/ARCHITECTURE.md).
 * It never reads outside `bytes` and allocates only in proportion to the stream's length.
 */
import { Sgfp4Error } from "./errors.js";
import { halfBitsToFloatBits, isHalfNonFinite } from "./fp16.js";
import {
  LAYOUT,
  MACROBLOCK,
  MODE_FP4,
  MODE_T158,
  UNIFORM_LEAF_SIZE,
  V1_PAYLOAD_BYTES,
  align16,
  payloadBytes,
  tiling,
  type Layout,
  type Mode,
  type Profile,
  type Shape,
} from "./geometry.js";
import {
  LEAF_BLOCK_WORD,
  LEAF_GEOMETRY_WORD,
  LEAF_PARAMS_WORD,
  LEAF_PAYLOAD_WORD,
  LEAF_WORDS,
  MAX_LEAF_LOG2,
  PAYLOAD_ALIGN,
  V1_OFFSET_FLAGS,
  V1_T158_BYTES,
  V2_LEAF_HEADER,
  geometryLog2,
  leafPayloadBytes,
  packGeometry,
  packParams,
  paramsBiasBits,
  paramsScaleBits,
  readLeaf,
  v2HeaderParams,
} from "./leaf-table.js";

export interface Limits {
  /** Largest decoded output in bytes (float32 elements * 4). Default 2^31 (DECISIONS.md 5). */
  maxOutputBytes?: number;
}
export const DEFAULT_MAX_OUTPUT_BYTES = 2 ** 31;

export interface ParseOptions {
  profile: Profile | "auto";
  shape: Shape;
  limits?: Limits;
}

/** One macroblock: a v1 block or a v2 record. */
export interface BlockInfo {
  readonly index: number;
  readonly by: number;
  readonly bx: number;
  /** v2: absolute byte offset of the record; v1: absolute offset of the payload slot */
  readonly offset: number;
  /** v2 layout (0-5); v1: -1 */
  readonly layout: Layout | -1;
  /** v2 MIXED: the three split-map words */
  readonly splitMap?: readonly [number, number, number];
  /** v1: the raw flags4 (MODE, ERROR_HINT) */
  readonly flags?: number;
  /** first leaf of this block in the leaf table, and how many */
  readonly firstLeaf: number;
  readonly leafCount: number;
  /** bytes the record occupies (v2), the payload slot (v1) */
  readonly byteLength: number;
}

export interface Leaf {
  readonly block: number;
  /** position inside the macroblock */
  readonly y: number;
  readonly x: number;
  readonly size: number;
  readonly mode: Mode;
  readonly scaleBits: number;
  readonly biasBits: number;
  readonly payloadOffset: number;
  readonly payloadBytes: number;
}

export interface Warning {
  kind: "trailing-bytes" | "gap-between-records" | "negative-scale" | "shared-payload" | "unreferenced-payload" | "mixed-uniform-tree";
  message: string;
  offset?: number;
  record?: number;
  leaf?: number;
}

export interface Container {
  readonly profile: Profile;
  readonly shape: Shape;
  readonly tilesY: number;
  readonly tilesX: number;
  readonly blockCount: number;
  readonly blocks: readonly BlockInfo[];
  /** 4 words per leaf; see docs/ARCHITECTURE.md */
  readonly leafTable: Uint32Array;
  readonly leafCount: number;
  readonly byteLength: number;
  /** Non-fatal findings (DECISIONS.md section 4 and strict checks). */
  readonly warnings: readonly Warning[];
}

export function leafAt(c: Container, i: number): Leaf {
  const { block, y, x, log2, mode, scaleBits, biasBits, payloadOffset } = readLeaf(c.leafTable, i);
  const size = 1 << log2;
  return { block, y, x, size, mode: mode as Mode, scaleBits, biasBits, payloadOffset, payloadBytes: payloadBytes(size, mode as Mode) };
}

/** Check the shape and limits, return the tiling. Throws INVALID_ARGUMENT / LIMIT_EXCEEDED. */
export function checkShape(shape: Shape, limits: Limits = {}): ReturnType<typeof tiling> {
  if (!Array.isArray(shape) || shape.length !== 2) throw new Sgfp4Error("INVALID_ARGUMENT", "shape must be [O, I]");
  const [rows, cols] = shape;
  for (const d of [rows, cols]) {
    if (!Number.isSafeInteger(d) || d < 1) throw new Sgfp4Error("INVALID_ARGUMENT", `shape dimensions must be integers >= 1, got [${rows}, ${cols}]`);
  }
  const max = limits.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const need = rows * cols * 4;
  if (need > max) {
    throw new Sgfp4Error("LIMIT_EXCEEDED", `output of ${rows}x${cols} float32 needs ${need} bytes, over the limit of ${max} (raise limits.maxOutputBytes)`);
  }
  return tiling(shape);
}

export function detectProfile(bytes: Uint8Array, shape: Shape): Profile {
  if (bytes.length >= 4 && bytes[0] === 0x53 && bytes[1] === 0x47 && bytes[2] === 0x46 && bytes[3] === 0x34) return "v2";
  const { blockCount } = tiling(shape);
  if (bytes.length === (8 + V1_PAYLOAD_BYTES) * blockCount) return "v1";
  // Neither: report against the profile the stream looks closest to.
  return bytes.length > 0 && bytes[0] === 0x53 ? "v2" : "v1";
}

export function parse(bytes: Uint8Array, opts: ParseOptions): Container {
  if (!(bytes instanceof Uint8Array)) throw new Sgfp4Error("INVALID_ARGUMENT", "stream must be a Uint8Array");
  const t = checkShape(opts.shape, opts.limits);
  const profile = opts.profile === "auto" ? detectProfile(bytes, opts.shape) : opts.profile;
  if (profile === "v1") return parseV1(bytes, opts.shape, t);
  if (profile === "v2") return parseV2(bytes, opts.shape, t);
  throw new Sgfp4Error("INVALID_ARGUMENT", `profile must be v1, v2 or auto, got ${String(opts.profile)}`);
}

export interface PartialParse {
  /**
   * The whole container when the stream is valid; after a fault in block/record r, the blocks
   * before it (`blocks.length === r`, their leaves only; `blockCount` stays the tensor's);
   * undefined when the fault is in the stream's header (no block was reached).
   */
  container?: Container;
  fault?: Sgfp4Error;
}

/**
 * Like parse, but a refused stream still yields the structure up to its first fault (for tools
 * that show a broken stream, e.g. the inspector). Never allocates more than parse does.
 */
export function parseUntilFault(bytes: Uint8Array, opts: ParseOptions): PartialParse {
  try {
    return { container: parse(bytes, opts) };
  } catch (e) {
    if (!(e instanceof Sgfp4Error)) throw e;
    const fault = e;
    const r = fault.location.record;
    if (r === undefined) return { fault };
    const t = checkShape(opts.shape, opts.limits);
    const profile = opts.profile === "auto" ? detectProfile(bytes, opts.shape) : opts.profile;
    // the blocks before r passed every check of the first parse, so this one succeeds
    const container = profile === "v1" ? parseV1(bytes, opts.shape, t, r) : parseV2(bytes, opts.shape, t, r);
    return { container, fault };
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Words 256..511 of a v1 T158 payload are all zero (fast check; the caller locates a fault). */
function upperHalfZero(words: Uint32Array, first: number): boolean {
  let any = 0;
  for (let w = first; w < first + 256; w++) any |= words[w]!;
  return any === 0;
}

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

function checkParams(scaleBits: number, biasBits: number, where: { record: number; leaf?: number; offset: number }, warnings: Warning[]): void {
  if (isHalfNonFinite(scaleBits)) throw new Sgfp4Error("NONFINITE_PARAMETER", `scale 0x${hex4(scaleBits)} is Inf or NaN`, where);
  if (isHalfNonFinite(biasBits)) throw new Sgfp4Error("NONFINITE_PARAMETER", `bias 0x${hex4(biasBits)} is Inf or NaN`, where);
  if (scaleBits & 0x8000 && halfBitsToFloatBits(scaleBits) !== 0x80000000) {
    warnings.push({ kind: "negative-scale", message: `negative scale 0x${hex4(scaleBits)}`, ...where });
  }
}

const hex4 = (n: number) => n.toString(16).padStart(4, "0");

/** `stopAt`: parse blocks 0..stopAt-1 only (parseUntilFault). */
function parseV1(bytes: Uint8Array, shape: Shape, { tilesY, tilesX, blockCount: B }: ReturnType<typeof tiling>, stopAt = B): Container {
  const expected = (8 + V1_PAYLOAD_BYTES) * B;
  if (bytes.length !== expected) {
    throw new Sgfp4Error("SIZE_MISMATCH", `v1 stream of ${bytes.length} bytes, expected 8*B + 2048*B = ${expected} for B = ${B} blocks of shape [${shape[0]}, ${shape[1]}]`);
  }
  const dv = view(bytes);
  const words = LITTLE_ENDIAN && bytes.byteOffset % 4 === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2) : undefined;
  const blobBase = 8 * B;
  const blobLen = V1_PAYLOAD_BYTES * B;
  const table = new Uint32Array(B * LEAF_WORDS);
  const blocks: BlockInfo[] = new Array(B);
  const warnings: Warning[] = [];
  const slotUse = new Map<number, number>();
  for (let b = 0; b < stopAt; b++) {
    const header = dv.getUint32(4 * b, true);
    const offWord = dv.getUint32(4 * B + 4 * b, true);
    const flags = offWord & V1_OFFSET_FLAGS.ALL_MASK;
    const base = offWord - flags; // low 4 bits cleared, stays unsigned
    const at = { record: b, offset: 4 * B + 4 * b };
    if (flags & V1_OFFSET_FLAGS.RESERVED_MASK) throw new Sgfp4Error("RESERVED_BITS", `v1 offset flag bits 2-3 set (flags 0x${flags.toString(16)})`, at);
    if (base + V1_PAYLOAD_BYTES > blobLen) {
      throw new Sgfp4Error("OFFSET_OUT_OF_RANGE", `payload base ${base} + 2048 exceeds the ${blobLen}-byte payload blob`, at);
    }
    const scaleBits = paramsScaleBits(header);
    const biasBits = paramsBiasBits(header);
    checkParams(scaleBits, biasBits, { record: b, offset: 4 * b }, warnings);
    const mode = (flags & V1_OFFSET_FLAGS.MODE_MASK) as Mode;
    const payload = blobBase + base;
    if (mode === MODE_T158 && !(words && upperHalfZero(words, (payload + V1_T158_BYTES) >>> 2))) {
      for (let o = payload + V1_T158_BYTES; o < payload + V1_PAYLOAD_BYTES; o += 4) {
        if (dv.getUint32(o, true) !== 0) {
          throw new Sgfp4Error("NONZERO_PADDING", `v1 T158 payload word ${(o - payload) / 4} (of the zero upper half 256..511) is nonzero`, { record: b, offset: o });
        }
      }
    }
    slotUse.set(base, (slotUse.get(base) ?? 0) + 1);
    table[b * LEAF_WORDS + LEAF_BLOCK_WORD] = b;
    table[b * LEAF_WORDS + LEAF_GEOMETRY_WORD] = packGeometry(0, 0, MAX_LEAF_LOG2, mode);
    table[b * LEAF_WORDS + LEAF_PARAMS_WORD] = packParams(scaleBits, biasBits);
    table[b * LEAF_WORDS + LEAF_PAYLOAD_WORD] = payload;
    blocks[b] = { index: b, by: Math.floor(b / tilesX), bx: b % tilesX, offset: payload, layout: -1, flags, firstLeaf: b, leafCount: 1, byteLength: V1_PAYLOAD_BYTES };
  }
  if (stopAt < B) return { profile: "v1", shape, tilesY, tilesX, blockCount: B, blocks: blocks.slice(0, stopAt), leafTable: table.subarray(0, stopAt * LEAF_WORDS), leafCount: stopAt, byteLength: bytes.length, warnings };
  for (const [base, n] of slotUse) {
    if (n > 1) warnings.push({ kind: "shared-payload", message: `${n} blocks share the payload at blob offset ${base}`, offset: blobBase + base });
  }
  // Slots not starting at a multiple of 2048 or unreferenced bytes: the blob is not a plain permutation.
  let covered = 0;
  for (const base of slotUse.keys()) if (base % V1_PAYLOAD_BYTES === 0) covered++;
  if (covered < B) warnings.push({ kind: "unreferenced-payload", message: `${B - covered} of ${B} payload slots are not referenced by any block` });
  return { profile: "v1", shape, tilesY, tilesX, blockCount: B, blocks, leafTable: table, leafCount: B, byteLength: bytes.length, warnings };
}

const MAGIC = [0x53, 0x47, 0x46, 0x34]; // 'SGF4'

function requireZero(bytes: Uint8Array, from: number, to: number, what: string, loc: { record?: number; leaf?: number } = {}): void {
  for (let o = from; o < to; o++) {
    if (bytes[o] !== 0) throw new Sgfp4Error("NONZERO_PADDING", `nonzero byte 0x${bytes[o]!.toString(16)} in ${what}`, { ...loc, offset: o });
  }
}

/** Growable leaf table: v2 leaf counts are only known while walking the records. */
class LeafTableBuilder {
  words: Uint32Array;
  count = 0;
  /** end of the last record's payloads (set by the fast path) */
  lastEnd = 0;
  constructor(initialLeaves: number) {
    this.words = new Uint32Array(Math.max(16, initialLeaves) * LEAF_WORDS);
  }
  reserve(more: number): void {
    let size = this.words.length;
    while ((this.count + more) * LEAF_WORDS > size) size *= 2;
    if (size !== this.words.length) {
      const next = new Uint32Array(size);
      next.set(this.words);
      this.words = next;
    }
  }
  push(block: number, geometry: number, params: number, payload: number): void {
    this.reserve(1);
    this.set(this.count++, block, geometry, params, payload);
  }
  set(leaf: number, block: number, geometry: number, params: number, payload: number): void {
    const i = leaf * LEAF_WORDS;
    this.words[i + LEAF_BLOCK_WORD] = block;
    this.words[i + LEAF_GEOMETRY_WORD] = geometry;
    this.words[i + LEAF_PARAMS_WORD] = params;
    this.words[i + LEAF_PAYLOAD_WORD] = payload;
  }
}

/**
 * Leaf geometry (y, x, log2 size) of a MIXED record, in pre-order DFS (TL, TR, BL, BR).
 * Returns the number of map bits consumed. The walk visits at most 85 nodes.
 */
export function walkSplitMap(map: readonly [number, number, number], out: (y: number, x: number, log2: number) => void): number {
  let bit = 0;
  const visit = (y: number, x: number, log2: number): void => {
    if (log2 > 2) {
      const k = bit++;
      if ((map[k >>> 5]! >>> (k & 31)) & 1) {
        const h = 1 << (log2 - 1);
        visit(y, x, log2 - 1);
        visit(y, x + h, log2 - 1);
        visit(y + h, x, log2 - 1);
        visit(y + h, x + h, log2 - 1);
        return;
      }
    }
    out(y, x, log2);
  };
  visit(0, 0, 6);
  return bit;
}

/** `stopAt`: parse records 0..stopAt-1 only (parseUntilFault). */
function parseV2(bytes: Uint8Array, shape: Shape, { tilesY, tilesX, blockCount: expectedB }: ReturnType<typeof tiling>, stopAt = expectedB): Container {
  const len = bytes.length;
  for (let i = 0; i < 4; i++) {
    if (i >= len) throw new Sgfp4Error("TRUNCATED", `stream of ${len} bytes ends inside the magic`, { offset: len });
    if (bytes[i] !== MAGIC[i]) throw new Sgfp4Error("BAD_MAGIC", `stream does not start with 'SGF4'`, { offset: i });
  }
  if (len < 5) throw new Sgfp4Error("TRUNCATED", "stream ends before the version byte", { offset: len });
  if (bytes[4] !== 0x02) throw new Sgfp4Error("BAD_VERSION", `version byte is 0x${bytes[4]!.toString(16)}, expected 0x02`, { offset: 4 });
  if (len < 16) throw new Sgfp4Error("TRUNCATED", `stream of ${len} bytes ends inside the 16-byte fixed header`, { offset: len });
  const dv = view(bytes);
  const B = dv.getUint32(5, true);
  if (B !== expectedB) {
    throw new Sgfp4Error("RECORD_COUNT_MISMATCH", `stream declares B = ${B} records, shape [${shape[0]}, ${shape[1]}] needs ${tilesY}*${tilesX} = ${expectedB}`, { offset: 5 });
  }
  requireZero(bytes, 9, 16, "the fixed-header pad");
  const tableEnd = 16 + 4 * B;
  const base = align16(tableEnd);
  if (len < tableEnd) throw new Sgfp4Error("TRUNCATED", `stream ends inside the ${B}-entry record offset table`, { offset: len });
  if (len < base) throw new Sgfp4Error("TRUNCATED", "stream ends inside the offset-table pad", { offset: len });
  requireZero(bytes, tableEnd, base, "the offset-table pad");

  const blocks: BlockInfo[] = new Array(B);
  const warnings: Warning[] = [];
  // Word view for the fast path (only when the bytes are 4-aligned in their buffer).
  const words = LITTLE_ENDIAN && bytes.byteOffset % 4 === 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset, len >>> 2) : undefined;
  // Every leaf costs at least 20 stream bytes (4 header + 16 payload), so this bounds the table
  // and it is allocated once.
  const leaves = new LeafTableBuilder(Math.min(B * 256, Math.floor(len / 20) + 16));
  let prev = -1;
  let prevEnd = base;
  for (let b = 0; b < stopAt; b++) {
    const rel = dv.getUint32(16 + 4 * b, true);
    const at = { record: b, offset: 16 + 4 * b };
    if (rel % 16 !== 0) throw new Sgfp4Error("MISALIGNED_OFFSET", `record offset ${rel} is not a multiple of 16`, at);
    if (rel <= prev) throw new Sgfp4Error("NONMONOTONIC_OFFSET", `record offset ${rel} is not greater than the previous one (${prev})`, at);
    prev = rel;
    const start = base + rel;
    if (start >= len) throw new Sgfp4Error("OFFSET_OUT_OF_RANGE", `record starts at byte ${start}, at or past the end of the ${len}-byte stream`, at);
    if (start > prevEnd) warnings.push({ kind: "gap-between-records", message: `${start - prevEnd} unused bytes before record ${b}`, offset: prevEnd, record: b });
    const info = parseRecord(bytes, dv, b, start, leaves, warnings, Math.floor(b / tilesX), b % tilesX, words);
    blocks[b] = info;
    prevEnd = Math.max(prevEnd, start + info.byteLength);
  }
  if (prevEnd < len && stopAt === B) warnings.push({ kind: "trailing-bytes", message: `${len - prevEnd} bytes after the last record`, offset: prevEnd });
  return {
    profile: "v2",
    shape,
    tilesY,
    tilesX,
    blockCount: B,
    blocks: stopAt < B ? blocks.slice(0, stopAt) : blocks,
    leafTable: leaves.words.subarray(0, leaves.count * 4),
    leafCount: leaves.count,
    byteLength: len,
    warnings,
  };
}

/** Leaf geometry of the uniform layouts as packed word-1 values (y | x << 6 | log2 << 12), raster order. */
const UNIFORM_GEOMETRY: Readonly<Record<number, Uint32Array>> = Object.fromEntries(
  Object.entries(UNIFORM_LEAF_SIZE).map(([layout, size]) => {
    const log2 = Math.log2(size);
    const g: number[] = [];
    for (let y = 0; y < MACROBLOCK; y += size) for (let x = 0; x < MACROBLOCK; x += size) g.push(packGeometry(y, x, log2, MODE_FP4));
    return [layout, Uint32Array.from(g)];
  }),
);

/**
 * The common case, fast: a stream whose bytes are 4-aligned in memory and a record with no
 * fault. Reads words, checks padding a word at a time, and gives up (returns false, having
 * pushed nothing that survives) at the first sign of a fault so that the careful byte-wise
 * loop below reports it with its exact location.
 * The contract's masks and word indices are spelled as literals here: named constants imported
 * from leaf-table.ts cost ~10% of v2 parse time in this loop. test/parse.test.ts ("the word-wise
 * fast path and the byte-wise path agree") holds it to the careful loop, which uses the names.
 */
function parseLeavesFast(words: Uint32Array, b: number, headersAt: number, n: number, geometry: Uint32Array, payloadStart: number, leaves: LeafTableBuilder): boolean {
  const first = leaves.count;
  const lenWords = words.length;
  let p = payloadStart;
  leaves.reserve(n);
  const t = leaves.words;
  for (let i = 0; i < n; i++) {
    const h = words[(headersAt >>> 2) + i]!;
    // reserved flags, Inf/NaN scale or bias, or a negative scale (a warning): the careful path
    if (h & 0xe || (h & 0x7c000000) === 0x7c000000 || (h & 0x7c00) === 0x7c00 || (h & 0x80000000 && h >>> 16 !== 0x8000)) return rollback(leaves, first);
    const mode = h & 1;
    const g = geometry[i]! | (mode << 15);
    const size = 1 << (g >>> 12 & 7);
    const used = mode === 0 ? (size * size) >>> 1 : (size * size) >>> 2;
    const padded = (used + 15) & ~15;
    if (((p + padded) >>> 2) > lenWords) return rollback(leaves, first);
    for (let w = (p + used) >>> 2; w < (p + padded) >>> 2; w++) if (words[w] !== 0) return rollback(leaves, first);
    const k = (first + i) * 4;
    t[k] = b;
    t[k + 1] = g;
    t[k + 2] = (h & 0xfffffff0) >>> 0;
    t[k + 3] = p;
    p += padded;
  }
  leaves.count = first + n;
  leaves.lastEnd = p;
  return true;
}

const { RESERVED_MASK: RESERVED_FLAGS, MODE_MASK: MODE_FLAG } = V2_LEAF_HEADER;

function rollback(leaves: LeafTableBuilder, first: number): false {
  leaves.count = first;
  return false;
}

/** Leaf geometry of a MIXED split map, cached: encoders reuse a few trees over and over. */
const mixedCache = new Map<string, Uint32Array>();
function mixedGeometry(splitMap: readonly [number, number, number], b: number, start: number): Uint32Array {
  const key = `${splitMap[0]},${splitMap[1]},${splitMap[2]}`;
  const hit = mixedCache.get(key);
  if (hit) return hit;
  const geo: number[] = [];
  const used = walkSplitMap(splitMap, (y, x, l) => geo.push(packGeometry(y, x, l, MODE_FP4)));
  for (let k = used; k < 96; k++) {
    if ((splitMap[k >>> 5]! >>> (k & 31)) & 1) {
      throw new Sgfp4Error("NONZERO_PADDING", `split-map bit ${k} is set past the last bit the walk consumed (${used})`, { record: b, offset: start + 4 + (k >>> 3) });
    }
  }
  const geometry = Uint32Array.from(geo);
  if (mixedCache.size >= 4096) mixedCache.clear(); // bounded, whatever the input
  mixedCache.set(key, geometry);
  return geometry;
}

function parseRecord(bytes: Uint8Array, dv: DataView, b: number, start: number, leaves: LeafTableBuilder, warnings: Warning[], by: number, bx: number, words?: Uint32Array): BlockInfo {
  const len = bytes.length;
  if (start + 4 > len) throw new Sgfp4Error("TRUNCATED", "stream ends inside the sb_header", { record: b, offset: len });
  const sb = dv.getUint32(start, true);
  if (sb >>> 3) throw new Sgfp4Error("RESERVED_BITS", `sb_header reserved bits 3-31 are set (0x${sb.toString(16)})`, { record: b, offset: start });
  const layout = (sb & 7) as Layout;
  if (layout > 5) throw new Sgfp4Error("UNKNOWN_LAYOUT", `layout value ${layout}`, { record: b, offset: start });

  let geometry: Uint32Array;
  let splitMap: [number, number, number] | undefined;
  let headersAt = start + 4;
  if (layout === LAYOUT.MIXED) {
    if (start + 16 > len) throw new Sgfp4Error("TRUNCATED", "stream ends inside the split map", { record: b, offset: len });
    splitMap = [dv.getUint32(start + 4, true), dv.getUint32(start + 8, true), dv.getUint32(start + 12, true)];
    geometry = mixedGeometry(splitMap, b, start);
    headersAt = start + 16;
  } else {
    geometry = UNIFORM_GEOMETRY[layout]!;
  }
  const n = geometry.length;
  const headersEnd = headersAt + 4 * n;
  if (headersEnd > len) throw new Sgfp4Error("TRUNCATED", `stream ends inside the ${n} leaf headers`, { record: b, offset: len });
  const payloadStart = align16(headersEnd);
  if (payloadStart > len) throw new Sgfp4Error("TRUNCATED", "stream ends inside the leaf-header pad", { record: b, offset: len });
  requireZero(bytes, headersEnd, payloadStart, "the record header pad", { record: b });

  const firstLeaf = leaves.count;
  let p = payloadStart;
  const fast = words !== undefined && parseLeavesFast(words, b, headersAt, n, geometry, p, leaves);
  if (fast) {
    p = leaves.lastEnd;
  } else for (let i = 0; i < n; i++) {
    const h = dv.getUint32(headersAt + 4 * i, true);
    if (h & RESERVED_FLAGS) throw new Sgfp4Error("RESERVED_BITS", `leaf flag bits 1-3 set (flags 0x${(h & 0xf).toString(16)})`, { record: b, leaf: i, offset: headersAt + 4 * i });
    const mode = h & MODE_FLAG;
    const g = geometry[i]! | packGeometry(0, 0, 0, mode);
    const used = leafPayloadBytes(geometryLog2(g), mode);
    const padded = (used + PAYLOAD_ALIGN - 1) & -PAYLOAD_ALIGN;
    if (p + padded > len) throw new Sgfp4Error("TRUNCATED", `stream ends inside the payload of leaf ${i} (${padded} bytes from ${p})`, { record: b, leaf: i, offset: len });
    for (let o = p + used; o < p + padded; o++) {
      if (bytes[o] !== 0) throw new Sgfp4Error("NONZERO_PADDING", `nonzero byte 0x${bytes[o]!.toString(16)} in a leaf's payload padding`, { record: b, leaf: i, offset: o });
    }
    leaves.push(b, g, v2HeaderParams(h), p);
    p += padded;
  }
  // Parameters last, so a record's structural faults are reported before its values (the fast
  // path has already seen that they are all plain).
  if (!fast) for (let i = 0; i < n; i++) {
    const h = words ? words[(headersAt >>> 2) + i]! : dv.getUint32(headersAt + 4 * i, true);
    const params = v2HeaderParams(h);
    const scaleBits = paramsScaleBits(params);
    const biasBits = paramsBiasBits(params);
    if (isHalfNonFinite(scaleBits) || isHalfNonFinite(biasBits) || (scaleBits & 0x8000 && scaleBits !== 0x8000)) {
      checkParams(scaleBits, biasBits, { record: b, leaf: i, offset: headersAt + 4 * i }, warnings);
    }
  }
  return { index: b, by, bx, offset: start, layout, ...(splitMap ? { splitMap } : {}), firstLeaf, leafCount: n, byteLength: p - start };
}

