/**
 * The fits' WebAssembly SIMD kernels (native/fit.c): the joint search's start ranking and the
 * polish's pair errors, two candidates per vector instruction, each lane over the weights in
 * index order with the JavaScript loops' operations, so every sum is the same number (the
 * tests compare the two paths). One instance per thread (module state); where the engine cannot
 * compile it (no WebAssembly SIMD), fitKernels() is null and the JavaScript loops run.
 */
import { halfToFloat } from "@sgfp4/format";
import { nearestHalfBits } from "../half.js";
import { FIT_WASM_BASE64 } from "./wasm-bytes.generated.js";

export interface FitKernels {
  /** the leaf's values (up to 4096): the kernels read the weights here */
  readonly values: Float64Array;
  /** starts: scale and bias (up to 16); per start sum q, sum q^2, sum q w at 3k */
  readonly startScale: Float64Array;
  readonly startBias: Float64Array;
  readonly startSums: Float64Array;
  /** polish pairs: scale and bias values (up to 8), their errors */
  readonly pairScale: Float64Array;
  readonly pairBias: Float64Array;
  readonly pairError: Float64Array;
  /** joint.ts's FP4 start ranking over values[0], values[stride], ... below len, for k starts */
  rankFp4(len: number, stride: number, k: number): void;
  /** the same for T158 starts */
  rankT158(len: number, stride: number, k: number): void;
  /** polish.ts's FP4 pair errors for count pairs over values[0 .. n) (a pair reaching stopAt may stop there) */
  polishFp4(n: number, count: number, stopAt: number): void;
  /** one pass's codes (passFp4 / passT158) */
  readonly passCodes: Int8Array;
  /** one pass's sse, max |e|, sum q, sum q^2, sum q w */
  readonly passSums: Float64Array;
  /**
   * codes.ts's FP4 / T158 pass over values[0 .. n) (n even) for scale S and bias B, stopping at a
   * chunk boundary once the error reaches stopAt; returns the weights passed (n, or fewer if stopped)
   */
  passFp4(n: number, S: number, B: number, stopAt: number): number;
  passT158(n: number, S: number, B: number, stopAt: number): number;
  /** a macroblock (64 x 64) whose nodes loadNode reads */
  readonly blockValues: Float64Array;
  /** loadNode's sum, sum of squares, min, max, sum |w - mean|, max |w - mean| */
  readonly nodeStats: Float64Array;
  /** blockValues' size x size node at (y, x) into values; stats (1): nodeStats (index-order sums) */
  loadNode(y: number, x: number, size: number, stats: number): void;
  /** the codes t158Bound reads */
  readonly boundCodes: Int8Array;
  /** t158-bound.ts's t158SseLowerBound of boundCodes[0 .. n) for scale S and bias B values */
  t158Bound(n: number, S: number, B: number, sseF: number): number;
  /**
   * joint.ts jointCandidate from its ranking on (the starts in startScale / startBias) and its
   * refit, for n even: results in fitResult, codes in roundCodes[fitResult[7]]
   */
  jointFit(n: number, stride: number, k: number, fp4: number, v2: number, maxIterations: number, sv: number, rn: number, rsv: number, rsvv: number): void;
  /** scale bits, bias bits, sse, max |e|, sum q, sum q^2, sum q w, codes buffer, 1 if a start was ranked (else the flat leaf); fitNode: the T158 floor */
  readonly fitResult: Float64Array;
  readonly roundCodes: readonly [Int8Array, Int8Array];
  /** polish.ts polishStored from (scale bits, bias bits, sse) over values[0 .. n), n even: fitResult (its [8]: 1 if it moved) */
  polishStored(n: number, fp4: number, v2: number, scaleBits: number, biasBits: number, sse: number): void;
  /** leaf.ts withLwe's number: the LWE of the codes in boundCodes with scale S and bias B values over values (size x size) */
  leafLwe(size: number, S: number, B: number): number;
  /**
   * A node's FP4 fit as fitLeafCandidates makes it with a finite t158Gap (the joint search with
   * refit): loadNode(y, x, size, 1) but nodeStats[4] (NaN: see nodeAbsDev), jointCandidate's FP4 starts and sample, jointFit, and the
   * t158SseLowerBound of the result in fitResult[9]. 0: a flat leaf or no start ranked (the node is
   * loaded; the caller goes on from there), 1: fitResult holds the FP4 candidate.
   */
  fitNode(y: number, x: number, size: number, v2: number, maxIterations: number): number;
  /** power.ts PowerSum's eight partials (local: element j of the piece in partial j mod 8) */
  readonly powerPartials: Float64Array;
  /** a piece of the tensor (up to 16384 values) for powerAdd */
  readonly powerValues: Float32Array;
  /**
   * addSquares (capped 0) / addCappedSquares (capped 1, Math.min with cap2) of powerValues[0 .. len),
   * len a multiple of 8, into powerPartials; exponents 1: each value's float32 exponent field also
   * counted into exponentHist
   */
  powerAdd(len: number, cap2: number, capped: number, exponents: number): void;
  readonly exponentHist: Int32Array;
  /** blocks.ts encodeBlockRows' tile row (up to TILE_WIDTH columns): its real rows as read (row r at r * cols) */
  readonly tileRows: Float32Array;
  /** the tile row's decode, row-major (row r at r * width, width the columns padded to a multiple of 64), as float32 bits */
  readonly tileDecodedBits: Int32Array;
  readonly tileDecoded: Float32Array;
  /** block bx of the tile row in tileRows into blockValues (tileRowToBlocks' block; clip 1: clipped as there) */
  loadBlock(bx: number, cols: number, rows: number, clip: number): void;
  /** the node in values (n weights, its sum in nodeStats[0]): loadNode's sum |w - mean|, into nodeStats[4] too (fitNode leaves it NaN) */
  nodeAbsDev(n: number): number;
  /** leafLwe, and the leaf's decode (float32) written to tileDecoded at `at`, rows `stride` apart */
  leafLweAt(size: number, S: number, B: number, at: number, stride: number): number;
  /** the sums over the tile row's real weights in index order into tileSumsOut (its [2]: the largest |w - decoded| so far, in and out) */
  tileSums(rows: number, cols: number, width: number): void;
  /** sum w^2, sum (w - decoded)^2, max |w - decoded|, weights clipped */
  readonly tileSumsOut: Float64Array;
}

