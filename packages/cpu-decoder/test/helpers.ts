import { LAYOUT, tiling, writeV1, writeV2, type LeafSpec, type QuadTree, type V2RecordSpec } from "@sgfp4/format";

/** Deterministic PRNG (mulberry32) so failures reproduce. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const bitsOf = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

/** First index where the bit patterns differ, or -1. */
export function firstBitDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  const x = bitsOf(a);
  const y = bitsOf(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

/** A finite FP16 pattern from the interesting classes: zeros, subnormals, normals, extremes. */
export function randomHalf(rnd: () => number, allowNegative = true): number {
  const sign = allowNegative && rnd() < 0.5 ? 0x8000 : 0;
  const pick = rnd();
  let mag: number;
  if (pick < 0.1) mag = 0; // +-0
  else if (pick < 0.3) mag = 1 + Math.floor(rnd() * 0x3ff); // subnormal
  else if (pick < 0.35) mag = 0x7bff; // 65504
  else if (pick < 0.4) mag = 0x0400; // smallest normal
  else mag = 0x0400 + Math.floor(rnd() * (0x7bff - 0x0400)); // normal
  return sign | mag;
}

function randomBytes(rnd: () => number, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rnd() * 256);
  return out;
}

/** Raw random payloads cover every nibble and every 2-bit symbol, including the reserved 11. */
function randomLeaf(rnd: () => number, size: number, v2: boolean): LeafSpec {
  const mode = rnd() < 0.5 ? 0 : 1;
  const scaleBits = randomHalf(rnd, rnd() < 0.1); // encoders write S >= 0; negative S is still accepted
  let biasBits = randomHalf(rnd);
  if (v2) biasBits &= 0xfff0;
  const payload = randomBytes(rnd, mode === 0 ? (size * size) / 2 : (size * size) / 4);
  return { mode, scaleBits, biasBits, payload };
}

export function randomV1(rnd: () => number, shape: readonly [number, number]): Uint8Array {
  const { blockCount } = tiling(shape);
  const blocks = Array.from({ length: blockCount }, () => ({ ...randomLeaf(rnd, 64, false), errorHint: rnd() < 0.3 }));
  const slots = Array.from({ length: blockCount }, (_, i) => i);
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  return writeV1({ shape, blocks, slots });
}

function randomTree(rnd: () => number, size: number): QuadTree {
  if (size === 4 || rnd() < 0.35) return "leaf";
  const h = size / 2;
  return [randomTree(rnd, h), randomTree(rnd, h), randomTree(rnd, h), randomTree(rnd, h)];
}

function treeLeafSizes(tree: QuadTree, size: number, out: number[] = []): number[] {
  if (tree === "leaf") out.push(size);
  else for (const t of tree) treeLeafSizes(t, size / 2, out);
  return out;
}

const UNIFORM = [LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_8, LAYOUT.FULL_4x4] as const;
const UNIFORM_SIZE: Record<number, number> = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 };

export function randomV2(rnd: () => number, shape: readonly [number, number]): Uint8Array {
  const { blockCount } = tiling(shape);
  const records: V2RecordSpec[] = Array.from({ length: blockCount }, () => {
    const gapBefore = rnd() < 0.1 ? 16 * Math.floor(1 + rnd() * 3) : 0;
    if (rnd() < 0.5) {
      const tree = randomTree(rnd, 64);
      return { layout: LAYOUT.MIXED, tree, leaves: treeLeafSizes(tree, 64).map((s) => randomLeaf(rnd, s, true)), gapBefore };
    }
    const layout = UNIFORM[Math.floor(rnd() * UNIFORM.length)]!;
    const size = UNIFORM_SIZE[layout]!;
    return { layout, leaves: Array.from({ length: (64 / size) ** 2 }, () => randomLeaf(rnd, size, true)), gapBefore };
  });
  const trailing = rnd() < 0.3 ? randomBytes(rnd, 1 + Math.floor(rnd() * 40)) : undefined;
  return writeV2({ shape, records, ...(trailing ? { trailing } : {}) });
}

/** Shapes that crop at the edges (1x1, 3x200, 65x63, 130x70), exact tiles, and wide ones that need several bands. */
export const SHAPES: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [3, 200],
  [65, 63],
  [130, 70],
  [64, 64],
  [128, 192],
  [200, 1100],
  [70, 2051],
  [257, 5],
];
