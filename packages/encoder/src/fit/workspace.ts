/**
 * Scratch memory of the leaf fits. A fit is synchronous and keeps nothing between calls except
 * the buckets, which describe the leaf whose scale was searched last (both modes' refits of that
 * leaf read them). One workspace per thread of work: the fits of one macroblock, one job or one
 * test share it; two fits never run on one workspace at the same time.
 */
import { fitKernels } from "./kernels.js";
import { T158BoundScratch } from "./t158-bound.js";
import type { PassSums } from "./types.js";
import type { NodeFit } from "./leaf.js";

/** Largest leaf (elements): a 64x64 macroblock. */
export const MAX_LEAF = 4096;
/** Bytes of each chunk FitWorkspace.codesCopy hands out views of. */
const CODES_CHUNK = 65536;
/** Most buckets of the bucketed scale search. */
export const MAX_BUCKETS = 256;

/**
 * A leaf's values sorted into buckets by value (see scale-search.ts): members of bucket b are
 * w[start[b] .. start[b+1]), with their sum, sum of squares, min and max.
 */
export class Buckets {
  readonly bucketOf = new Uint16Array(MAX_LEAF);
  readonly count = new Int32Array(MAX_BUCKETS + 1);
  readonly start = new Int32Array(MAX_BUCKETS + 1);
  readonly w = new Float64Array(MAX_LEAF);
  readonly sumW = new Float64Array(MAX_BUCKETS);
  readonly sumWW = new Float64Array(MAX_BUCKETS);
  readonly minW = new Float64Array(MAX_BUCKETS);
  readonly maxW = new Float64Array(MAX_BUCKETS);
  /** non-empty buckets of the leaf they were built for (0: none built for the current leaf) */
  used = 0;
  /** that leaf's largest |w| */
  absMax = 0;
}

/** A refit round's sums estimated from the buckets; sse and sqv are within sseSlack / sqvSlack of the exact pass. */
export interface RoundEstimate {
  sse: number;
  sseSlack: number;
  sq: number;
  sqq: number;
  sqv: number;
  sqvSlack: number;
}

export class FitWorkspace {
  /**
   * a node's values copied out of its macroblock (MacroblockFitter): the kernels' buffer where
   * they run (shared by this thread's workspaces: a fit reads it only during its own call)
   */
  readonly nodeValues = fitKernels()?.values ?? new Float64Array(MAX_LEAF);
  /** w - w_hat of the candidate being measured, for the Laplacian-weighted error */
  readonly errors = new Float64Array(MAX_LEAF);
  /** w - Bias of the leaf being searched */
  readonly centred = new Float64Array(MAX_LEAF);
  /** the centred values with the large ones first (small-leaf search) */
  readonly largeFirst = new Float64Array(MAX_LEAF);
  /** FP16 bits of the 16 scale candidates */
  readonly candidateBits = new Int32Array(16);
  /** per candidate: its estimated error and that estimate's rounding slack */
  readonly estimate = new Float64Array(16);
  readonly slackOf = new Float64Array(16);
  /** candidates an estimate could not rule out */
  readonly survivors = new Uint8Array(16);
  readonly buckets = new Buckets();
  /**
   * Codes of refit rounds (and of a plain fit that only starts a refit): a leaf allocates one
   * codes array per mode, for the result.
   */
  readonly roundCodesA = new Int8Array(MAX_LEAF);
  readonly roundCodesB = new Int8Array(MAX_LEAF);
  /** the last pass's sums (read at once, before the next pass) */
  readonly passSums: PassSums = { sse: 0, maxAbs: 0, sq: 0, sqq: 0, sqv: 0 };
  /** the last round estimate (callers copy what they keep) */
  readonly roundEstimate: RoundEstimate = { sse: 0, sseSlack: 0, sq: 0, sqq: 0, sqv: 0, sqvSlack: 0 };
  /** T158's three decoded values, indexed by code + 1 */
  readonly t158Decoded = new Float64Array(3);
  /** FP4's sixteen decoded values, indexed by code + 8 */
  readonly fp4Decoded = new Float64Array(16);
  /** polishStored's measured (scale, bias) pairs: its start and at most 8 per round */
  readonly polishSeen = new Int32Array(32);
  /** polishStored's pairs of a round (scale bits, bias bits), their errors, and four pairs' decoded values */
  readonly polishScale = new Int32Array(8);
  readonly polishBias = new Int32Array(8);
  readonly polishError = new Float64Array(8);
  readonly polishDecoded = new Float64Array(64);
  /**
   * Sum of |w - Bias| from the last FP4 plain search: T158's plain bias is the same FP16 value,
   * so this is the sum its plain fit would compute (same terms, same order).
   */
  centredAbsSum = 0;
  /** the leaf's spread (joint.ts leafSpread), read by both modes' joint searches */
  readonly spread = { min: 0, max: 0, absDev: 0, absMax: 0, svv: 0 };
  /** the joint search's starts (joint.ts) */
  readonly jointScale = new Float64Array(16);
  readonly jointBias = new Float64Array(16);
  jointStarts = 0;
  /** per start: sum q, sum q^2, sum q w of its nearest codes on the ranked weights */
  readonly jointSums = new Float64Array(48);
  /** scratch of t158SseLowerBound */
  readonly t158Bound = new T158BoundScratch();
  /** the stored least-squares solution of the last start ranked */
  lsScaleBits = 0;
  lsBiasBits = 0;

