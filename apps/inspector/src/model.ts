/**
 * The page's structure model of one parsed container: where every leaf lies in the tensor,
 * a 4x4-cell grid for O(1) hover and drawing lookups, and the statistics the panels show.
 */
import { LAYOUT_NAMES, MACROBLOCK, V1_PAYLOAD_BYTES, align16, leafPayloadBytes, readLeaf, type Container } from "@sgfp4/format";

/** Leaf sizes in the order the histogram shows them. */
export const LEAF_SIZES = [4, 8, 16, 32, 64] as const;
const CELL = 4; // the smallest leaf; every leaf covers whole cells

export interface StructureModel {
  container: Container;
  rows: number;
  cols: number;
  /** padded grid, a multiple of 64 each way */
  paddedRows: number;
  paddedCols: number;
  cellsX: number;
  /** leaf index covering each 4x4 cell of the padded grid, row-major */
  cellLeaf: Int32Array;
  leafCount: number;
  /** absolute position of each leaf's top-left element in the padded grid */
  leafRow: Uint32Array;
  leafCol: Uint32Array;
  leafSize: Uint8Array;
  leafMode: Uint8Array;
  /** leaf bits per weight: (header word + payload padded to 16) * 8 / size^2 */
  leafBpw: Float32Array;
  /** macroblock bits per weight: (record or block bytes + its offset-table word) * 8 / 4096 */
  blockBpw: Float32Array;
  /** stream bytes * 8 / (O*I) */
  bitsPerWeight: number;
  histograms: {
    layouts: { label: string; count: number }[];
    leafSizes: { label: string; count: number; weights: number }[];
    modes: { label: string; count: number; weights: number }[];
  };
}

export function buildModel(c: Container): StructureModel {
  const [rows, cols] = c.shape;
  const paddedRows = c.tilesY * 64;
  const paddedCols = c.tilesX * 64;
  const cellsX = paddedCols / CELL;
  const cellLeaf = new Int32Array((paddedRows / CELL) * cellsX).fill(-1);
  const n = c.leafCount;
  const leafRow = new Uint32Array(n);
  const leafCol = new Uint32Array(n);
  const leafSize = new Uint8Array(n);
  const leafMode = new Uint8Array(n);
  const leafBpw = new Float32Array(n);
  const sizeCount = new Map<number, { count: number; weights: number }>(LEAF_SIZES.map((s) => [s, { count: 0, weights: 0 }]));
  const modeCount = [
    { label: "FP4_AFFINE", count: 0, weights: 0 },
    { label: "T158_AFFINE", count: 0, weights: 0 },
  ];
  for (let i = 0; i < n; i++) {
    const { block: b, y, x, log2, mode } = readLeaf(c.leafTable, i);
    const size = 1 << log2;
    const r0 = Math.floor(b / c.tilesX) * MACROBLOCK + y;
    const c0 = (b % c.tilesX) * MACROBLOCK + x;
    leafRow[i] = r0;
    leafCol[i] = c0;
    leafSize[i] = size;
    leafMode[i] = mode;
    const bytes = c.profile === "v1" ? V1_PAYLOAD_BYTES + 8 : 4 + align16(leafPayloadBytes(log2, mode));
    leafBpw[i] = (bytes * 8) / (size * size);
    const s = sizeCount.get(size)!;
    s.count++;
    s.weights += size * size;
    modeCount[mode]!.count++;
    modeCount[mode]!.weights += size * size;
    const cr0 = r0 / CELL;
    const cc0 = c0 / CELL;
    const span = size / CELL;
    for (let y = 0; y < span; y++) cellLeaf.fill(i, (cr0 + y) * cellsX + cc0, (cr0 + y) * cellsX + cc0 + span);
  }
  const blockBpw = new Float32Array(c.blockCount);
  const layoutCount = new Map<string, number>();
  for (const blk of c.blocks) {
    blockBpw[blk.index] = ((blk.byteLength + (c.profile === "v1" ? 8 : 4)) * 8) / 4096;
    const label = blk.layout === -1 ? "v1 64x64" : LAYOUT_NAMES[blk.layout]!;
    layoutCount.set(label, (layoutCount.get(label) ?? 0) + 1);
  }
  const layoutOrder = c.profile === "v1" ? ["v1 64x64"] : [...LAYOUT_NAMES];
  return {
    container: c,
    rows,
    cols,
    paddedRows,
    paddedCols,
    cellsX,
    cellLeaf,
    leafCount: n,
    leafRow,
    leafCol,
    leafSize,
    leafMode,
    leafBpw,
    blockBpw,
    bitsPerWeight: (c.byteLength * 8) / (rows * cols),
    histograms: {
      layouts: layoutOrder.map((label) => ({ label, count: layoutCount.get(label) ?? 0 })),
      leafSizes: LEAF_SIZES.map((s) => ({ label: `${s}x${s}`, ...sizeCount.get(s)! })),
      modes: modeCount,
    },
  };
}

/** Leaf index under padded-grid element (r, c), or -1. */
export function leafAtElement(m: StructureModel, r: number, c: number): number {
  if (r < 0 || c < 0 || r >= m.paddedRows || c >= m.paddedCols) return -1;
  return m.cellLeaf[(r >>> 2) * m.cellsX + (c >>> 2)]!;
}
