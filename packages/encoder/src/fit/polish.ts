/**
 * The last step of a chosen leaf's fit (policy rd): the stored scale and bias are what the
 * decoder uses, and the least-squares refit only rounds its real-valued solution to them. The
 * rounding is not the best pair of stored values: among the FP16 neighbours of the scale and the
 * 12-bit-mantissa neighbours of the bias (the bias's low 4 bits carry the leaf's flags), the pair
 * with the least exact decode error is kept, codes reassigned for it. Runs on the chosen leaves
 * only, after the tree is decided: the record's bytes do not change, only its error drops.
 */
import { MODE_FP4 } from "@sgfp4/format";
import { halfBitsValue } from "../half.js";
import { assignAndMeasure, pass } from "./codes.js";
import { fitKernels, valuesIn } from "./kernels.js";
import type { FitOptions, Fitted } from "./types.js";
import type { FitWorkspace } from "./workspace.js";

/** The bias's FP16 bits step (v2: its low 4 bits are the flags). */
const V2_BIAS_STEP = 16;
/** Rounds of neighbour moves (each move is kept only if the exact error drops). */
const MAX_ROUNDS = 3;
const EXPONENT_ALL_ONES = 0x7c00;
/** Elements between the batched pass's early-exit checks. */
const CHUNK = 64;

/** The FP16 bits `steps` quanta from `bits` in value order (across zero), or -1 past infinity. */
export function stepHalf(bits: number, steps: number): number {
  const key = (bits & 0x8000 ? -(bits & 0x7fff) : bits) + steps;
  const magnitude = key < 0 ? -key : key;
  if (magnitude >= EXPONENT_ALL_ONES) return -1;
  return key < 0 ? 0x8000 | magnitude : magnitude;
}

/** A chosen leaf's final fit: its stored scale and bias polished (o.v2: the bias's quantum). Never worse than `c`. */
export function finishLeaf(ws: FitWorkspace, v: Float64Array, n: number, c: Fitted, o: FitOptions): Fitted {
  return polishStored(ws, v, n, c, o.v2);
}

/**
 * The candidate with the best stored (scale, bias) among the neighbours of its own: each round
 * measures the eight pairs one FP16 step (scale) and one 12-bit-mantissa step (bias) away,
 * codes reassigned, and moves to any that lowers the exact squared error; stops after a round
 * without a move or MAX_ROUNDS. (Ranking the neighbours by the error of the current codes in
 * closed form, and measuring only the best few, kept a third of the gain: the reassignment of
 * codes is most of it.)
 *
 * A round's moves, taken in order each against the best so far, end at the first pair of least
 * error among those below the round's start: so a round measures its pairs' errors alone (four
 * at a time for FP4, see fp4ErrorsOf4), then passes once over the winner for its codes and sums.
 */
export function polishStored(ws: FitWorkspace, v: Float64Array, n: number, f: Fitted, v2: boolean): Fitted {
  const k = (n & 1) === 0 ? fitKernels() : null;
  if (k) {
    // native/joint_fit.h polish_stored: this function's rounds and operations, the loops' numbers
    valuesIn(k, v, n);
    k.polishStored(n, f.mode === MODE_FP4 ? 1 : 0, v2 ? 1 : 0, f.scaleBits, f.biasBits, f.sse);
    const r = k.fitResult;
    if (!r[8]) return f;
    return { mode: f.mode, scaleBits: r[0]!, biasBits: r[1]!, codes: ws.codesCopy(k.roundCodes[r[7]!]!, n), sse: r[2]!, maxAbsError: r[3]!, lwe: Number.NaN, sq: r[4]!, sqq: r[5]!, sqv: r[6]! };
  }
  const biasStep = v2 ? V2_BIAS_STEP : 1;
  let best = f;
  // Pairs measured so far (scale bits << 16 | bias bits). A later round skips them: each was
  // measured against a best that only dropped since, and lost (or became that best and was
  // beaten), so its error is at least the current best's and it cannot be taken. Same result,
  // 3-5 passes instead of 8 in a round after a move.
  const seen = ws.polishSeen;
  seen[0] = (f.scaleBits << 16) | f.biasBits;
  let seenCount = 1;
  const cs = ws.polishScale;
  const cb = ws.polishBias;
  const err = ws.polishError;
  // v is in the kernels' buffer (copied at the first round that needs it)
  let kernValues = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const s0 = best.scaleBits;
    const b0 = best.biasBits;
    let count = 0;
    for (let ds = -1; ds <= 1; ds++) {
      const sb = ds === 0 ? s0 : stepHalf(s0, ds);
      if (sb <= 0 || sb & 0x8000) continue;
      for (let db = -1; db <= 1; db++) {
        if (ds === 0 && db === 0) continue;
        const bb = db === 0 ? b0 : stepHalf(b0, db * biasStep);
        if (bb < 0) continue;
        const key = (sb << 16) | bb;
        let measured = false;
        for (let j = 0; j < seenCount; j++) {
          if (seen[j] === key) {
            measured = true;
            break;
          }
        }
        if (measured) continue;
        seen[seenCount++] = key;
        cs[count] = sb;
        cb[count] = bb;
        count++;
      }
    }
    const stop = best.sse;
    const spare = best.codes === ws.roundCodesA ? ws.roundCodesB : ws.roundCodesA;
    const kern = best.mode === MODE_FP4 && count > 0 ? fitKernels() : null;
    if (kern) {
      // the pairs' errors two per vector (the loop of fp4ErrorsOf4 per lane: the same numbers)
      if (!kernValues) valuesIn(kern, v, n);
      kernValues = true;
      for (let k = 0; k < count; k++) {
        kern.pairScale[k] = halfBitsValue(cs[k]!);
        kern.pairBias[k] = halfBitsValue(cb[k]!);
      }
      kern.polishFp4(n, count, stop);
      for (let k = 0; k < count; k++) err[k] = kern.pairError[k]!;
    } else if (best.mode === MODE_FP4) {
      for (let k = 0; k < count; k += 4) fp4ErrorsOf4(ws, v, n, k, count, stop);
    } else {
      for (let k = 0; k < count; k++) err[k] = pass(ws, v, n, best.mode, cs[k]!, cb[k]!, spare, stop).sse;
    }
    let win = -1;
    let winErr = stop;
    for (let k = 0; k < count; k++) {
      if (err[k]! < winErr) {
        winErr = err[k]!;
        win = k;
      }
    }
    if (win < 0) break;
    best = assignAndMeasure(ws, v, n, best.mode, cs[win]!, cb[win]!, spare);
  }
  if (best !== f) best.codes = best.codes.slice(0, n);
  return best;
}

