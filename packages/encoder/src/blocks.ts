/**
 * Encoding of a range of macroblock rows: the unit of work a worker thread gets. Every block
 * depends only on its own weights and on tensor-wide numbers computed before the split
 * (tensor power), so the bytes do not depend on how rows are shared between threads.
 */
import { MACROBLOCK, V1_PAYLOAD_BYTES, halfToFloat, packCodes, writeV2Record, type Shape } from "@sgfp4/format";
import { FitWorkspace, fitLeaf, type FitOptions } from "./fit.js";
import { TILE_WIDTH, fitKernels } from "./fit/kernels.js";
import { MacroblockFitter, NODES_PER_BLOCK, blockFromLeaves, decideByThreshold, decideRd, leavesOfNode, leavesOfRd, type BlockOut, type QuadtreeOptions } from "./quadtree.js";
import { NODE_STATS, RdSolver, macroblockStats, t158SseGap, writeNodeStats, type Distortion, type LeafFloor } from "./rd.js";

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
  /** "rd": decisions by D + lambda * exact bytes (rd.ts); "spec": the 22.7 thresholds (or their rate control) */
  policy: "rd" | "spec";
  /** rd policy: the distortion measure */
  distortion: Distortion;
  /**
   * v2 rate-distortion decisions: lambda and the per-node statistics of these blocks (policy "rd"
   * may leave them out: each block's nodes are then fitted as the decision asks for them)
   */
  rd?: { lambda: number; stats?: Float64Array };
}

/**
 * Copy macroblock (by, bx) into a zero-padded 64x64 buffer; with `clip`, each copied weight
 * beyond [CLIP_LOW, CLIP_HIGH] moved to the nearest end on the way (clipToFormat in the same
 * pass; the padding is zero either way).
 */
export function extractBlock(data: Float32Array, cols: number, rowsInData: number, rowBase: number, bx: number, out: Float64Array, clip = false): void {
  const c0 = bx * MACROBLOCK;
  const cw = Math.min(MACROBLOCK, cols - c0);
  // only a block cut by the tensor's edge has padding to clear
  if (cw < MACROBLOCK || rowBase + MACROBLOCK > rowsInData) out.fill(0);
  const rowEnd = Math.min(MACROBLOCK, rowsInData - rowBase);
  if (clip) {
    for (let i = 0; i < rowEnd; i++) {
      const src = (rowBase + i) * cols + c0;
      const o = i * MACROBLOCK;
      for (let j = 0; j < cw; j++) {
        const w = data[src + j]!;
        out[o + j] = w > CLIP_HIGH ? CLIP_HIGH : w < CLIP_LOW ? CLIP_LOW : w;
      }
    }
    return;
  }
  for (let i = 0; i < rowEnd; i++) {
    const src = (rowBase + i) * cols + c0;
    const o = i * MACROBLOCK;
    for (let j = 0; j < cw; j++) out[o + j] = data[src + j]!;
  }
}

export function tilesOf(shape: Shape): { tilesY: number; tilesX: number } {
  return { tilesY: Math.ceil(shape[0] / MACROBLOCK), tilesX: Math.ceil(shape[1] / MACROBLOCK) };
}

/** Slots of EncodedRows.counts: weights per mode, leaves per size, records per layout (v2). */
export const COUNT_FP4_WEIGHTS = 0;
export const COUNT_T158_WEIGHTS = 1;
/** leaves of size s at COUNT_LEAVES + log2(s) - 2 (4x4 .. 64x64) */
export const COUNT_LEAVES = 2;
/** records of layout L at COUNT_LAYOUTS + L (0-5) */
export const COUNT_LAYOUTS = 7;
/** weights outside [CLIP_LOW, CLIP_HIGH] */
export const COUNT_CLIPPED = 13;
const COUNT_SLOTS = 14;

