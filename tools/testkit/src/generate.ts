/**
 * Random valid containers, built with @sgfp4/format's writer, together with the output they
 * must decode to. The expected output is computed here from what was chosen (codes, scales,
 * biases, leaf geometry), never by running a decoder: w = fround(S * code + Bias), where the
 * float64 sum is exact (both terms are multiples of 2^-24 below 2^20 in magnitude), so
 * fround is the single rounding DECISIONS.md section 2 asks for.
 */
import { LAYOUT, writeV1, writeV2, type Layout, type LeafSpec, type Mode, type QuadTree, type V1BlockSpec, type V2RecordSpec } from "@sgfp4/format";
import type { Rng } from "./prng.js";

export type Profile = "v1" | "v2";

export interface GenOptions {
  /** allow gaps between v2 records (default true) */
  gaps?: boolean;
  /** allow bytes after the last v2 record (default true) */
  trailing?: boolean;
  /** largest number of macroblocks per dimension (default 3) */
  maxTiles?: number;
  /** force a profile */
  profile?: Profile;
  /** allow a few negative scales (accepted, but `validate --strict` warns); default true */
  negativeScales?: boolean;
  /** use this shape instead of a random one (backends test their own awkward shapes) */
  shape?: readonly [number, number];
  /** v2 layouts to draw from (default: all, MIXED twice as often) */
  layouts?: readonly Layout[];
}

export interface GeneratedCase {
  profile: Profile;
  shape: [number, number];
  bytes: Uint8Array;
  /** the output every decoder must produce, from construction */
  expected: Float32Array;
  /** what the case exercises (for the report and for choosing the strictness of checks) */
  features: {
    gaps: boolean;
    trailing: boolean;
    reservedSymbol: boolean;
    layouts: number[];
    negativeScale: boolean;
  };
}

/** Exact value of an FP16 pattern from the IEEE-754 definition (finite patterns only). */
export function halfValue(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  return sign * (1024 + mant) * 2 ** (exp - 25);
}

/** A finite FP16 pattern, biased toward the cases decoders get wrong. */
export function randomHalf(rng: Rng, allowNegative = true): number {
  const sign = allowNegative && rng.chance(0.5) ? 0x8000 : 0;
  switch (rng.weighted([4, 3, 2, 1, 1, 1])) {
    case 0: // any finite
      return sign | (rng.int(0, 30) << 10) | rng.int(0, 0x3ff);
    case 1: // subnormal
      return sign | rng.int(1, 0x3ff);
    case 2: // signed zero
      return sign;
    case 3: // largest finite, clipped encoders write it
      return sign | 0x7bff;
    case 4: // smallest normal and its neighbours
      return sign | (0x0400 + rng.int(-1, 1));
    default: // "ordinary" weights: exponent around 2^-8 .. 2^2
      return sign | (rng.int(7, 17) << 10) | rng.int(0, 0x3ff);
  }
}

interface LeafChoice {
  spec: LeafSpec;
  /** code of every weight in row-major order inside the leaf */
  codes: Int8Array;
  reservedSymbol: boolean;
}

const T158_SYMBOL_CODE = [0, 1, -1, 0]; // symbol 11 is reserved and decodes as 0

function randomLeaf(rng: Rng, size: number, mode: Mode, biasMask: number, negativeScales: boolean): LeafChoice {
  const n = size * size;
  const scaleBits = rng.chance(0.05) ? randomHalf(rng, negativeScales) : randomHalf(rng, false); // negative scales are accepted
  const biasBits = randomHalf(rng) & biasMask;
  const codes = new Int8Array(n);
  // A leaf is all one code now and then, which exposes sign-of-zero and table bugs.
  const constant = rng.chance(0.1);
  if (mode === 0) {
    const c = rng.int(-8, 7);
    for (let i = 0; i < n; i++) codes[i] = constant ? c : rng.int(-8, 7);
    return { spec: { mode, scaleBits, biasBits, codes }, codes, reservedSymbol: false };
  }
  if (rng.chance(0.3)) {
    // raw payload with the reserved symbol 11 mixed in
    const payload = new Uint8Array(n / 4);
    for (let i = 0; i < n; i++) {
      const sym = rng.weighted([2, 2, 2, 1]);
      payload[i >>> 2]! |= sym << ((i & 3) * 2);
      codes[i] = T158_SYMBOL_CODE[sym]!;
    }
    return { spec: { mode, scaleBits, biasBits, payload }, codes, reservedSymbol: true };
  }
  const c = rng.int(-1, 1);
  for (let i = 0; i < n; i++) codes[i] = constant ? c : rng.int(-1, 1);
  return { spec: { mode, scaleBits, biasBits, codes: Array.from(codes) }, codes, reservedSymbol: false };
}

function randomShape(rng: Rng, maxTiles: number): [number, number] {
  // Now and then a long thin tensor of up to 8 blocks, so B takes every residue mod 4 (the
  // v2 record-region base align16(16 + 4*B) differs from 16 + 4*B unless B % 4 == 0).
  const wide = rng.chance(0.1);
  const dimTiles = (): number => (wide ? rng.int(1, 8) : rng.int(1, maxTiles));
  const dim = (): number => {
    const tiles = dimTiles();
    // Exact multiples of 64 half the time, cropped shapes (including 1) the other half.
    if (rng.chance(0.5)) return tiles * 64;
    return (tiles - 1) * 64 + rng.int(1, 63);
  };
  if (wide) return rng.chance(0.5) ? [dim(), rng.int(1, 64)] : [rng.int(1, 64), dim()];
  return [dim(), dim()];
}

