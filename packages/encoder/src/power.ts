import { POWER_VALUES, fitKernels, type FitKernels } from "./fit/kernels.js";

/**
 * The tensor's power (mean w^2) and the rd policy's robust power, computed over the tensor's
 * values in one or several consecutive pieces (bands of rows read from a file) with the same
 * result to the bit: the definition follows the element's index in the tensor, not the piece.
 */

/**
 * Sum of w^2 as eight partial sums (element i of the tensor in partial i mod 8, each in index
 * order) added as ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)): every term is exact (a
 * float32 squared fits a double), and eight independent additions run several times faster than
 * one chain, which waits on each addition. Values are added in index order, in pieces of any
 * length: a piece starting at index s continues partial (s + j) mod 8 with its element j.
 * cap2: each square at most cap2 (robustPower); Infinity: every square as it is.
 */
export class PowerSum {
  private readonly p = new Float64Array(8);
  private count = 0;

  constructor(private readonly cap2 = Infinity) {}

  /**
   * Adds the values' squares; with exponents, also counts them there (ExponentCounts.add, in the same
   * pass where the kernel runs).
   */
  add(data: Float32Array, exponents?: ExponentCounts): this {
    const n = data.length;
    const cap2 = this.cap2;
    const p = this.p;
    const s = this.count & 7;
    const bulk = n - (n & 7);
    // the fast loops add the compare's terms (a square below cap2, else cap2) for every value but
    // NaN, for which they add NaN and the compare cap2: a NaN result is redone with the compare
    const before = p.slice();
    const kern = bulk > 0 ? fitKernels() : null;
    if (kern) {
      addSquaresInKernel(kern, data, bulk, p, s, cap2, exponents);
      exponents?.add(data.subarray(bulk));
    } else {
      if (cap2 === Infinity) addSquares(data, bulk, p, s);
      else addCappedSquares(data, bulk, p, s, cap2);
      exponents?.add(data);
    }
    if (Number.isNaN(p[0]! + p[1]! + p[2]! + p[3]! + p[4]! + p[5]! + p[6]! + p[7]!)) {
      p.set(before);
      for (let i = 0; i < bulk; i++) {
        const w = data[i]!;
        p[(s + i) & 7] = p[(s + i) & 7]! + (w * w < cap2 ? w * w : cap2);
      }
    }
    // the last n mod 8 elements, each in its partial (local partial j is the tensor's (s + j) mod 8)
    for (let i = bulk; i < n; i++) {
      const w = data[i]!;
      p[(s + i) & 7] = p[(s + i) & 7]! + (w * w < cap2 ? w * w : cap2);
    }
    this.count += n;
    return this;
  }

  /** The pairwise total of the eight partials: finite exactly when every value added was. */
  sum(): number {
    const p = this.p;
    return ((p[0]! + p[1]!) + (p[2]! + p[3]!)) + ((p[4]! + p[5]!) + (p[6]! + p[7]!));
  }

  /** mean(w^2) of the values added. */
  mean(): number {
    return this.sum() / this.count;
  }
}

/**
 * PowerSum.add's groups of eight, data[0 .. end) (end a multiple of 8): local partial j is the
 * tensor's partial (s + j) mod 8. Two functions (with and without a cap), each with its own type
 * feedback: one function for both kept being deoptimised and ran at 16 bytes of garbage per weight.
 */
function addSquares(data: Float32Array, end: number, p: Float64Array, s: number): void {
  let p0 = p[s]!, p1 = p[(s + 1) & 7]!, p2 = p[(s + 2) & 7]!, p3 = p[(s + 3) & 7]!;
  let p4 = p[(s + 4) & 7]!, p5 = p[(s + 5) & 7]!, p6 = p[(s + 6) & 7]!, p7 = p[(s + 7) & 7]!;
  for (let i = 0; i < end; i += 8) {
    const a0 = data[i]!, a1 = data[i + 1]!, a2 = data[i + 2]!, a3 = data[i + 3]!;
    const a4 = data[i + 4]!, a5 = data[i + 5]!, a6 = data[i + 6]!, a7 = data[i + 7]!;
    p0 += a0 * a0;
    p1 += a1 * a1;
    p2 += a2 * a2;
    p3 += a3 * a3;
    p4 += a4 * a4;
    p5 += a5 * a5;
    p6 += a6 * a6;
    p7 += a7 * a7;
  }
  storePartials(p, s, p0, p1, p2, p3, p4, p5, p6, p7);
}

/** addSquares with each square at most cap2 (Math.min: a NaN square gives NaN, where the compare gives cap2; see add). */
function addCappedSquares(data: Float32Array, end: number, p: Float64Array, s: number, cap2: number): void {
  let p0 = p[s]!, p1 = p[(s + 1) & 7]!, p2 = p[(s + 2) & 7]!, p3 = p[(s + 3) & 7]!;
  let p4 = p[(s + 4) & 7]!, p5 = p[(s + 5) & 7]!, p6 = p[(s + 6) & 7]!, p7 = p[(s + 7) & 7]!;
  for (let i = 0; i < end; i += 8) {
    const a0 = data[i]! * data[i]!, a1 = data[i + 1]! * data[i + 1]!, a2 = data[i + 2]! * data[i + 2]!, a3 = data[i + 3]! * data[i + 3]!;
    const a4 = data[i + 4]! * data[i + 4]!, a5 = data[i + 5]! * data[i + 5]!, a6 = data[i + 6]! * data[i + 6]!, a7 = data[i + 7]! * data[i + 7]!;
    p0 += Math.min(a0, cap2);
    p1 += Math.min(a1, cap2);
    p2 += Math.min(a2, cap2);
    p3 += Math.min(a3, cap2);
    p4 += Math.min(a4, cap2);
    p5 += Math.min(a5, cap2);
    p6 += Math.min(a6, cap2);
    p7 += Math.min(a7, cap2);
  }
  storePartials(p, s, p0, p1, p2, p3, p4, p5, p6, p7);
}