/**
 * The largest and smallest values a leaf decodes to at the largest FP16 scale with its bias at
 * zero: 7 * 65504 and -8 * 65504. A larger bias reaches further (to 7 * 65504 + 65024), but
 * moves every other weight of the leaf by as much: the least-squares fit of a 4x4 leaf holding
 * 1e6 (clipped to that far end) put its 15 unit-sized neighbours at about 4000.
 */
export const CLIP_HIGH = 7 * 65504;
export const CLIP_LOW = -8 * 65504;

/**
 * Weights beyond [CLIP_LOW, CLIP_HIGH] moved to the nearest end (policy rd): the fit then spends
 * its leaf's range on a value it can reach with its bias near the other weights. Returns how
 * many were moved.
 */
export function clipToFormat(block: Float64Array): number {
  let clipped = 0;
  for (let i = 0; i < block.length; i++) {
    const w = block[i]!;
    if (w > CLIP_HIGH) block[i] = CLIP_HIGH;
    else if (w < CLIP_LOW) block[i] = CLIP_LOW;
    else continue;
    clipped++;
  }
  return clipped;
}

/**
 * A job's result: its blocks written out and summarised, in raster order, and the exact decode
 * of its tensor rows. Flat arrays only, so a worker hands it back without structured-cloning a
 * leaf object (tens of thousands per job on heavy-tailed data); the main thread, which joins
 * the jobs' bytes, then touches one view per block.
 */
export interface EncodedRows {
  /**
   * v2: each block's record (writeV2Record), concatenated; v1: each block's payload
   * (V1_PAYLOAD_BYTES, T158's upper half zero), concatenated
   */
  bytes: Uint8Array;
  /** v2: bytes of each block's record (v1: every payload is V1_PAYLOAD_BYTES) */
  recordBytes: Int32Array;
  /** v1: per block scale bits, bias bits, mode and ERROR_HINT (0 / 1) */
  v1Headers: Int32Array;
  /** per block: the sum over its leaves of LWE * leaf area (TensorStats.lwe) */
  lweArea: Float64Array;
  /** integer counts, see COUNT_* */
  counts: Float64Array;
  /**
   * per tile row: the sum of w^2 and of (w - decoded)^2 over its real weights, in index order
   * (TensorStats.snrDb; tile-row sums added in order give the same totals for any job split)
   */
  signalError: Float64Array;
  /** largest |w - decoded| of the job's weights */
  maxAbsError: number;
  decoded: Float32Array;
}

/** encodeBlockRows' scratch in this thread (allocated once: a fresh set per job was ~1 MB of zeroed memory). */
let rowsScratch: { ws: FitWorkspace; solver: RdSolver; blockStats: Float64Array } | undefined;
let tileScratch = { weights: new Float64Array(0), decoded: new Float32Array(0), decodedBits: new Int32Array(0) };

