/**
 * Per-leaf candidate fitting and dual-mode selection (spec 22.7, plus a least-squares refit).
 * Only +, -, *, /, sqrt, floor/round, abs and comparisons on doubles are used, in a fixed
 * order, so the result is the same on every engine and machine.
 */
import { MODE_FP4, MODE_T158, type Mode } from "@sgfp4/format";
import { biasToHalfBits, halfBitsValue, scaleToHalfBits } from "./half.js";
import { laplacianWeightedError } from "./laplacian.js";

/**
 * The 16 log-spaced scale multipliers over [0.5, 1.5]: 0.5 * 3^(k/15), k = 0..15, written as
 * constants (Math.pow may differ in the last bit between engines).
 */
export const SCALE_MULTIPLIERS: readonly number[] = [
  0.5, 0.5379948123626729, 0.5788768362582953, 0.6228654698077587, 0.6701967831128265, 0.7211247851537042, 0.7759227869576798,
  0.8348848683544384, 0.898327456189562, 0.9665910224658814, 1.040041911525952, 1.1190743060814405, 1.204112342640346,
  1.295612387684743, 1.394065486814416, 1.5,
];

export interface FitOptions {
  /** v2 profile: the bias is stored under the 0xFFF0 mask */
  v2: boolean;
  /** prefer T158 when err_t158 <= (1 + delta) * err_fp4 */
  delta: number;
  /** reject T158 when any |w - w_hat| > outlierGuard * S */
  outlierGuard: number;
  /** least-squares refit of scale and bias after codes are assigned */
  refit: boolean;
  /** most refit rounds (each kept only if it lowers the squared error) */
  maxRefitIterations: number;
  /** error used to compare the modes */
  selection: "laplacian" | "l2";
}

export const DEFAULT_FIT_OPTIONS: Readonly<Omit<FitOptions, "v2">> = {
  delta: 0.1,
  outlierGuard: 5,
  refit: true,
  maxRefitIterations: 4,
  selection: "laplacian",
};

export interface Candidate {
  mode: Mode;
  scaleBits: number;
  biasBits: number;
  /** codes in row-major leaf order */
  codes: Int8Array;
  /** sum of squared error of the exact float32 decode */
  sse: number;
  /** largest |w - w_hat| */
  maxAbsError: number;
  /** Laplacian-weighted error (per weight) */
  lwe: number;
}

export interface LeafFit {
  fp4: Candidate;
  t158: Candidate;
  /** the outlier guard let T158 compete */
  t158Allowed: boolean;
  chosen: Candidate;
  /** v1 ERROR_HINT: the Laplacian (pyramid) comparison decided the mode */
  errorHint: boolean;
}

/**
 * Math.round(y) compiles to a branch on the fraction, which data mispredicts about half the
 * time. `floor(y) + (y - floor(y) >= 0.5)` is the same number for every double (y - floor(y) is
 * exact; |y| >= 2^52 is already an integer), except that it gives +0 where Math.round gives -0
 * (y in [-0.5, -0]): codes go to an Int8Array and every sum, product and decode treats the two
 * zeros alike, so no output changes.
 */
/** Elements between early-exit checks: the sums run in the same order, only the checks are fewer. */
const CHUNK = 64;
/**
 * The exact search's stop checks: most exact searches are 8x8 and 4x4 leaves, where a 64-element
 * chunk would never stop (4 measured fastest on them). A partial sum of squares only grows, and
 * a candidate stops only when its partial sum already exceeds the best, so no result changes.
 */
const SEARCH_CHUNK = 4;
const errScratch = new Float64Array(4096);
const centred = new Float64Array(4096);
/** Middle-out order of the 16 candidates (see fitFp4Plain). */
const SEARCH_ORDER = [5, 6, 4, 7, 3, 8, 2, 9, 1, 10, 0, 11, 12, 13, 14, 15];
/**
 * Order for leaves under BUCKET_MIN_N (most exact searches): in heavy-tailed v2 encodes their
 * winners are mostly k = 7..9 (measured on Student-t 512x512), so starting there stops the
 * others sooner. The order changes no result (ties go to the lowest k whatever the order).
 */
const SMALL_SEARCH_ORDER = [8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15, 0];

/**
 * "No bucket yet" for the code of the last bucket's max. Buckets are ranges of w in increasing
 * order (max of bucket b-1 <= min of bucket b) and codes are monotone in w, so when a bucket's
 * max gets the same code as the previous bucket's max, its min gets that code too and is not
 * computed.
 */
const NO_CODE = 99;
/** Smallest leaf (elements) for which the bucketed search is used; smaller leaves search exactly. */
const BUCKET_MIN_N = 256;
const MAX_BUCKETS = 256;
const searchBits = new Int32Array(16);
const bucketOf = new Uint16Array(4096);
const bucketCount = new Int32Array(MAX_BUCKETS + 1);
const bucketStart = new Int32Array(MAX_BUCKETS + 1);
/** Bucket members and per-bucket sums, min and max, in terms of the leaf's values w (the search's bias and the refit's differ). */
const bucketedW = new Float64Array(4096);
const bucketSumW = new Float64Array(MAX_BUCKETS);
const bucketSumWW = new Float64Array(MAX_BUCKETS);
const bucketMinW = new Float64Array(MAX_BUCKETS);
const bucketMaxW = new Float64Array(MAX_BUCKETS);
/** bucket count of the leaf the buckets were built for (0: none) and its largest |w| */
let bucketLeafCount = 0;
let bucketLeafAbsMax = 0;
const estimate = new Float64Array(16);
const slackOf = new Float64Array(16);
const survivors = new Uint8Array(16);
const allCandidates = new Uint8Array(16).fill(1);
/**
 * Bound on |computed search error - estimate| relative to n * (absmax + 8 S)^2, which bounds
 * every term and partial sum of both computations. Both are sums of at most n + 2 * buckets
 * + a few correctly rounded operations on such terms, so their rounding errors are below
 * (n + 600) * 2^-53 * 4 < 3e-12 of it for n <= 4096; 1e-9 leaves a wide margin.
 */
