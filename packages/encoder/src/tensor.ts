/** Encode one 2-D float32 tensor to a v1 or v2 container, with statistics and its exact decode. */
import { LAYOUT_NAMES, MACROBLOCK, Sgfp4Error, V1_PAYLOAD_BYTES, align16, assembleV2, writeV1, type Shape } from "@sgfp4/format";
import { COUNT_CLIPPED, COUNT_FP4_WEIGHTS, COUNT_LAYOUTS, COUNT_LEAVES, COUNT_T158_WEIGHTS, tilesOf, type BlockJob, type EncodedRows } from "./blocks.js";
import { DEFAULT_FIT_OPTIONS, type FitOptions } from "./fit.js";
import { runChunks, type WorkerPool } from "./parallel.js";
import { DEFAULT_QUADTREE_OPTIONS, NODES_PER_BLOCK, decideRd, type QuadtreeOptions } from "./quadtree.js";
import { NODE_STATS, RdSolver, type Distortion } from "./rd.js";

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

/**
 * Checks the shape, and returns the tensor's power (mean w^2) after checking that every value is
 * finite: the sum of squares is finite exactly when every value is (a float32 squared is below
 * 2^256, so no finite sum overflows a double), so one pass does both.
 */
function checkedTensorPower(data: Float32Array, shape: Shape): number {
  const [rows, cols] = shape;
  if (!Number.isSafeInteger(rows) || !Number.isSafeInteger(cols) || rows < 1 || cols < 1) throw new Sgfp4Error("INVALID_ARGUMENT", `shape must be [O, I] with integers >= 1, got [${rows}, ${cols}]`);
  if (data.length !== rows * cols) throw new Sgfp4Error("INVALID_ARGUMENT", `tensor has ${data.length} values, shape [${rows}, ${cols}] needs ${rows * cols}`);
  const power = tensorPower(data);
  if (!Number.isFinite(power)) {
    const i = data.findIndex((v) => !Number.isFinite(v));
    throw new Sgfp4Error("INVALID_ARGUMENT", `tensor value ${i} is ${data[i]}; only finite weights can be encoded`);
  }
  return power;
}

/**
 * mean(w^2) of the tensor, defined as eight partial sums of w^2 (element i in partial i mod 8,
 * each in index order) added as ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)): every term is
 * exact (a float32 squared fits a double), and eight independent additions run several times
 * faster than one chain, which waits on each addition (this pass runs on the calling thread
 * before any worker starts: a third of a 16-thread encode with a single chain). cap2: see
 * robustPower.
 */
export function tensorPower(data: Float32Array, cap2 = Infinity): number {
  const n = data.length;
  let p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0, p6 = 0, p7 = 0;
  // each square at most cap2 (robustPower); with cap2 = Infinity every square as it is
  const sq = (w: number): number => (w * w < cap2 ? w * w : cap2);
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    p0 += sq(data[i]!);
    p1 += sq(data[i + 1]!);
    p2 += sq(data[i + 2]!);
    p3 += sq(data[i + 3]!);
    p4 += sq(data[i + 4]!);
    p5 += sq(data[i + 5]!);
    p6 += sq(data[i + 6]!);
    p7 += sq(data[i + 7]!);
  }
  // the last n mod 8 elements, each in its partial (i mod 8)
  if (i < n) p0 += sq(data[i]!);
  if (i + 1 < n) p1 += sq(data[i + 1]!);
  if (i + 2 < n) p2 += sq(data[i + 2]!);
  if (i + 3 < n) p3 += sq(data[i + 3]!);
  if (i + 4 < n) p4 += sq(data[i + 4]!);
  if (i + 5 < n) p5 += sq(data[i + 5]!);
  if (i + 6 < n) p6 += sq(data[i + 6]!);
  return (((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))) / n;
}

/** At most this share of the weights lies above robustPower's cap. */
const ROBUST_TOP_SHARE = 1 / 1024;

