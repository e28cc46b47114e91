import { afterAll, describe, expect, it } from "vitest";
import { decode } from "../src/index.js";
import { decodeParallel, terminateWorkers } from "../src/parallel.js";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { SHAPES } from "./helpers.js";

afterAll(() => terminateWorkers());

describe("decodeParallel equals decode bit for bit", () => {
  for (const threads of [1, 2, 3, 5]) {
    it(`${threads} thread(s), v1 and v2, all test shapes`, async () => {
      const rnd = new Rng(1000 + threads);
      for (const shape of SHAPES) {
        for (const profile of ["v1", "v2"] as const) {
          const bytes = generateValid(rnd, { profile, shape }).bytes;
          const got = await decodeParallel(bytes, { profile, shape, threads });
          expect(got.length).toBe(shape[0] * shape[1]);
          expect(firstBitDifference(got, decode(bytes, { profile, shape }))).toBe(-1);
        }
      }
    });
  }

  it("concurrent calls do not mix their outputs", async () => {
    const rnd = new Rng(4242);
    const shape = [130, 70] as const;
    const streams = Array.from({ length: 6 }, () => generateValid(rnd, { profile: "v2", shape }).bytes);
    const results = await Promise.all(streams.map((b) => decodeParallel(b, { profile: "v2", shape, threads: 2 })));
    results.forEach((r, i) => expect(firstBitDifference(r, decode(streams[i]!, { profile: "v2", shape }))).toBe(-1));
  });
});
