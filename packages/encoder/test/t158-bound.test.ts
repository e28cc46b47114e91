import { MODE_T158 } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { extractBlock } from "../src/blocks.js";
import { FitWorkspace, fitLeafCandidates } from "../src/fit.js";
import { sum } from "../src/fit/codes.js";
import { T158BoundScratch, t158SseLowerBound } from "../src/fit/t158-bound.js";
import { halfBitsValue, scaleToHalfBits } from "../src/half.js";
import { MacroblockFitter } from "../src/quadtree.js";
import { NODE_STATS, RdSolver, t158SseGap, writeNodeStats } from "../src/rd.js";
import { mulberry32, synthetic } from "../src/random.js";
import { resolveFit } from "../src/tensor.js";

const fit = resolveFit("v2"); // the rd policy's joint search

/** Exact decode error of a T158 leaf with stored scale S and bias B (nearest codes, float32 levels as decoded). */
function t158Sse(v: Float64Array, S: number, B: number): number {
  const levels = [Math.fround(B - S), Math.fround(B), Math.fround(B + S)];
  let sse = 0;
  for (const w of v) {
    let best = Infinity;
    for (const l of levels) best = Math.min(best, (w - l) * (w - l));
    sse += best;
  }
  return sse;
}

/** Leaves of different kinds, including ones T158 fits exactly or nearly. */
function leaves(): { name: string; v: Float64Array }[] {
  const rnd = mulberry32(5);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const out: { name: string; v: Float64Array }[] = [];
  for (const n of [16, 64, 256]) {
    out.push({ name: `gaussian ${n}`, v: Float64Array.from({ length: n }, gauss) });
    out.push({ name: `ternary ${n}`, v: Float64Array.from({ length: n }, () => [-0.5, 0, 0.5][Math.floor(rnd() * 3)]!) });
    out.push({ name: `ternary + noise ${n}`, v: Float64Array.from({ length: n }, () => [-1, 0, 1][Math.floor(rnd() * 3)]! + 0.01 * gauss()) });
    out.push({ name: `offset ternary ${n}`, v: Float64Array.from({ length: n }, () => 1000 + [-1e-3, 0, 1e-3][Math.floor(rnd() * 3)]!) });
    out.push({ name: `two clusters ${n}`, v: Float64Array.from({ length: n }, () => (rnd() < 0.5 ? -2 : 3) + 0.2 * gauss()) });
    out.push({ name: `sparse ${n}`, v: Float64Array.from({ length: n }, () => (rnd() < 0.1 ? 5 * gauss() : 0)) });
    out.push({ name: `outlier ${n}`, v: Float64Array.from({ length: n }, (_, i) => (i === 3 ? 40 : 0.1 * gauss())) });
    out.push({ name: `tiny ${n}`, v: Float64Array.from({ length: n }, () => 1e-5 * gauss()) });
  }
  return out;
}

describe("t158SseLowerBound", () => {
  it("is at most the error of every T158 leaf: the joint fit's, and a sweep of stored scales and biases", () => {
    const ws = new FitWorkspace();
    const scratch = new T158BoundScratch();
    for (const { name, v } of leaves()) {
      const size = Math.sqrt(v.length);
      const f = fitLeafCandidates(v, size, fit, sum(v, v.length), ws);
      const bound = t158SseLowerBound(scratch, f.fp4.codes, v.length, f.fp4.scaleBits, f.fp4.biasBits, f.fp4.sse);
      expect(bound, name).toBeLessThanOrEqual(f.t158.sse);
      // around the fitted T158: scales and biases from a fraction to a few times its own
      const S0 = halfBitsValue(f.t158.scaleBits) || 1e-3;
      const B0 = halfBitsValue(f.t158.biasBits);
      let least = Infinity;
      for (let i = -40; i <= 40; i++) {
        const S = halfBitsValue(scaleToHalfBits(S0 * 2 ** (i / 10)));
        for (let j = -20; j <= 20; j++) least = Math.min(least, t158Sse(v, S, B0 + (j / 10) * S0));
      }
      expect(bound, name).toBeLessThanOrEqual(least);
    }
  });

  it("proves something where T158 is far from the data (a Gaussian leaf: several times FP4's error) and nothing where it fits", () => {
    const ws = new FitWorkspace();
    const scratch = new T158BoundScratch();
    const byName = new Map(leaves().map((l) => [l.name, l.v]));
    const boundOf = (name: string): { bound: number; fp4: number; t158: number } => {
      const v = byName.get(name)!;
      const f = fitLeafCandidates(v, Math.sqrt(v.length), fit, sum(v, v.length), ws);
      return { bound: t158SseLowerBound(scratch, f.fp4.codes, v.length, f.fp4.scaleBits, f.fp4.biasBits, f.fp4.sse), fp4: f.fp4.sse, t158: f.t158.sse };
    };
    for (const n of [16, 64, 256]) {
      const g = boundOf(`gaussian ${n}`);
      expect(g.bound).toBeGreaterThan(5 * g.fp4);
      expect(g.bound).toBeGreaterThan(0.3 * g.t158);
      expect(boundOf(`ternary ${n}`).bound).toBe(0);
    }
  });

  it("leaves the rd policy's choices unchanged: lazy fits with and without the T158 skip choose the same leaves and modes", () => {
    const solver = new RdSolver();
    const block = new Float64Array(4096);
    let skipped = 0;
    let t158Chosen = 0;
    for (const family of ["gaussian", "student-t", "sparse", "low-rank"] as const) {
      const data = synthetic(family, 128, 128, 3);
      for (const lambda of [0.001, 0.006, 0.05, 0.5]) {
        for (let by = 0; by < 2; by++) {
          for (let bx = 0; bx < 2; bx++) {
            extractBlock(data, 128, 128, by * 64, bx, block);
            const choose = (withGap: boolean): { leaves: string; skips: number } => {
              const ws = new FitWorkspace();
              const f = new MacroblockFitter(block, fit, ws, false, true, withGap ? (size) => t158SseGap(size, lambda, 1) : undefined);
              const stats = new Float64Array(NODE_STATS * 341).fill(Number.NaN);
              let skips = 0;
              const choice = solver.solve(stats, 0, lambda, (y, x, size, k) => {
                const node = f.at(y, x, size);
                if (node.t158.codes.length === 0) skips++;
                writeNodeStats(node, size, 1, "mse", stats, k);
              });
              return { leaves: JSON.stringify(choice.leaves), skips };
            };
            const plain = choose(false);
            const fast = choose(true);
            expect(fast.leaves, `${family} lambda ${lambda}`).toBe(plain.leaves);
            expect(plain.skips).toBe(0);
            skipped += fast.skips;
            if (plain.leaves.includes(`"mode":${MODE_T158}`)) t158Chosen++;
          }
        }
      }
    }
    // both branches ran: T158 skipped somewhere, and chosen somewhere
    expect(skipped).toBeGreaterThan(100);
    expect(t158Chosen).toBeGreaterThan(0);
  });
});