/**
 * addSquares (cap2 Infinity) or addCappedSquares in the kernel (native/tensor_passes.h power_add, two partials per
 * vector, each in index order, the same operations): pieces of POWER_VALUES copied into its memory.
 */
function addSquaresInKernel(kern: FitKernels, data: Float32Array, end: number, p: Float64Array, s: number, cap2: number, exponents: ExponentCounts | undefined): void {
  const q = kern.powerPartials;
  for (let j = 0; j < 8; j++) q[j] = p[(s + j) & 7]!;
  const capped = cap2 === Infinity ? 0 : 1;
  if (exponents) kern.exponentHist.fill(0);
  for (let at = 0; at < end; at += POWER_VALUES) {
    const len = Math.min(POWER_VALUES, end - at);
    kern.powerValues.set(data.subarray(at, at + len));
    kern.powerAdd(len, cap2, capped, exponents ? 1 : 0);
  }
  for (let j = 0; j < 8; j++) p[(s + j) & 7] = q[j]!;
  exponents?.addCounts(kern.exponentHist, end);
}

function storePartials(p: Float64Array, s: number, p0: number, p1: number, p2: number, p3: number, p4: number, p5: number, p6: number, p7: number): void {
  p[s] = p0;
  p[(s + 1) & 7] = p1;
  p[(s + 2) & 7] = p2;
  p[(s + 3) & 7] = p3;
  p[(s + 4) & 7] = p4;
  p[(s + 5) & 7] = p5;
  p[(s + 6) & 7] = p6;
  p[(s + 7) & 7] = p7;
}

/**
 * mean(w^2) of the tensor, defined by PowerSum: eight partial sums by index mod 8, added pairwise
 * (this pass runs before any worker starts: a third of a 16-thread encode with a single chain).
 */
export function tensorPower(data: Float32Array, cap2 = Infinity): number {
  return new PowerSum(cap2).add(data).mean();
}

/** At most this share of the weights lies above robustPower's cap. */
const ROBUST_TOP_SHARE = 1 / 1024;

/** How many |w| have each float32 exponent field (exact integer counts: any order of pieces). */
export class ExponentCounts {
  private readonly perExponent = new Float64Array(256);
  /** four counts per exponent (element i in count i mod 4: an increment rarely waits on the one before), added up by cap2 */
  private readonly partial = new Float64Array(4 * 256);
  private count = 0;

  add(data: Float32Array): this {
    const words = new Uint32Array(data.buffer, data.byteOffset, data.length);
    const partial = this.partial;
    const n = words.length;
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      partial[(words[i]! >>> 23) & 0xff]!++;
      partial[256 + ((words[i + 1]! >>> 23) & 0xff)]!++;
      partial[512 + ((words[i + 2]! >>> 23) & 0xff)]!++;
      partial[768 + ((words[i + 3]! >>> 23) & 0xff)]!++;
    }
    for (; i < n; i++) partial[(words[i]! >>> 23) & 0xff]!++;
    this.count += data.length;
    return this;
  }

  /** Counts made elsewhere (count: per exponent field) of `values` values. */
  addCounts(count: Int32Array, values: number): this {
    const partial = this.partial;
    for (let e = 0; e < 256; e++) partial[e] = partial[e]! + count[e]!;
    this.count += values;
    return this;
  }

  /**
   * robustPower's cap on a square: 4^k, for 2^k the smallest power of two that at most n / 1024
   * of the |w| reach (Infinity when that is beyond the float32 range).
   */
  cap2(): number {
    const perExponent = this.perExponent;
    const partial = this.partial;
    for (let e = 0; e < 256; e++) perExponent[e] = partial[e]! + partial[256 + e]! + partial[512 + e]! + partial[768 + e]!;
    let above = 0;
    let e = 255;
    while (e > 0 && above + perExponent[e]! <= this.count * ROBUST_TOP_SHARE) above += perExponent[e--]!;
    // every |w| with exponent field <= e is below 2^(e + 1 - 127): that float32, exactly
    const cap = e >= 254 ? Infinity : new Float32Array(Uint32Array.of((e + 1) << 23).buffer)[0]!;
    return cap * cap;
  }
}

/**
 * The rd policy's unit of distortion (one lambda then means the same for every tensor): the
 * tensor power with each square capped at ExponentCounts.cap2 (binary exponents counted from the
 * float32 bits: exact). A few outliers (a single 1e6 among unit weights) would otherwise make
 * the rest of the tensor's error look free, and every block would take the fewest bits.
 */
export function robustPower(data: Float32Array): number {
  return tensorPower(data, new ExponentCounts().add(data).cap2());
}