  /** codesCopy's current chunk and the bytes of it handed out */
  private codesChunk = new Int8Array(0);
  private codesUsed = 0;

  /**
   * A new array holding src[0 .. n): a view into a chunk that is only ever appended to (a full
   * one is left to the views that hold it and a new one started), so no view is overwritten. One
   * allocation per chunk instead of an ArrayBuffer per fit (most of a leaf's bookkeeping cost).
   */
  codesCopy(src: Int8Array, n: number): Int8Array {
    if (this.codesUsed + n > this.codesChunk.length) {
      this.codesChunk = new Int8Array(Math.max(CODES_CHUNK, n));
      this.codesUsed = 0;
    }
    const out = this.codesChunk.subarray(this.codesUsed, this.codesUsed + n);
    out.set(src.length === n ? src : this.prefixOf(src, n));
    this.codesUsed += n;
    return out;
  }

  /** views src[0 .. 2^k) of the last two arrays codesCopy copied from (the kernel's two round buffers) */
  private prefixSrc: [Int8Array | undefined, Int8Array | undefined] = [undefined, undefined];
  private prefixViews: [Int8Array[], Int8Array[]] = [[], []];

  /** src[0 .. n) as a view made once per array and power of two n (a new view per fit was garbage). */
  private prefixOf(src: Int8Array, n: number): Int8Array {
    if ((n & (n - 1)) !== 0) return src.subarray(0, n);
    let slot = this.prefixSrc[0] === src ? 0 : this.prefixSrc[1] === src ? 1 : -1;
    if (slot < 0) {
      // a new array: the older one's views dropped
      this.prefixSrc[1] = this.prefixSrc[0];
      this.prefixViews[1] = this.prefixViews[0];
      this.prefixSrc[0] = src;
      this.prefixViews[0] = [];
      slot = 0;
    }
    const views = this.prefixViews[slot]!;
    const k = 31 - Math.clz32(n);
    return (views[k] ??= src.subarray(0, n));
  }

  /** src[0 .. n): for a power of two n, a view made once per array and size (see prefixOf) */
  roundCodesPrefix(src: Int8Array, n: number): Int8Array {
    return n === src.length ? src : this.prefixOf(src, n);
  }

  /** leaf.ts fitLeafCandidatesAfterKernel's objects by node id (reused block after block) */
  readonly nodeFits: (NodeFit | undefined)[] = [];

  isRoundScratch(codes: Int8Array): boolean {
    return codes === this.roundCodesA || codes === this.roundCodesB;
  }
}
