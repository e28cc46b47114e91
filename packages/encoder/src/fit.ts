/**
 * Per-leaf candidate fitting and dual-mode selection (spec 22.7, plus a least-squares refit):
 * the public face of src/fit/. Only +, -, *, /, sqrt, floor/round, abs and comparisons on
 * doubles are used, in a fixed order, so the result is the same on every engine and machine.
 */
export { DEFAULT_FIT_OPTIONS, type Candidate, type FitOptions, type LeafFit } from "./fit/types.js";
export { FitWorkspace } from "./fit/workspace.js";
export { assignCodes } from "./fit/codes.js";
export { SCALE_MULTIPLIERS } from "./fit/scale-search.js";
export { fitFp4Plain, fitT158Plain } from "./fit/plain.js";
export { refitCandidate } from "./fit/refit.js";
export { boundOrFitLeaf, fitLeaf, fitLeafCandidates, fitLeafCandidatesAfterKernel, fitLeafChosen, fitLeafWithSum, resumeLeafFit, withLwe, withLweDecoding, type FitResume, type LweLowerBound } from "./fit/leaf.js";
export { finishLeaf, polishStored } from "./fit/polish.js";