/** decodedInto: where to write the exact decode of the job's rows (job.data.length values); default a new array. */
export function encodeBlockRows(job: BlockJob, decodedInto?: Float32Array): EncodedRows {
  const [, cols] = job.shape;
  const { tilesX } = tilesOf(job.shape);
  const rowsInData = job.data.length / cols;
  const blockCount = (job.tileRowEnd - job.tileRowStart) * tilesX;
  const v1 = job.profile === "v1";
  const records: Uint8Array[] = [];
  const recordBytes = new Int32Array(v1 ? 0 : blockCount);
  const v1Headers = new Int32Array(v1 ? 4 * blockCount : 0);
  const v1Payloads = new Uint8Array(v1 ? V1_PAYLOAD_BYTES * blockCount : 0);
  const lweArea = new Float64Array(blockCount);
  const counts = new Float64Array(COUNT_SLOTS);
  const signalError = new Float64Array(2 * (job.tileRowEnd - job.tileRowStart));
  const decoded = decodedInto ?? new Float32Array(job.data.length);
  if (decoded.length !== job.data.length) throw new RangeError(`encodeBlockRows: ${decoded.length} decoded values for ${job.data.length} weights`);
  // in the kernels' memory where they run (MacroblockFitter then copies nodes there)
  const block = fitKernels()?.blockValues ?? new Float64Array(MACROBLOCK * MACROBLOCK);
  // this thread's scratch, reused by every job (each holds nothing across calls; codesCopy's views stay valid)
  const { ws, solver, blockStats } = (rowsScratch ??= { ws: new FitWorkspace(), solver: new RdSolver(), blockStats: new Float64Array(NODE_STATS * NODES_PER_BLOCK) });
  const norm = normalizerOf(job);
  const t158GapOf = (size: number): number => (job.rd ? t158SseGap(size, job.rd.lambda, norm) : Infinity);
  // the tile row's weights and decode, block by block (64x64 each, zero-padded): the tensor's rows
  // are read and written once each, in order, instead of 64 strided rows per block
  const area = MACROBLOCK * MACROBLOCK;
  // a tile row's blocks: this thread's arrays, reused while large enough (every value a job reads is written first)
  if (tileScratch.weights.length < tilesX * area) {
    const decoded = new Float32Array(tilesX * area);
    tileScratch = { weights: new Float64Array(tilesX * area), decoded, decodedBits: new Int32Array(decoded.buffer) };
  }
  const { weights: tileWeights, decoded: tileDecoded, decodedBits: tileDecodedBits } = tileScratch;
  const data = job.data;
  const clip = job.policy === "rd";
  // the tile row in the kernels' memory (its blocks, decode and sums there) where they run and it fits
  const width = tilesX * MACROBLOCK;
  const kern = fitKernels();
  const kernTile = kern && block === kern.blockValues && width <= TILE_WIDTH ? kern : null;
  let b = 0;
  let total = 0;
  let maxAbsError = 0;
  for (let ty = job.tileRowStart; ty < job.tileRowEnd; ty++) {
    const rowBase = (ty - job.tileRowStart) * MACROBLOCK;
    const realRows = Math.min(MACROBLOCK, rowsInData - rowBase);
    if (kernTile) kernTile.tileRows.set(data.subarray(rowBase * cols, (rowBase + realRows) * cols));
    else tileRowToBlocks(data, cols, rowBase, realRows, tilesX, tileWeights, clip);
    for (let bx = 0; bx < tilesX; bx++, b++) {
      if (kernTile) kernTile.loadBlock(bx, cols, realRows, clip ? 1 : 0);
      else block.set(tileWeights.subarray(bx * area, (bx + 1) * area));
      let out: BlockOut;
      let decodedInKernel = false;
      if (v1) {
        const f = fitLeaf(block, MACROBLOCK, job.fit, ws);
        const c = f.chosen;
        out = { layout: -1, leaves: [{ y: 0, x: 0, size: 64, mode: c.mode, scaleBits: c.scaleBits, biasBits: c.biasBits, errorHint: f.errorHint, codes: c.codes, sse: c.sse, lwe: c.lwe }] };
        v1Headers.set([c.scaleBits, c.biasBits, c.mode, +f.errorHint], 4 * b);
        packCodes(c.mode, c.codes, v1Payloads.subarray(V1_PAYLOAD_BYTES * b, V1_PAYLOAD_BYTES * (b + 1)));
      } else {
        // the threshold policy reads only the chosen candidates' errors
        // the rd policy measuring squared error needs the LWE (TensorStats.lwe) of its chosen leaves only
        const lweOnDemand = job.policy === "rd" && job.distortion === "mse";
        // the rd solver's own lazy fits skip T158 where it provably loses the leaf's mode choice
        const lazyRd = lweOnDemand && job.rd !== undefined && !job.rd.stats;
        const fitter = new MacroblockFitter(block, job.fit, ws, !job.rd, lweOnDemand, lazyRd ? t158GapOf : undefined);
        const local = (ty - job.tileRowStart) * tilesX + bx;
        if (job.rd && job.policy === "rd") {
          const given = job.rd.stats;
          const fill = (y: number, x: number, size: number, k: number): void => writeNodeStats(fitter.at(y, x, size), size, norm, job.distortion, blockStats, k);
          if (!given) blockStats.fill(Number.NaN);
          const floorOf = (y: number, x: number, size: number, out: LeafFloor): void => leafFloorOf(fitter, y, x, size, norm, out);
          const choice = given
            ? solver.solve(given, local * NODE_STATS * NODES_PER_BLOCK, job.rd.lambda)
            : solver.solve(blockStats, 0, job.rd.lambda, fill, lazyRd && job.distortion === "mse" ? floorOf : undefined);
          if (kernTile) {
            // the chosen leaves' decode written where their LWE is measured (decodeLeaves below only if not all were)
            fitter.decodeAt = bx * MACROBLOCK;
            fitter.decodeStride = width;
          }
          out = blockFromLeaves(leavesOfRd(fitter, choice, true));
          decodedInKernel = fitter.decodedWeights === MACROBLOCK * MACROBLOCK;
        } else if (job.rd && job.rd.stats) {
          out = blockFromLeaves(leavesOfRd(fitter, decideRd(job.rd.stats, local * 3 * NODES_PER_BLOCK, job.rd.lambda)));
        } else {
          out = blockFromLeaves(leavesOfNode(decideByThreshold(fitter, job.quadtree, job.tensorPower)));
        }
        const record = writeV2Record({ layout: out.layout as 0, ...(out.tree ? { tree: out.tree } : {}), leaves: out.leaves }, b);
        records.push(record);
        recordBytes[b] = record.length;
        total += record.length;
        counts[COUNT_LAYOUTS + out.layout]!++;
      }
      let lwe = 0;
      for (const l of out.leaves) {
        const area = l.size * l.size;
        lwe += l.lwe * area;
        counts[l.mode]! += area;
        counts[COUNT_LEAVES + 29 - Math.clz32(l.size)]!++;
      }
      lweArea[b] = lwe;
      // decoded here, in the job's thread, rather than on the main thread after all jobs
      if (kernTile) {
        if (!decodedInKernel) decodeLeaves(out, kernTile.tileDecodedBits, bx * MACROBLOCK, width);
      }
      else decodeLeaves(out, tileDecodedBits, bx * area, MACROBLOCK);
    }
    if (kernTile) {
      // native/tensor_passes.h tile_sums: the loop below's sums (the same order and operations); the decode copied row by row
      const sums = kernTile.tileSumsOut;
      sums[2] = maxAbsError;
      kernTile.tileSums(realRows, cols, width);
      maxAbsError = sums[2]!;
      counts[COUNT_CLIPPED]! += sums[3]!;
      signalError[2 * (ty - job.tileRowStart)] = sums[0]!;
      signalError[2 * (ty - job.tileRowStart) + 1] = sums[1]!;
      const rows = kernTile.tileDecoded;
      for (let r = 0; r < realRows; r++) decoded.set(rows.subarray(r * width, r * width + cols), (rowBase + r) * cols);
      continue;
    }
    // the decode copied to its rows, and the sums over them, in index order
    let sig = 0;
    let err = 0;
    let clipped = 0;
    const high = CLIP_HIGH;
    const low = CLIP_LOW;
    for (let r = 0; r < realRows; r++) {
      const row = (rowBase + r) * cols;
      for (let bx = 0; bx < tilesX; bx++) {
        const c0 = bx * MACROBLOCK;
        const cw = Math.min(MACROBLOCK, cols - c0);
        const k = bx * area + r * MACROBLOCK;
        const i0 = row + c0;
        for (let j = 0; j < cw; j++) {
          const w = data[i0 + j]!;
          const v = tileDecoded[k + j]!;
          decoded[i0 + j] = v;
          const d = w - v;
          sig += w * w;
          err += d * d;
          const a = Math.abs(d);
          if (a > maxAbsError) maxAbsError = a;
          // counted under both policies (the spec policy's fit clips them too, by its FP16 limits)
          if (w > high || w < low) clipped++;
        }
      }
    }
    counts[COUNT_CLIPPED]! += clipped;
    signalError[2 * (ty - job.tileRowStart)] = sig;
    signalError[2 * (ty - job.tileRowStart) + 1] = err;
  }
  let bytes = v1Payloads;
  if (!v1) {
    bytes = new Uint8Array(total);
    let at = 0;
    for (const r of records) {
      bytes.set(r, at);
      at += r.length;
    }
  }
  return { bytes, recordBytes, v1Headers, lweArea, counts, signalError, maxAbsError, decoded };
}

