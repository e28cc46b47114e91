/** Encode one 2-D float32 tensor to a v1 or v2 container, with statistics and its exact decode. */
import { MACROBLOCK, Sgfp4Error, align16, type Shape } from "@sgfp4/format";
import { TensorAssembly } from "./assemble.js";
import { arrayRows, bandedRows, cappedPower, checkedPower, runJobs, type RowSource, type TensorRows } from "./bands.js";
import { tilesOf, type BlockJob } from "./blocks.js";
import { DEFAULT_FIT_OPTIONS, type FitOptions } from "./fit.js";
import type { WorkerPool } from "./parallel.js";
import { BLOCK_STATS, FileNodeStats, MemoryNodeStats, type NodeStats } from "./node-stats.js";
import { ExponentCounts } from "./power.js";
import { DEFAULT_QUADTREE_OPTIONS, decideRd, type QuadtreeOptions } from "./quadtree.js";
import { RdSolver, type Distortion } from "./rd.js";

/** Encoder policies: see README "Policies". */
export type Policy = "rd" | "spec";

/**
 * The rd policy's lambda without a bpw target (distortion relative to the tensor's power, per
 * bit): measured 4.42 bits per weight on Gaussian data (21.5 dB), 4.90 on Student-t (20.2 dB).
 */
export const DEFAULT_LAMBDA = 0.006;

export interface EncodeOptions {
  profile?: "v1" | "v2";
  /**
   * "rd" (default): joint grid search, and v2 splits and modes by distortion + lambda * exact
   * bytes; "spec": the 22.7 fit and threshold policy (and its rate control), the bytes of
   * versions before 0.2
   */
  policy?: Policy;
  /** rd policy: distortion measure, "mse" (default, what SNR measures) or "lwe" (Laplacian-weighted) */
  distortion?: Distortion;
  /** rd policy without bpw: the Lagrange multiplier (default DEFAULT_LAMBDA; larger: fewer bits) */
  lambda?: number;
  fit?: Partial<Omit<FitOptions, "v2">>;
  quadtree?: Partial<QuadtreeOptions>;
  /** v2 rate control: target bits per weight (container bytes * 8 / weights) */
  bpw?: number;
  /**
   * worker pool (node:worker_threads); without one the work runs on this thread. With one, the
   * tensor is read while the returned promise is pending: do not change it until it settles.
   */
  pool?: WorkerPool;
  /**
   * rate control (bpw): a folder for the per-node statistics (8 KiB per 64x64 block: half the
   * tensor's float32 size), in a file removed after the encode; default in memory
   */
  spillDir?: string;
  /** called with (done, total) macroblock rows */
  onProgress?: (done: number, total: number) => void;
}

export interface TensorStats {
  profile: "v1" | "v2";
  weights: number;
  bytes: number;
  bitsPerWeight: number;
  /** 10*log10(sum w^2 / sum (w - w_hat)^2) over the real (cropped) weights */
  snrDb: number;
  mse: number;
  /** area-weighted mean of the leaves' Laplacian-weighted errors (padded grid) */
  lwe: number;
  /** weights per mode: [FP4, T158] (padded grid) */
  modeWeights: [number, number];
  /** records per layout name (v2) */
  layouts: Record<string, number>;
  /** leaves per size */
  leafSizes: Record<string, number>;
  /** rate control's lambda, when used */
  lambda?: number;
  /**
   * weights beyond what a leaf can decode to with its bias at zero (above 7 * 65504 = 458528 or
   * below -8 * 65504 = -524032): the rd policy fits them clipped to that end; counted under
   * either policy. A manifest and the command line report it.
   */
  clipped: number;
  /** largest |w - decoded| over the real weights */
  maxAbsError: number;
}

export interface EncodedTensor {
  bytes: Uint8Array;
  /** the exact decode (float32, cropped to shape) */
  decoded: Float32Array;
  stats: TensorStats;
}