const SLACK = 1e-9;

/**
 * The exact 22.7 scale search over the candidates marked in `consider`: for each, the squared
 * error sum (x - S*q)^2 in index order; the least wins, the lowest k on ties. Candidates are
 * tried middle-out so the running best is found early and later candidates stop as soon as
 * their partial error exceeds it; the result is the same as trying k = 0..15 in order.
 */
function exactSearch(c: Float64Array, n: number, candidateBits: Int32Array, consider: Uint8Array): number {
  let best = Infinity;
  let bestK = -1;
  let bestBits = 0;
  for (const k of n < BUCKET_MIN_N ? SMALL_SEARCH_ORDER : SEARCH_ORDER) {
    const bits = candidateBits[k]!;
    if (bits === 0 || consider[k] === 0) continue;
    const S = halfBitsValue(bits);
    const inv = 1 / S;
    let err = 0;
    // the stop test runs once per chunk: same sums in the same order, fewer branches
    for (let i0 = 0; i0 < n && err <= best; i0 += SEARCH_CHUNK) {
      const end = i0 + SEARCH_CHUNK < n ? i0 + SEARCH_CHUNK : n;
      for (let i = i0; i < end; i++) {
        const x = c[i]!;
        const y = x * inv;
        const floorY = Math.floor(y);
        let q = floorY + +(y - floorY >= 0.5); // Math.round(y), without its data-dependent branch
        if (q > 7) q = 7;
        else if (q < -8) q = -8;
        const d = x - S * q;
        err += d * d;
      }
    }
    if (err < best || (err === best && k < bestK)) {
      best = err;
      bestK = k;
      bestBits = bits;
    }
  }
  return bestBits;
}

/**
 * Decides the scale search without evaluating losing candidates. The values are bucketed once
 * by their centred value x = w - B (count, sum w, sum w^2, min and max w per bucket). The code
 * w -> clip(round((w - B)/S)) is monotone, so a bucket whose min and max get the same code q
 * contributes sum (w - d)^2 = sum w^2 - 2 d sum w + count d^2 with d = B + S q; the few buckets that straddle a code
 * boundary are summed element by element. That estimate differs from the index-order sum the
 * exact search computes only by rounding, bounded by `slack`. A candidate whose estimate minus
 * slack exceeds the smallest estimate plus slack cannot win. Returns k when exactly one
 * candidate can win (no exact pass needed); otherwise -1, with `survivors` marking the ones that
 * can, for the exact search.
 */
