/**
 * One leaf's two candidates (FP4_AFFINE and T158_AFFINE, each plain 22.7 fit + least-squares
 * refit) and the 22.7 mode selection: T158 when its error is within (1 + delta) of FP4's and the
 * outlier guard passes. Entry points by what the caller reads: fitLeaf / fitLeafWithSum (both
 * candidates measured), fitLeafChosen (only the chosen one's errors), boundOrFitLeaf (a proof
 * that the node exceeds a limit, when the bucket estimates give one) and resumeLeafFit.
 */
import { MODE_FP4, MODE_T158 } from "@sgfp4/format";
import { halfBitsValue } from "../half.js";
import { laplacianWeightedError } from "../laplacian.js";
import { measureErrors, sum } from "./codes.js";
import { fp4PlainParameters, t158ParametersAfterFp4 } from "./plain.js";
import { LWE_FROM_SSE_MARGIN, estimateRefit, plainThenRefit, refitFromEstimate, type RefitEstimate } from "./refit.js";
import { jointCandidate, leafSpread } from "./joint.js";
import { t158SseLowerBound } from "./t158-bound.js";
import type { Candidate, FitOptions, Fitted, LeafFit, Parameters } from "./types.js";
import { FitWorkspace } from "./workspace.js";
import { fitKernels, valuesIn, type FitKernels } from "./kernels.js";

/**
 * The answer of boundOrFitLeaf when the bucket estimates alone prove the chosen candidate's LWE
 * above the caller's limit: no exact pass, no codes, no pyramid.
 */
export interface LweLowerBound {
  /** at most the LWE of the candidate the full fit would choose */
  lowerBound: number;
  /** the estimates the bound came from: resumeLeafFit continues from them (no second search) */
  resume: FitResume;
}

/** Where both modes' refits ended on bucket estimates (see LweLowerBound.resume). */
export interface FitResume {
  readonly fp4: RefitEstimate;
  readonly t158: RefitEstimate;
}

/** The T158 candidate of a chosen-only fit that proved T158 cannot be chosen without measuring it. */
const T158_NOT_FITTED: Candidate = Object.freeze({ mode: MODE_T158, scaleBits: 0, biasBits: 0, codes: new Int8Array(0), sse: Number.NaN, maxAbsError: Number.NaN, lwe: Number.NaN });

/** Both candidates of a size x size leaf (values row-major), both measured, and the selection. */
export function fitLeaf(v: Float64Array, size: number, o: FitOptions, ws = new FitWorkspace()): LeafFit {
  return fitLeafWithSum(v, size, o, sum(v, size * size), ws);
}

/** fitLeaf for a caller that already summed v in index order (sv: that sum). */
export function fitLeafWithSum(v: Float64Array, size: number, o: FitOptions, sv: number, ws: FitWorkspace): LeafFit {
  return select(ws, v, size, o, sv, false, Infinity, undefined) as LeafFit;
}

/**
 * fitLeafWithSum for a caller that reads only the chosen candidate's LWE (the threshold
 * policy). T158's LWE (a measure pass and a pyramid) is skipped, left NaN, when the selection
 * cannot pick T158: T158 not allowed, or its sse alone proves its LWE above (1 + delta) times
 * FP4's; where the bucket estimate of its refit already proves that, T158 is not even measured:
 * `t158` is then T158_NOT_FITTED (no codes, NaN errors, t158Allowed and errorHint false; v2
 * records carry no error hint). The chosen candidate is the same as fitLeafWithSum's.
 */
export function fitLeafChosen(v: Float64Array, size: number, o: FitOptions, sv: number, ws: FitWorkspace): LeafFit {
  return select(ws, v, size, o, sv, true, Infinity, undefined) as LeafFit;
}

/**
 * fitLeafChosen, or, when the bucket estimates prove the chosen candidate's LWE above
 * splitAbove, that proof (no exact pass). The node's decision is the one its full fit gives.
 */
export function boundOrFitLeaf(v: Float64Array, size: number, o: FitOptions, sv: number, splitAbove: number, ws: FitWorkspace): LeafFit | LweLowerBound {
  return select(ws, v, size, o, sv, true, splitAbove, undefined);
}

