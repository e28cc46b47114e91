/**
 * The joint grid search (fit.search "joint"): besides the 22.7 start (bias = mean, which puts a
 * grid level on the mean: mid-tread), other placements of the grid are tried, in the manner of
 * ggml's make_qkx2_quants: for each start (S, B) the nearest codes are assigned, (S, B) is
 * solved by least squares for those codes, and the start whose least-squares error is lowest is
 * refitted exactly (stored FP16 values, codes reassigned, rounds while the error drops).
 *
 * FP4 starts: the 16 levels spread over the leaf's range [min, max] with 15 + d steps (d < 0
 * clips nothing and leaves room, d > 0 clips the extremes), the 22.7 placement (bias = mean,
 * scales around absmax / 7), and that grid moved by half a step either way (mid-rise: no level on
 * the mean, what symmetric data wants).
 * T158 starts: thresholds f * mean|w - mean| around the mean.
 */
import { MODE_FP4, type Mode } from "@sgfp4/format";
import { biasToHalfBits, halfBitsValue, scaleToHalfBits } from "../half.js";
import { assignAndMeasure } from "./codes.js";
import { fitKernels, valuesIn } from "./kernels.js";
import { refit } from "./refit.js";
import type { Fitted } from "./types.js";
import type { FitWorkspace } from "./workspace.js";

/**
 * Steps beyond 15 of the range starts (ggml's Q4_K search spans 14..16 in 0.1 steps; six cost
 * <= 0.05 dB against 21 on 8x8 leaves). The sets by leaf size, and the 22.7 multipliers below,
 * keep the starts that won on Gaussian, Laplacian and Student-t encodes (larger leaves gain from
 * clipping their extremes more).
 */
const RANGE_STEPS_SMALL = [-1, -0.5, 0, 0.5, 1];
const RANGE_STEPS_LARGE = [0, 0.5, 1, 1.5, 2.5];
/** The 22.7 FP4 starts kept (multipliers of absmax / 7; its grid moved half a step uses the last). */
const SPEC_SCALES_SMALL = [0.85];
const SPEC_SCALES_LARGE = [0.7, 0.85];
/** Leaves of at least this many weights use the LARGE sets. */
const LARGE_LEAF = 256;
/** T158 threshold starts, as fractions of the mean absolute deviation (the 22.7 start, 0.5, never won). */
const T158_THRESHOLDS = [0.65, 0.8, 1, 1.25];

/**
 * The leaf's spread that both modes' starts read (ws.spread): computed once per leaf by
 * leafSpread, before jointCandidate is called for either mode (sv: the leaf's index-order sum).
 */
export function leafSpread(ws: FitWorkspace, v: Float64Array, n: number, sv: number): void {
  let min = Infinity;
  let max = -Infinity;
  let absDev = 0;
  let absMax = 0;
  let svv = 0;
  const mean = sv / n;
  for (let i = 0; i < n; i++) {
    const w = v[i]!;
    svv += w * w;
    if (w < min) min = w;
    if (w > max) max = w;
    const a = Math.abs(w - mean);
    absDev += a;
    if (a > absMax) absMax = a;
  }
  const s = ws.spread;
  s.min = min;
  s.max = max;
  s.absDev = absDev;
  s.absMax = absMax;
  s.svv = svv;
}

/**
 * The joint search's best start refitted (exact error, stored FP16 values). The 22.7 starts are
 * among the starts (bias = mean; FP4 scales around absmax / 7, T158's the mean absolute
 * deviation) instead of the 22.7 search and refit (a fifth of the encode's time each for T158,
 * and for FP4 the bucketed search). sv: the leaf's index-order sum; ws.spread: leafSpread's of
 * this leaf.
 */