function bucketSearch(v: Float64Array, c: Float64Array, n: number, B: number, absmax: number, candidateBits: Int32Array): number {
  let nb = n >= 4 * MAX_BUCKETS ? MAX_BUCKETS : n >> 2;
  bucketCount.fill(0, 0, nb + 1);
  const toBucket = nb / (2 * absmax);
  // Three passes rather than one: a single pass that adds each w to its bucket's sums in memory
  // waits on the previous store whenever neighbours share a bucket (most of a heavy-tailed leaf
  // is in a few central buckets). Bucket of each value, then a stable counting sort, then each
  // bucket's sums over its members in index order: the same sums as adding in index order.
  for (let i = 0; i < n; i++) {
    // any bucket is correct (min/max are tracked); this one keeps buckets narrow
    let b = Math.floor((c[i]! + absmax) * toBucket);
    if (b >= nb) b = nb - 1;
    else if (!(b >= 0)) b = 0;
    bucketOf[i] = b;
    bucketCount[b]!++;
  }
  // Starts of the non-empty buckets only (most are empty on heavy-tailed leaves, where one outlier
  // stretches the range): the estimates skip empty ones anyway. bucketCount[b] becomes the next
  // free slot of bucket b in bucketedW.
  let used = 0;
  let at = 0;
  for (let b = 0; b < nb; b++) {
    const count = bucketCount[b]!;
    if (count === 0) continue;
    bucketStart[used++] = at;
    bucketCount[b] = at;
    at += count;
  }
  bucketStart[used] = n;
  for (let i = 0; i < n; i++) bucketedW[bucketCount[bucketOf[i]!]!++] = v[i]!;
  let wAbsMax = 0;
  for (let b = 0; b < used; b++) {
    const hi = bucketStart[b + 1]!;
    let sumW = 0;
    let sumWW = 0;
    let minW = Infinity;
    let maxW = -Infinity;
    for (let i = bucketStart[b]!; i < hi; i++) {
      const w = bucketedW[i]!;
      sumW += w;
      sumWW += w * w;
      if (w < minW) minW = w;
      if (w > maxW) maxW = w;
    }
    bucketSumW[b] = sumW;
    bucketSumWW[b] = sumWW;
    bucketMinW[b] = minW;
    bucketMaxW[b] = maxW;
    const a = maxW > -minW ? maxW : -minW;
    if (a > wAbsMax) wAbsMax = a;
  }
  nb = used;
  bucketLeafCount = nb;
  bucketLeafAbsMax = wAbsMax;

  let bestUpper = Infinity;
  // Middle-out, and a candidate stops once its partial estimate minus its slack exceeds the best
  // upper bound so far: the terms left are sums of squares (>= 0 up to rounding far below the
  // slack), so its exact error exceeds that candidate's and it could not have survived.
  for (const k of SEARCH_ORDER) {
    const bits = candidateBits[k]!;
    estimate[k] = Infinity;
    slackOf[k] = 0;
    if (bits === 0) continue;
    const S = halfBitsValue(bits);
    const inv = 1 / S;
    // bounds every term and partial sum; also covers w - B - S q vs the computed x - S q
    const bound = (wAbsMax + (B < 0 ? -B : B) + 8 * S) * 1.001;
    const slack = SLACK * n * bound * bound + 1e-300;
    let err = 0;
    let runCode = 0;
    let runCount = 0;
    let runSum = 0;
    let runSumSq = 0;
    let stopped = false;
    let prevMaxCode = NO_CODE;
    for (let b = 0; b < nb; b++) {
      if (err - slack > bestUpper) {
        stopped = true;
        break;
      }
      const lo = bucketStart[b]!;
      const hi = bucketStart[b + 1]!;
      if (lo === hi) continue;
      // x = w - B is monotone in w: the bucket's smallest and largest x come from its min / max w
      const qb = fp4Code(bucketMaxW[b]!, B, inv);
      const qa = qb === prevMaxCode ? qb : fp4Code(bucketMinW[b]!, B, inv);
      prevMaxCode = qb;
      if (qa === qb) {
        if (qa !== runCode && runCount > 0) {
          const d = B + S * runCode;
          err += runSumSq - 2 * d * runSum + runCount * d * d;
          runCount = 0;
          runSum = 0;
          runSumSq = 0;
        }
        runCode = qa;
        runCount += hi - lo;
        runSum += bucketSumW[b]!;
        runSumSq += bucketSumWW[b]!;
      } else {
        for (let i = lo; i < hi; i++) {
          const x = bucketedW[i]! - B; // the same number as c[i]
          const y = x * inv;
          const floorY = Math.floor(y);
          let q = floorY + +(y - floorY >= 0.5); // Math.round(y), branch-free
          if (q > 7) q = 7;
          else if (q < -8) q = -8;
          const d = x - S * q;
          err += d * d;
        }
      }
    }
    if (stopped) continue; // estimate Infinity: not a survivor
    if (runCount > 0) {
      const d = B + S * runCode;
      err += runSumSq - 2 * d * runSum + runCount * d * d;
    }
    estimate[k] = err;
    slackOf[k] = slack;
    if (err + slack < bestUpper) bestUpper = err + slack;
  }
  let only = -1;
  let count = 0;
  for (let k = 0; k < 16; k++) {
    const bits = candidateBits[k]!;
    // equal bits give equal errors: the lowest k represents them
    let duplicate = false;
    for (let j = 0; j < k; j++) if (candidateBits[j] === bits) duplicate = true;
    const can = bits !== 0 && !duplicate && estimate[k]! - slackOf[k]! <= bestUpper;
    survivors[k] = can ? 1 : 0;
    if (can) {
      only = k;
      count++;
    }
  }
  return count === 1 ? only : -1;
}

/**
 * Relative bound on the difference between two float sums of the same n <= 4096 non-negative
 * terms in different orders: each is within (n - 1) * 2^-53 (about 4.6e-13) of the exact sum
 * (no cancellation), so two differ by less than 1e-12 of either; 1e-11 leaves a margin.
 */
const REORDER_SLACK = 1e-11;
/** The centred values with the large ones (|x| >= absmax / 2) first, for largestFirstSearch. */
const largeFirst = new Float64Array(4096);

/**
 * The scale search for leaves too small to bucket (8x8, 4x4). Losing candidates are mostly
 * told by the clipping of the largest values, so each candidate's error is summed with the
 * values of |x| >= absmax / 2 first and stops once it exceeds the best total so far by more
 * than the reordering slack. Sums in this order differ from exactSearch's index-order sums by
 * rounding only (REORDER_SLACK), so a candidate whose sum exceeds the best by more than that
 * cannot win. Returns k when one candidate can win; otherwise -1 with `survivors` marking the
 * candidates exactSearch must decide between (near ties, equal bits).
 */
function largestFirstSearch(c: Float64Array, n: number, absmax: number, candidateBits: Int32Array): number {
  const large = absmax * 0.5;
  let front = 0;
  let back = n;
  for (let i = 0; i < n; i++) {
    const x = c[i]!;
    if (Math.abs(x) >= large) largeFirst[front++] = x;
    else largeFirst[--back] = x;
  }
  let bestUpper = Infinity;
  for (const k of SMALL_SEARCH_ORDER) {
    const bits = candidateBits[k]!;
    estimate[k] = Infinity;
    // equal bits give equal errors and the lowest k wins ties: only it is tried (bits grow with k)
    if (bits === 0 || (k > 0 && candidateBits[k - 1] === bits)) continue;
    const S = halfBitsValue(bits);
    const inv = 1 / S;
    let err = 0;
    for (let i0 = 0; i0 < n && err * (1 - REORDER_SLACK) <= bestUpper; i0 += SEARCH_CHUNK) {
      const end = i0 + SEARCH_CHUNK < n ? i0 + SEARCH_CHUNK : n;
      for (let i = i0; i < end; i++) {
        const x = largeFirst[i]!;
        const y = x * inv;
        const floorY = Math.floor(y);
        let q = floorY + +(y - floorY >= 0.5); // Math.round(y), branch-free
        if (q > 7) q = 7;
        else if (q < -8) q = -8;
        const d = x - S * q; // the same term as exactSearch's
        err += d * d;
      }
    }
    if (err * (1 - REORDER_SLACK) > bestUpper) continue; // stopped (or lost at the end)
    estimate[k] = err;
    if (err * (1 + REORDER_SLACK) < bestUpper) bestUpper = err * (1 + REORDER_SLACK);
  }
  let only = -1;
  let count = 0;
  for (let k = 0; k < 16; k++) {
    const can = estimate[k]! * (1 - REORDER_SLACK) <= bestUpper;
    survivors[k] = can ? 1 : 0;
    if (can) {
      only = k;
      count++;
    }
  }
  return count === 1 ? only : -1;
}

