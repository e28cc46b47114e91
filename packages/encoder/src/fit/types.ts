/** The leaf fits' options and results. */
import type { Mode } from "@sgfp4/format";

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
  /**
   * "spec": the 22.7 start (bias = mean) and its refit; "joint": other grid placements and
   * T158 thresholds tried too, the best kept (fit/joint.ts; needs refit)
   */
  search: "spec" | "joint";
}

export const DEFAULT_FIT_OPTIONS: Readonly<Omit<FitOptions, "v2">> = {
  delta: 0.1,
  outlierGuard: 5,
  refit: true,
  maxRefitIterations: 4,
  selection: "laplacian",
  search: "spec",
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
  /**
   * fitLeafCandidates with a finite t158Gap: t158SseLowerBound of the FP4 fit, at most the
   * squared error of any T158 leaf of these weights, whatever its scale and bias
   */
  t158Floor?: number;
}

/** Stored (FP16) parameters of a leaf. */
export interface Parameters {
  scaleBits: number;
  biasBits: number;
}

/** Code sums a least-squares refit needs, gathered while the codes are assigned. */
export interface CodeSums {
  sq: number;
  sqq: number;
  sqv: number;
}

export type Fitted = Candidate & CodeSums;

/** One pass's sums (see codes.ts). */
export interface PassSums extends CodeSums {
  sse: number;
  maxAbs: number;
}
