/**
 * A lower bound on the squared error of every T158 leaf of some weights, from their FP4 fit
 * alone: the rd policy fits T158 only where this bound leaves it a chance (fitLeafCandidates'
 * t158Gap).
 *
 * Why it holds. Let w be the weights, w' their FP4 decode (exact error sse_F = |w - w'|^2) and
 * L any three levels {B - S, B, B + S}. For any assignment of w to L, the triangle inequality
 * gives |w - L(w)| >= |w' - L(w)| - |w - w'| >= dist(w', L) - sqrt(sse_F), so the T158 error is
 * at least (sqrt(D3) - sqrt(sse_F))^2, D3 the least squared error of w' against any such L. The
 * points w' take at most 16 values, sorted by their FP4 code; a nearest assignment to
 * equally spaced levels is a contiguous split of those sorted values into low / mid / high, and
 * for a fixed split the best (B, S) is a least-squares line through codes -1 / 0 / +1. So D3 is
 * the least of those fits over the 153 contiguous splits: exact, not a search. The stored FP16
 * values, and the decoder's float32 rounding of B +- S, only move the levels, so the margins
 * below cover the rounding.
 */
import { halfBitsValue } from "../half.js";
import { fitKernels } from "./kernels.js";

const LEVELS = 16;
/** relative slack for the rounding of the sums below (far above their error, ~1e-15) */
const SUM_SLACK = 1e-9;
/** float32 rounding of a decoded level, relative to the largest level used: 2^-24 with room */
const LEVEL_SLACK = 2 ** -20;

/**
 * Scratch of the bound, per thread (the histogram and the points' prefix sums). Indexes are the
 * non-empty FP4 codes in increasing order.
 */
export class T158BoundScratch {
  /** code histogram, in two halves (even and odd weights: no store waits on the previous one's) */
  readonly count = new Int32Array(2 * LEVELS);
  readonly n = new Float64Array(LEVELS + 1);
  readonly s = new Float64Array(LEVELS + 1);
  readonly ss = new Float64Array(LEVELS + 1);
}

/**
 * At most the squared error of any T158 leaf of the n weights whose FP4 candidate has these
 * codes, stored scale and bias bits and exact squared error sseF (0 when nothing is proven).
 */
export function t158SseLowerBound(scratch: T158BoundScratch, codes: Int8Array, n: number, scaleBits: number, biasBits: number, sseF: number): number {
  const S = halfBitsValue(scaleBits);
  const B = halfBitsValue(biasBits);
  if (!(S > 0) || !(sseF < Infinity)) return 0;
  const kern = fitKernels();
  if (kern) {
    // native/fit.c t158_bound: these operations, the split loop two splits per vector
    kern.boundCodes.set(codes.length === n ? codes : codes.subarray(0, n));
    return kern.t158Bound(n, S, B, sseF);
  }
  const count = scratch.count;
  count.fill(0);
  let i = 0;
  for (; i + 1 < n; i += 2) {
    count[codes[i]! + 8]!++;
    count[codes[i + 1]! + 8 + LEVELS]!++;
  }
  if (i < n) count[codes[i]! + 8]!++;
  // the distinct decoded values, centred on the bias (smaller sums, less cancellation)
  const { n: pn, s: ps, ss: pss } = scratch;
  let m = 0;
  let maxAbs = 0;
  let lo = Infinity;
  let hi = -Infinity;
  pn[0] = 0;
  ps[0] = 0;
  pss[0] = 0;
  for (let q = 0; q < LEVELS; q++) {
    const c = count[q]! + count[q + LEVELS]!;
    if (c === 0) continue;
    const w = Math.fround(S * (q - 8) + B);
    const p = w - B;
    pn[m + 1] = pn[m]! + c;
    ps[m + 1] = ps[m]! + c * p;
    pss[m + 1] = pss[m]! + c * p * p;
    m++;
    if (Math.abs(w) > maxAbs) maxAbs = Math.abs(w);
    if (w < lo) lo = w;
    if (w > hi) hi = w;
  }
  const N = pn[m]!;
  const SY = ps[m]!;
  const SYY = pss[m]!;
  const total = SYY - (SY * SY) / N;
  let d3 = total; // every point in the middle group: one level at the mean
  // low = points [0, i), mid = [i, j), high = [j, m)
  for (let i = 0; i <= m; i++) {
    const nl = pn[i]!;
    const sl = ps[i]!;
    for (let j = i; j <= m; j++) {
      const nh = N - pn[j]!;
      const sh = SY - ps[j]!;
      if (nl === 0 && nh === 0) continue;
      // least squares of y = B + c S, c = -1 / 0 / +1: sx = nh - nl, sxx = nh + nl, sxy = sh - sl
      const sx = nh - nl;
      const den = N * (nh + nl) - sx * sx;
      if (!(den > 0)) continue;
      const num = N * (sh - sl) - sx * SY;
      const d = total - (num * num) / (N * den);
      if (d < d3) d3 = d;
    }
  }
  const d3Low = d3 - SUM_SLACK * SYY;
  if (!(d3Low > 0)) return 0;
  // float32 rounding moves each used level by at most LEVEL_SLACK of its magnitude, and a used
  // level is within maxAbs + sqrt(sseF) + sqrt(n) (hi - lo) of zero (one further away alone
  // costs more than d3)
  const rootN = Math.sqrt(n);
  const magnitude = maxAbs + Math.sqrt(sseF) + rootN * (hi - lo);
  const root = Math.sqrt(d3Low) - Math.sqrt(sseF) * (1 + SUM_SLACK) - rootN * LEVEL_SLACK * magnitude;
  return root > 0 ? root * root * (1 - SUM_SLACK) : 0;
}