interface Exports {
  memory: WebAssembly.Memory;
  rank_fp4(len: number, stride: number, k: number): void;
  rank_t158(len: number, stride: number, k: number): void;
  polish_fp4(n: number, count: number, stopAt: number): void;
  pass_fp4(n: number, S: number, B: number, stopAt: number): number;
  pass_t158(n: number, S: number, B: number, stopAt: number): number;
  pass_codes: WebAssembly.Global;
  load_node(y: number, x: number, size: number, stats: number): void;
  block_values: WebAssembly.Global;
  t158_bound(n: number, S: number, B: number, sseF: number): number;
  bound_codes: WebAssembly.Global;
  joint_fit(n: number, stride: number, k: number, fp4: number, v2: number, maxIterations: number, sv: number, rn: number, rsv: number, rsvv: number): void;
  fit_result: WebAssembly.Global;
  round_codes: WebAssembly.Global;
  leaf_lwe(size: number, S: number, B: number): number;
  fit_node(y: number, x: number, size: number, v2: number, maxIterations: number): number;
  power_add(len: number, cap2: number, capped: number, exponents: number): void;
  exponent_hist: WebAssembly.Global;
  load_block(bx: number, cols: number, rows: number, clip: number): void;
  node_abs_dev(n: number): number;
  leaf_lwe_at(size: number, S: number, B: number, at: number, stride: number): number;
  tile_sums(rows: number, cols: number, width: number): void;
  tile_rows: WebAssembly.Global;
  tile_decoded: WebAssembly.Global;
  tile_sums_out: WebAssembly.Global;
  power_values: WebAssembly.Global;
  power_partials: WebAssembly.Global;
  polish_stored(n: number, fp4: number, v2: number, scaleBits: number, biasBits: number, sse: number): void;
  node_stats: WebAssembly.Global;
  pass_sums: WebAssembly.Global;
  fit_values: WebAssembly.Global;
  start_scale: WebAssembly.Global;
  start_bias: WebAssembly.Global;
  start_sums: WebAssembly.Global;
  pair_scale: WebAssembly.Global;
  pair_bias: WebAssembly.Global;
  pair_error: WebAssembly.Global;
}