/** Code sums a least-squares refit needs, gathered while the codes are assigned. */
interface CodeSums {
  sq: number;
  sqq: number;
  sqv: number;
}
type Fitted = Candidate & CodeSums;

/** Exact decode error of codes with stored parameters; fills errScratch (for the LWE). */
function measure(v: Float64Array, n: number, codes: Int8Array, scaleBits: number, biasBits: number): void {
  const S = halfBitsValue(scaleBits);
  const B = halfBitsValue(biasBits);
  for (let i = 0; i < n; i++) errScratch[i] = v[i]! - Math.fround(S * codes[i]! + B);
}

/**
 * One pass: nearest codes for the stored S and Bias (FP4 round + clip, T158 threshold S/2),
 * the exact decode error (S*q is exact and S*q + B fits a double exactly, so fround gives
 * float32's single rounding), and the sums for the next refit.
 */
function assignAndMeasure(v: Float64Array, n: number, mode: Mode, scaleBits: number, biasBits: number, out: Int8Array, stopAt = Infinity): Fitted {
  const r = pass(v, n, mode, scaleBits, biasBits, out, stopAt);
  return { mode, scaleBits, biasBits, codes: out, sse: r.sse, maxAbsError: r.maxAbs, lwe: Number.NaN, sq: r.sq, sqq: r.sqq, sqv: r.sqv };
}

/** assignAndMeasure's pass; its sums are in the reused passSums (read them before the next pass). */
function pass(v: Float64Array, n: number, mode: Mode, scaleBits: number, biasBits: number, out: Int8Array, stopAt: number): PassSums {
  const S = halfBitsValue(scaleBits);
  const B = halfBitsValue(biasBits);
  // one loop per mode, without a per-element mode branch
  return !(S > 0) ? assignZero(v, n, B, out) : mode === MODE_FP4 ? assignFp4(v, n, S, B, out, stopAt) : assignT158(v, n, S, B, out, stopAt);
}

/** The passes' results, reused (read at once by assignAndMeasure): no allocation per pass. */
const passSums: PassSums = { sse: 0, maxAbs: 0, sq: 0, sqq: 0, sqv: 0 };
function passResult(sse: number, maxAbs: number, sq: number, sqq: number, sqv: number): PassSums {
  passSums.sse = sse;
  passSums.maxAbs = maxAbs;
  passSums.sq = sq;
  passSums.sqq = sqq;
  passSums.sqv = sqv;
  return passSums;
}

interface PassSums {
  sse: number;
  maxAbs: number;
  sq: number;
  sqq: number;
  sqv: number;
}

/** A zero (or unusable) scale: every code 0. Same sums, in the same order, as the general pass. */
function assignZero(v: Float64Array, n: number, B: number, out: Int8Array): PassSums {
  let sse = 0;
  let maxAbs = 0;
  const w0 = Math.fround(B);
  for (let i = 0; i < n; i++) {
    out[i] = 0;
    const e = v[i]! - w0;
    sse += e * e;
    const a = Math.abs(e);
    if (a > maxAbs) maxAbs = a;
  }
  return passResult(sse, maxAbs, 0, 0, 0);
}

/** stopAt: give up (returning a partial sse >= stopAt) once the error cannot drop below it. */
function assignFp4(v: Float64Array, n: number, S: number, B: number, out: Int8Array, stopAt: number): PassSums {
  let sse = 0;
  let maxAbs = 0;
  let sq = 0;
  let sqq = 0;
  let sqv = 0;
  const inv = 1 / S;
  for (let i0 = 0; i0 < n && sse < stopAt; i0 += CHUNK) {
    const end = i0 + CHUNK < n ? i0 + CHUNK : n;
    for (let i = i0; i < end; i++) {
      const w = v[i]!;
      const y = (w - B) * inv;
      const floorY = Math.floor(y);
      let q = floorY + +(y - floorY >= 0.5); // Math.round(y), branch-free
      if (q > 7) q = 7;
      else if (q < -8) q = -8;
      out[i] = q;
      const e = w - Math.fround(S * q + B);
      sse += e * e;
      const a = Math.abs(e); // branch-free (the sign of e is unpredictable)
      if (a > maxAbs) maxAbs = a;
      sq += q;
      sqq += q * q;
      sqv += q * w;
    }
  }
  return passResult(sse, maxAbs, sq, sqq, sqv);
}

const t158Decoded = new Float64Array(3);

function assignT158(v: Float64Array, n: number, S: number, B: number, out: Int8Array, stopAt: number): PassSums {
  let sse = 0;
  let maxAbs = 0;
  let sq = 0;
  let sqq = 0;
  let sqv = 0;
  const tau = S * 0.5;
  // the three possible decoded values, each rounded to float32 once, indexed by code + 1
  const decoded = t158Decoded;
  decoded[0] = Math.fround(B - S);
  decoded[1] = Math.fround(B);
  decoded[2] = Math.fround(S + B);
  for (let i0 = 0; i0 < n && sse < stopAt; i0 += CHUNK) {
    const end = i0 + CHUNK < n ? i0 + CHUNK : n;
    for (let i = i0; i < end; i++) {
      const w = v[i]!;
      const c = w - B;
      // without branches: the codes are unpredictable, so branches mispredict. q * w is w, -w
      // or a zero for finite w, so the sums are the same numbers as adding w / subtracting w.
      const q = +(c > tau) - +(c < -tau);
      out[i] = q;
      const e = w - decoded[q + 1]!;
      sse += e * e;
      const a = Math.abs(e); // branch-free (the sign of e is unpredictable)
      if (a > maxAbs) maxAbs = a;
      sq += q;
      sqq += q * q;
      sqv += q * w;
    }
  }
  return passResult(sse, maxAbs, sq, sqq, sqv);
}

