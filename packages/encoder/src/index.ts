/**
 * @sgfp4/encoder public API. Internals (fitting, quadtree decisions, file readers) stay in their
 * modules; src/internal.ts re-exports them for the package's benchmarks only.
 */
export { encodeTensor } from "./tensor.js";
export type { EncodeOptions, EncodedTensor, TensorStats } from "./tensor.js";
export type { FitOptions } from "./fit.js";
export type { QuadtreeOptions } from "./quadtree.js";
export { encodeModel, decodeModel, verifyModel, readModelManifest } from "./model.js";
export type { DecodeFn, ModelEncodeOptions, ModelEncodeResult, ModelDecodeOptions } from "./model.js";
export { encoderPackage } from "./package-info.js";
export { WorkerPool } from "./parallel.js";
export { synthetic, FAMILIES } from "./random.js";
export type { Family } from "./random.js";
