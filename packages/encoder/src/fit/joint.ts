/**
 * The joint grid search (fit.search "joint"): besides the 22.7 start (bias = mean, which puts a
 * grid level on the mean: mid-tread), other placements of the grid are tried, in the manner of
 * ggml's make_qkx2_quants: for each start (S, B) the nearest codes are assigned, (S, B) is
 * solved by least squares for those codes, and the start whose least-squares error is lowest is
 * refitted exactly (stored FP16 values, codes reassigned, rounds while the error drops). The
 * result replaces the 22.7 candidate only when its exact error is lower, so it never does worse.
 *
 * FP4 starts: the 16 levels spread over the leaf's range [min, max] with 15 + d steps (d < 0
 * clips nothing and leaves room, d > 0 clips the extremes), and the 22.7 scale with the grid
 * moved by half a step either way (mid-rise: no level on the mean, what symmetric data wants).
 * T158 starts: thresholds f * mean|w - mean| around the mean.
 */
import { MODE_FP4, type Mode } from "@sgfp4/format";
import { biasToHalfBits, halfBitsValue, scaleToHalfBits } from "../half.js";
import { assignAndMeasure } from "./codes.js";
import { refit } from "./refit.js";
import type { Fitted } from "./types.js";
import type { FitWorkspace } from "./workspace.js";

/** Steps beyond 15 of the range starts (ggml's Q4_K search spans 14..16 in 0.1 steps; six cost <= 0.05 dB against 21 on 8x8 leaves). */
const RANGE_STEPS = [-1, -0.5, 0, 0.5, 1, 1.5];
/** T158 threshold starts, as fractions of the mean absolute deviation (0.5: the 22.7 start). */
const T158_THRESHOLDS = [0.3, 0.45, 0.5, 0.65, 0.8, 1, 1.25];

/**
 * The joint search's best start refitted, or `spec` (the leaf's 22.7 fit + refit, given for
 * FP4) where that is better. T158 is not given one: its 22.7 start is among the starts (its
 * refit rounds were a fifth of the encode's time). sv: the leaf's index-order sum.
 */
export function jointCandidate(ws: FitWorkspace, v: Float64Array, n: number, mode: Mode, spec: Fitted | null, v2: boolean, maxIterations: number, sv: number): Fitted {
  let min = Infinity;
  let max = -Infinity;
  let absDev = 0;
  const mean = sv / n;
  for (let i = 0; i < n; i++) {
    const w = v[i]!;
    if (w < min) min = w;
    if (w > max) max = w;
    absDev += Math.abs(w - mean);
  }
  // every code 0 (a constant leaf): no start identifies a scale
  const flat = (): Fitted => spec ?? assignAndMeasure(ws, v, n, mode, 0, biasToHalfBits(mean, v2), new Int8Array(n));
  if (!(max > min) || !(max - min < Infinity)) return flat();
  ws.jointStarts = 0;
  if (mode === MODE_FP4) {
    for (const d of RANGE_STEPS) {
      const S = (max - min) / (15 + d);
      addStart(ws, S, min + 8 * S);
    }
    const S = spec ? halfBitsValue(spec.scaleBits) : 0;
    const B = spec ? halfBitsValue(spec.biasBits) : 0;
    if (S > 0) {
      addStart(ws, S, B + 0.5 * S);
      addStart(ws, S, B - 0.5 * S);
    }
  } else {
    for (const f of T158_THRESHOLDS) addStart(ws, 2 * f * (absDev / n), mean);
  }
  let bestKey = -Infinity;
  let bestS = 0;
  let bestB = 0;
  for (let k = 0; k < ws.jointStarts; k++) {
    // the least-squares error is sum w^2 - (S sum qw + B sum w): the largest key has the lowest error
    const key = leastSquaresFor(ws, v, n, mode, ws.jointScale[k]!, ws.jointBias[k]!, sv);
    if (key > bestKey) {
      bestKey = key;
      bestS = ws.lsScale;
      bestB = ws.lsBias;
    }
  }
  if (!(bestKey > -Infinity)) return flat();
  const scaleBits = scaleToHalfBits(bestS);
  const start = assignAndMeasure(ws, v, n, mode, scaleBits, biasToHalfBits(bestB, v2), ws.roundCodesA);
  const found = refit(ws, v, n, start, v2, maxIterations, sv);
  return spec && !(found.sse < spec.sse) ? spec : found;
}

function addStart(ws: FitWorkspace, S: number, B: number): void {
  if (!(S > 0)) return;
  ws.jointScale[ws.jointStarts] = S;
  ws.jointBias[ws.jointStarts] = B;
  ws.jointStarts++;
}

/**
 * The least-squares (S, B) for the nearest codes of the start (S0, B0), unrounded, into
 * ws.lsScale / ws.lsBias; returns its ranking key, -Infinity when not identifiable.
 */
function leastSquaresFor(ws: FitWorkspace, v: Float64Array, n: number, mode: Mode, S0: number, B0: number, sv: number): number {
  let sq = 0;
  let sqq = 0;
  let sqv = 0;
  if (mode === MODE_FP4) {
    const inv = 1 / S0;
    for (let i = 0; i < n; i++) {
      const w = v[i]!;
      const y = (w - B0) * inv;
      const floorY = Math.floor(y);
      let q = floorY + +(y - floorY >= 0.5);
      if (q > 7) q = 7;
      else if (q < -8) q = -8;
      sq += q;
      sqq += q * q;
      sqv += q * w;
    }
  } else {
    const tau = 0.5 * S0;
    for (let i = 0; i < n; i++) {
      const w = v[i]!;
      const c = w - B0;
      const q = +(c > tau) - +(c < -tau);
      sq += q;
      sqq += q * q;
      sqv += q * w;
    }
  }
  const den = n * sqq - sq * sq;
  if (!(den > 0)) return -Infinity;
  const S = (n * sqv - sq * sv) / den;
  if (!(S > 0)) return -Infinity;
  const B = (sv - S * sq) / n;
  ws.lsScale = S;
  ws.lsBias = B;
  return S * sqv + B * sv;
}