export function resolveFit(profile: "v1" | "v2", fit: EncodeOptions["fit"] = {}, policy: Policy = "rd"): FitOptions {
  const o = { ...DEFAULT_FIT_OPTIONS, search: policy === "spec" ? ("spec" as const) : ("joint" as const), ...fit, v2: profile === "v2" };
  if (!(o.delta >= 0)) throw new Sgfp4Error("INVALID_ARGUMENT", `delta must be >= 0, got ${o.delta}`);
  if (!(o.outlierGuard > 0)) throw new Sgfp4Error("INVALID_ARGUMENT", `outlierGuard must be > 0`);
  return o;
}

export function resolveQuadtree(q: EncodeOptions["quadtree"] = {}): QuadtreeOptions {
  const o = { ...DEFAULT_QUADTREE_OPTIONS, ...q };
  if (!(o.thresholdScale > 0)) throw new Sgfp4Error("INVALID_ARGUMENT", `thresholdScale must be > 0`);
  return o;
}

export { tensorPower, robustPower } from "./power.js";

/** Per-tensor analysis for rate control: per-node errors of every block, and the tensor's power. */
export interface TensorAnalysis {
  shape: Shape;
  policy: Policy;
  blockCount: number;
  /** per-node statistics of every block (in memory, or a file with EncodeOptions.spillDir); close() when done */
  stats: NodeStats;
  /** the jobs' tensorPower (powerOf): the encode that follows needs no pass for it */
  power: number;
}

export async function analyzeTensor(data: Float32Array, shape: Shape, opts: EncodeOptions = {}): Promise<TensorAnalysis> {
  return analyzeRows(arrayRows(data, shape), opts);
}

/** Rate-control statistics of a tensor read band by band (the bands in order, a few at a time). */
export async function analyzeRows(src: TensorRows, opts: EncodeOptions = {}): Promise<TensorAnalysis> {
  const { shape } = src;
  const policy = resolvePolicy(opts);
  const power = await powerOf(policy, src);
  const fit = resolveFit("v2", opts.fit, policy);
  const { tilesY, tilesX } = tilesOf(shape);
  const blockCount = tilesY * tilesX;
  const stats = opts.spillDir !== undefined ? new FileNodeStats(blockCount, opts.spillDir) : new MemoryNodeStats(blockCount);
  const base = { profile: "v2" as const, fit, quadtree: resolveQuadtree(opts.quadtree), tensorPower: power, policy, distortion: opts.distortion ?? "mse" };
  try {
    await runJobs("stats", src, base, opts.pool, (_job, part) => stats.append(part));
  } catch (e) {
    stats.close();
    throw e;
  }
  return { shape, policy, blockCount, stats, power };
}

/** Most the rd policy's unit exceeds robustPower: a few outliers cannot make it larger. */
const RD_UNIT_OVER_ROBUST = 4;

/**
 * The jobs' tensorPower: the threshold policy's (spec), or the rd policy's unit of distortion:
 * the tensor's power, but at most RD_UNIT_OVER_ROBUST x robustPower. (robustPower alone cost
 * Silero VAD 0.55 dB at 4 bpw: it weights heavy-tailed tensors more than the model's SNR does.)
 * One pass over the rows (checked finite), and for rd a second for the capped power.
 */
async function powerOf(policy: Policy, src: TensorRows): Promise<number> {
  const exponents = policy === "rd" ? new ExponentCounts() : undefined;
  const power = await checkedPower(src, exponents);
  if (!exponents) return power;
  const robust = await cappedPower(src, exponents.cap2());
  return power < RD_UNIT_OVER_ROBUST * robust ? power : RD_UNIT_OVER_ROBUST * robust;
}

function resolvePolicy(opts: EncodeOptions): Policy {
  const policy = opts.policy ?? "rd";
  if (policy !== "rd" && policy !== "spec") throw new Sgfp4Error("INVALID_ARGUMENT", `policy must be rd or spec, got ${String(policy)}`);
  if (opts.distortion !== undefined && opts.distortion !== "mse" && opts.distortion !== "lwe") throw new Sgfp4Error("INVALID_ARGUMENT", `distortion must be mse or lwe, got ${String(opts.distortion)}`);
  if (opts.lambda !== undefined && !(opts.lambda > 0 && opts.lambda < Infinity)) throw new Sgfp4Error("INVALID_ARGUMENT", `lambda must be a positive number, got ${opts.lambda}`);
  return policy;
}