/**
 * ws.polishError[k0 .. k0 + 4) (those below `count`): the exact FP4 decode error of the pairs
 * (ws.polishScale[k], ws.polishBias[k]) with nearest codes, each summed in index order as
 * codes.ts's pass sums it (the same number), four pairs per loop over the weights. A pair whose
 * partial error reaches stopAt may stop there (its error is then some partial sum >= stopAt).
 */
function fp4ErrorsOf4(ws: FitWorkspace, v: Float64Array, n: number, k0: number, count: number, stopAt: number): void {
  const cs = ws.polishScale;
  const cb = ws.polishBias;
  const t = ws.polishDecoded;
  // beyond count: the last pair again (measured, not used)
  const k1 = k0 + 1 < count ? k0 + 1 : count - 1;
  const k2 = k0 + 2 < count ? k0 + 2 : count - 1;
  const k3 = k0 + 3 < count ? k0 + 3 : count - 1;
  const S0 = halfBitsValue(cs[k0]!);
  const S1 = halfBitsValue(cs[k1]!);
  const S2 = halfBitsValue(cs[k2]!);
  const S3 = halfBitsValue(cs[k3]!);
  const B0 = halfBitsValue(cb[k0]!);
  const B1 = halfBitsValue(cb[k1]!);
  const B2 = halfBitsValue(cb[k2]!);
  const B3 = halfBitsValue(cb[k3]!);
  for (let q = 0; q < 16; q++) {
    t[q] = Math.fround(S0 * (q - 8) + B0);
    t[16 + q] = Math.fround(S1 * (q - 8) + B1);
    t[32 + q] = Math.fround(S2 * (q - 8) + B2);
    t[48 + q] = Math.fround(S3 * (q - 8) + B3);
  }
  const inv0 = 1 / S0;
  const inv1 = 1 / S1;
  const inv2 = 1 / S2;
  const inv3 = 1 / S3;
  let e0 = 0;
  let e1 = 0;
  let e2 = 0;
  let e3 = 0;
  for (let i0 = 0; i0 < n && (e0 < stopAt || e1 < stopAt || e2 < stopAt || e3 < stopAt); i0 += CHUNK) {
    const end = i0 + CHUNK < n ? i0 + CHUNK : n;
    for (let i = i0; i < end; i++) {
      const w = v[i]!;
      const y0 = (w - B0) * inv0;
      const y1 = (w - B1) * inv1;
      const y2 = (w - B2) * inv2;
      const y3 = (w - B3) * inv3;
      const f0 = Math.floor(y0);
      const f1 = Math.floor(y1);
      const f2 = Math.floor(y2);
      const f3 = Math.floor(y3);
      let q0 = f0 + +(y0 - f0 >= 0.5);
      let q1 = f1 + +(y1 - f1 >= 0.5);
      let q2 = f2 + +(y2 - f2 >= 0.5);
      let q3 = f3 + +(y3 - f3 >= 0.5);
      if (q0 > 7) q0 = 7;
      else if (q0 < -8) q0 = -8;
      if (q1 > 7) q1 = 7;
      else if (q1 < -8) q1 = -8;
      if (q2 > 7) q2 = 7;
      else if (q2 < -8) q2 = -8;
      if (q3 > 7) q3 = 7;
      else if (q3 < -8) q3 = -8;
      const d0 = w - t[q0 + 8]!;
      const d1 = w - t[q1 + 24]!;
      const d2 = w - t[q2 + 40]!;
      const d3 = w - t[q3 + 56]!;
      e0 += d0 * d0;
      e1 += d1 * d1;
      e2 += d2 * d2;
      e3 += d3 * d3;
    }
  }
  const err = ws.polishError;
  err[k0] = e0;
  if (k0 + 1 < count) err[k0 + 1] = e1;
  if (k0 + 2 < count) err[k0 + 2] = e2;
  if (k0 + 3 < count) err[k0 + 3] = e3;
}
