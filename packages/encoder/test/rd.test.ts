import { MODE_FP4, MODE_T158, align16, payloadBytes, writeV2Record, type Mode } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { extractBlock, leafFloorOf } from "../src/blocks.js";
import { DEFAULT_FIT_OPTIONS, FitWorkspace } from "../src/fit.js";
import { MacroblockFitter, NODES_PER_BLOCK, blockFromLeaves, decideRd, leavesOfRd, nodeId, type RdChoice } from "../src/quadtree.js";
import { NODE_STATS, RdSolver, macroblockStats, t158SseGap, writeNodeStats } from "../src/rd.js";
import { synthetic } from "../src/random.js";
import { encodeTensor } from "../src/tensor.js";

/** Exact record bytes of a set of leaves, as the format's writer lays them out (written out, not the solver's model). */
function writtenBytes(f: MacroblockFitter, choice: RdChoice): number {
  const out = blockFromLeaves(leavesOfRd(f, choice));
  return writeV2Record({ layout: out.layout as 0, ...(out.tree ? { tree: out.tree } : {}), leaves: out.leaves }).length;
}

/** distortion + lambda * 8 * bytes of a choice, from the stats. */
function costOf(stats: Float64Array, leaves: RdChoice["leaves"], bytes: number, lambda: number): number {
  let d = 0;
  for (const l of leaves) d += stats[NODE_STATS * nodeId(l.y, l.x, l.size) + (l.mode === MODE_T158 ? 1 : 0)]! * l.size * l.size;
  return d + lambda * 8 * bytes;
}

const uniform = (size: number, mode: Mode): RdChoice["leaves"] => {
  const out: RdChoice["leaves"] = [];
  for (let y = 0; y < 64; y += size) for (let x = 0; x < 64; x += size) out.push({ y, x, size, mode });
  return out;
};

