/**
 * Code assignment for stored parameters, with the exact decode error and the sums a
 * least-squares refit needs. The error is measured on the exact decode fround(S*q + B): S*q is
 * exact and S*q + B fits a double exactly, so fround gives float32's single rounding.
 *
 * Math.round(y) compiles to a branch on the fraction, which data mispredicts about half the
 * time. `floor(y) + (y - floor(y) >= 0.5)` is the same number for every double (y - floor(y) is
 * exact; |y| >= 2^52 is already an integer), except that it gives +0 where Math.round gives -0
 * (y in [-0.5, -0]): codes go to an Int8Array and every sum, product and decode treats the two
 * zeros alike, so no output changes.
 */
import { MODE_FP4, type Mode } from "@sgfp4/format";
import { halfBitsValue } from "../half.js";
import { fitKernels, valuesIn } from "./kernels.js";
import type { Fitted, PassSums } from "./types.js";
import type { FitWorkspace } from "./workspace.js";

/** Elements between early-exit checks: the sums run in the same order, only the checks are fewer. */
const CHUNK = 64;

export function fp4Code(w: number, B: number, inv: number): number {
  const y = (w - B) * inv;
  const floorY = Math.floor(y);
  const q = floorY + +(y - floorY >= 0.5); // Math.round(y), branch-free
  return q > 7 ? 7 : q < -8 ? -8 : q;
}

export function t158Code(w: number, B: number, tau: number): number {
  const c = w - B;
  return c > tau ? 1 : c < -tau ? -1 : 0;
}

/** Nearest code for each weight given stored S and B: FP4 round + clip, T158 threshold S/2. */
export function assignCodes(v: Float64Array, n: number, mode: Mode, S: number, B: number, out: Int8Array): void {
  if (!(S > 0)) {
    out.fill(0, 0, n);
    return;
  }
  if (mode === MODE_FP4) {
    const inv = 1 / S;
    for (let i = 0; i < n; i++) {
      let q = Math.round((v[i]! - B) * inv);
      if (q > 7) q = 7;
      else if (q < -8) q = -8;
      out[i] = q;
    }
  } else {
    const tau = S * 0.5;
    for (let i = 0; i < n; i++) {
      const c = v[i]! - B;
      out[i] = c > tau ? 1 : c < -tau ? -1 : 0;
    }
  }
}

/** Sum of v[0..n) in index order. */
export function sum(v: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += v[i]!;
  return s;
}

/** Exact decode error of codes with stored parameters, into ws.errors (for the LWE). */
export function measureErrors(ws: FitWorkspace, v: Float64Array, n: number, codes: Int8Array, scaleBits: number, biasBits: number): void {
  const S = halfBitsValue(scaleBits);
  const B = halfBitsValue(biasBits);
  const errors = ws.errors;
  for (let i = 0; i < n; i++) errors[i] = v[i]! - Math.fround(S * codes[i]! + B);
}

/** One pass into `out`, as a candidate (out becomes its codes). */
export function assignAndMeasure(ws: FitWorkspace, v: Float64Array, n: number, mode: Mode, scaleBits: number, biasBits: number, out: Int8Array, stopAt = Infinity): Fitted {
  const r = pass(ws, v, n, mode, scaleBits, biasBits, out, stopAt);
  return { mode, scaleBits, biasBits, codes: out, sse: r.sse, maxAbsError: r.maxAbs, lwe: Number.NaN, sq: r.sq, sqq: r.sqq, sqv: r.sqv };
}

/**
 * One pass: nearest codes for the stored S and Bias into `out`, the exact decode error and the
 * refit sums, in ws.passSums (read them before the next pass). stopAt: give up (returning a
 * partial sse >= stopAt) once the error cannot drop below it.
 */
export function pass(ws: FitWorkspace, v: Float64Array, n: number, mode: Mode, scaleBits: number, biasBits: number, out: Int8Array, stopAt: number): PassSums {
  const S = halfBitsValue(scaleBits);
  const B = halfBitsValue(biasBits);
  // one loop per mode, without a per-element mode branch
  if (!(S > 0)) return assignZero(ws.passSums, v, n, B, out);
  const kern = (n & 1) === 0 ? fitKernels() : null;
  if (kern) {
    // two weights per vector, the error and sum q w added in index order: the loops' numbers
    valuesIn(kern, v, n);
    const done = mode === MODE_FP4 ? kern.passFp4(n, S, B, stopAt) : kern.passT158(n, S, B, stopAt);
    out.set(done === n ? kern.passCodes.subarray(0, n) : kern.passCodes.subarray(0, done));
    const k = kern.passSums;
    return passResult(ws.passSums, k[0]!, k[1]!, k[2]!, k[3]!, k[4]!);
  }
  return mode === MODE_FP4 ? assignFp4(ws, v, n, S, B, out, stopAt) : assignT158(ws, v, n, S, B, out, stopAt);
}

