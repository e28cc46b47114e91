export * from "./half.js";
export * from "./laplacian.js";
export * from "./fit.js";
export * from "./quadtree.js";
export * from "./blocks.js";
export * from "./tensor.js";
export * from "./parallel.js";
export * from "./random.js";
