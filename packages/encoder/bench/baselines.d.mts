// Types of bench/baselines.mjs (plain JavaScript so that the benchmark runs without a build).
export interface Baseline {
  name: string;
  /** weights per block along a row */
  block: number;
  /** storage bits of one block (scales, mins and codes) */
  blockBits: number;
  /** fits one block (at most `block` values) and writes its decoded values into `out` */
  encodeBlock(x: Float32Array, out: Float32Array): void;
}
export const fp16: (x: number) => number;
export function nearestInt(x: number): number;
export function makeQkx2(x: ArrayLike<number>, weights: ArrayLike<number>, nmax: number, rmin?: number, rdelta?: number, nstep?: number): { scale: number; min: number };
export const Q4_0: Baseline;
export const Q4_1: Baseline;
export const Q4_K: Baseline;
export function groupMinMax(bits: number, group: number): Baseline;
export function groupSearched(bits: number, group: number): Baseline;
export const BASELINES: Baseline[];
/** row-major values, blocked in order (rows of a multiple of the block length are blocked along rows) */
export function quantize(baseline: Baseline, data: Float32Array): { decoded: Float32Array; bits: number };