function passResult(r: PassSums, sse: number, maxAbs: number, sq: number, sqq: number, sqv: number): PassSums {
  r.sse = sse;
  r.maxAbs = maxAbs;
  r.sq = sq;
  r.sqq = sqq;
  r.sqv = sqv;
  return r;
}

/** A zero (or unusable) scale: every code 0. Same sums, in the same order, as the general pass. */
function assignZero(r: PassSums, v: Float64Array, n: number, B: number, out: Int8Array): PassSums {
  let sse = 0;
  let maxAbs = 0;
  const w0 = Math.fround(B);
  for (let i = 0; i < n; i++) {
    out[i] = 0;
    const e = v[i]! - w0;
    sse += e * e;
    const a = Math.abs(e);
    if (a > maxAbs) maxAbs = a;
  }
  return passResult(r, sse, maxAbs, 0, 0, 0);
}

function assignFp4(ws: FitWorkspace, v: Float64Array, n: number, S: number, B: number, out: Int8Array, stopAt: number): PassSums {
  let sse = 0;
  let maxAbs = 0;
  let sq = 0;
  let sqq = 0;
  let sqv = 0;
  const inv = 1 / S;
  // the sixteen decoded values, each rounded to float32 once: the same numbers as
  // Math.fround(S * q + B) per weight, which V8 compiled into a loop 2.4x slower (8x8 leaves,
  // bench/pass-kernels)
  const decoded = ws.fp4Decoded;
  for (let k = 0; k < 16; k++) decoded[k] = Math.fround(S * (k - 8) + B);
  for (let i0 = 0; i0 < n && sse < stopAt; i0 += CHUNK) {
    const end = i0 + CHUNK < n ? i0 + CHUNK : n;
    for (let i = i0; i < end; i++) {
      const w = v[i]!;
      const y = (w - B) * inv;
      const floorY = Math.floor(y);
      let q = floorY + +(y - floorY >= 0.5); // Math.round(y), branch-free
      if (q > 7) q = 7;
      else if (q < -8) q = -8;
      out[i] = q;
      const e = w - decoded[q + 8]!;
      sse += e * e;
      const a = Math.abs(e); // branch-free (the sign of e is unpredictable)
      if (a > maxAbs) maxAbs = a;
      sq += q;
      sqq += q * q;
      sqv += q * w;
    }
  }
  return passResult(ws.passSums, sse, maxAbs, sq, sqq, sqv);
}

function assignT158(ws: FitWorkspace, v: Float64Array, n: number, S: number, B: number, out: Int8Array, stopAt: number): PassSums {
  let sse = 0;
  let maxAbs = 0;
  let sq = 0;
  let sqq = 0;
  let sqv = 0;
  const tau = S * 0.5;
  // the three possible decoded values, each rounded to float32 once, indexed by code + 1
  const decoded = ws.t158Decoded;
  decoded[0] = Math.fround(B - S);
  decoded[1] = Math.fround(B);
  decoded[2] = Math.fround(S + B);
  for (let i0 = 0; i0 < n && sse < stopAt; i0 += CHUNK) {
    const end = i0 + CHUNK < n ? i0 + CHUNK : n;
    for (let i = i0; i < end; i++) {
      const w = v[i]!;
      const c = w - B;
      // without branches: the codes are unpredictable, so branches mispredict. q * w is w, -w
      // or a zero for finite w, so the sums are the same numbers as adding w / subtracting w.
      const q = +(c > tau) - +(c < -tau);
      out[i] = q;
      const e = w - decoded[q + 1]!;
      sse += e * e;
      const a = Math.abs(e); // branch-free (the sign of e is unpredictable)
      if (a > maxAbs) maxAbs = a;
      sq += q;
      sqq += q * q;
      sqv += q * w;
    }
  }
  return passResult(ws.passSums, sse, maxAbs, sq, sqq, sqv);
}
