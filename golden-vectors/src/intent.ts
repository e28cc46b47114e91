/**
 * The intent of a vector (codes, scale and bias bits, layouts, trees) and everything the builder
 * derives from it on its own: leaf geometry, split-map bits, payload packing, stream layout and
 * the expected float32 output. None of this calls the parser or a decoder: the vectors exist to
 * check those, so their expected values must come from a separate reading of the spec.
 */

export type Shape = readonly [number, number];
export type QuadTree = "leaf" | readonly [QuadTree, QuadTree, QuadTree, QuadTree];

export const FP4 = 0;
export const T158 = 1;
export type Mode = typeof FP4 | typeof T158;

/** T158 2-bit symbols (22.6.2): 00 -> 0, 01 -> +1, 10 -> -1, 11 reserved -> 0. */
export const SYMBOL_VALUE = [0, 1, -1, 0] as const;
export const RESERVED_SYMBOL = 3;

export interface LeafIntent {
  mode: Mode;
  /** FP16 bit patterns as stored (v2: bias has its low 4 bits clear, the writer adds the mode) */
  scaleBits: number;
  biasBits: number;
  /** FP4: codes in [-8, 7]; T158: codes in {-1, 0, 1}. Row-major within the leaf. */
  codes?: readonly number[];
  /** T158 only: raw 2-bit symbols 0..3, for the reserved symbol 11 the writer cannot spell. */
  symbols?: readonly number[];
}

export interface V1BlockIntent extends LeafIntent {
  errorHint?: boolean;
}

export interface V1Intent {
  profile: "v1";
  shape: Shape;
  blocks: readonly V1BlockIntent[];
  /** payload slot of each block (a permutation); default identity */
  slots?: readonly number[];
}

export interface V2RecordIntent {
  layout: 0 | 1 | 2 | 3 | 4 | 5;
  tree?: QuadTree;
  leaves: readonly LeafIntent[];
  gapBefore?: number;
}

export interface V2Intent {
  profile: "v2";
  shape: Shape;
  records: readonly V2RecordIntent[];
  trailing?: Uint8Array;
}

export type Intent = V1Intent | V2Intent;

export const LAYOUT_LEAF_SIZE: Readonly<Record<number, number>> = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 };
export const MIXED = 4;

export const align16 = (n: number): number => Math.ceil(n / 16) * 16;

export function tiles([rows, cols]: Shape): { tilesY: number; tilesX: number; count: number } {
  const tilesY = Math.ceil(rows / 64);
  const tilesX = Math.ceil(cols / 64);
  return { tilesY, tilesX, count: tilesY * tilesX };
}

/** The value of an FP16 pattern straight from the IEEE-754 definition (exact in float64). */
export function halfValue(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0x1f) throw new Error(`0x${h.toString(16)} is not finite: a decode vector cannot use it`);
  const magnitude = exp === 0 ? mant * 2 ** -24 : (1024 + mant) * 2 ** (exp - 25);
  return sign * magnitude; // -1 * 0 is -0: signed zero kept
}

export interface LeafGeometry {
  y: number;
  x: number;
  size: number;
}

/** Leaves of a quadtree in pre-order DFS, quadrants TL, TR, BL, BR (22.8.2). */
export function treeLeaves(tree: QuadTree, y = 0, x = 0, size = 64, out: LeafGeometry[] = []): LeafGeometry[] {
  if (tree === "leaf") {
    out.push({ y, x, size });
    return out;
  }
  if (size === 4) throw new Error("a 4x4 node cannot split");
  const h = size / 2;
  treeLeaves(tree[0], y, x, h, out);
  treeLeaves(tree[1], y, x + h, h, out);
  treeLeaves(tree[2], y + h, x, h, out);
  treeLeaves(tree[3], y + h, x + h, h, out);
  return out;
}

