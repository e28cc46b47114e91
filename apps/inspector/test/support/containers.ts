/**
 * Containers made with @sgfp4/format's writer, with everything the tests check known from
 * construction: each leaf's absolute position, size and mode, and every decoded value (scales
 * and biases are chosen so S*code + B is exact, including subnormals and signed zeros).
 */
import { decodedSha256, sha256Hex, writeV1, writeV2, LAYOUT, type LeafSpec, type QuadTree, type V2RecordSpec } from "@sgfp4/format";

/** [FP16 bits, value] pairs, values written out by hand */
const SCALES: [number, number][] = [
  [0x3c00, 1],
  [0x3800, 0.5],
  [0x3a00, 0.75],
  [0x0001, 2 ** -24], // smallest subnormal: must not flush
  [0xbc00, -1],
];
const BIASES: [number, number][] = [
  [0x0000, 0],
  [0xb400, -0.25],
  [0x3800, 0.5],
  [0x8000, -0], // signed zero: (+0) + (-0) = +0, (-0) + (-0) = -0
  [0x0010, 2 ** -20], // subnormal bias, low 4 bits clear as v2 needs
];

export interface ExpectedLeaf {
  row: number;
  col: number;
  size: number;
  mode: 0 | 1;
}

export interface Made {
  name: string;
  profile: "v1" | "v2";
  shape: [number, number];
  bytes: Uint8Array;
  leaves: ExpectedLeaf[];
  expected: Float32Array;
}

function fp4Code(k: number, leaf: number): number {
  return ((k * 5 + leaf) % 16) - 8;
}
function t158Code(k: number, leaf: number): number {
  return ((k + leaf) % 3) - 1;
}

function makeLeaf(leaf: number, size: number, mode: 0 | 1): { spec: LeafSpec; value: (k: number) => number } {
  const [scaleBits, s] = SCALES[leaf % SCALES.length]!;
  const [biasBits, b] = BIASES[(leaf >> 1) % BIASES.length]!;
  const code = mode ? t158Code : fp4Code;
  const codes = Array.from({ length: size * size }, (_, k) => code(k, leaf));
  return { spec: { mode, scaleBits, biasBits, codes }, value: (k) => Math.fround(s * code(k, leaf) + b) };
}

/** Leaf geometry of a tree, pre-order TL, TR, BL, BR (spec 22.8.3), written independently of the parser. */
function treeLeaves(t: QuadTree, y: number, x: number, size: number, out: { y: number; x: number; size: number }[]): void {
  if (t === "leaf") out.push({ y, x, size });
  else {
    const h = size / 2;
    treeLeaves(t[0], y, x, h, out);
    treeLeaves(t[1], y, x + h, h, out);
    treeLeaves(t[2], y + h, x, h, out);
    treeLeaves(t[3], y + h, x + h, h, out);
  }
}

const L = "leaf" as const;
export const MIXED_TREE: QuadTree = [L, [L, L, L, L], L, [[L, L, L, L], L, L, L]];
const UNIFORM_SIZE: Record<number, number> = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 };

/** v2, 100 x 150 (2 x 3 macroblocks, padding on both edges), one record of every layout. */
export function makeMixedV2(): Made {
  const shape: [number, number] = [100, 150];
  const tilesX = 3;
  const layouts = [LAYOUT.MIXED, LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_8, LAYOUT.FULL_4x4];
  const expected = new Float32Array(shape[0] * shape[1]);
  const leaves: ExpectedLeaf[] = [];
  const records: V2RecordSpec[] = layouts.map((layout, b) => {
    const geo: { y: number; x: number; size: number }[] = [];
    if (layout === LAYOUT.MIXED) treeLeaves(MIXED_TREE, 0, 0, 64, geo);
    else {
      const s = UNIFORM_SIZE[layout]!;
      for (let y = 0; y < 64; y += s) for (let x = 0; x < 64; x += s) geo.push({ y, x, size: s });
    }
    const specs = geo.map((g) => {
      const index = leaves.length;
      const mode = (index % 3 === 2 ? 1 : 0) as 0 | 1;
      const row = Math.floor(b / tilesX) * 64 + g.y;
      const col = (b % tilesX) * 64 + g.x;
      leaves.push({ row, col, size: g.size, mode });
      const l = makeLeaf(index, g.size, mode);
      for (let i = 0; i < g.size; i++) {
        for (let j = 0; j < g.size; j++) {
          if (row + i < shape[0] && col + j < shape[1]) expected[(row + i) * shape[1] + col + j] = l.value(i * g.size + j);
        }
      }
      return l.spec;
    });
    return layout === LAYOUT.MIXED ? { layout, tree: MIXED_TREE, leaves: specs } : { layout, leaves: specs };
  });
  return { name: "mixed.100x150.sgfp4", profile: "v2", shape, bytes: writeV2({ shape, records }), leaves, expected };
}