/**
 * A tile row's real rows [rowBase, rowBase + realRows) of `data` as consecutive 64x64 blocks in
 * `tile` (block bx at bx * 4096, row-major; extractBlock's blocks), what lies beyond the tensor's
 * edge zero; with `clip`, each weight as clipToFormat leaves it.
 */
function tileRowToBlocks(data: Float32Array, cols: number, rowBase: number, realRows: number, tilesX: number, tile: Float64Array, clip: boolean): void {
  if (realRows < MACROBLOCK || cols % MACROBLOCK !== 0) tile.fill(0);
  // locals: a module binding is loaded (and checked) at every use in the loop
  const high = CLIP_HIGH;
  const low = CLIP_LOW;
  for (let r = 0; r < realRows; r++) {
    const row = (rowBase + r) * cols;
    for (let bx = 0; bx < tilesX; bx++) {
      const c0 = bx * MACROBLOCK;
      const cw = Math.min(MACROBLOCK, cols - c0);
      const o = bx * MACROBLOCK * MACROBLOCK + r * MACROBLOCK;
      const src = row + c0;
      if (clip) {
        // as clipToFormat: a weight beyond an end becomes that end (NaN and -0 stay as they are)
        for (let j = 0; j < cw; j++) tile[o + j] = Math.min(Math.max(data[src + j]!, low), high);
      } else for (let j = 0; j < cw; j++) tile[o + j] = data[src + j]!;
    }
  }
}

