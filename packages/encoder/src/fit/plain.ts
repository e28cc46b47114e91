/**
 * The plain 22.7 fits: FP4_AFFINE (bias = mean, scale searched around absmax / 7) and
 * T158_AFFINE (bias = mean, scale = mean absolute deviation, threshold S/2).
 */
import { MODE_FP4, MODE_T158 } from "@sgfp4/format";
import { biasToHalfBits, halfBitsValue, scaleToHalfBits } from "../half.js";
import { assignAndMeasure, sum } from "./codes.js";
import { ALL_CANDIDATES, BUCKET_MIN_N, SCALE_MULTIPLIERS, bucketSearch, exactSearch, largestFirstSearch } from "./scale-search.js";
import type { Candidate, Parameters } from "./types.js";
import { FitWorkspace } from "./workspace.js";

/** FP4_AFFINE per 22.7: bias = mean, S0 = absmax/7 of the centred values, 16-candidate search. */
export function fitFp4Plain(v: Float64Array, n: number, v2: boolean, ws = new FitWorkspace()): Candidate {
  const p = fp4PlainParameters(ws, v, n, v2, sum(v, n));
  return assignAndMeasure(ws, v, n, MODE_FP4, p.scaleBits, p.biasBits, new Int8Array(n));
}

/**
 * The plain FP4 parameters of a leaf whose index-order sum is sv. Leaves ws.buckets describing
 * this leaf when it bucketed (used = 0 otherwise) and ws.centredAbsSum = sum |w - Bias|.
 */
export function fp4PlainParameters(ws: FitWorkspace, v: Float64Array, n: number, v2: boolean, sv: number): Parameters {
  const biasBits = biasToHalfBits(sv / n, v2);
  const B = halfBitsValue(biasBits);
  const c = ws.centred;
  ws.buckets.used = 0; // the buckets (if any) will describe this leaf
  let absmax = 0;
  let absSum = 0;
  for (let i = 0; i < n; i++) {
    const x = v[i]! - B;
    c[i] = x;
    const a = Math.abs(x);
    absSum += a;
    if (a > absmax) absmax = a;
  }
  ws.centredAbsSum = absSum;
  let bestBits = 0;
  if (absmax > 0) {
    const s0 = absmax / 7;
    const candidateBits = ws.candidateBits;
    for (let k = 0; k < 16; k++) candidateBits[k] = scaleToHalfBits(s0 * SCALE_MULTIPLIERS[k]!);
    // The bucket estimate needs finite values and enough of them to pay for the bucketing.
    const useBuckets = n >= BUCKET_MIN_N && absmax < Infinity;
    const onlyCandidate = useBuckets
      ? bucketSearch(ws, v, c, n, B, absmax, candidateBits)
      : absmax < Infinity
        ? largestFirstSearch(ws, c, n, absmax, candidateBits)
        : -1;
    // the exact search decides between the candidates the estimate could not separate
    bestBits = onlyCandidate >= 0 ? candidateBits[onlyCandidate]! : exactSearch(c, n, candidateBits, absmax < Infinity ? ws.survivors : ALL_CANDIDATES);
  }
  return { scaleBits: bestBits, biasBits };
}

/** The plain T158 parameters after fp4PlainParameters of the same leaf: same bias, scale from its centredAbsSum. */
export function t158ParametersAfterFp4(ws: FitWorkspace, n: number, fp4: Parameters): Parameters {
  return { scaleBits: scaleToHalfBits(ws.centredAbsSum / n), biasBits: fp4.biasBits };
}

/** T158_AFFINE per 22.7: bias = mean, S = mean absolute deviation, threshold S/2. */
export function fitT158Plain(v: Float64Array, n: number, v2: boolean, ws = new FitWorkspace()): Candidate {
  const biasBits = biasToHalfBits(sum(v, n) / n, v2);
  const B = halfBitsValue(biasBits);
  let mad = 0;
  for (let i = 0; i < n; i++) mad += Math.abs(v[i]! - B);
  return assignAndMeasure(ws, v, n, MODE_T158, scaleToHalfBits(mad / n), biasBits, new Int8Array(n));
}
