/**
 * Property tests: random containers (all layouts, random MIXED trees, both modes, FP16
 * subnormals / -0 / negative biases, gaps, trailing bytes) decoded on the device and compared
 * bit for bit with the values chosen at construction. The native parser is also compared with
 * @sgfp4/format's parse on the same streams and on mutations of them: same leaf table, or the
 * same error code.
 */
import { isSgfp4Error, parse, type Layout, type Shape } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { decode, nativeAddon } from "../src/index.js";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";

const SHAPES: Shape[] = [[1, 1], [3, 200], [65, 63], [130, 70], [64, 64], [128, 1], [1, 257], [200, 129]];

describe("decode matches construction", () => {
  for (let seed = 1; seed <= 24; seed++) {
    it(`seed ${seed}`, () => {
      const r = new Rng(seed);
      const shape = SHAPES[seed % SHAPES.length]!;
      const v1 = generateValid(r, { profile: "v1", shape });
      expect(firstBitDifference(decode(v1.bytes, { profile: "v1", shape }), v1.expected)).toBe(-1);
      // v2: all layouts mixed, then one layout per container so every uniform path runs alone too
      const all: Layout[] = [0, 1, 2, 3, 4, 5];
      const layouts = seed % 4 === 0 ? [all] : [all, [(seed % 6) as Layout]];
      for (const l of layouts) {
        const v2 = generateValid(r, { profile: "v2", shape, layouts: l });
        expect(firstBitDifference(decode(v2.bytes, { profile: "v2", shape }), v2.expected)).toBe(-1);
      }
    });
  }
});

function verdict(f: () => { leafTable: Uint32Array }): { code: string } | { table: number[] } {
  try {
    return { table: Array.from(f().leafTable) };
  } catch (e) {
    if (isSgfp4Error(e) || typeof (e as { code?: unknown }).code === "string") return { code: (e as { code: string }).code };
    throw e;
  }
}

describe("native parser agrees with @sgfp4/format", () => {
  it("on random containers and their mutations", () => {
    const r = new Rng(99);
    let compared = 0;
    for (let k = 0; k < 40; k++) {
      const shape = SHAPES[k % SHAPES.length]!;
      const profile = k % 2 ? "v2" : "v1";
      const { bytes } = generateValid(r, { profile, shape });
      const mutants: Uint8Array[] = [bytes];
      for (let m = 0; m < 40; m++) {
        const b = bytes.slice(0, m % 5 === 0 ? Math.floor(r.float() * bytes.length) : bytes.length);
        const at = Math.floor(r.float() * Math.min(b.length, m % 2 ? 600 : b.length));
        if (b.length) b[at]! ^= 1 << Math.floor(r.float() * 8);
        mutants.push(b);
      }
      for (const b of mutants) {
        const ts = verdict(() => parse(b, { profile, shape }));
        const native = verdict(() => nativeAddon().parse(b, profile, shape[0], shape[1]));
        expect(native).toEqual(ts);
        compared++;
      }
    }
    expect(compared).toBe(40 * 41);
  });
});