/** fitLeafChosen of a leaf that boundOrFitLeaf bounded (same values, options and sum), from the bound's estimates. */
export function resumeLeafFit(v: Float64Array, size: number, o: FitOptions, sv: number, resume: FitResume, ws: FitWorkspace): LeafFit {
  return select(ws, v, size, o, sv, true, Infinity, resume) as LeafFit;
}

/** The buckets fp4PlainParameters built for this leaf (if it did) serve both modes' refits; a zero scale (every code 0) is measured exactly. */
function refitsFromBuckets(ws: FitWorkspace, o: FitOptions, p: Parameters): boolean {
  return o.refit && ws.buckets.used > 0 && p.scaleBits !== 0;
}

/**
 * Both joint-search candidates of a leaf with their sse and maxAbsError, and t158Allowed, for a
 * caller that decides modes itself (the rd policy with distortion "mse"): no LWE is measured
 * (both NaN; withLwe measures a candidate later) and no 22.7 selection is made (chosen is FP4,
 * errorHint false). The candidates are fitLeafWithSum's. Other searches fall back to it.
 * t158Gap (the rd policy's own decisions): T158 is not fitted where t158SseLowerBound proves
 * its squared error at least FP4's plus t158Gap (the error the bytes it saves are worth), so
 * that it cannot win the leaf's mode choice: t158 is then T158_NOT_FITTED, t158Allowed false.
 * spreadDone: ws.spread already holds leafSpread's numbers for v (the caller measured them).
 */
export function fitLeafCandidates(v: Float64Array, size: number, o: FitOptions, sv: number, ws: FitWorkspace, t158Gap = Infinity, spreadDone = false): LeafFit {
  if (!(o.search === "joint" && o.refit)) return fitLeafWithSum(v, size, o, sv, ws);
  const n = size * size;
  if (!spreadDone) leafSpread(ws, v, n, sv);
  const fp4 = jointCandidate(ws, v, n, MODE_FP4, o.v2, o.maxRefitIterations, sv);
  // t158Gap: T158 is needed only if its squared error can be below fp4.sse + t158Gap
  if (t158Gap === Infinity) {
    const t158 = jointCandidate(ws, v, n, MODE_T158, o.v2, o.maxRefitIterations, sv);
    return { fp4, t158, t158Allowed: t158Allowed(o, t158), chosen: fp4, errorHint: false };
  }
  const t158Floor = t158SseLowerBound(ws.t158Bound, fp4.codes, n, fp4.scaleBits, fp4.biasBits, fp4.sse);
  if (t158Floor >= fp4.sse + t158Gap) return { fp4, t158: T158_NOT_FITTED, t158Allowed: false, chosen: fp4, errorHint: false, t158Floor };
  const t158 = jointCandidate(ws, v, n, MODE_T158, o.v2, o.maxRefitIterations, sv);
  return { fp4, t158, t158Allowed: t158Allowed(o, t158), chosen: fp4, errorHint: false, t158Floor };
}

/** A node's fit as fitLeafCandidatesAfterKernel gives it: a LeafFit with the node's power (MacroblockFitter's). */
export type NodeFit = LeafFit & { power: number; fp4: Fitted };

/**
 * fitLeafCandidates (finite t158Gap, the joint search with refit) of a node the kernel's fitNode
 * fitted (it returned 1): its FP4 candidate and T158 floor in kern.fitResult, the node's values in
 * kern.values, ws.spread its leafSpread numbers but absDev (NaN: measured here if T158 is fitted). The same candidates and floor, in objects (and a
 * codes array) kept per node id in ws.nodeFits and rewritten by the next block's fit of the node:
 * the caller holds them only while its block is encoded (a new set per fit was most of an encode's
 * garbage).
 */