export function jointCandidate(ws: FitWorkspace, v: Float64Array, n: number, mode: Mode, v2: boolean, maxIterations: number, sv: number): Fitted {
  const { min, max, absDev, absMax, svv } = ws.spread;
  const mean = sv / n;
  if (!(max > min) || !(max - min < Infinity)) return flat(ws, v, n, mode, mean, v2);
  ws.jointStarts = 0;
  if (mode === MODE_FP4) {
    const large = n >= LARGE_LEAF;
    for (const d of large ? RANGE_STEPS_LARGE : RANGE_STEPS_SMALL) {
      const S = (max - min) / (15 + d);
      addStart(ws, S, min + 8 * S);
    }
    const specScales = large ? SPEC_SCALES_LARGE : SPEC_SCALES_SMALL;
    for (const m of specScales) addStart(ws, (absMax / 7) * m, mean);
    // mid-rise: the 22.7 grid moved by half a step
    const S = (absMax / 7) * specScales[specScales.length - 1]!;
    addStart(ws, S, mean + 0.5 * S);
    addStart(ws, S, mean - 0.5 * S);
  } else {
    for (const f of T158_THRESHOLDS) addStart(ws, 2 * f * (absDev / n), mean);
  }
  let bestErr = Infinity;
  let bestScaleBits = 0;
  let bestBiasBits = 0;
  // large leaves rank their starts on a sample (see rankingStride)
  const stride = v2 ? rankingStride(n) : 1;
  let rn = n;
  let rsv = sv;
  let rsvv = svv;
  if (stride > 1) {
    rn = 0;
    rsv = 0;
    rsvv = 0;
    for (let i = 0; i < n; i += stride, rn++) {
      const w = v[i]!;
      rsv += w;
      rsvv += w * w;
    }
  }
  const kern = fitKernels();
  const starts = ws.jointStarts;
  if (kern && (n & 1) === 0 && Number.isInteger(maxIterations) && maxIterations >= 0 && maxIterations <= 64) {
    // the ranking, the best start's pass and the refit rounds in one call (native/joint_fit.h
    // joint_fit: this function's and refit's operations, the loops' numbers)
    valuesIn(kern, v, n);
    for (let k = 0; k < starts; k++) {
      kern.startScale[k] = ws.jointScale[k]!;
      kern.startBias[k] = ws.jointBias[k]!;
    }
    kern.jointFit(n, stride, starts, mode === MODE_FP4 ? 1 : 0, v2 ? 1 : 0, maxIterations, sv, rn, rsv, rsvv);
    const r = kern.fitResult;
    if (!r[8]) return flat(ws, v, n, mode, mean, v2);
    const codes = ws.codesCopy(kern.roundCodes[r[7]!]!, n);
    return { mode, scaleBits: r[0]!, biasBits: r[1]!, codes, sse: r[2]!, maxAbsError: r[3]!, lwe: Number.NaN, sq: r[4]!, sqq: r[5]!, sqv: r[6]! };
  }
  if (kern && starts > 0) {
    // every start's code sums at once (the kernel's lanes: the loop below's numbers), then
    // ranked in the same order
    valuesIn(kern, v, n);
    kern.startScale.set(ws.jointScale.subarray(0, starts));
    kern.startBias.set(ws.jointBias.subarray(0, starts));
    if (mode === MODE_FP4) kern.rankFp4(n, stride, starts);
    else kern.rankT158(n, stride, starts);
    const sums = kern.startSums;
    for (let k = 0; k < starts; k++) {
      const err = leastSquaresOfSums(ws, rn, sums[3 * k]!, sums[3 * k + 1]!, sums[3 * k + 2]!, rsv, rsvv, v2, bestErr);
      if (err < bestErr) {
        bestErr = err;
        bestScaleBits = ws.lsScaleBits;
        bestBiasBits = ws.lsBiasBits;
      }
    }
  } else {
    for (let k = 0; k < starts; k++) {
      const err = leastSquaresFor(ws, v, n, stride, rn, mode, ws.jointScale[k]!, ws.jointBias[k]!, rsv, rsvv, v2, bestErr);
      if (err < bestErr) {
        bestErr = err;
        bestScaleBits = ws.lsScaleBits;
        bestBiasBits = ws.lsBiasBits;
      }
    }
  }
  if (!(bestErr < Infinity)) return flat(ws, v, n, mode, mean, v2);
  const start = assignAndMeasure(ws, v, n, mode, bestScaleBits, bestBiasBits, ws.roundCodesA);
  return refit(ws, v, n, start, v2, maxIterations, sv);
}

/** Every code 0 (a constant leaf): no start identifies a scale. */
function flat(ws: FitWorkspace, v: Float64Array, n: number, mode: Mode, mean: number, v2: boolean): Fitted {
  return assignAndMeasure(ws, v, n, mode, 0, biasToHalfBits(mean, v2), new Int8Array(n));
}

function addStart(ws: FitWorkspace, S: number, B: number): void {
  if (!(S > 0)) return;
  ws.jointScale[ws.jointStarts] = S;
  ws.jointBias[ws.jointStarts] = B;
  ws.jointStarts++;
}

/**
 * Leaves of 1024 weights and more rank their starts on 200-320 of them (an odd stride: every
 * column of a 32- or 64-wide leaf is sampled); the best start's refit sees all weights. Measured
 * (bench:quality inputs): SNR within 0.01 dB at every setting. Running the refit rounds on the
 * sample as well lost 0.07 dB at 4.5 bpw on PP-OCRv4 (real weights) and was dropped. v2 only:
 * a v1 leaf is always the block's leaf, and keeps its fit.
 */
