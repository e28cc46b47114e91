/**
 * The last step of a chosen leaf's fit (policy rd): the stored scale and bias are what the
 * decoder uses, and the least-squares refit only rounds its real-valued solution to them. The
 * rounding is not the best pair of stored values: among the FP16 neighbours of the scale and the
 * 12-bit-mantissa neighbours of the bias (the bias's low 4 bits carry the leaf's flags), the pair
 * with the least exact decode error is kept, codes reassigned for it. Runs on the chosen leaves
 * only, after the tree is decided: the record's bytes do not change, only its error drops.
 */
import { assignAndMeasure } from "./codes.js";
import type { FitOptions, Fitted } from "./types.js";
import type { FitWorkspace } from "./workspace.js";

/** The bias's FP16 bits step (v2: its low 4 bits are the flags). */
const V2_BIAS_STEP = 16;
/** Rounds of neighbour moves (each move is kept only if the exact error drops). */
const MAX_ROUNDS = 3;
const EXPONENT_ALL_ONES = 0x7c00;

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
 */
export function polishStored(ws: FitWorkspace, v: Float64Array, n: number, f: Fitted, v2: boolean): Fitted {
  const biasStep = v2 ? V2_BIAS_STEP : 1;
  let best = f;
  // Pairs measured so far (scale bits << 16 | bias bits). A later round skips them: each was
  // measured against a best that only dropped since, and lost (or became that best and was
  // beaten), so its error is at least the current best's and it cannot be taken. Same result,
  // 3-5 passes instead of 8 in a round after a move.
  const seen = ws.polishSeen;
  seen[0] = (f.scaleBits << 16) | f.biasBits;
  let seenCount = 1;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const s0 = best.scaleBits;
    const b0 = best.biasBits;
    let moved = false;
    for (let ds = -1; ds <= 1; ds++) {
      const sb = ds === 0 ? s0 : stepHalf(s0, ds);
      if (sb <= 0 || sb & 0x8000) continue;
      for (let db = -1; db <= 1; db++) {
        if (ds === 0 && db === 0) continue;
        const bb = db === 0 ? b0 : stepHalf(b0, db * biasStep);
        if (bb < 0) continue;
        const key = (sb << 16) | bb;
        if (seen.subarray(0, seenCount).includes(key)) continue;
        seen[seenCount++] = key;
        const spare = best.codes === ws.roundCodesA ? ws.roundCodesB : ws.roundCodesA;
        const c = assignAndMeasure(ws, v, n, best.mode, sb, bb, spare, best.sse);
        if (c.sse < best.sse) {
          best = c;
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
  if (best !== f) best.codes = best.codes.slice(0, n);
  return best;
}
