import { describe, expect, it } from "vitest";
import { decode, decodeInto, decodeReference, kernelAvailable, createConformanceBackend } from "../src/index.js";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { SHAPES } from "./helpers.js";

describe("wasm kernel vs decodeReference (bit patterns)", () => {
  it("runs the wasm SIMD kernel in this engine (not the JS fallback)", () => {
    expect(kernelAvailable()).toBe(true);
  });

  for (const profile of ["v1", "v2"] as const) {
    for (const shape of SHAPES) {
      it(`${profile} random containers of shape ${shape[0]}x${shape[1]}`, () => {
        const rnd = new Rng(shape[0] * 7919 + shape[1] + (profile === "v2" ? 1 : 0));
        const rounds = shape[0] * shape[1] > 100_000 ? 2 : 8;
        for (let round = 0; round < rounds; round++) {
          const { bytes, expected } = generateValid(rnd, { profile, shape });
          const opts = { profile, shape };
          const reference = decodeReference(bytes, opts);
          expect(reference.length).toBe(shape[0] * shape[1]);
          // the reference itself against the output known from construction
          expect(firstBitDifference(reference, expected)).toBe(-1);
          const fast = decode(bytes, opts);
          expect(firstBitDifference(fast, reference)).toBe(-1);
          const into = new Float32Array(shape[0] * shape[1]).fill(Number.NaN);
          decodeInto(bytes, opts, into);
          expect(firstBitDifference(into, reference)).toBe(-1);
          expect(firstBitDifference(decode(bytes, { profile: "auto", shape }), reference)).toBe(-1);
        }
      });
    }
  }

  it("decodeInto writes into a subarray view without touching its neighbours", () => {
    const rnd = new Rng(99);
    const shape = [65, 63] as const;
    const bytes = generateValid(rnd, { profile: "v2", shape }).bytes;
    const backing = new Float32Array(65 * 63 + 10).fill(7);
    const view = backing.subarray(5, 5 + 65 * 63);
    decodeInto(bytes, { profile: "v2", shape }, view);
    expect(firstBitDifference(view, decodeReference(bytes, { profile: "v2", shape }))).toBe(-1);
    expect([...backing.subarray(0, 5), ...backing.subarray(5 + 65 * 63)]).toEqual(Array(10).fill(7));
  });

  it("conformance backend 'cpu' decodes like decode", async () => {
    const backend = createConformanceBackend();
    expect(backend.name).toBe("cpu");
    expect((await backend.available()).ok).toBe(true);
    const shape = [130, 70] as const;
    const bytes = generateValid(new Rng(5), { profile: "v1", shape }).bytes;
    expect(firstBitDifference((await backend.decode(bytes, { profile: "v1", shape })) as Float32Array, decodeReference(bytes, { profile: "v1", shape }))).toBe(-1);
  });
});