/** Blocks of statistics read at a time (4 MiB). */
const STATS_CHUNK = 512;

/** Exact v2 container bytes of every analysed tensor at lambda. */
export function bytesAtLambda(analyses: readonly TensorAnalysis[], lambda: number): number {
  let total = 0;
  const solver = new RdSolver();
  for (const a of analyses) {
    total += align16(16 + 4 * a.blockCount);
    for (let b0 = 0; b0 < a.blockCount; b0 += STATS_CHUNK) {
      const n = Math.min(STATS_CHUNK, a.blockCount - b0);
      const stats = a.stats.blocks(b0, n);
      for (let b = 0; b < n; b++) {
        const at = b * BLOCK_STATS;
        total += (a.policy === "rd" ? solver.solve(stats, at, lambda) : decideRd(stats, at, lambda)).recordBytes;
      }
    }
  }
  return total;
}

export const LAMBDA_MIN = 1e-12;
export const LAMBDA_MAX = 1e4;

/**
 * Smallest lambda (best quality) whose total bits stay within the target, by bisection on
 * log(lambda) with geometric midpoints sqrt(lo*hi) (exact operations only). If even the
 * largest lambda overshoots, that one is returned (the container cannot get smaller).
 */
export function searchLambda(analyses: readonly TensorAnalysis[], targetBits: number): number {
  let lo = LAMBDA_MIN;
  let hi = LAMBDA_MAX;
  if (bytesAtLambda(analyses, lo) * 8 <= targetBits) return lo;
  for (let it = 0; it < 48; it++) {
    const mid = Math.sqrt(lo * hi);
    if (bytesAtLambda(analyses, mid) * 8 <= targetBits) hi = mid;
    else lo = mid;
  }
  return hi;
}

export async function encodeTensor(data: Float32Array, shape: Shape, opts: EncodeOptions = {}): Promise<EncodedTensor> {
  const src = arrayRows(data, shape);
  const decoded = new Float32Array(data.length);
  const { container, stats } = await encodeRowsTargeted(src, opts, rowsOfJob(decoded, shape));
  return { bytes: joinPieces(container), decoded, stats };
}