function sum(v: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += v[i]!;
  return s;
}

/** Nearest code for each weight given stored S and B: FP4 round + clip, T158 threshold S/2. */
export function assignCodes(v: Float64Array, n: number, mode: Mode, S: number, B: number, out: Int8Array): void {
  if (!(S > 0)) {
    out.fill(0, 0, n);
    return;
  }
  if (mode === MODE_FP4) {
    const inv = 1 / S;
    for (let i = 0; i < n; i++) {
      let q = Math.round((v[i]! - B) * inv);
      if (q > 7) q = 7;
      else if (q < -8) q = -8;
      out[i] = q;
    }
  } else {
    const tau = S * 0.5;
    for (let i = 0; i < n; i++) {
      const c = v[i]! - B;
      out[i] = c > tau ? 1 : c < -tau ? -1 : 0;
    }
  }
}

/** FP4_AFFINE per 22.7: bias = mean, S0 = absmax/7 of the centred values, 16-candidate search. */
export function fitFp4Plain(v: Float64Array, n: number, v2: boolean): Candidate {
  return fp4Plain(v, n, v2, sum(v, n));
}

function fp4Plain(v: Float64Array, n: number, v2: boolean, sv: number): Fitted {
  const p = fp4PlainParameters(v, n, v2, sv);
  return assignAndMeasure(v, n, MODE_FP4, p.scaleBits, p.biasBits, new Int8Array(n));
}

interface Parameters {
  scaleBits: number;
  biasBits: number;
}

/**
 * Sum of |w - B| from the last fp4PlainParameters call: T158's plain bias is the same FP16
 * value, so this is the sum t158PlainParameters would compute (same terms, same order).
 */
let centredAbsSum = 0;

function fp4PlainParameters(v: Float64Array, n: number, v2: boolean, sv: number): Parameters {
  const biasBits = biasToHalfBits(sv / n, v2);
  const B = halfBitsValue(biasBits);
  const c = centred;
  bucketLeafCount = 0; // the buckets (if any) will describe this leaf
  let absmax = 0;
  let absSum = 0;
  for (let i = 0; i < n; i++) {
    const x = v[i]! - B;
    c[i] = x;
    const a = Math.abs(x);
    absSum += a;
    if (a > absmax) absmax = a;
  }
  centredAbsSum = absSum;
  let bestBits = 0;
  if (absmax > 0) {
    const s0 = absmax / 7;
    const candidateBits = searchBits;
    for (let k = 0; k < 16; k++) candidateBits[k] = scaleToHalfBits(s0 * SCALE_MULTIPLIERS[k]!);
    // The bucket estimate needs finite values and enough of them to pay for the bucketing.
    const useBuckets = n >= BUCKET_MIN_N && absmax < Infinity;
    const onlyCandidate = useBuckets ? bucketSearch(v, c, n, B, absmax, candidateBits) : absmax < Infinity ? largestFirstSearch(c, n, absmax, candidateBits) : -1;
    // the exact search decides between the candidates the estimate could not separate
    bestBits = onlyCandidate >= 0 ? candidateBits[onlyCandidate]! : exactSearch(c, n, candidateBits, absmax < Infinity ? survivors : allCandidates);
  }
  return { scaleBits: bestBits, biasBits };
}

/** T158_AFFINE per 22.7: bias = mean, S = mean absolute deviation, threshold S/2. */
export function fitT158Plain(v: Float64Array, n: number, v2: boolean): Candidate {
  return t158Plain(v, n, v2, sum(v, n));
}

function t158Plain(v: Float64Array, n: number, v2: boolean, sv: number): Fitted {
  const p = t158PlainParameters(v, n, v2, sv);
  return assignAndMeasure(v, n, MODE_T158, p.scaleBits, p.biasBits, new Int8Array(n));
}

function t158PlainParameters(v: Float64Array, n: number, v2: boolean, sv: number): Parameters {
  const biasBits = biasToHalfBits(sv / n, v2);
  const B = halfBitsValue(biasBits);
  let mad = 0;
  for (let i = 0; i < n; i++) mad += Math.abs(v[i]! - B);
  return { scaleBits: scaleToHalfBits(mad / n), biasBits };
}

/**
 * Least-squares refit: given the codes, the (S, B) minimising sum (w - S*q - B)^2, rounded to
 * what will be stored; then the codes are reassigned for the stored values. Repeated while the
 * exact squared error drops; the best seen is kept, so it never does worse than its input.
 */
export function refitCandidate(v: Float64Array, n: number, start: Candidate, v2: boolean, maxIterations: number): Candidate {
  const s = start as Partial<Fitted>;
  const first: Fitted =
    s.sq !== undefined ? (start as Fitted) : assignAndMeasure(v, n, start.mode, start.scaleBits, start.biasBits, Int8Array.from(start.codes));
  return refit(v, n, first, v2, maxIterations, sum(v, n));
}

/**
 * Codes of refit rounds (and of a plain fit that only starts a refit): two reused buffers, so a
 * leaf allocates one codes array per mode, for the result. Never a caller's array.
 */
const roundCodesA = new Int8Array(4096);
const roundCodesB = new Int8Array(4096);
const isRoundScratch = (codes: Int8Array): boolean => codes === roundCodesA || codes === roundCodesB;