/**
 * The rd policy's unit of distortion (one lambda then means the same for every tensor): the
 * tensor power with each square capped at 4^k, for 2^k the smallest power of two that at most
 * n / 1024 of the |w| reach (binary exponents counted from the float32 bits: exact). A few
 * outliers (a single 1e6 among unit weights) would otherwise make the rest of the tensor's
 * error look free, and every block would take the fewest bits.
 */
export function robustPower(data: Float32Array): number {
  const words = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const perExponent = new Float64Array(256);
  for (let i = 0; i < words.length; i++) perExponent[(words[i]! >>> 23) & 0xff]!++;
  let above = 0;
  let e = 255;
  while (e > 0 && above + perExponent[e]! <= data.length * ROBUST_TOP_SHARE) above += perExponent[e--]!;
  // every |w| with exponent field <= e is below 2^(e + 1 - 127): that float32, exactly
  const cap = e >= 254 ? Infinity : new Float32Array(Uint32Array.of((e + 1) << 23).buffer)[0]!;
  return tensorPower(data, cap * cap);
}

/**
 * Jobs of a few macroblock rows each (more chunks than threads, for balance), each holding a view
 * of its rows of `data` (a worker pool copies them when a worker takes the job).
 */
export function makeJobs(data: Float32Array, shape: Shape, base: Omit<BlockJob, "data" | "tileRowStart" | "tileRowEnd" | "shape">, chunks: number): BlockJob[] {
  const { tilesY } = tilesOf(shape);
  const n = Math.max(1, Math.min(tilesY, chunks));
  const jobs: BlockJob[] = [];
  for (let c = 0; c < n; c++) {
    const t0 = Math.floor((c * tilesY) / n);
    const t1 = Math.floor(((c + 1) * tilesY) / n);
    if (t1 <= t0) continue;
    const r0 = t0 * MACROBLOCK;
    const r1 = Math.min(t1 * MACROBLOCK, shape[0]);
    jobs.push({ ...base, shape, tileRowStart: t0, tileRowEnd: t1, data: data.subarray(r0 * shape[1], r1 * shape[1]) });
  }
  return jobs;
}

/** Per-tensor analysis for rate control: per-node errors of every block. */
export interface TensorAnalysis {
  shape: Shape;
  policy: Policy;
  blockCount: number;
  stats: Float64Array;
}

export async function analyzeTensor(data: Float32Array, shape: Shape, opts: EncodeOptions = {}): Promise<TensorAnalysis> {
  const policy = resolvePolicy(opts);
  const power = powerFor(policy, data, shape);
  const fit = resolveFit("v2", opts.fit, policy);
  const chunks = opts.pool ? opts.pool.threads * 4 : 1;
  const jobs = makeJobs(data, shape, { profile: "v2", fit, quadtree: resolveQuadtree(opts.quadtree), tensorPower: power, policy, distortion: opts.distortion ?? "mse" }, chunks);
  const parts = await runChunks("stats", jobs, opts.pool);
  const { tilesY, tilesX } = tilesOf(shape);
  const stats = new Float64Array(tilesY * tilesX * 3 * NODES_PER_BLOCK);
  let at = 0;
  for (const p of parts) {
    stats.set(p, at);
    at += p.length;
  }
  return { shape, policy, blockCount: tilesY * tilesX, stats };
}

/** Most the rd policy's unit exceeds robustPower: a few outliers cannot make it larger. */
const RD_UNIT_OVER_ROBUST = 4;

/**
 * The jobs' tensorPower: the threshold policy's (spec), or the rd policy's unit of distortion:
 * the tensor's power, but at most RD_UNIT_OVER_ROBUST x robustPower. (robustPower alone cost
 * Silero VAD 0.55 dB at 4 bpw: it weights heavy-tailed tensors more than the model's SNR does.)
 */