function rankingStride(n: number): number {
  return n >= 4096 ? 13 : n >= 1024 ? 5 : 1;
}

/**
 * The least-squares (S, B) for the nearest codes of the start (S0, B0), stored (FP16 bits into
 * ws.lsScaleBits / ws.lsBiasBits); returns the squared error of those codes with the stored
 * values, from the sums in closed form (Infinity when not identifiable). The stored values
 * matter: two starts can give the same codes up to a shift (one outlier: -8 / 7 or 0 / 7), with
 * the same exact solution but a bias of very different magnitude, whose FP16 rounding differs.
 * The sums run over v[0], v[stride], ... below len: n weights, whose sum and sum of squares are
 * sv and svv.
 */
function leastSquaresFor(ws: FitWorkspace, v: Float64Array, len: number, stride: number, n: number, mode: Mode, S0: number, B0: number, sv: number, svv: number, v2: boolean, bestErr: number): number {
  let sq = 0;
  let sqq = 0;
  let sqv = 0;
  if (mode === MODE_FP4) {
    const inv = 1 / S0;
    for (let i = 0; i < len; i += stride) {
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
    for (let i = 0; i < len; i += stride) {
      const w = v[i]!;
      const c = w - B0;
      const q = +(c > tau) - +(c < -tau);
      sq += q;
      sqq += q * q;
      sqv += q * w;
    }
  }
  return leastSquaresOfSums(ws, n, sq, sqq, sqv, sv, svv, v2, bestErr);
}

/** leastSquaresFor's solution and error from a start's code sums (sq, sqq, sqv over the n ranked weights). */
function leastSquaresOfSums(ws: FitWorkspace, n: number, sq: number, sqq: number, sqv: number, sv: number, svv: number, v2: boolean, bestErr: number): number {
  const den = n * sqq - sq * sq;
  if (!(den > 0)) return Infinity;
  const S = (n * sqv - sq * sv) / den;
  if (!(S > 0)) return Infinity;
  if (cannotBeat(n, S, sq, sqq, sqv, sv, svv, den, bestErr)) return Infinity;
  ws.lsScaleBits = scaleToHalfBits(S);
  const s = halfBitsValue(ws.lsScaleBits);
  ws.lsBiasBits = biasToHalfBits((sv - s * sq) / n, v2);
  const b = halfBitsValue(ws.lsBiasBits);
  // sum (w - s q - b)^2 expanded
  return svv - 2 * s * sqv - 2 * b * sv + s * s * sqq + 2 * s * b * sq + n * b * b;
}

/**
 * Whether the error leastSquaresFor would compute for these sums (its stored (s, b)) is proven
 * at least bestErr, so that the start cannot be the ranking's best (its `err < bestErr` fails):
 * then the stored values need not be rounded. With the sums taken as exact numbers, the
 * expanded error F(s, b) = svv - 2 s sqv - 2 b sv + s^2 sqq + 2 s b sq + n b^2 is a quadratic
 * with a positive definite Hessian (den > 0), so F(s, b) >= its minimum over all real (s, b),
 * F* = svv - (n sqv^2 - 2 sq sv sqv + sqq sv^2) / den. The computed error differs from F(s, b)
 * by at most 9 * 2^-53 times the sum of its terms' magnitudes (bounded here through s <= S (1 +
 * 2^-10) + 2^-24, the FP16 scale's rounding, and the bias's: at most 2^-6 relative plus 2^-20),
 * and the computed F* from F* by at most 9 * 2^-53 times its terms' magnitudes; both bounds are
 * taken as 1e-12 of those magnitudes (a margin of over 100x, which also covers the rounding of
 * these bounds themselves). Exact: only starts that could not win are cut short.
 */
function cannotBeat(n: number, S: number, sq: number, sqq: number, sqv: number, sv: number, svv: number, den: number, bestErr: number): boolean {
  if (!(bestErr < Infinity)) return false;
  const asq = sq < 0 ? -sq : sq;
  const asv = sv < 0 ? -sv : sv;
  const asqv = sqv < 0 ? -sqv : sqv;
  const explained = (n * sqv * sqv + 2 * asq * asv * asqv + sqq * sv * sv) / den;
  const fStar = svv - (n * sqv * sqv - 2 * sq * sv * sqv + sqq * sv * sv) / den;
  const sMax = S * (1 + 2 ** -10) + 2 ** -24;
  const bMax = ((asv + sMax * asq) / n) * (1 + 2 ** -6) + 2 ** -20;
  const terms = svv + 2 * sMax * asqv + 2 * bMax * asv + sMax * sMax * sqq + 2 * sMax * bMax * asq + n * bMax * bMax;
  return fStar - 1e-12 * (svv + explained + terms) >= bestErr;
}
