/**
 * @sgfp4/encoder public API. Internals (fitting, quadtree decisions, file readers) stay in their
 * modules; src/internal.ts re-exports them for the package's benchmarks only.
 */
export { encodeTensor, encodeTensorBands } from "./tensor.js";
export { DEFAULT_LAMBDA } from "./tensor.js";
export type { EncodeOptions, EncodedTensor, TensorStats, Policy, BandEncodeOptions, EncodedTensorBands } from "./tensor.js";
export type { RowSource } from "./bands.js";
export type { Distortion } from "./rd.js";
export type { FitOptions } from "./fit.js";
export type { QuadtreeOptions } from "./quadtree.js";
export { encodeModel } from "./model.js";
export type { ModelEncodeOptions, ModelEncodeResult } from "./model.js";
export { decodeModel, verifyModel, readModelManifest } from "./rebuild.js";
export type { DecodeFn, ModelDecodeOptions } from "./rebuild.js";
export { parseShard } from "./shards.js";
export type { ModelManifest } from "./shards.js";
export { mergeParts } from "./merge.js";
export { partialDirOf } from "./outdir.js";
export type { SourceFormat, SourceLayout } from "./source.js";
export { readTensorIndex } from "./safetensors.js";
export type { TensorEntry, TensorFile } from "./safetensors.js";
export { encoderPackage } from "./package-info.js";
export { WorkerPool } from "./parallel.js";
export { synthetic, FAMILIES } from "./random.js";
export type { Family } from "./random.js";
