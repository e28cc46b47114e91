/**
 * The old names of this file, kept only for bench/bench.ts: random containers and their expected
 * output now come from @sgfp4/testkit (the tests import it directly).
 */
import type { Shape } from "@sgfp4/format";
import { Rng, generateValid, type GeneratedCase } from "@sgfp4/testkit";

export { firstBitDifference } from "@sgfp4/testkit";
export const rng = (seed: number): Rng => new Rng(seed);
export const randomV1 = (r: Rng, shape: Shape): GeneratedCase => generateValid(r, { profile: "v1", shape });
export const randomV2 = (r: Rng, shape: Shape): GeneratedCase => generateValid(r, { profile: "v2", shape });
