export * from "./errors.js";
export * from "./fp16.js";
export * from "./geometry.js";
export * from "./parse.js";
export * from "./writer.js";
export * from "./validate.js";
export * from "./manifest.js";
export * from "./decoder.js";