/**
 * The exact decode of a block's leaves as float32 bits into `out`: its row r (of 64) at at + r * stride
 * (reconstructBlock without the tensor's shape: padding is decoded too).
 */
function decodeLeaves(block: BlockOut, out: Int32Array, at: number, stride: number): void {
  const values = leafValues;
  const bits = leafBits;
  for (const l of block.leaves) {
    const codes = l.codes;
    const S = halfToFloat(l.scaleBits);
    const B = halfToFloat(l.biasBits);
    for (let q = -8; q < 8; q++) values[q + 8] = S * q + B;
    const size = l.size;
    for (let r = 0, k = 0, o = at + l.y * stride + l.x; r < size; r++, k += size, o += stride) {
      for (let j = 0; j < size; j++) out[o + j] = bits[codes[k + j]! + 8]!;
    }
  }
}

/** Code + 8 -> decoded value of the leaf being written (reconstructBlock), and its float32 bits. */
const leafValues = new Float32Array(16);
const leafBits = new Int32Array(leafValues.buffer);

/**
 * The exact decode of one block's leaves (DECISIONS.md section 2 arithmetic) into `out`, a
 * row-major `shape` whose tile row `by` (counted from its first row) and tile column `bx` the
 * block is, cropped to it. Each leaf's 16 possible values are computed once; a Float32Array
 * store rounds S * q + B to float32 once, as the decoders do. Leaves cover every element, so
 * `out` needs no clearing.
 */