/** Split-map bits in walk order: one per node of size >= 8, 1 = split. */
export function treeBits(tree: QuadTree, size = 64, out: number[] = []): number[] {
  if (size === 4) return out; // 4x4 nodes contribute no bit
  if (tree === "leaf") {
    out.push(0);
    return out;
  }
  out.push(1);
  for (const child of tree) treeBits(child, size / 2, out);
  return out;
}

/** The three little-endian split-map words (bit k is bit k%32 of word k/32). */
export function splitMapWords(tree: QuadTree): [number, number, number] {
  const words: [number, number, number] = [0, 0, 0];
  treeBits(tree).forEach((bit, k) => {
    if (bit) words[k >>> 5] = (words[k >>> 5]! | (1 << (k & 31))) >>> 0;
  });
  return words;
}

export function recordLeaves(rec: V2RecordIntent): LeafGeometry[] {
  if (rec.layout === MIXED) {
    if (!rec.tree) throw new Error("MIXED record without a tree");
    return treeLeaves(rec.tree);
  }
  const size = LAYOUT_LEAF_SIZE[rec.layout]!;
  const out: LeafGeometry[] = [];
  for (let y = 0; y < 64; y += size) for (let x = 0; x < 64; x += size) out.push({ y, x, size });
  return out;
}

/** The code each weight decodes to, in row-major leaf order. */
export function leafCodes(leaf: LeafIntent, count: number): number[] {
  let codes: number[];
  if (leaf.symbols) {
    if (leaf.mode !== T158) throw new Error("symbols are for T158 leaves");
    codes = leaf.symbols.map((s) => SYMBOL_VALUE[s]!);
  } else if (leaf.codes) codes = [...leaf.codes];
  else throw new Error("leaf without codes");
  if (codes.length !== count) throw new Error(`leaf has ${codes.length} codes, needs ${count}`);
  return codes;
}

/** Payload bytes of a leaf packed from the intent (22.6.1 / 22.6.2), before padding. */
export function packLeaf(leaf: LeafIntent, size: number): Uint8Array {
  const n = size * size;
  if (leaf.mode === FP4) {
    const out = new Uint8Array(n / 2);
    leafCodes(leaf, n).forEach((q, i) => {
      if (!Number.isInteger(q) || q < -8 || q > 7) throw new Error(`FP4 code ${q}`);
      out[i >> 1]! |= (q & 0xf) << (4 * (i & 1));
    });
    return out;
  }
  const symbols = leaf.symbols ?? leafCodes(leaf, n).map((t) => (t === 0 ? 0 : t === 1 ? 1 : 2));
  if (symbols.length !== n) throw new Error(`leaf has ${symbols.length} symbols, needs ${n}`);
  const out = new Uint8Array(n / 4);
  symbols.forEach((s, i) => {
    if (!Number.isInteger(s) || s < 0 || s > 3) throw new Error(`T158 symbol ${s}`);
    out[i >> 2]! |= s << (2 * (i & 3));
  });
  return out;
}

export const payloadSize = (size: number, mode: Mode): number => (mode === FP4 ? (size * size) / 2 : (size * size) / 4);

/** Where a canonical writer puts each v2 record and leaf, from the intent alone (22.8.1, 22.8.2). */
export interface V2Placement {
  recordStarts: number[];
  /** per record: absolute offsets of the leaf headers and of the leaf payloads */
  leafHeaderOffsets: number[][];
  payloadOffsets: number[][];
  recordEnds: number[];
  regionBase: number;
}

export function placeV2(intent: V2Intent): V2Placement {
  const B = intent.records.length;
  const regionBase = align16(16 + 4 * B);
  let at = regionBase;
  const p: V2Placement = { recordStarts: [], leafHeaderOffsets: [], payloadOffsets: [], recordEnds: [], regionBase };
  for (const rec of intent.records) {
    at += rec.gapBefore ?? 0;
    const start = at;
    const geo = recordLeaves(rec);
    const headersAt = start + (rec.layout === MIXED ? 16 : 4);
    let payload = align16(headersAt + 4 * geo.length);
    const payloads: number[] = [];
    geo.forEach((g, i) => {
      payloads.push(payload);
      payload += align16(payloadSize(g.size, rec.leaves[i]!.mode));
    });
    p.recordStarts.push(start);
    p.leafHeaderOffsets.push(geo.map((_, i) => headersAt + 4 * i));
    p.payloadOffsets.push(payloads);
    p.recordEnds.push(payload);
    at = payload;
  }
  return p;
}

