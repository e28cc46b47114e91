import { describe, expect, it } from "vitest";
import { extractBlock } from "../src/blocks.js";
import { DEFAULT_FIT_OPTIONS, FitWorkspace } from "../src/fit.js";
import { DEFAULT_QUADTREE_OPTIONS, MacroblockFitter, decideByThreshold, leavesOfNode, thresholdsFor, type QuadtreeOptions } from "../src/quadtree.js";
import { FAMILIES, synthetic } from "../src/random.js";
import { tensorPower } from "../src/tensor.js";

/** The 22.7 threshold policy written plainly: every visited node fitted in full, largest first. */
function plainPolicy(f: MacroblockFitter, q: QuadtreeOptions, power: number): { y: number; x: number; size: number; scaleBits: number }[] {
  const thr = thresholdsFor(q);
  const out: { y: number; x: number; size: number; scaleBits: number }[] = [];
  const visit = (y: number, x: number, size: number): { err: number; leaves: typeof out } => {
    const fit = f.at(y, x, size);
    const self = { err: fit.chosen.lwe, leaves: [{ y, x, size, scaleBits: fit.chosen.scaleBits }] };
    if (size === 4) return self;
    let limit = thr[size as 64 | 32 | 16 | 8] * q.thresholdScale;
    if (q.thresholdMode === "relative") limit *= Math.max(fit.power, q.powerFloor * power);
    if (self.err <= limit * (1 + q.borderline)) return self;
    const h = size / 2;
    const kids = [visit(y, x, h), visit(y, x + h, h), visit(y + h, x, h), visit(y + h, x + h, h)];
    const kidErr = (kids[0]!.err + kids[1]!.err + kids[2]!.err + kids[3]!.err) * 0.25;
    return kidErr <= (1 - q.splitGain) * self.err ? { err: kidErr, leaves: kids.flatMap((k) => k.leaves) } : self;
  };
  out.push(...visit(0, 0, 64).leaves);
  return out;
}

describe("decideByThreshold (nodes over their limit split on a bound, without their exact fit)", () => {
  it("chooses the same leaves as fitting every visited node, on every family and several settings", { timeout: 60_000 }, () => {
    const settings: QuadtreeOptions[] = [
      DEFAULT_QUADTREE_OPTIONS,
      { ...DEFAULT_QUADTREE_OPTIONS, thresholdScale: 0.25 },
      { ...DEFAULT_QUADTREE_OPTIONS, splitGain: 0.6 }, // many splits reverted: the exact fallback
      { ...DEFAULT_QUADTREE_OPTIONS, thresholdMode: "absolute" },
    ];
    const fit = { ...DEFAULT_FIT_OPTIONS, v2: true };
    let blocks = 0;
    for (const family of FAMILIES) {
      const data = synthetic(family, 128, 128, 21);
      const power = tensorPower(data);
      for (let by = 0; by < 2; by++) {
        for (let bx = 0; bx < 2; bx++) {
          const block = new Float64Array(64 * 64);
          extractBlock(data, 128, 128, by * 64, bx, block);
          for (const q of settings) {
            const want = plainPolicy(new MacroblockFitter(block, fit, new FitWorkspace(), true), q, power);
            const got = leavesOfNode(decideByThreshold(new MacroblockFitter(block, fit, new FitWorkspace(), true), q, power));
            expect(got.map((l) => ({ y: l.y, x: l.x, size: l.size, scaleBits: l.scaleBits }))).toEqual(want);
            blocks++;
          }
        }
      }
    }
    expect(blocks).toBe(FAMILIES.length * 16);
  });
});