function refit(v: Float64Array, n: number, start: Fitted, v2: boolean, maxIterations: number, sv: number): Fitted {
  // the current best in locals: a round allocates nothing (a result object per round was most
  // of the garbage of heavy-tailed encodes)
  let { codes, scaleBits, biasBits, sse, maxAbsError, sq, sqq, sqv } = start;
  let moved = false;
  for (let it = 0; it < maxIterations; it++) {
    const den = n * sqq - sq * sq;
    if (!(den > 0)) break; // all codes equal: the scale is not identifiable
    const S = (n * sqv - sq * sv) / den;
    if (!(S > 0)) break; // encoders never write a negative scale
    const nextScaleBits = scaleToHalfBits(S);
    const nextBiasBits = biasToHalfBits((sv - halfBitsValue(nextScaleBits) * sq) / n, v2);
    if (nextScaleBits === scaleBits && nextBiasBits === biasBits) break;
    // the scratch buffer the current codes are not in; stops early once its partial error
    // reaches sse (such a round would be rejected anyway)
    const spare = codes === roundCodesA ? roundCodesB : roundCodesA;
    const r = pass(v, n, start.mode, nextScaleBits, nextBiasBits, spare, sse);
    if (!(r.sse < sse)) break;
    codes = spare;
    scaleBits = nextScaleBits;
    biasBits = nextBiasBits;
    sse = r.sse;
    maxAbsError = r.maxAbs;
    sq = r.sq;
    sqq = r.sqq;
    sqv = r.sqv;
    moved = true;
  }
  if (!moved) {
    if (isRoundScratch(start.codes)) start.codes = start.codes.slice(0, n);
    return start;
  }
  return { mode: start.mode, scaleBits, biasBits, codes: codes.slice(0, n), sse, maxAbsError, lwe: Number.NaN, sq, sqq, sqv };
}

/** A refit round's sums estimated from the buckets; sse and sqv are within sseSlack / sqvSlack of the exact pass. */
interface RoundEstimate {
  sse: number;
  sseSlack: number;
  sq: number;
  sqq: number;
  sqv: number;
  sqvSlack: number;
}

/**
 * The sums assignAndMeasure would compute for stored S and B, from the buckets: the code is
 * monotone in w, so a bucket whose smallest and largest w get the same code q adds exactly
 * count * q, count * q^2, q * sum w and sum (w - d)^2 with d = fround(S q + B) its decoded
 * value; buckets straddling a code boundary are summed element by element. sq and sqq are
 * exact (integers); sse and sqv differ from the index-order sums only by rounding.
 */
/** estimateRound's result, reused: callers copy what they keep before the next call. */
const roundScratch: RoundEstimate = { sse: 0, sseSlack: 0, sq: 0, sqq: 0, sqv: 0, sqvSlack: 0 };

function estimateRound(n: number, mode: Mode, S: number, B: number): RoundEstimate {
  const nb = bucketLeafCount;
  const fp4 = mode === MODE_FP4;
  const inv = 1 / S;
  const tau = S * 0.5;
  let sse = 0;
  let sq = 0;
  let sqq = 0;
  let sqv = 0;
  let prevMaxCode = NO_CODE;
  for (let b = 0; b < nb; b++) {
    const lo = bucketStart[b]!;
    const hi = bucketStart[b + 1]!;
    if (lo === hi) continue;
    const qb = fp4 ? fp4Code(bucketMaxW[b]!, B, inv) : t158Code(bucketMaxW[b]!, B, tau);
    // see NO_CODE: the min's code is needed only when the code changed since the last bucket
    const qa = qb === prevMaxCode ? qb : fp4 ? fp4Code(bucketMinW[b]!, B, inv) : t158Code(bucketMinW[b]!, B, tau);
    prevMaxCode = qb;
    if (qa === qb) {
      const d = Math.fround(S * qa + B);
      const count = hi - lo;
      const sw = bucketSumW[b]!;
      sse += bucketSumWW[b]! - 2 * d * sw + count * d * d;
      sq += qa * count;
      sqq += qa * qa * count;
      sqv += qa * sw;
    } else {
      for (let i = lo; i < hi; i++) {
        const w = bucketedW[i]!;
        const q = fp4 ? fp4Code(w, B, inv) : t158Code(w, B, tau);
        const e = w - Math.fround(S * q + B);
        sse += e * e;
        sq += q;
        sqq += q * q;
        sqv += q * w;
      }
    }
  }
  // every term and partial sum of both computations is bounded by these (|d| <= |B| + 8 S, rounded up)
  const bound = (bucketLeafAbsMax + (B < 0 ? -B : B) + 8 * S) * 1.001;
  const r = roundScratch;
  r.sse = sse;
  r.sseSlack = SLACK * n * bound * bound + 1e-300;
  r.sq = sq;
  r.sqq = sqq;
  r.sqv = sqv;
  r.sqvSlack = SLACK * n * 8 * bound + 1e-300;
  return r;
}

function fp4Code(w: number, B: number, inv: number): number {
  const y = (w - B) * inv;
  const floorY = Math.floor(y);
  const q = floorY + +(y - floorY >= 0.5); // Math.round(y), branch-free
  return q > 7 ? 7 : q < -8 ? -8 : q;
}

function t158Code(w: number, B: number, tau: number): number {
  const c = w - B;
  return c > tau ? 1 : c < -tau ? -1 : 0;
}

/**
 * The refit rounds of `refit`, decided on bucket estimates where the rounding slack cannot
 * change a decision (the stored scale's FP16 rounding, whether the error drops); the exact
 * pass then runs once, for the parameters kept. Where an estimate is too close to call, the
 * current parameters are measured exactly and `refit` continues from there, so the result is
 * always the one `refit` gives.
 */
