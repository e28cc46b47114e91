/**
 * Encoding of a range of macroblock rows: the unit of work a worker thread gets. Every block
 * depends only on its own weights and on tensor-wide numbers computed before the split
 * (tensor power), so the bytes do not depend on how rows are shared between threads.
 */
import { MACROBLOCK, halfToFloat, packCodes, payloadBytes, type Mode, type Shape } from "@sgfp4/format";
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
  type LeafOut,
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

/** A job's result: its blocks in raster order and the exact decode of its tensor rows. */
export interface EncodedRows {
  blocks: BlockOut[];
  decoded: Float32Array;
}

/** decodedInto: where to write the exact decode of the job's rows (job.data.length values); default a new array. */
export function encodeBlockRows(job: BlockJob, decodedInto?: Float32Array): EncodedRows {
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
  // decoded here, in the job's thread, rather than on the main thread after all jobs
  return { blocks: out, decoded: reconstruct(out, [rowsInData, cols], tilesX, decodedInto) };
}

/** Doubles per leaf in a packed result: y, x, size, mode, scaleBits, biasBits, errorHint, sse, lwe. */
const PACKED_LEAF = 9;

/**
 * A job's result in four flat arrays, for a worker to hand back: structured-cloning the leaf
 * objects (tens of thousands per job on heavy-tailed data, each with its own codes buffer) cost
 * the main thread about as much time as the fits, so worker threads did not speed encodes up.
 * The codes come back already packed into payloads, so the main thread, which writes the
 * container alone, only copies them.
 */
export interface PackedRows {
  /** leaves per block */
  counts: Int32Array;
  /** PACKED_LEAF doubles per leaf, blocks in order, each block's leaves in order */
  leaves: Float64Array;
  /** every leaf's payload (spec 22.6 packing, payloadBytes(size, mode) each), concatenated in the same order */
  payloads: Uint8Array;
  decoded: Float32Array;
}

export function packRows(r: EncodedRows): PackedRows {
  let leafCount = 0;
  let payloadCount = 0;
  for (const b of r.blocks) {
    leafCount += b.leaves.length;
    for (const l of b.leaves) payloadCount += payloadBytes(l.size, l.mode);
  }
  const counts = new Int32Array(r.blocks.length);
  const leaves = new Float64Array(leafCount * PACKED_LEAF);
  const payloads = new Uint8Array(payloadCount);
  let at = 0;
  let payloadAt = 0;
  r.blocks.forEach((b, i) => {
    counts[i] = b.leaves.length;
    for (const l of b.leaves) {
      leaves.set([l.y, l.x, l.size, l.mode, l.scaleBits, l.biasBits, +l.errorHint, l.sse, l.lwe], at);
      at += PACKED_LEAF;
      const bytes = payloadBytes(l.size, l.mode);
      packCodes(l.mode, codesOf(l), payloads.subarray(payloadAt, payloadAt + bytes));
      payloadAt += bytes;
    }
  });
  return { counts, leaves, payloads, decoded: r.decoded };
}

/** The blocks of a packed result; leaves' payloads are views into its one payloads array. */
export function unpackRows(p: PackedRows, profile: "v1" | "v2"): EncodedRows {
  const blocks: BlockOut[] = [];
  let at = 0;
  let payloadAt = 0;
  for (const count of p.counts) {
    const leaves: LeafOut[] = [];
    for (let k = 0; k < count; k++, at += PACKED_LEAF) {
      const f = p.leaves;
      const size = f[at + 2]!;
      const mode = f[at + 3] as Mode;
      const bytes = payloadBytes(size, mode);
      const payload = p.payloads.subarray(payloadAt, payloadAt + bytes);
      payloadAt += bytes;
      leaves.push({ y: f[at]!, x: f[at + 1]!, size, mode, scaleBits: f[at + 4]!, biasBits: f[at + 5]!, errorHint: f[at + 6] === 1, payload, sse: f[at + 7]!, lwe: f[at + 8]! });
    }
    // the layout and tree follow from the leaves (uniform leaves are already in raster order)
    blocks.push(profile === "v1" ? { layout: -1, leaves } : blockFromLeaves(leaves));
  }
  return { blocks, decoded: p.decoded };
}

/** A fitted leaf's codes (leaves that came back from a worker carry a packed payload instead). */
function codesOf(l: LeafOut): Int8Array {
  if (!l.codes) throw new Error(`leaf at (${l.y}, ${l.x}) has no codes (a packed payload only)`);
  return l.codes;
}

/**
 * The exact decode of leaves (DECISIONS.md section 2 arithmetic): blocks in raster order from
 * tile row 0 of `shape`, cropped to it. Each leaf's 16 possible values are computed once; a
 * Float32Array store rounds S * q + B to float32 once, as the decoders do.
 */
export function reconstruct(blocks: readonly BlockOut[], shape: Shape, tilesX: number, into?: Float32Array): Float32Array {
  const [rows, cols] = shape;
  // the leaves cover every element of `shape`, so `into` needs no clearing
  const out = into ?? new Float32Array(rows * cols);
  if (out.length !== rows * cols) throw new RangeError(`reconstruct: ${out.length} values for a ${rows}x${cols} output`);
  const values = new Float32Array(16); // indexed by code + 8
  for (let b = 0; b < blocks.length; b++) {
    const by = Math.floor(b / tilesX);
    const bx = b % tilesX;
    for (const l of blocks[b]!.leaves) {
      const codes = codesOf(l);
      const S = halfToFloat(l.scaleBits);
      const B = halfToFloat(l.biasBits);
      for (let q = -8; q < 8; q++) values[q + 8] = S * q + B;
      const r0 = by * MACROBLOCK + l.y;
      const c0 = bx * MACROBLOCK + l.x;
      const rowEnd = Math.min(r0 + l.size, rows);
      const width = Math.min(c0 + l.size, cols) - c0;
      for (let r = r0, k = 0; r < rowEnd; r++, k += l.size) {
        const o = r * cols + c0;
        for (let j = 0; j < width; j++) out[o + j] = values[codes[k + j]! + 8]!;
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
