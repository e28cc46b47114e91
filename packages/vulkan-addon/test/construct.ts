/**
 * Random containers built with @sgfp4/format's writer, with the expected output computed from
 * what was chosen (codes, scales, biases, leaf geometry), never by a decoder.
 */
import { halfToFloat, writeV1, writeV2, type LeafSpec, type QuadTree, type Shape, type V2RecordSpec } from "@sgfp4/format";

export type Rng = () => number;

/** Mulberry32: small, seeded, good enough for test data. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const int = (r: Rng, n: number) => Math.floor(r() * n);

/** FP16 patterns that stress the conversion: subnormals, signed zeros, negatives, extremes. */
export function randomHalf(r: Rng, v2Bias = false): number {
  let h: number;
  switch (int(r, 8)) {
    case 0: h = int(r, 0x400); break; // zero or subnormal
    case 1: h = 0x8000 | int(r, 0x400); break; // negative zero or subnormal
    case 2: h = 0x7bff - int(r, 16); break; // near 65504
    case 3: h = 0xfbff - int(r, 16); break; // near -65504
    default: h = int(r, 0x7c00) | (int(r, 2) << 15); // any finite
  }
  return v2Bias ? h & 0xfff0 : h;
}

/** Value of a leaf element from the chosen parameters (DECISIONS.md section 2). */
export const expectValue = (scaleBits: number, biasBits: number, code: number): number =>
  Math.fround(Math.fround(halfToFloat(scaleBits) * code) + halfToFloat(biasBits));

interface Built {
  bytes: Uint8Array;
  expected: Float32Array;
}

function randomLeaf(r: Rng, size: number, v2: boolean): { spec: LeafSpec; codes: number[] } {
  const mode = int(r, 2) as 0 | 1;
  const scaleBits = randomHalf(r);
  const biasBits = randomHalf(r, v2);
  const n = size * size;
  if (mode === 1 && int(r, 3) === 0) {
    // raw T158 payload: all four symbols, 11 (reserved) decodes as 0
    const payload = new Uint8Array(n / 4);
    const codes: number[] = [];
    for (let i = 0; i < n; i++) {
      const sym = int(r, 4);
      payload[i >> 2]! |= sym << ((i & 3) * 2);
      codes.push(sym === 1 ? 1 : sym === 2 ? -1 : 0);
    }
    return { spec: { mode, scaleBits, biasBits, payload }, codes };
  }
  const codes = Array.from({ length: n }, () => (mode ? int(r, 3) - 1 : int(r, 16) - 8));
  return { spec: { mode, scaleBits, biasBits, codes }, codes };
}

function place(expected: Float32Array, [rows, cols]: Shape, b: number, tilesX: number, y: number, x: number, size: number, leaf: LeafSpec, codes: number[]): void {
  const by = Math.floor(b / tilesX), bx = b % tilesX;
  for (let i = 0; i < size; i++) {
    for (let j = 0; j < size; j++) {
      const r = by * 64 + y + i, c = bx * 64 + x + j;
      if (r < rows && c < cols) expected[r * cols + c] = expectValue(leaf.scaleBits, leaf.biasBits, codes[i * size + j]!);
    }
  }
}

export function randomV1(r: Rng, shape: Shape): Built {
  const tilesX = Math.ceil(shape[1] / 64);
  const B = Math.ceil(shape[0] / 64) * tilesX;
  const expected = new Float32Array(shape[0] * shape[1]);
  const blocks = Array.from({ length: B }, (_, b) => {
    const { spec, codes } = randomLeaf(r, 64, false);
    place(expected, shape, b, tilesX, 0, 0, 64, spec, codes);
    return { ...spec, errorHint: int(r, 4) === 0 };
  });
  // slots: a random permutation
  const slots = Array.from({ length: B }, (_, i) => i);
  for (let i = B - 1; i > 0; i--) {
    const j = int(r, i + 1);
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  return { bytes: writeV1({ shape, blocks, slots }), expected };
}

function randomTree(r: Rng, size: number, splitP: number): QuadTree {
  if (size === 4 || r() >= splitP) return "leaf";
  const h = size / 2;
  return [randomTree(r, h, splitP * 0.8), randomTree(r, h, splitP * 0.8), randomTree(r, h, splitP * 0.8), randomTree(r, h, splitP * 0.8)];
}

/** Leaf geometry of a tree, pre-order DFS TL, TR, BL, BR (spec 22.8.2). */
export function treeLeaves(t: QuadTree, y = 0, x = 0, size = 64): { y: number; x: number; size: number }[] {
  if (t === "leaf") return [{ y, x, size }];
  const h = size / 2;
  return [...treeLeaves(t[0], y, x, h), ...treeLeaves(t[1], y, x + h, h), ...treeLeaves(t[2], y + h, x, h), ...treeLeaves(t[3], y + h, x + h, h)];
}

const UNIFORM: Record<number, number> = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 };

export function randomV2(r: Rng, shape: Shape, layouts: readonly number[] = [0, 1, 2, 3, 4, 5]): Built {
  const tilesX = Math.ceil(shape[1] / 64);
  const B = Math.ceil(shape[0] / 64) * tilesX;
  const expected = new Float32Array(shape[0] * shape[1]);
  const records: V2RecordSpec[] = [];
  for (let b = 0; b < B; b++) {
    const layout = layouts[int(r, layouts.length)]! as V2RecordSpec["layout"];
    let geometry: { y: number; x: number; size: number }[];
    let tree: QuadTree | undefined;
    if (layout === 4) {
      tree = randomTree(r, 64, 0.9);
      geometry = treeLeaves(tree);
    } else {
      const s = UNIFORM[layout]!;
      geometry = [];
      for (let y = 0; y < 64; y += s) for (let x = 0; x < 64; x += s) geometry.push({ y, x, size: s });
    }
    const leaves = geometry.map((g) => {
      const { spec, codes } = randomLeaf(r, g.size, true);
      place(expected, shape, b, tilesX, g.y, g.x, g.size, spec, codes);
      return spec;
    });
    records.push({ layout, ...(tree ? { tree } : {}), leaves, gapBefore: int(r, 5) === 0 ? 16 * (1 + int(r, 3)) : 0 });
  }
  const trailing = int(r, 3) === 0 ? new Uint8Array(1 + int(r, 40)).fill(0xab) : undefined;
  return { bytes: writeV2({ shape, records, ...(trailing ? { trailing } : {}) }), expected };
}

/** Compare bit patterns; returns the first differing index or -1. */
export function firstBitDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}
