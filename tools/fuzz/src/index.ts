// The generator, PRNG and mutator live in @sgfp4/testkit (shared with the backends' tests); re-exported here.
export { Rng, generateValid, halfValue, randomHalf, mutate, mutateOnce, MUTATION_KINDS } from "@sgfp4/testkit";
export type { GenOptions, GeneratedCase, Profile, Mutated, MutationInput, MutationKind } from "@sgfp4/testkit";
export { decodeOutcome, describeOutcome, judge, makeCase, runFuzz, runOutcomes } from "./run.js";
export type { BackendStats, Finding, FuzzInput, FuzzOptions, FuzzStats, Outcome } from "./run.js";
export { candidateExpectation, saveFinding, shrink, writeCandidate } from "./shrink.js";
export { KNOWN_BACKENDS, loadBackends, pythonBackendTemplate, pythonDecoderPath, repoRoot } from "./backends.js";
export { formatStats } from "./report.js";