/** v1, 64 x 130 (3 blocks, payload slots permuted), modes FP4, T158, FP4. */
export function makeV1(): Made {
  const shape: [number, number] = [64, 130];
  const expected = new Float32Array(shape[0] * shape[1]);
  const leaves: ExpectedLeaf[] = [];
  const blocks = [0, 1, 2].map((b) => {
    const mode = (b === 1 ? 1 : 0) as 0 | 1;
    const l = makeLeaf(b + 7, 64, mode);
    leaves.push({ row: 0, col: b * 64, size: 64, mode });
    for (let i = 0; i < 64; i++) for (let j = 0; j < 64; j++) if (b * 64 + j < shape[1]) expected[i * shape[1] + b * 64 + j] = l.value(i * 64 + j);
    return l.spec;
  });
  return { name: "blocks.64x130.fp4", profile: "v1", shape, bytes: writeV1({ shape, blocks, slots: [2, 0, 1] }), leaves, expected };
}

/** The mixed container with leaf 0's reserved flag bit 1 set (record 0 is MIXED, so its leaf headers start at 48 + 16). */
export function withReservedBit(m: Made): Uint8Array {
  const bytes = m.bytes.slice();
  const recordRegionBase = Math.ceil((16 + 4 * 6) / 16) * 16;
  const leaf0Header = recordRegionBase + 16; // after sb_header and the 12-byte split map
  bytes[leaf0Header] = bytes[leaf0Header]! | 0b10;
  return bytes;
}

/** `m` (v2) with a reserved sb_header bit set in record `r`: refused with RESERVED_BITS at that record's first byte. */
export function withFaultInRecord(m: Made, r: number): { bytes: Uint8Array; offset: number } {
  const bytes = m.bytes.slice();
  const dv = new DataView(bytes.buffer);
  const records = dv.getUint32(5, true);
  const offset = Math.ceil((16 + 4 * records) / 16) * 16 + dv.getUint32(16 + 4 * r, true);
  dv.setUint32(offset, dv.getUint32(offset, true) | 0x8, true);
  return { bytes, offset };
}

/** A 4096 x 4096 v2 container cycling through all six layouts, pseudo-random payloads. */
export function makeLarge(): { bytes: Uint8Array; shape: [number, number]; leafCount: number; blockCount: number } {
  const shape: [number, number] = [4096, 4096];
  const B = 64 * 64;
  let seed = 0x9e3779b9;
  const rand = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  const payload = (n: number) => {
    const p = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) new DataView(p.buffer).setUint32(i, rand(), true);
    return p;
  };
  const tree: QuadTree = MIXED_TREE;
  const mixedGeo: { y: number; x: number; size: number }[] = [];
  treeLeaves(tree, 0, 0, 64, mixedGeo);
  let leafCount = 0;
  const order = [LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.MIXED, LAYOUT.UNIFORM_8, LAYOUT.FULL_4x4];
  const records: V2RecordSpec[] = [];
  for (let b = 0; b < B; b++) {
    const layout = order[(b * 7 + (b >> 6)) % 6]!;
    const sizes = layout === LAYOUT.MIXED ? mixedGeo.map((g) => g.size) : Array.from({ length: (64 / UNIFORM_SIZE[layout]!) ** 2 }, () => UNIFORM_SIZE[layout]!);
    const leaves = sizes.map((size, i): LeafSpec => {
      const mode = ((b + i) % 4 === 0 ? 1 : 0) as 0 | 1;
      return { mode, scaleBits: 0x2000 + (rand() & 0xfff), biasBits: (rand() & 0x87f0) >>> 0, payload: payload(mode ? (size * size) / 4 : (size * size) / 2) };
    });
    leafCount += leaves.length;
    records.push(layout === LAYOUT.MIXED ? { layout, tree, leaves } : { layout, leaves });
  }
  return { bytes: writeV2({ shape, records }), shape, leafCount, blockCount: B };
}

/** .npy (version 1.0, little-endian float32, C order) */
export function npy(data: Float32Array, shape: number[]): Uint8Array {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, " ") + "\n";
  const out = new Uint8Array(total + data.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), total);
  return out;
}

export const f32Bytes = (a: Float32Array): Uint8Array => new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));
export { decodedSha256, sha256Hex };

/**
 * A 384 x 512 tensor with visible structure for the encoder to adapt to: a smooth ramp (large
 * leaves), Gaussian noise, a band of outlier rows and a sparse corner.
 */
export function heroTensor(): { data: Float32Array; shape: [number, number] } {
  const rows = 384;
  const cols = 512;
  const data = new Float32Array(rows * cols);
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const gauss = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let v: number;
      if (c < 192) v = 0.02 * Math.sin(r / 40) + 0.01 * Math.cos(c / 25);
      else if (r < 256) v = 0.02 * gauss() * (1 + 3 * Math.exp(-((c - 380) ** 2) / 2000));
      else v = rand() < 0.05 ? 0.08 * gauss() : 0;
      if (r >= 160 && r < 168) v *= 6;
      data[r * cols + c] = v;
    }
  }
  return { data, shape: [rows, cols] };
}
