/**
 * Everything in the package, internals included, for its own benchmarks (bench/*.mjs load
 * dist/internal.js through bench/load-build.mjs). Not a public entry: package.json `exports`
 * does not list it. Tests import the module they test by relative path.
 */
export * from "./half.js";
export * from "./laplacian.js";
export * from "./fit.js";
export { fitKernels, useFitKernels } from "./fit/kernels.js";
export * from "./quadtree.js";
export * from "./rd.js";
export * from "./blocks.js";
export * from "./tensor.js";
export * from "./power.js";
export * from "./bands.js";
export * from "./assemble.js";
export * from "./parallel.js";
export * from "./random.js";
export * from "./safetensors.js";
export * from "./model.js";
export * from "./onnx.js";
export * from "./source.js";
export * from "./shards.js";
export * from "./outdir.js";
export * from "./rebuild.js";
export * from "./merge.js";
