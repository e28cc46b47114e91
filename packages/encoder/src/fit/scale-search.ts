/**
 * The 22.7 scale search of FP4_AFFINE: 16 log-spaced candidates around absmax / 7, the least
 * squared error wins (the lowest k on ties). Three ways to reach the same answer: an exact
 * search, a bucketed estimate (leaves of 256+ weights) and a largest-values-first estimate
 * (smaller leaves); the estimates only rule out candidates that cannot win.
 */
import { halfBitsValue } from "../half.js";
import { fp4Code } from "./codes.js";
import type { FitWorkspace } from "./workspace.js";
import { MAX_BUCKETS } from "./workspace.js";

/**
 * The 16 log-spaced scale multipliers over [0.5, 1.5]: 0.5 * 3^(k/15), k = 0..15, written as
 * constants (Math.pow may differ in the last bit between engines).
 */
export const SCALE_MULTIPLIERS: readonly number[] = [
  0.5, 0.5379948123626729, 0.5788768362582953, 0.6228654698077587, 0.6701967831128265, 0.7211247851537042, 0.7759227869576798,
  0.8348848683544384, 0.898327456189562, 0.9665910224658814, 1.040041911525952, 1.1190743060814405, 1.204112342640346,
  1.295612387684743, 1.394065486814416, 1.5,
];
/**
 * The exact search's stop checks: most exact searches are 8x8 and 4x4 leaves, where a 64-element
 * chunk would never stop (4 measured fastest on them). A partial sum of squares only grows, and
 * a candidate stops only when its partial sum already exceeds the best, so no result changes.
 */
const SEARCH_CHUNK = 4;
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
export const NO_CODE = 99;
/** Smallest leaf (elements) for which the bucketed search is used; smaller leaves search exactly. */
export const BUCKET_MIN_N = 256;
export const ALL_CANDIDATES = new Uint8Array(16).fill(1);
/**
 * Bound on |computed search error - estimate| relative to n * (absmax + 8 S)^2, which bounds
 * every term and partial sum of both computations. Both are sums of at most n + 2 * buckets
 * + a few correctly rounded operations on such terms, so their rounding errors are below
 * (n + 600) * 2^-53 * 4 < 3e-12 of it for n <= 4096; 1e-9 leaves a wide margin.
 */
export const SLACK = 1e-9;

/**
 * The exact 22.7 scale search over the candidates marked in `consider`: for each, the squared
 * error sum (x - S*q)^2 in index order; the least wins, the lowest k on ties. Candidates are
 * tried middle-out so the running best is found early and later candidates stop as soon as
 * their partial error exceeds it; the result is the same as trying k = 0..15 in order.
 */
export function exactSearch(c: Float64Array, n: number, candidateBits: Int32Array, consider: Uint8Array): number {
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
export function bucketSearch(ws: FitWorkspace, v: Float64Array, c: Float64Array, n: number, B: number, absmax: number, candidateBits: Int32Array): number {
  const bk = ws.buckets;
  const { bucketOf, count: bucketCount, start: bucketStart, w: bucketedW, sumW: bucketSumW, sumWW: bucketSumWW, minW: bucketMinW, maxW: bucketMaxW } = bk;
  const { estimate, slackOf, survivors } = ws;
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
  bk.used = nb;
  bk.absMax = wAbsMax;

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

/**
 * The scale search for leaves too small to bucket (8x8, 4x4). Losing candidates are mostly
 * told by the clipping of the largest values, so each candidate's error is summed with the
 * values of |x| >= absmax / 2 first and stops once it exceeds the best total so far by more
 * than the reordering slack. Sums in this order differ from exactSearch's index-order sums by
 * rounding only (REORDER_SLACK), so a candidate whose sum exceeds the best by more than that
 * cannot win. Returns k when one candidate can win; otherwise -1 with `survivors` marking the
 * candidates exactSearch must decide between (near ties, equal bits).
 */
export function largestFirstSearch(ws: FitWorkspace, c: Float64Array, n: number, absmax: number, candidateBits: Int32Array): number {
  const { largeFirst, estimate, survivors } = ws;
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
