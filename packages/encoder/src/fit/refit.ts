/**
 * Least-squares refit: with the codes fixed, the (S, B) minimising sum (w - S q - B)^2 in
 * closed form, rounded to what will be stored; then the codes are reassigned for the stored
 * values. Repeated while the exact squared error drops; the best seen is kept, so it never does
 * worse than its input. The rounds can be decided on a leaf's buckets (estimateRefit) where the
 * rounding bound cannot change a decision; the result is always the one of the exact rounds.
 */
import { MODE_FP4, type Mode } from "@sgfp4/format";
import { biasToHalfBits, halfBitsValue, scaleToHalfBits } from "../half.js";
import { assignAndMeasure, fp4Code, pass, sum, t158Code } from "./codes.js";
import { NO_CODE, SLACK } from "./scale-search.js";
import type { Candidate, Fitted, Parameters } from "./types.js";
import { FitWorkspace, type RoundEstimate } from "./workspace.js";

/**
 * A lower bound on a leaf's computed LWE from its computed sse, with margin for rounding: the
 * LWE's weights are all >= 1 and its bands are orthogonal, so the exact LWE is at least the
 * mean squared error; the rounding of both computations is below 1e-6 of it (a crude bound:
 * about 8 * 2^-53 * n^2 * levels * weight for n <= 4096), so 1e-5 is safe.
 */
export const LWE_FROM_SSE_MARGIN = 1 - 1e-5;

/** The refit of a candidate (its codes are copied, never changed). */
export function refitCandidate(v: Float64Array, n: number, start: Candidate, v2: boolean, maxIterations: number, ws = new FitWorkspace()): Candidate {
  const s = start as Partial<Fitted>;
  const first: Fitted =
    s.sq !== undefined ? (start as Fitted) : assignAndMeasure(ws, v, n, start.mode, start.scaleBits, start.biasBits, Int8Array.from(start.codes));
  return refit(ws, v, n, first, v2, maxIterations, sum(v, n));
}

/** The exact refit rounds from `start` (sv: the leaf's index-order sum). Codes in a workspace buffer are copied out. */
export function refit(ws: FitWorkspace, v: Float64Array, n: number, start: Fitted, v2: boolean, maxIterations: number, sv: number): Fitted {
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
    const spare = codes === ws.roundCodesA ? ws.roundCodesB : ws.roundCodesA;
    const r = pass(ws, v, n, start.mode, nextScaleBits, nextBiasBits, spare, sse);
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
    if (ws.isRoundScratch(start.codes)) start.codes = start.codes.slice(0, n);
    return start;
  }
  return { mode: start.mode, scaleBits, biasBits, codes: codes.slice(0, n), sse, maxAbsError, lwe: Number.NaN, sq, sqq, sqv };
}

/** The plain fit's codes are only the refit's start: a scratch buffer (refit copies out what it keeps). */
export function plainThenRefit(ws: FitWorkspace, v: Float64Array, n: number, mode: Mode, p: Parameters, refitOn: boolean, v2: boolean, maxIterations: number, sv: number): Fitted {
  if (!refitOn) return assignAndMeasure(ws, v, n, mode, p.scaleBits, p.biasBits, new Int8Array(n));
  return refit(ws, v, n, assignAndMeasure(ws, v, n, mode, p.scaleBits, p.biasBits, ws.roundCodesA), v2, maxIterations, sv);
}

/**
 * The sums assignAndMeasure would compute for stored S and B, from the buckets: the code is
 * monotone in w, so a bucket whose smallest and largest w get the same code q adds exactly
 * count * q, count * q^2, q * sum w and sum (w - d)^2 with d = fround(S q + B) its decoded
 * value; buckets straddling a code boundary are summed element by element. sq and sqq are
 * exact (integers); sse and sqv differ from the index-order sums only by rounding. The result
 * is ws.roundEstimate (copy what you keep before the next call).
 */
function estimateRound(ws: FitWorkspace, n: number, mode: Mode, S: number, B: number): RoundEstimate {
  const { used: nb, start: bucketStart, w: bucketedW, sumW: bucketSumW, sumWW: bucketSumWW, minW: bucketMinW, maxW: bucketMaxW } = ws.buckets;
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
  const bound = (ws.buckets.absMax + (B < 0 ? -B : B) + 8 * S) * 1.001;
  const r = ws.roundEstimate;
  r.sse = sse;
  r.sseSlack = SLACK * n * bound * bound + 1e-300;
  r.sq = sq;
  r.sqq = sqq;
  r.sqv = sqv;
  r.sqvSlack = SLACK * n * 8 * bound + 1e-300;
  return r;
}

/** Where the estimated refit rounds ended: the parameters kept and their error, within sseSlack. */
export interface RefitEstimate {
  scaleBits: number;
  biasBits: number;
  sse: number;
  sseSlack: number;
  /** rounds decided (and kept or stopped) on estimates */
  rounds: number;
  /** an estimate was too close to call: `refit` must continue exactly from (scaleBits, biasBits) */
  undecided: boolean;
}

/** The rounds of `refit` on bucket estimates only (ws.buckets must describe this leaf). */
export function estimateRefit(ws: FitWorkspace, n: number, mode: Mode, start: Parameters, v2: boolean, maxIterations: number, sv: number): RefitEstimate {
  let scaleBits = start.scaleBits;
  let biasBits = start.biasBits;
  // the start is estimated too: its exact pass is needed only if the refit keeps it
  let { sq, sqq, sqv, sse, sseSlack, sqvSlack } = estimateRound(ws, n, mode, halfBitsValue(scaleBits), halfBitsValue(biasBits));
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
    const next = estimateRound(ws, n, mode, halfBitsValue(nextScaleBits), halfBitsValue(nextBiasBits));
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

/**
 * The refit that estimateRefit decided: one exact pass for the parameters kept, or, where an
 * estimate was too close to call, the exact rounds continued from there (same result as
 * `refit`). loseAbove: when the estimate proves the candidate's LWE above it, the caller cannot
 * use the candidate, and null is returned without an exact pass.
 */
export function refitFromEstimate(ws: FitWorkspace, v: Float64Array, n: number, mode: Mode, e: RefitEstimate, v2: boolean, maxIterations: number, sv: number, loseAbove = Infinity): Fitted | null {
  if (!e.undecided && ((e.sse - e.sseSlack) / n) * LWE_FROM_SSE_MARGIN > loseAbove) return null;
  const cur = assignAndMeasure(ws, v, n, mode, e.scaleBits, e.biasBits, new Int8Array(n));
  return e.undecided ? refit(ws, v, n, cur, v2, maxIterations - e.rounds, sv) : cur;
}
