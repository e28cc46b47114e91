export { Rng } from "./prng.js";
export { generateValid, halfValue, randomHalf, treeLeaves, weightValue } from "./generate.js";
export type { GenOptions, GeneratedCase, Profile } from "./generate.js";
export { bitsOf, firstBitDifference } from "./bits.js";
export { mutate, mutateOnce, MUTATION_KINDS } from "./mutate.js";
export type { Mutated, MutationInput, MutationKind } from "./mutate.js";