function refitFromBuckets(v: Float64Array, n: number, mode: Mode, e: RefitEstimate, v2: boolean, maxIterations: number, sv: number, loseAbove = Infinity): Fitted | null {
  // the kept parameters' exact error is at least its estimate minus the slack: above loseAbove,
  // the caller cannot use the candidate, and its exact pass is skipped
  if (!e.undecided && ((e.sse - e.sseSlack) / n) * LWE_FROM_SSE_MARGIN > loseAbove) return null;
  const cur = assignAndMeasure(v, n, mode, e.scaleBits, e.biasBits, new Int8Array(n));
  return e.undecided ? refit(v, n, cur, v2, maxIterations - e.rounds, sv) : cur;
}

/** Where the estimated refit rounds ended: the parameters kept and their error, within sseSlack. */
interface RefitEstimate {
  scaleBits: number;
  biasBits: number;
  sse: number;
  sseSlack: number;
  /** rounds decided (and kept or stopped) on estimates */
  rounds: number;
  /** an estimate was too close to call: `refit` must continue exactly from (scaleBits, biasBits) */
  undecided: boolean;
}

/** The rounds of refitFromBuckets on bucket estimates only (the buckets of this leaf must exist). */
function estimateRefit(n: number, mode: Mode, start: Parameters, v2: boolean, maxIterations: number, sv: number): RefitEstimate {
  let scaleBits = start.scaleBits;
  let biasBits = start.biasBits;
  // the start is estimated too: its exact pass is needed only if the refit keeps it
  let { sq, sqq, sqv, sse, sseSlack, sqvSlack } = estimateRound(n, mode, halfBitsValue(scaleBits), halfBitsValue(biasBits));
  let it = 0;
  let undecided = false;
  for (; it < maxIterations; it++) {
    const den = n * sqq - sq * sq; // integers: exact
    if (!(den > 0)) break;
    // S is monotone in sqv, and its FP16 rounding is monotone in S
    const sLow = (n * (sqv - sqvSlack) - sq * sv) / den;
    const sHigh = (n * (sqv + sqvSlack) - sq * sv) / den;
    if (!(sHigh > 0)) break;
    const nextScaleBits = scaleToHalfBits(sLow);
    if (!(sLow > 0) || nextScaleBits !== scaleToHalfBits(sHigh)) {
      undecided = true;
      break;
    }
    const nextBiasBits = biasToHalfBits((sv - halfBitsValue(nextScaleBits) * sq) / n, v2);
    if (nextScaleBits === scaleBits && nextBiasBits === biasBits) break;
    const next = estimateRound(n, mode, halfBitsValue(nextScaleBits), halfBitsValue(nextBiasBits));
    if (next.sse - next.sseSlack >= sse + sseSlack) break; // certainly not lower: refit stops here
    if (!(next.sse + next.sseSlack < sse - sseSlack)) {
      undecided = true;
      break;
    }
    scaleBits = nextScaleBits;
    biasBits = nextBiasBits;
    ({ sq, sqq, sqv, sse, sseSlack, sqvSlack } = next);
  }
  return { scaleBits, biasBits, sse, sseSlack, rounds: it, undecided };
}

function withLwe(v: Float64Array, n: number, size: number, c: Candidate): Candidate {
  measure(v, n, c.codes, c.scaleBits, c.biasBits);
  c.lwe = laplacianWeightedError(errScratch, size);
  return c;
}

/** The buckets fp4PlainParameters built for this leaf (if it did) serve both modes' refits; a zero scale (every code 0) is measured exactly. */
function refitsFromBuckets(o: FitOptions, p: Parameters): boolean {
  return o.refit && bucketLeafCount > 0 && p.scaleBits !== 0;
}

/** The T158 candidate of a chosenOnly fit that proved T158 cannot be chosen without measuring it. */
const T158_NOT_FITTED: Candidate = Object.freeze({ mode: MODE_T158, scaleBits: 0, biasBits: 0, codes: new Int8Array(0), sse: Number.NaN, maxAbsError: Number.NaN, lwe: Number.NaN });

/** Both candidates of one leaf (values row-major, size x size) and the 22.7 selection. */
function plainThenRefit(v: Float64Array, n: number, mode: Mode, p: Parameters, o: FitOptions, sv: number): Fitted {
  if (!o.refit) return assignAndMeasure(v, n, mode, p.scaleBits, p.biasBits, new Int8Array(n));
  // the plain codes are only the refit's start: a scratch buffer (refit copies out what it keeps)
  return refit(v, n, assignAndMeasure(v, n, mode, p.scaleBits, p.biasBits, roundCodesA), o.v2, o.maxRefitIterations, sv);
}

export function fitLeaf(v: Float64Array, size: number, o: FitOptions): LeafFit {
  const n = size * size;
  return fitLeafWithSum(v, size, o, sum(v, n));
}

/**
 * A lower bound on a leaf's computed LWE from its computed sse, with margin for rounding: the
 * LWE's weights are all >= 1 and its bands are orthogonal, so the exact LWE is at least the
 * mean squared error; the rounding of both computations is below 1e-6 of it (a crude bound:
 * about 8 * 2^-53 * n^2 * levels * weight for n <= 4096), so 1e-5 is safe.
 */
const LWE_FROM_SSE_MARGIN = 1 - 1e-5;