/** One leaf with its place in the padded grid, what the expected output is made of. */
interface PlacedLeaf {
  by: number;
  bx: number;
  geo: LeafGeometry;
  leaf: LeafIntent;
  /** bias actually applied: v2 masks the stored bits with 0xFFF0 (D2) */
  biasBits: number;
}

function placedLeaves(intent: Intent): PlacedLeaf[] {
  const { tilesX, count } = tiles(intent.shape);
  const out: PlacedLeaf[] = [];
  if (intent.profile === "v1") {
    if (intent.blocks.length !== count) throw new Error(`shape needs ${count} blocks`);
    intent.blocks.forEach((leaf, b) => out.push({ by: Math.floor(b / tilesX), bx: b % tilesX, geo: { y: 0, x: 0, size: 64 }, leaf, biasBits: leaf.biasBits }));
  } else {
    if (intent.records.length !== count) throw new Error(`shape needs ${count} records`);
    intent.records.forEach((rec, b) => {
      const geo = recordLeaves(rec);
      if (geo.length !== rec.leaves.length) throw new Error(`record ${b}: ${geo.length} leaves in the layout, ${rec.leaves.length} given`);
      geo.forEach((g, i) => out.push({ by: Math.floor(b / tilesX), bx: b % tilesX, geo: g, leaf: rec.leaves[i]!, biasBits: rec.leaves[i]!.biasBits & 0xfff0 }));
    });
  }
  return out;
}

/**
 * The expected output: w = S * code + Bias rounded once to float32 (D2). S * code is exact in
 * float64 and so is the sum (at most 44 significant bits), so one Math.fround is the single
 * float32 rounding, ties to even, signed zeros as IEEE-754 says.
 */
export function expectedOutput(intent: Intent): Float32Array {
  const [rows, cols] = intent.shape;
  const out = new Float32Array(rows * cols);
  const written = new Uint8Array(rows * cols);
  for (const { by, bx, geo, leaf, biasBits } of placedLeaves(intent)) {
    const s = halfValue(leaf.scaleBits);
    const bias = halfValue(biasBits);
    const codes = leafCodes(leaf, geo.size * geo.size);
    for (let i = 0; i < geo.size; i++) {
      const r = by * 64 + geo.y + i;
      if (r >= rows) break; // zero padding rows are never output
      for (let j = 0; j < geo.size; j++) {
        const c = bx * 64 + geo.x + j;
        if (c >= cols) break;
        const idx = r * cols + c;
        if (written[idx]) throw new Error(`element (${r}, ${c}) covered twice`);
        written[idx] = 1;
        out[idx] = Math.fround(Math.fround(s) * codes[i * geo.size + j]! + bias);
      }
    }
  }
  const hole = written.indexOf(0);
  if (hole >= 0) throw new Error(`element ${hole} covered by no leaf`);
  return out;
}

/** Little-endian bytes of a float32 array, independent of the host's byte order. */
export function f32Bytes(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const dv = new DataView(out.buffer);
  values.forEach((v, i) => dv.setFloat32(4 * i, v, true));
  return out;
}

/** Deterministic pseudo-random codes (xorshift32), so vectors carry varied, reproducible data. */
export function codePattern(mode: Mode, count: number, seed: number): number[] {
  let x = (seed * 0x9e3779b1 + 1) >>> 0 || 1;
  const next = (): number => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  return Array.from({ length: count }, () => (mode === FP4 ? (next() % 16) - 8 : (next() % 3) - 1));
}
