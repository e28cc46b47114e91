/**
 * Encoding of a range of macroblock rows: the unit of work a worker thread gets. Every block
 * depends only on its own weights and on tensor-wide numbers computed before the split
 * (tensor power), so the bytes do not depend on how rows are shared between threads.
 */
import { MACROBLOCK, type Shape } from "@sgfp4/format";
import { fitLeaf, type FitOptions } from "./fit.js";
import {
  MacroblockFitter,
  NODES_PER_BLOCK,
  blockFromLeaves,
  decideByThreshold,
  decideRd,
  leavesOfNode,
  leavesOfRd,
  macroblockStats,
  type BlockOut,
  type QuadtreeOptions,
} from "./quadtree.js";

export interface BlockJob {
  profile: "v1" | "v2";
  /** the tensor rows this job covers, row-major float32 */
  data: Float32Array;
  shape: Shape;
  /** macroblock rows [tileRowStart, tileRowEnd) ; data holds tensor rows from tileRowStart*64 */
  tileRowStart: number;
  tileRowEnd: number;
  fit: FitOptions;
  quadtree: QuadtreeOptions;
  /** mean(w^2) over the whole tensor */
  tensorPower: number;
  /** v2 rate-distortion mode: lambda and the per-node statistics of these blocks */
  rd?: { lambda: number; stats: Float64Array };
}

/** Copy macroblock (by, bx) into a zero-padded 64x64 buffer. */
export function extractBlock(data: Float32Array, cols: number, rowsInData: number, rowBase: number, bx: number, out: Float64Array): void {
  out.fill(0);
  const c0 = bx * MACROBLOCK;
  const cw = Math.min(MACROBLOCK, cols - c0);
  for (let i = 0; i < MACROBLOCK; i++) {
    const r = rowBase + i;
    if (r >= rowsInData) break;
    const src = r * cols + c0;
    for (let j = 0; j < cw; j++) out[i * MACROBLOCK + j] = data[src + j]!;
  }
}

export function tilesOf(shape: Shape): { tilesY: number; tilesX: number } {
  return { tilesY: Math.ceil(shape[0] / MACROBLOCK), tilesX: Math.ceil(shape[1] / MACROBLOCK) };
}

export function encodeBlockRows(job: BlockJob): BlockOut[] {
  const [, cols] = job.shape;
  const { tilesX } = tilesOf(job.shape);
  const rowsInData = job.data.length / cols;
  const out: BlockOut[] = [];
  const block = new Float64Array(MACROBLOCK * MACROBLOCK);
  for (let ty = job.tileRowStart; ty < job.tileRowEnd; ty++) {
    for (let bx = 0; bx < tilesX; bx++) {
      extractBlock(job.data, cols, rowsInData, (ty - job.tileRowStart) * MACROBLOCK, bx, block);
      if (job.profile === "v1") {
        const f = fitLeaf(block, MACROBLOCK, job.fit);
        const c = f.chosen;
        out.push({ layout: -1, leaves: [{ y: 0, x: 0, size: 64, mode: c.mode, scaleBits: c.scaleBits, biasBits: c.biasBits, errorHint: f.errorHint, codes: c.codes, sse: c.sse, lwe: c.lwe }] });
        continue;
      }
      // the threshold policy reads only the chosen candidates' errors
      const fitter = new MacroblockFitter(block, job.fit, !job.rd);
      if (job.rd) {
        const local = (ty - job.tileRowStart) * tilesX + bx;
        const choice = decideRd(job.rd.stats, local * 3 * NODES_PER_BLOCK, job.rd.lambda);
        out.push(blockFromLeaves(leavesOfRd(fitter, choice)));
      } else {
        out.push(blockFromLeaves(leavesOfNode(decideByThreshold(fitter, job.quadtree, job.tensorPower))));
      }
    }
  }
  return out;
}

/** Rate-control statistics of every node of every block in the job (errors relative to tensor power). */
export function statsBlockRows(job: BlockJob): Float64Array {
  const [, cols] = job.shape;
  const { tilesX } = tilesOf(job.shape);
  const rowsInData = job.data.length / cols;
  const n = (job.tileRowEnd - job.tileRowStart) * tilesX;
  const stats = new Float64Array(n * 3 * NODES_PER_BLOCK);
  const block = new Float64Array(MACROBLOCK * MACROBLOCK);
  const norm = job.tensorPower > 0 ? job.tensorPower : 1;
  for (let ty = job.tileRowStart; ty < job.tileRowEnd; ty++) {
    for (let bx = 0; bx < tilesX; bx++) {
      extractBlock(job.data, cols, rowsInData, (ty - job.tileRowStart) * MACROBLOCK, bx, block);
      const local = (ty - job.tileRowStart) * tilesX + bx;
      macroblockStats(new MacroblockFitter(block, job.fit), norm, stats, local * 3 * NODES_PER_BLOCK);
    }
  }
  return stats;
}