/** Columns of the widest tensor whose tile rows the kernel holds (native/tensor_passes.h tile_rows, tile_decoded). */
export const TILE_WIDTH = 4096;

/** Values of native/tensor_passes.h power_values. */
export const POWER_VALUES = 16384;

function base64ToBytes(b64: string): Uint8Array<ArrayBuffer> {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function instantiate(): FitKernels | null {
  try {
    if (typeof WebAssembly !== "object") return null;
    const bytes = base64ToBytes(FIT_WASM_BASE64);
    if (!WebAssembly.validate(bytes)) return null; // no SIMD: the JavaScript loops
    // the FP16 roundings' rare cases (outside the normal range) are src/half.ts's own
    const env = { nearest_half_bits: (x: number, quantum: number) => nearestHalfBits(x, quantum === 16 ? 16 : 1), half_to_float: (bits: number) => halfToFloat(bits) };
    const e = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env }).exports as unknown as Exports;
    const buffer = e.memory.buffer; // the module never grows its memory: the views stay valid
    const view = (g: WebAssembly.Global, length: number): Float64Array => new Float64Array(buffer, g.value as number, length);
    return {
      values: view(e.fit_values, 4096),
      startScale: view(e.start_scale, 17),
      startBias: view(e.start_bias, 17),
      startSums: view(e.start_sums, 51),
      pairScale: view(e.pair_scale, 9),
      pairBias: view(e.pair_bias, 9),
      pairError: view(e.pair_error, 9),
      rankFp4: e.rank_fp4,
      rankT158: e.rank_t158,
      polishFp4: e.polish_fp4,
      passCodes: new Int8Array(buffer, e.pass_codes.value as number, 4096),
      passSums: view(e.pass_sums, 5),
      passFp4: e.pass_fp4,
      passT158: e.pass_t158,
      blockValues: view(e.block_values, 4096),
      nodeStats: view(e.node_stats, 6),
      loadNode: e.load_node,
      boundCodes: new Int8Array(buffer, e.bound_codes.value as number, 4096),
      t158Bound: e.t158_bound,
      jointFit: e.joint_fit,
      polishStored: e.polish_stored,
      leafLwe: e.leaf_lwe,
      fitNode: e.fit_node,
      powerPartials: view(e.power_partials, 8),
      powerValues: new Float32Array(buffer, e.power_values.value as number, POWER_VALUES),
      powerAdd: e.power_add,
      exponentHist: new Int32Array(buffer, e.exponent_hist.value as number, 256),
      tileRows: new Float32Array(buffer, e.tile_rows.value as number, 64 * TILE_WIDTH),
      tileDecodedBits: new Int32Array(buffer, e.tile_decoded.value as number, 64 * TILE_WIDTH),
      tileDecoded: new Float32Array(buffer, e.tile_decoded.value as number, 64 * TILE_WIDTH),
      loadBlock: e.load_block,
      nodeAbsDev: e.node_abs_dev,
      leafLweAt: e.leaf_lwe_at,
      tileSums: e.tile_sums,
      tileSumsOut: view(e.tile_sums_out, 4),
      fitResult: view(e.fit_result, 10),
      roundCodes: [new Int8Array(buffer, e.round_codes.value as number, 4096), new Int8Array(buffer, (e.round_codes.value as number) + 4096, 4096)],
    };
  } catch {
    return null;
  }
}

let kernels: FitKernels | null | undefined;
let enabled = true;

/** This thread's kernels, or null (no WebAssembly SIMD here, or switched off by useFitKernels). */
export function fitKernels(): FitKernels | null {
  if (!enabled) return null;
  if (kernels === undefined) kernels = instantiate();
  return kernels;
}

/** Tests and benchmarks: false runs the JavaScript loops (same results); returns the previous setting. */
export function useFitKernels(on: boolean): boolean {
  const was = enabled;
  enabled = on;
  return was;
}

/** kern.values holding v[0 .. n) (copied unless v is that array). */
export function valuesIn(kern: FitKernels, v: Float64Array, n: number): void {
  if (v !== kern.values) kern.values.set(n === v.length ? v : v.subarray(0, n));
}
