import { MODE_FP4, halfToFloat } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { DEFAULT_FIT_OPTIONS, FitWorkspace, finishLeaf, fitLeafCandidates, polishStored } from "../src/fit.js";
import { assignAndMeasure } from "../src/fit/codes.js";
import { stepHalf } from "../src/fit/polish.js";
import type { Fitted } from "../src/fit/types.js";
import { synthetic, type Family } from "../src/random.js";

const o = { ...DEFAULT_FIT_OPTIONS, search: "joint" as const, v2: true };
const FAMILIES: readonly Family[] = ["gaussian", "laplacian", "student-t", "row-scale", "sparse"];

/** Every size x size leaf of a 64x64 tensor of each family, with its index-order sum. */
function leaves(size: number): { v: Float64Array; sv: number }[] {
  const out: { v: Float64Array; sv: number }[] = [];
  for (const family of FAMILIES) {
    const data = synthetic(family, 64, 64, 3);
    for (let y = 0; y < 64; y += size) {
      for (let x = 0; x < 64; x += size) {
        const v = new Float64Array(size * size);
        let sv = 0;
        for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) sv += v[i * size + j] = data[(y + i) * 64 + x + j]!;
        out.push({ v, sv });
      }
    }
  }
  return out;
}

/** The decode error of c recomputed from its stored bits and codes, and whether every code is a nearest one. */
function check(v: Float64Array, c: Fitted): { sse: number; nearest: boolean } {
  const S = halfToFloat(c.scaleBits);
  const B = halfToFloat(c.biasBits & 0xfff0);
  const [lo, hi] = c.mode === MODE_FP4 ? [-8, 7] : [-1, 1];
  let sse = 0;
  let nearest = true;
  v.forEach((w, i) => {
    const q = c.codes[i]!;
    const e = Math.abs(w - Math.fround(S * q + B));
    sse += e * e;
    if (q > lo && Math.abs(w - Math.fround(S * (q - 1) + B)) < e) nearest = false;
    if (q < hi && Math.abs(w - Math.fround(S * (q + 1) + B)) < e) nearest = false;
  });
  return { sse, nearest };
}

describe("stepHalf (FP16 bits in value order)", () => {
  it("steps across zero and stops before infinity", () => {
    expect(stepHalf(0x0000, -16)).toBe(0x8010);
    expect(stepHalf(0x8010, 16)).toBe(0x0000);
    expect(stepHalf(0x3c00, 1)).toBe(0x3c01);
    expect(stepHalf(0xbc00, 1)).toBe(0xbbff);
    expect(stepHalf(0x7bff, 1)).toBe(-1);
    for (let b = 1; b < 0x7bff; b += 97) {
      expect(halfToFloat(stepHalf(b, 1))).toBeGreaterThan(halfToFloat(b));
      expect(halfToFloat(stepHalf(0x8000 | b, 1))).toBeGreaterThan(halfToFloat(0x8000 | b));
    }
  });
});

describe("finishLeaf (a chosen leaf's stored-value polish, policy rd)", () => {
  it("never raises the error; its sse is the exact decode error, its codes nearest, its bias flag bits clear", () => {
    const ws = new FitWorkspace();
    let lowered = 0;
    let total = 0;
    for (const size of [8, 16, 32]) {
      for (const { v, sv } of leaves(size)) {
        const fit = fitLeafCandidates(v, size, o, sv, ws);
        for (const c of [fit.fp4, fit.t158] as Fitted[]) {
          const before = c.sse;
          const f = finishLeaf(ws, v, size * size, c, o);
          expect(f.sse).toBeLessThanOrEqual(before);
          const { sse, nearest } = check(v, f);
          expect(f.sse).toBeCloseTo(sse, 12);
          expect(nearest).toBe(true);
          expect(f.biasBits & 0xf).toBe(0);
          expect(f.codes.length).toBe(size * size);
          total++;
          if (f.sse < before) lowered++;
        }
      }
    }
    // the polish is not a no-op: on these leaves it lowers the error of a good part of the fits
    expect(lowered).toBeGreaterThan(total / 10);
  });

  it("is the sequential neighbour walk: each pair measured in turn against the best so far (a reference written out here)", () => {
    const ws = new FitWorkspace();
    // the walk as polishStored describes it, one full pass per pair, from the stored values
    const reference = (v: Float64Array, f: Fitted): { scaleBits: number; biasBits: number; sse: number } => {
      const errOf = (sb: number, bb: number): number => {
        const S = halfToFloat(sb);
        const B = halfToFloat(bb);
        let e = 0;
        for (const w of v) {
          const q = Math.min(7, Math.max(-8, Math.round((w - B) / S)));
          const d = w - Math.fround(S * q + B);
          e += d * d;
        }
        return e;
      };
      let best = { scaleBits: f.scaleBits, biasBits: f.biasBits, sse: f.sse };
      const seen = new Set([`${f.scaleBits},${f.biasBits}`]);
      for (let round = 0; round < 3; round++) {
        const { scaleBits: s0, biasBits: b0 } = best;
        let moved = false;
        for (const ds of [-1, 0, 1]) {
          const sb = ds === 0 ? s0 : stepHalf(s0, ds);
          if (sb <= 0 || sb & 0x8000) continue;
          for (const db of [-1, 0, 1]) {
            if (ds === 0 && db === 0) continue;
            const bb = db === 0 ? b0 : stepHalf(b0, db * 16);
            if (bb < 0 || seen.has(`${sb},${bb}`)) continue;
            seen.add(`${sb},${bb}`);
            const e = errOf(sb, bb);
            if (e < best.sse) {
              best = { scaleBits: sb, biasBits: bb, sse: e };
              moved = true;
            }
          }
        }
        if (!moved) break;
      }
      return best;
    };
    let moved = 0;
    for (const size of [4, 8, 16]) {
      for (const { v, sv } of leaves(size)) {
        const fp4 = fitLeafCandidates(v, size, o, sv, ws).fp4 as Fitted;
        // from the fit and from a start two scale steps off (more rounds)
        const starts = [fp4, assignAndMeasure(ws, v, size * size, MODE_FP4, fp4.scaleBits + 2, fp4.biasBits, new Int8Array(size * size))];
        for (const start of starts) {
          const want = reference(v, start);
          const got = polishStored(ws, v, size * size, { ...start, codes: start.codes.slice() }, true);
          expect([got.scaleBits, got.biasBits]).toEqual([want.scaleBits, want.biasBits]);
          expect(got.sse).toBeCloseTo(want.sse, 12);
          if (got.scaleBits !== start.scaleBits || got.biasBits !== start.biasBits) moved++;
        }
      }
    }
    expect(moved).toBeGreaterThan(50);
  });

  it("walks back a scale moved off by two FP16 steps", () => {
    const ws = new FitWorkspace();
    let better = 0;
    const all = leaves(8);
    for (const { v, sv } of all) {
      const fit = fitLeafCandidates(v, 8, o, sv, ws);
      const f = fit.fp4 as Fitted;
      const moved = assignAndMeasure(ws, v, 64, MODE_FP4, f.scaleBits + 2, f.biasBits, new Int8Array(64));
      const p = polishStored(ws, v, 64, moved, true);
      expect(p.sse).toBeLessThanOrEqual(moved.sse);
      if (p.sse < moved.sse) better++;
    }
    expect(better).toBeGreaterThan(all.length / 2);
  });
});