function randomTree(rng: Rng, size: number, depth: number): QuadTree {
  if (size === 4) return "leaf";
  const pSplit = depth === 0 ? 0.9 : 0.55 - depth * 0.08;
  if (!rng.chance(pSplit)) return "leaf";
  const h = size / 2;
  return [randomTree(rng, h, depth + 1), randomTree(rng, h, depth + 1), randomTree(rng, h, depth + 1), randomTree(rng, h, depth + 1)];
}

/** Leaf geometry of a tree in pre-order DFS (TL, TR, BL, BR), computed here independently. */
export function treeLeaves(tree: QuadTree, y = 0, x = 0, size = 64, out: { y: number; x: number; size: number }[] = []): { y: number; x: number; size: number }[] {
  if (tree === "leaf") out.push({ y, x, size });
  else {
    const h = size / 2;
    treeLeaves(tree[0], y, x, h, out);
    treeLeaves(tree[1], y, x + h, h, out);
    treeLeaves(tree[2], y + h, x, h, out);
    treeLeaves(tree[3], y + h, x + h, h, out);
  }
  return out;
}

const UNIFORM_SIZE: Record<number, number> = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 };

/** The decoded value of one weight, DECISIONS.md section 2, from this module's own FP16 oracle. */
export function weightValue(scaleBits: number, biasBits: number, code: number): number {
  return Math.fround(halfValue(scaleBits) * code + halfValue(biasBits));
}

function placeLeaf(out: Float32Array, shape: [number, number], tilesX: number, block: number, y: number, x: number, size: number, leaf: LeafChoice): void {
  const [rows, cols] = shape;
  const top = Math.floor(block / tilesX) * 64 + y;
  const left = (block % tilesX) * 64 + x;
  for (let i = 0; i < size; i++) {
    const r = top + i;
    if (r >= rows) break;
    for (let j = 0; j < size; j++) {
      const c = left + j;
      if (c >= cols) break;
      out[r * cols + c] = weightValue(leaf.spec.scaleBits, leaf.spec.biasBits, leaf.codes[i * size + j]!);
    }
  }
}

const ALL_LAYOUTS: readonly Layout[] = [LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_8, LAYOUT.MIXED, LAYOUT.MIXED, LAYOUT.FULL_4x4];

export function generateValid(rng: Rng, opts: GenOptions = {}): GeneratedCase {
  const profile: Profile = opts.profile ?? (rng.chance(0.35) ? "v1" : "v2");
  const shape: [number, number] = opts.shape ? [opts.shape[0], opts.shape[1]] : randomShape(rng, opts.maxTiles ?? 3);
  const negativeScales = opts.negativeScales ?? true;
  const tilesY = Math.ceil(shape[0] / 64);
  const tilesX = Math.ceil(shape[1] / 64);
  const B = tilesY * tilesX;
  const expected = new Float32Array(shape[0] * shape[1]);
  const features: GeneratedCase["features"] = { gaps: false, trailing: false, reservedSymbol: false, layouts: [], negativeScale: false };
  const note = (leaf: LeafChoice): void => {
    if (leaf.reservedSymbol) features.reservedSymbol = true;
    if (leaf.spec.scaleBits & 0x8000) features.negativeScale = true;
  };
  // The whole case favours one mode sometimes, so long all-T158 or all-FP4 runs occur too.
  const pT158 = rng.pick([0, 0.5, 1]);
  const mode = (): Mode => (rng.chance(pT158) ? 1 : 0);

  if (profile === "v1") {
    const blocks: V1BlockSpec[] = [];
    for (let b = 0; b < B; b++) {
      const leaf = randomLeaf(rng, 64, mode(), 0xffff, negativeScales);
      note(leaf);
      blocks.push({ ...leaf.spec, errorHint: rng.chance(0.3) });
      placeLeaf(expected, shape, tilesX, b, 0, 0, 64, leaf);
    }
    const slots = rng.chance(0.5) ? rng.shuffle(Array.from({ length: B }, (_, i) => i)) : undefined;
    const bytes = writeV1({ shape, blocks, ...(slots ? { slots } : {}) });
    return { profile, shape, bytes, expected, features };
  }

  const records: V2RecordSpec[] = [];
  const allowGaps = opts.gaps ?? true;
  for (let b = 0; b < B; b++) {
    const layout = rng.pick(opts.layouts ?? ALL_LAYOUTS);
    features.layouts.push(layout);
    let geometry: { y: number; x: number; size: number }[];
    let tree: QuadTree | undefined;
    if (layout === LAYOUT.MIXED) {
      tree = randomTree(rng, 64, 0);
      geometry = treeLeaves(tree);
    } else {
      const size = UNIFORM_SIZE[layout]!;
      geometry = [];
      for (let y = 0; y < 64; y += size) for (let x = 0; x < 64; x += size) geometry.push({ y, x, size });
    }
    const leaves: LeafSpec[] = [];
    for (const g of geometry) {
      const leaf = randomLeaf(rng, g.size, mode(), 0xfff0, negativeScales);
      note(leaf);
      leaves.push(leaf.spec);
      placeLeaf(expected, shape, tilesX, b, g.y, g.x, g.size, leaf);
    }
    const gapBefore = allowGaps && rng.chance(0.15) ? 16 * rng.int(1, 4) : 0;
    if (gapBefore) features.gaps = true;
    records.push({ layout, leaves, ...(tree ? { tree } : {}), ...(gapBefore ? { gapBefore } : {}) });
  }
  const trailing = (opts.trailing ?? true) && rng.chance(0.15) ? rng.bytes(rng.int(1, 40)) : undefined;
  if (trailing) features.trailing = true;
  const bytes = writeV2({ shape, records, ...(trailing ? { trailing } : {}) });
  return { profile, shape, bytes, expected, features };
}