export function fitLeafCandidatesAfterKernel(kern: FitKernels, size: number, o: FitOptions, sv: number, ws: FitWorkspace, t158Gap: number, id: number, power: number): NodeFit {
  const n = size * size;
  const r = kern.fitResult;
  let f = ws.nodeFits[id];
  if (!f || f.fp4.codes.length !== n) {
    const fp4: Fitted = { mode: MODE_FP4, scaleBits: 0, biasBits: 0, codes: new Int8Array(n), sse: 0, maxAbsError: 0, lwe: Number.NaN, sq: 0, sqq: 0, sqv: 0 };
    f = ws.nodeFits[id] = { fp4, t158: T158_NOT_FITTED, t158Allowed: false, chosen: fp4, errorHint: false, t158Floor: 0, power: 0 };
  }
  const fp4 = f.fp4;
  fp4.scaleBits = r[0]!;
  fp4.biasBits = r[1]!;
  fp4.codes.set(ws.roundCodesPrefix(kern.roundCodes[r[7]!]!, n));
  fp4.sse = r[2]!;
  fp4.maxAbsError = r[3]!;
  fp4.lwe = Number.NaN;
  fp4.sq = r[4]!;
  fp4.sqq = r[5]!;
  fp4.sqv = r[6]!;
  const t158Floor = r[9]!;
  f.t158Floor = t158Floor;
  f.power = power;
  if (t158Floor >= fp4.sse + t158Gap) {
    f.t158 = T158_NOT_FITTED;
    f.t158Allowed = false;
    return f;
  }
  // the sum |w - mean| that T158's starts read (fitNode does not measure it)
  ws.spread.absDev = kern.nodeAbsDev(n);
  const t158 = jointCandidate(ws, kern.values, n, MODE_T158, o.v2, o.maxRefitIterations, sv);
  f.t158 = t158;
  f.t158Allowed = t158Allowed(o, t158);
  return f;
}

const t158Allowed = (o: FitOptions, t158: Candidate): boolean => t158.maxAbsError <= o.outlierGuard * halfBitsValue(t158.scaleBits);

/** Measures the candidate's LWE (c.lwe) on its leaf's values. */
export function withLwe(ws: FitWorkspace, v: Float64Array, size: number, c: Candidate): Candidate {
  const kern = size <= 64 && (size & (size - 1)) === 0 ? fitKernels() : null;
  if (kern) {
    // native/leaf_lwe.h leaf_lwe: measureErrors and laplacianWeightedError, the same operations
    const n = size * size;
    valuesIn(kern, v, n);
    kern.boundCodes.set(c.codes.length === n ? c.codes : c.codes.subarray(0, n));
    c.lwe = kern.leafLwe(size, halfBitsValue(c.scaleBits), halfBitsValue(c.biasBits));
    return c;
  }
  measureErrors(ws, v, size * size, c.codes, c.scaleBits, c.biasBits);
  c.lwe = laplacianWeightedError(ws.errors, size);
  return c;
}

/**
 * withLwe, and where the kernel measures it (it then returns true), the candidate's decode (float32,
 * the decoders' numbers) written to kern.tileDecoded at `at`, rows `stride` apart.
 */
export function withLweDecoding(ws: FitWorkspace, v: Float64Array, size: number, c: Candidate, at: number, stride: number): boolean {
  const kern = size >= 2 && size <= 64 && (size & (size - 1)) === 0 ? fitKernels() : null;
  if (!kern) {
    withLwe(ws, v, size, c);
    return false;
  }
  const n = size * size;
  valuesIn(kern, v, n);
  kern.boundCodes.set(c.codes.length === n ? c.codes : c.codes.subarray(0, n));
  c.lwe = kern.leafLweAt(size, halfBitsValue(c.scaleBits), halfBitsValue(c.biasBits), at, stride);
  return true;
}