/** The pieces of a container as one array. */
export function joinPieces(pieces: readonly Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export interface BandEncodeOptions extends EncodeOptions {
  /**
   * the exact decode, band by band in row order: (first row, its rows' values, row-major), the
   * values valid during the call only (their array is reused: copy what you keep)
   */
  onDecodedRows?: (row0: number, values: Float32Array) => void;
  /** rows per read and per job, a multiple of 64 (default: about 2 MiB of float32 per band) */
  bandRows?: number;
}

export interface EncodedTensorBands {
  /**
   * the container as consecutive pieces (v2: header and offset table, then the records as the
   * jobs wrote them), so that it is never copied whole: write them in order (or join them)
   */
  container: Uint8Array[];
  stats: TensorStats;
}

/**
 * encodeTensor for a tensor read band by band: readRows(row0, rowCount) gives those rows
 * (row-major float32, an array the encoder may keep), asked for in row order, once per pass
 * (twice more with policy rd, once more with bpw). The same bytes and statistics as encodeTensor
 * on the whole array, for every policy, option and thread count; in memory at a time: a few
 * bands (two per thread with a pool), the container, and with bpw the rate-control statistics.
 */
export async function encodeTensorBands(readRows: RowSource, shape: Shape, opts: BandEncodeOptions = {}): Promise<EncodedTensorBands> {
  return encodeRowsTargeted(bandedRows(readRows, shape, opts.bandRows), opts, undefined, opts.onDecodedRows);
}

/** Where a job's decode goes in the tensor-sized `decoded`. */
function rowsOfJob(decoded: Float32Array, shape: Shape): (job: BlockJob) => Float32Array {
  return (job) => decoded.subarray(job.tileRowStart * MACROBLOCK * shape[1], Math.min(job.tileRowEnd * MACROBLOCK, shape[0]) * shape[1]);
}

/** Rate control (bpw) if asked for, then the encode. */
async function encodeRowsTargeted(src: TensorRows, opts: EncodeOptions, decodedInto?: (job: BlockJob) => Float32Array, onDecodedRows?: BandEncodeOptions["onDecodedRows"]): Promise<EncodedTensorBands> {
  const profile = opts.profile ?? "v2";
  if (profile !== "v1" && profile !== "v2") throw new Sgfp4Error("INVALID_ARGUMENT", `profile must be v1 or v2, got ${String(profile)}`);
  let lambda: number | undefined;
  let analysis: TensorAnalysis | undefined;
  if (opts.bpw !== undefined) {
    if (profile !== "v2") throw new Sgfp4Error("INVALID_ARGUMENT", "rate control (bpw) needs the v2 profile; v1 is always 4.02 bits per weight");
    if (!(opts.bpw > 0)) throw new Sgfp4Error("INVALID_ARGUMENT", `bpw must be > 0, got ${opts.bpw}`);
    analysis = await analyzeRows(src, opts);
  }
  try {
    if (analysis) lambda = searchLambda([analysis], opts.bpw! * src.shape[0] * src.shape[1]);
    return await encodeRows(src, opts, lambda, analysis, decodedInto, onDecodedRows);
  } finally {
    analysis?.stats.close();
  }
}

/** Encode with a known rate-control lambda and analysis (model-level rate control), or the threshold policy. */
export async function encodeTensorWith(data: Float32Array, shape: Shape, opts: EncodeOptions, lambda?: number, analysis?: TensorAnalysis): Promise<EncodedTensor> {
  const decoded = new Float32Array(data.length);
  const { container, stats } = await encodeRows(arrayRows(data, shape), opts, lambda, analysis, rowsOfJob(decoded, shape));
  return { bytes: joinPieces(container), decoded, stats };
}

/**
 * The encode pass over a tensor's rows (and before it the passes for its power, unless the
 * analysis brings it). Each job's decode goes to decodedInto(job) when given (else an array of
 * its own), then to onDecodedRows, in row order.
 */
export async function encodeRows(
  src: TensorRows,
  opts: EncodeOptions,
  lambda?: number,
  analysis?: TensorAnalysis,
  decodedInto?: (job: BlockJob) => Float32Array,
  onDecodedRows?: BandEncodeOptions["onDecodedRows"],
): Promise<EncodedTensorBands> {
  const { shape } = src;
  const profile = opts.profile ?? "v2";
  const policy = resolvePolicy(opts);
  const power = analysis && analysis.policy === policy ? analysis.power : await powerOf(policy, src);
  const fit = resolveFit(profile, opts.fit, policy);
  const quadtree = resolveQuadtree(opts.quadtree);
  const { tilesX } = tilesOf(shape);
  // the rd policy always decides by a lambda; without a target, the given or default one
  if (profile === "v2" && policy === "rd" && lambda === undefined) lambda = opts.lambda ?? DEFAULT_LAMBDA;
  const rd = lambda !== undefined && profile === "v2" ? lambda : undefined;
  const statsOf = (a: TensorAnalysis, j: BlockJob): Float64Array => a.stats.blocks(j.tileRowStart * tilesX, (j.tileRowEnd - j.tileRowStart) * tilesX).slice();
  const withRd = (j: BlockJob): BlockJob => (rd === undefined ? j : { ...j, rd: { lambda: rd, ...(analysis ? { stats: statsOf(analysis, j) } : {}) } });
  const assembly = new TensorAssembly(shape, profile);
  const base = { profile, fit, quadtree, tensorPower: power, policy, distortion: opts.distortion ?? "mse" } as const;
  await runJobs("encode", src, base, opts.pool, (job, part, i, n) => {
    onDecodedRows?.(job.tileRowStart * MACROBLOCK, part.decoded);
    assembly.add(part);
    opts.onProgress?.(i + 1, n);
  }, withRd, decodedInto);
  const container = assembly.pieces();
  return { container, stats: { ...assembly.stats(container.reduce((n, p) => n + p.length, 0)), ...(lambda !== undefined ? { lambda } : {}) } };
}