function powerFor(policy: Policy, data: Float32Array, shape: Shape): number {
  const power = checkedTensorPower(data, shape);
  if (policy === "spec") return power;
  const robust = robustPower(data);
  return power < RD_UNIT_OVER_ROBUST * robust ? power : RD_UNIT_OVER_ROBUST * robust;
}

function resolvePolicy(opts: EncodeOptions): Policy {
  const policy = opts.policy ?? "rd";
  if (policy !== "rd" && policy !== "spec") throw new Sgfp4Error("INVALID_ARGUMENT", `policy must be rd or spec, got ${String(policy)}`);
  if (opts.distortion !== undefined && opts.distortion !== "mse" && opts.distortion !== "lwe") throw new Sgfp4Error("INVALID_ARGUMENT", `distortion must be mse or lwe, got ${String(opts.distortion)}`);
  if (opts.lambda !== undefined && !(opts.lambda > 0 && opts.lambda < Infinity)) throw new Sgfp4Error("INVALID_ARGUMENT", `lambda must be a positive number, got ${opts.lambda}`);
  return policy;
}

/** Exact v2 container bytes of every analysed tensor at lambda. */
export function bytesAtLambda(analyses: readonly TensorAnalysis[], lambda: number): number {
  let total = 0;
  const solver = new RdSolver();
  for (const a of analyses) {
    total += align16(16 + 4 * a.blockCount);
    for (let b = 0; b < a.blockCount; b++) {
      const at = b * NODE_STATS * NODES_PER_BLOCK;
      total += (a.policy === "rd" ? solver.solve(a.stats, at, lambda) : decideRd(a.stats, at, lambda)).recordBytes;
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
  const profile = opts.profile ?? "v2";
  if (profile !== "v1" && profile !== "v2") throw new Sgfp4Error("INVALID_ARGUMENT", `profile must be v1 or v2, got ${String(profile)}`);
  let lambda: number | undefined;
  let analysis: TensorAnalysis | undefined;
  if (opts.bpw !== undefined) {
    if (profile !== "v2") throw new Sgfp4Error("INVALID_ARGUMENT", "rate control (bpw) needs the v2 profile; v1 is always 4.02 bits per weight");
    if (!(opts.bpw > 0)) throw new Sgfp4Error("INVALID_ARGUMENT", `bpw must be > 0, got ${opts.bpw}`);
    analysis = await analyzeTensor(data, shape, opts);
    lambda = searchLambda([analysis], opts.bpw * shape[0] * shape[1]);
  }
  return encodeTensorWith(data, shape, opts, lambda, analysis);
}

/** Encode with a known rate-control lambda and analysis (model-level rate control), or the threshold policy. */
export async function encodeTensorWith(data: Float32Array, shape: Shape, opts: EncodeOptions, lambda?: number, analysis?: TensorAnalysis): Promise<EncodedTensor> {
  const profile = opts.profile ?? "v2";
  const policy = resolvePolicy(opts);
  const power = powerFor(policy, data, shape);
  const fit = resolveFit(profile, opts.fit, policy);
  const quadtree = resolveQuadtree(opts.quadtree);
  const chunks = opts.pool ? opts.pool.threads * 4 : Math.ceil(shape[0] / MACROBLOCK);
  const jobs = makeJobs(data, shape, { profile, fit, quadtree, tensorPower: power, policy, distortion: opts.distortion ?? "mse" }, chunks);
  const { tilesX } = tilesOf(shape);
  // the rd policy always decides by a lambda; without a target, the given or default one
  if (profile === "v2" && policy === "rd" && lambda === undefined) lambda = opts.lambda ?? DEFAULT_LAMBDA;
  if (lambda !== undefined && profile === "v2") {
    for (const j of jobs) {
      const per = NODE_STATS * NODES_PER_BLOCK;
      j.rd = { lambda, ...(analysis ? { stats: analysis.stats.slice(j.tileRowStart * tilesX * per, j.tileRowEnd * tilesX * per) } : {}) };
    }
  }
  // each job decodes its own rows: jobs run here write them in place, a worker's are copied in as they arrive
  const decoded = new Float32Array(shape[0] * shape[1]);
  const rowsOf = (job: BlockJob): Float32Array => {
    const start = job.tileRowStart * MACROBLOCK * shape[1];
    return decoded.subarray(start, start + job.data.length);
  };
  const parts = await runChunks("encode", jobs, opts.pool, (done) => opts.onProgress?.(done, jobs.length), rowsOf);
  const bytes = profile === "v1" ? joinV1(shape, parts) : assembleV2(shape, parts.flatMap(recordsOf));
  return { bytes, decoded, stats: { ...measureStats(data.length, parts, bytes.length, profile), ...(lambda !== undefined ? { lambda } : {}) } };
}

/** A v2 job's records: views of its bytes, one per block. */
function recordsOf(p: EncodedRows): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (const length of p.recordBytes) {
    out.push(p.bytes.subarray(at, at + length));
    at += length;
  }
  return out;
}

/** The v1 stream of the jobs' blocks (their payloads already packed). */
function joinV1(shape: Shape, parts: readonly EncodedRows[]): Uint8Array {
  const blocks = parts.flatMap((p) =>
    Array.from({ length: p.v1Headers.length / 4 }, (_, b) => {
      const h = p.v1Headers.subarray(4 * b, 4 * b + 4);
      return { scaleBits: h[0]!, biasBits: h[1]!, mode: h[2] as 0 | 1, errorHint: h[3] === 1, payload: p.bytes.subarray(V1_PAYLOAD_BYTES * b, V1_PAYLOAD_BYTES * (b + 1)) };
    }),
  );
  return writeV1({ shape, blocks });
}

/** The tensor's statistics from its jobs' summaries (the jobs measured their own rows). */
function measureStats(weights: number, parts: readonly EncodedRows[], bytes: number, profile: "v1" | "v2"): TensorStats {
  // integer counts: the same totals in any order; the sums per block or tile row in raster
  // order, so the same numbers whatever the job split
  const counts = new Float64Array(parts[0]?.counts.length ?? 0);
  let lweSum = 0;
  let sig = 0;
  let err = 0;
  let maxAbsError = 0;
  for (const p of parts) {
    if (p.maxAbsError > maxAbsError) maxAbsError = p.maxAbsError;
    p.counts.forEach((c, k) => (counts[k] = counts[k]! + c));
    for (const x of p.lweArea) lweSum += x;
    for (let t = 0; t < p.signalError.length; t += 2) {
      sig += p.signalError[t]!;
      err += p.signalError[t + 1]!;
    }
  }
  const modeWeights: [number, number] = [counts[COUNT_FP4_WEIGHTS]!, counts[COUNT_T158_WEIGHTS]!];
  const area = modeWeights[0] + modeWeights[1];
  const layouts: Record<string, number> = {};
  if (profile === "v2") {
    LAYOUT_NAMES.forEach((name, layout) => {
      if (counts[COUNT_LAYOUTS + layout]) layouts[name] = counts[COUNT_LAYOUTS + layout]!;
    });
  }
  const leafSizes: Record<string, number> = {};
  for (let k = 0; k < 5; k++) if (counts[COUNT_LEAVES + k]) leafSizes[String(4 << k)] = counts[COUNT_LEAVES + k]!;
  return {
    profile,
    weights,
    bytes,
    bitsPerWeight: (bytes * 8) / weights,
    snrDb: err === 0 ? Infinity : sig === 0 ? -Infinity : 10 * Math.log10(sig / err),
    mse: err / weights,
    lwe: lweSum / area,
    modeWeights,
    layouts,
    leafSizes,
    clipped: counts[COUNT_CLIPPED]!,
    maxAbsError,
  };
}