describe("rd decisions (policy rd)", () => {
  it("count the record's exact bytes, and cost no more than other trees (uniform, the spec policy's rate control)", () => {
    const o = { ...DEFAULT_FIT_OPTIONS, v2: true, search: "joint" as const };
    const ws = new FitWorkspace();
    const solver = new RdSolver();
    const block = new Float64Array(4096);
    let splits = 0;
    let t158 = 0;
    for (const family of ["student-t", "gaussian", "sparse", "row-scale"] as const) {
      const data = synthetic(family, 64, 128, 5);
      for (const bx of [0, 1]) {
        extractBlock(data, 128, 64, 0, bx, block);
        const f = new MacroblockFitter(block, o, ws);
        const stats = new Float64Array(NODE_STATS * NODES_PER_BLOCK);
        macroblockStats(f, 1, "mse", stats, 0);
        for (const lambda of [1e-6, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 0.1]) {
          const choice = solver.solve(stats, 0, lambda);
          expect(choice.recordBytes).toBe(writtenBytes(f, choice));
          const best = costOf(stats, choice.leaves, choice.recordBytes, lambda);
          expect(best).toBeCloseTo(choice.distortion + lambda * 8 * choice.recordBytes, 9);
          const others = [uniform(64, MODE_FP4), uniform(64, MODE_T158), uniform(32, MODE_FP4), uniform(8, MODE_FP4), uniform(4, MODE_FP4), decideRd(stats, 0, lambda).leaves];
          for (const leaves of others) {
            const c = { leaves, recordBytes: 0, distortion: 0 };
            expect(best).toBeLessThanOrEqual(costOf(stats, leaves, writtenBytes(f, c), lambda) * (1 + 1e-12));
          }
          if (choice.leaves.length > 1) splits++;
          if (choice.leaves.some((l) => l.mode === MODE_T158)) t158++;
        }
      }
    }
    expect(splits).toBeGreaterThan(10);
    expect(t158).toBeGreaterThan(5);
  });
  it("lazy fitting (nodes asked for as the decision needs them) gives the decision of fitting every node", () => {
    const o = { ...DEFAULT_FIT_OPTIONS, v2: true, search: "joint" as const };
    const block = new Float64Array(4096);
    const solver = new RdSolver();
    for (const family of ["student-t", "gaussian", "low-rank"] as const) {
      extractBlock(synthetic(family, 64, 64, 8), 64, 64, 0, 0, block);
      const full = new Float64Array(NODE_STATS * NODES_PER_BLOCK);
      macroblockStats(new MacroblockFitter(block, o, new FitWorkspace()), 1, "mse", full, 0);
      for (const lambda of [1e-4, 1e-3, 1e-2]) {
        const lazy = new Float64Array(NODE_STATS * NODES_PER_BLOCK).fill(Number.NaN);
        const f = new MacroblockFitter(block, o, new FitWorkspace());
        let fitted = 0;
        const got = solver.solve(lazy, 0, lambda, (y, x, size, k) => {
          fitted++;
          const fit = f.at(y, x, size);
          lazy[k] = fit.fp4.sse / (size * size);
          lazy[k + 1] = fit.t158.sse / (size * size);
          lazy[k + 2] = fit.t158Allowed ? 1 : 0;
        });
        expect(got).toEqual(solver.solve(full, 0, lambda));
        if (lambda === 1e-2) expect(fitted).toBeLessThan(NODES_PER_BLOCK); // the 4x4 level was not needed
      }
    }
  });
  it("node floors (from their quarters' fits) skip 64x64 and 32x32 fits where they lose, and change no choice", () => {
    const o = { ...DEFAULT_FIT_OPTIONS, v2: true, search: "joint" as const };
    const block = new Float64Array(4096);
    const solver = new RdSolver();
    let rootSkipped = 0;
    let skipped32 = 0;
    let rootChosen = 0;
    let rootFp4 = 0;
    let t158Floors = 0;
    for (const family of ["gaussian", "student-t", "sparse", "low-rank", "row-scale"] as const) {
      const data = synthetic(family, 128, 128, 4);
      // smooth data too (a ramp): where the 64x64 leaf wins, the floor must leave it to be fitted
      const ramp = Float32Array.from({ length: 128 * 128 }, (_, i) => 0.01 * (i % 128) + 0.001 * Math.floor(i / 128));
      for (const input of [data, ramp]) {
        for (const lambda of [1e-4, 0.006, 0.02, 0.05, 1]) {
          for (const [by, bx] of [[0, 0], [1, 1]] as const) {
            extractBlock(input, 128, 128, by * 64, bx, block);
            const choose = (withFloor: boolean): { choice: RdChoice; rootFitted: boolean; fitted32: number } => {
              const f = new MacroblockFitter(block, o, new FitWorkspace(), false, true, (size) => t158SseGap(size, lambda, 1));
              const stats = new Float64Array(NODE_STATS * NODES_PER_BLOCK).fill(Number.NaN);
              let rootFitted = false;
              let fitted32 = 0;
              const choice = solver.solve(
                stats,
                0,
                lambda,
                (y, x, size, k) => {
                  if (size === 64) rootFitted = true;
                  if (size === 32) fitted32++;
                  const node = f.at(y, x, size);
                  // the T158 floor is at most the error of the T158 fit
                  if (node.t158.codes.length > 0) {
                    expect(node.t158Floor!).toBeLessThanOrEqual(node.t158.sse);
                    t158Floors++;
                  }
                  writeNodeStats(node, size, 1, "mse", stats, k);
                },
                withFloor ? (y, x, size, out) => leafFloorOf(f, y, x, size, 1, out) : undefined,
              );
              return { choice, rootFitted, fitted32 };
            };
            const plain = choose(false);
            const floored = choose(true);
            expect(floored.choice, `${family} lambda ${lambda}`).toEqual(plain.choice);
            expect(plain.rootFitted).toBe(true);
            expect(plain.fitted32).toBe(4);
            if (!floored.rootFitted) rootSkipped++;
            skipped32 += 4 - floored.fitted32;
            if (plain.choice.leaves.length === 1) rootChosen++;
            if (plain.choice.leaves.length === 1 && plain.choice.leaves[0]!.mode === MODE_FP4 && plain.choice.distortion > 0) rootFp4++;
          }
        }
      }
    }
    // both branches ran: the root skipped somewhere, and chosen (so fitted) somewhere
    expect(rootSkipped).toBeGreaterThan(10);
    expect(skipped32).toBeGreaterThan(20);
    expect(rootChosen).toBeGreaterThan(rootFp4);
    expect(rootFp4).toBeGreaterThan(0); // an FP4 root with an error: its floor from the quarters' errors was tested
    expect(t158Floors).toBeGreaterThan(0);
  });
  it("bpw settings lie on a convex rate-distortion curve (none below the hull of the others), and the target is met from below", async () => {
    const data = synthetic("student-t", 128, 128, 3);
    const points: [number, number][] = [];
    for (const bpw of [2.5, 3, 3.5, 4, 4.5, 5]) {
      const r = await encodeTensor(data, [128, 128], { bpw });
      expect(r.stats.bitsPerWeight).toBeLessThanOrEqual(bpw);
      points.push([r.stats.bitsPerWeight, r.stats.mse]);
    }
    for (let i = 1; i + 1 < points.length; i++) {
      const [r0, d0] = points[i - 1]!;
      const [r1, d1] = points[i]!;
      const [r2, d2] = points[i + 1]!;
      expect(d1).toBeLessThan(d0);
      // convex: the middle point is not above the chord of its neighbours
      expect(d1).toBeLessThanOrEqual(d0 + ((d2 - d0) * (r1 - r0)) / (r2 - r0) + 1e-12);
    }
  }, 60_000);
});

// payload sizes the solver's byte model assumes (a check on the format constants it relies on)
it("payloads: FP4 s*s/2 bytes, T158 s*s/4, aligned to 16", () => {
  expect([64, 32, 16, 8, 4].map((s) => align16(payloadBytes(s, MODE_FP4)))).toEqual([2048, 512, 128, 32, 16]);
  expect([64, 32, 16, 8, 4].map((s) => align16(payloadBytes(s, MODE_T158)))).toEqual([1024, 256, 64, 16, 16]);
});