export function reconstructBlock(block: BlockOut, by: number, bx: number, shape: Shape, out: Float32Array): void {
  const [rows, cols] = shape;
  const values = leafValues;
  // the values' float32 bits copied as integers: the same bits without a conversion per weight
  const bits = leafBits;
  const outBits = new Int32Array(out.buffer, out.byteOffset, out.length);
  for (const l of block.leaves) {
    const codes = l.codes;
    const S = halfToFloat(l.scaleBits);
    const B = halfToFloat(l.biasBits);
    for (let q = -8; q < 8; q++) values[q + 8] = S * q + B;
    const size = l.size;
    const r0 = by * MACROBLOCK + l.y;
    const c0 = bx * MACROBLOCK + l.x;
    const rowEnd = Math.min(r0 + size, rows);
    const width = Math.min(c0 + size, cols) - c0;
    for (let r = r0, k = 0; r < rowEnd; r++, k += size) {
      const o = r * cols + c0;
      for (let j = 0; j < width; j++) outBits[o + j] = bits[codes[k + j]! + 8]!;
    }
  }
}

/**
 * Share of its four quarters' fitted squared error that a node's FP4 fit is taken to have at
 * least (the node's scale and bias, restricted to one quarter, are one candidate of that
 * quarter's fit; the fits are searches, not proofs, so this is an estimate: bench/quality.mjs
 * and bench/wide-digest.mjs measure what it changes).
 */
const FP4_FLOOR_SHARE = 0.95;

/**
 * Floors of a node leaf's distortion (rd policy, squared error) from its quarters' fits: FP4
 * FP4_FLOOR_SHARE times their summed error, T158 the sum of their t158Floor (a proof: any T158
 * leaf of the node is a T158 leaf of each quarter), 0 where a quarter has none.
 */
export function leafFloorOf(fitter: MacroblockFitter, y: number, x: number, size: number, norm: number, out: LeafFloor): void {
  quarterSums(fitter, y, x, size, out);
  out.fp4 = (FP4_FLOOR_SHARE * out.fp4) / norm;
  out.t158 = out.t158 / norm;
}

/** The quarters' summed FP4 error and T158 floors into out; a quarter never fitted (its own floor proved it loses) adds its quarters' sums. */
function quarterSums(fitter: MacroblockFitter, y: number, x: number, size: number, out: LeafFloor): void {
  const h = size / 2;
  let fp4 = 0;
  let t158 = 0;
  for (let q = 0; q < 4; q++) {
    const qy = y + (q & 2 ? h : 0);
    const qx = x + (q & 1 ? h : 0);
    const f = fitter.fitted(qy, qx, h);
    if (f) {
      fp4 += f.fp4.sse;
      t158 += f.t158Floor ?? 0;
    } else {
      quarterSums(fitter, qy, qx, h, out);
      fp4 += out.fp4;
      t158 += out.t158;
    }
  }
  out.fp4 = fp4;
  out.t158 = t158;
}

/** Rate-distortion errors are relative to the tensor's power, so one lambda serves every tensor of a model. */
function normalizerOf(job: BlockJob): number {
  return job.tensorPower > 0 ? job.tensorPower : 1;
}

/** Rate-control statistics of every node of every block in the job (errors relative to tensor power). */
export function statsBlockRows(job: BlockJob): Float64Array {
  const [, cols] = job.shape;
  const { tilesX } = tilesOf(job.shape);
  const rowsInData = job.data.length / cols;
  const n = (job.tileRowEnd - job.tileRowStart) * tilesX;
  const stats = new Float64Array(n * 3 * NODES_PER_BLOCK);
  const block = new Float64Array(MACROBLOCK * MACROBLOCK);
  const norm = normalizerOf(job);
  const ws = new FitWorkspace();
  for (let ty = job.tileRowStart; ty < job.tileRowEnd; ty++) {
    for (let bx = 0; bx < tilesX; bx++) {
      extractBlock(job.data, cols, rowsInData, (ty - job.tileRowStart) * MACROBLOCK, bx, block, job.policy === "rd");
      const local = (ty - job.tileRowStart) * tilesX + bx;
      macroblockStats(new MacroblockFitter(block, job.fit, ws, false, job.policy === "rd" && job.distortion === "mse"), norm, job.policy === "rd" ? job.distortion : "lwe", stats, local * NODE_STATS * NODES_PER_BLOCK);
    }
  }
  return stats;
}