function select(ws: FitWorkspace, v: Float64Array, size: number, o: FitOptions, sv: number, chosenOnly: boolean, splitAbove: number, resume: FitResume | undefined): LeafFit | LweLowerBound {
  // the bounds and skips below are proofs about the 22.7 candidates; the joint search can beat them
  if (o.search === "joint" && o.refit) return selectJoint(ws, v, size, o, sv);
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
    fp4Start = fp4PlainParameters(ws, v, n, o.v2, sv);
    // both plain fits use the same FP16 bias (of sv / n)
    t158Start = t158ParametersAfterFp4(ws, n, fp4Start);
    fp4Estimate = refitsFromBuckets(ws, o, fp4Start) ? estimateRefit(ws, n, MODE_FP4, fp4Start, o.v2, o.maxRefitIterations, sv) : null;
    t158Estimate = refitsFromBuckets(ws, o, t158Start) && splitAbove < Infinity ? estimateRefit(ws, n, MODE_T158, t158Start, o.v2, o.maxRefitIterations, sv) : null;
  }
  if (fp4Estimate && t158Estimate && !fp4Estimate.undecided && !t158Estimate.undecided) {
    // Whichever candidate would be chosen, its LWE is at least its exact sse / n (up to
    // LWE_FROM_SSE_MARGIN) and its exact sse at least the estimate minus the slack.
    const low = Math.min(fp4Estimate.sse - fp4Estimate.sseSlack, t158Estimate.sse - t158Estimate.sseSlack);
    const lowerBound = (low / n) * LWE_FROM_SSE_MARGIN;
    if (lowerBound > splitAbove) return { lowerBound, resume: { fp4: fp4Estimate, t158: t158Estimate } };
  }
  const fp4: Fitted = fp4Estimate
    ? refitFromEstimate(ws, v, n, MODE_FP4, fp4Estimate, o.v2, o.maxRefitIterations, sv)!
    : plainThenRefit(ws, v, n, MODE_FP4, fp4Start!, o.refit, o.v2, o.maxRefitIterations, sv);
  withLwe(ws, v, size, fp4);
  const errF = o.selection === "l2" ? fp4.sse / n : fp4.lwe;
  const limitT = (1 + o.delta) * errF;
  // chosenOnly: T158's error estimate from the buckets may already prove it loses (its LWE is
  // at least sse / n up to LWE_FROM_SSE_MARGIN); then it gets no exact pass and no codes
  if (!t158Estimate && refitsFromBuckets(ws, o, t158Start!)) t158Estimate = estimateRefit(ws, n, MODE_T158, t158Start!, o.v2, o.maxRefitIterations, sv);
  const t158 = t158Estimate
    ? refitFromEstimate(ws, v, n, MODE_T158, t158Estimate, o.v2, o.maxRefitIterations, sv, chosenOnly ? limitT : Infinity)
    : plainThenRefit(ws, v, n, MODE_T158, t158Start!, o.refit, o.v2, o.maxRefitIterations, sv);
  if (t158 === null) return { fp4, t158: T158_NOT_FITTED, t158Allowed: false, chosen: fp4, errorHint: false };
  return chooseMode(ws, v, size, o, fp4, t158, limitT, chosenOnly);
}

/** Both candidates from the joint search (their 22.7 starts among the starts), and the 22.7 selection between them. */
function selectJoint(ws: FitWorkspace, v: Float64Array, size: number, o: FitOptions, sv: number): LeafFit {
  const n = size * size;
  leafSpread(ws, v, n, sv);
  const fp4 = jointCandidate(ws, v, n, MODE_FP4, o.v2, o.maxRefitIterations, sv);
  withLwe(ws, v, size, fp4);
  const t158 = jointCandidate(ws, v, n, MODE_T158, o.v2, o.maxRefitIterations, sv);
  return chooseMode(ws, v, size, o, fp4, t158, (1 + o.delta) * (o.selection === "l2" ? fp4.sse / n : fp4.lwe), false);
}

/**
 * The 22.7 selection: T158 when the outlier guard passes and its error is at most limitT ((1 +
 * delta) times FP4's, whose LWE is measured). chosenOnly: T158's LWE only where it can be chosen.
 */
function chooseMode(ws: FitWorkspace, v: Float64Array, size: number, o: FitOptions, fp4: Candidate, t158: Candidate, limitT: number, chosenOnly: boolean): LeafFit {
  const n = size * size;
  const allowed = t158Allowed(o, t158);
  let chosen: Candidate = fp4;
  if (o.selection === "l2") {
    if (allowed && t158.sse / n <= limitT) chosen = t158;
    if (!chosenOnly || chosen === t158) withLwe(ws, v, size, t158);
  } else if (!chosenOnly || (allowed && !((t158.sse / n) * LWE_FROM_SSE_MARGIN > limitT))) {
    withLwe(ws, v, size, t158);
    if (allowed && t158.lwe <= limitT) chosen = t158;
  }
  return { fp4, t158, t158Allowed: allowed, chosen, errorHint: o.selection === "laplacian" && allowed };
}
