/** The golden-vector builder: the catalog, the intent model, and the folder writer. */
export * from "./intent.js";
export * from "./vectors.js";
export * from "./build.js";
export { writeIntent, assembleV2 } from "./streams.js";
