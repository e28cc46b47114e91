/** Random valid containers: all layouts, random MIXED trees, both modes, awkward FP16 values. */
import { LAYOUT, writeV1, writeV2, type LeafSpec, type QuadTree, type Shape, type V2RecordSpec } from "@sgfp4/format";

/** Small seeded generator (mulberry32), so a failure can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SPECIAL_HALVES = [0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x3555, 0x0010, 0x8010, 0x0200];

export function randomHalf(r: () => number): number {
  if (r() < 0.35) return SPECIAL_HALVES[Math.floor(r() * SPECIAL_HALVES.length)]!;
  for (;;) {
    const h = Math.floor(r() * 0x10000);
    if ((h & 0x7c00) !== 0x7c00) return h; // finite only (NONFINITE_PARAMETER otherwise)
  }
}

function randomBytes(r: () => number, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

/** Random payload bytes cover every code, the reserved T158 symbol 11 included. */
function randomLeaf(r: () => number, size: number, v2: boolean): LeafSpec {
  const mode = r() < 0.5 ? 0 : 1;
  const n = mode === 0 ? (size * size) / 2 : (size * size) / 4;
  const biasBits = randomHalf(r) & (v2 ? 0xfff0 : 0xffff);
  let scaleBits = randomHalf(r);
  if ((biasBits & 0x7c00) === 0x7c00) scaleBits = 0x3c00;
  return { mode, scaleBits, biasBits: (biasBits & 0x7c00) === 0x7c00 ? 0 : biasBits, payload: randomBytes(r, n) };
}

export function randomTree(r: () => number, size = 64): QuadTree {
  if (size === 4 || r() < 0.35) return "leaf";
  const h = size / 2;
  return [randomTree(r, h), randomTree(r, h), randomTree(r, h), randomTree(r, h)];
}

function treeLeafSizes(tree: QuadTree, size = 64): number[] {
  return tree === "leaf" ? [size] : tree.flatMap((t) => treeLeafSizes(t, size / 2));
}

export function randomV1(r: () => number, shape: Shape): Uint8Array {
  const B = Math.ceil(shape[0] / 64) * Math.ceil(shape[1] / 64);
  const slots = Array.from({ length: B }, (_, i) => i);
  for (let i = B - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  const blocks = Array.from({ length: B }, () => ({ ...randomLeaf(r, 64, false), errorHint: r() < 0.3 }));
  return writeV1({ shape, blocks, slots });
}

export function randomV2(r: () => number, shape: Shape): Uint8Array {
  const B = Math.ceil(shape[0] / 64) * Math.ceil(shape[1] / 64);
  const layouts = [LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_8, LAYOUT.MIXED, LAYOUT.FULL_4x4];
  const records: V2RecordSpec[] = Array.from({ length: B }, () => {
    const layout = layouts[Math.floor(r() * layouts.length)]!;
    const gapBefore = r() < 0.2 ? 16 * Math.floor(r() * 4) : 0;
    if (layout === LAYOUT.MIXED) {
      const tree = randomTree(r);
      return { layout, tree, leaves: treeLeafSizes(tree).map((s) => randomLeaf(r, s, true)), gapBefore };
    }
    const size = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 }[layout as 0 | 1 | 2 | 3 | 5];
    return { layout, leaves: Array.from({ length: (64 / size) ** 2 }, () => randomLeaf(r, size, true)), gapBefore };
  });
  return writeV2({ shape, records, trailing: r() < 0.2 ? randomBytes(r, 1 + Math.floor(r() * 40)) : undefined });
}