/**
 * fitLeaf for a caller that already summed v in index order (sv: that sum). chosenOnly: the
 * caller reads only the chosen candidate's LWE (the threshold policy); T158's LWE (a measure
 * pass and a pyramid) is then skipped, left NaN, when the selection cannot pick T158: T158 not
 * allowed, or its sse alone proves its LWE above (1 + delta) times FP4's; where the bucket
 * estimate of its refit already proves that, T158 is not even measured: `t158` is then
 * T158_NOT_FITTED (no codes, NaN errors, t158Allowed and errorHint false; v2 records carry no
 * error hint). The chosen candidate is the same either way.
 *
 * splitAbove (with chosenOnly, for the threshold policy): when the bucket estimates prove the
 * chosen candidate's LWE above it, returns that proof (LweLowerBound) instead of fitting.
 * resume: that proof's estimates, to fit the same leaf in full later (splitAbove Infinity).
 */
export function fitLeafWithSum(v: Float64Array, size: number, o: FitOptions, sv: number, chosenOnly?: boolean): LeafFit;
export function fitLeafWithSum(v: Float64Array, size: number, o: FitOptions, sv: number, chosenOnly: true, splitAbove: number, resume?: FitResume): LeafFit | LweLowerBound;
export function fitLeafWithSum(v: Float64Array, size: number, o: FitOptions, sv: number, chosenOnly = false, splitAbove = Infinity, resume?: FitResume): LeafFit | LweLowerBound {
  const n = size * size;
  let fp4Start: Parameters | undefined;
  let t158Start: Parameters | undefined;
  let fp4Estimate: RefitEstimate | null;
  let t158Estimate: RefitEstimate | null;
  if (resume) {
    // an earlier call's bound came from these estimates (deterministic in v, n and o): no search, no buckets
    fp4Estimate = resume.fp4;
    t158Estimate = resume.t158;
  } else {
    fp4Start = fp4PlainParameters(v, n, o.v2, sv);
    // both plain fits use the same FP16 bias (of sv / n): T158's mean absolute deviation is the centring pass's sum
    t158Start = { scaleBits: scaleToHalfBits(centredAbsSum / n), biasBits: fp4Start.biasBits };
    fp4Estimate = refitsFromBuckets(o, fp4Start) ? estimateRefit(n, MODE_FP4, fp4Start, o.v2, o.maxRefitIterations, sv) : null;
    t158Estimate = refitsFromBuckets(o, t158Start) && splitAbove < Infinity ? estimateRefit(n, MODE_T158, t158Start, o.v2, o.maxRefitIterations, sv) : null;
  }
  if (fp4Estimate && t158Estimate && !fp4Estimate.undecided && !t158Estimate.undecided) {
    // Whichever candidate would be chosen, its LWE is at least its exact sse / n (up to
    // LWE_FROM_SSE_MARGIN) and its exact sse at least the estimate minus the slack.
    const low = Math.min(fp4Estimate.sse - fp4Estimate.sseSlack, t158Estimate.sse - t158Estimate.sseSlack);
    const lowerBound = (low / n) * LWE_FROM_SSE_MARGIN;
    if (lowerBound > splitAbove) return { lowerBound, resume: { fp4: fp4Estimate, t158: t158Estimate } };
  }
  const fp4: Candidate = fp4Estimate ? refitFromBuckets(v, n, MODE_FP4, fp4Estimate, o.v2, o.maxRefitIterations, sv)! : plainThenRefit(v, n, MODE_FP4, fp4Start!, o, sv);
  withLwe(v, n, size, fp4);
  const errF = o.selection === "l2" ? fp4.sse / n : fp4.lwe;
  const limitT = (1 + o.delta) * errF;
  // chosenOnly: T158's error estimate from the buckets may already prove it loses (its LWE is
  // at least sse / n up to LWE_FROM_SSE_MARGIN); then it gets no exact pass and no codes
  if (!t158Estimate && refitsFromBuckets(o, t158Start!)) t158Estimate = estimateRefit(n, MODE_T158, t158Start!, o.v2, o.maxRefitIterations, sv);
  const t158 = t158Estimate
    ? refitFromBuckets(v, n, MODE_T158, t158Estimate, o.v2, o.maxRefitIterations, sv, chosenOnly ? limitT : Infinity)
    : plainThenRefit(v, n, MODE_T158, t158Start!, o, sv);
  if (t158 === null) return { fp4, t158: T158_NOT_FITTED, t158Allowed: false, chosen: fp4, errorHint: false };
  const t158Allowed = t158.maxAbsError <= o.outlierGuard * halfBitsValue(t158.scaleBits);
  let chosen: Candidate = fp4;
  if (o.selection === "l2") {
    if (t158Allowed && t158.sse / n <= limitT) chosen = t158;
    if (!chosenOnly || chosen === t158) withLwe(v, n, size, t158);
  } else if (!chosenOnly || (t158Allowed && !((t158.sse / n) * LWE_FROM_SSE_MARGIN > limitT))) {
    withLwe(v, n, size, t158);
    if (t158Allowed && t158.lwe <= limitT) chosen = t158;
  }
  return { fp4, t158, t158Allowed, chosen, errorHint: o.selection === "laplacian" && t158Allowed };
}

/**
 * fitLeafWithSum's answer when a caller's splitAbove was given and the bucket estimates alone
 * prove the chosen candidate's LWE above it: no exact pass, no codes, no pyramid.
 */
export interface LweLowerBound {
  /** at most the LWE of the candidate the full fit would choose */
  lowerBound: number;
  /**
   * The estimates the bound came from. Passed back to fitLeafWithSum (same values, options and
   * sum), the full fit resumes from them, without the scale search and bucket estimates again.
   */
  resume: FitResume;
}

/** Where both modes' refits ended on bucket estimates (see LweLowerBound.resume). */
export interface FitResume {
  readonly fp4: RefitEstimate;
  readonly t158: RefitEstimate;
}
