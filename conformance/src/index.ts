/**
 * @sgfp4/conformance: the Node runner (vector folders, command decoders, decoders from the
 * registry) over the runtime-independent core, which it re-exports (`@sgfp4/conformance/core`
 * holds the core alone, for browsers).
 */
export * from "./core/index.js";
export { defaultVectorsDir, folderSource, goldenVectorsVersion, loadVectorSet } from "./fs-vectors.js";
export { resolveDecoders } from "./resolve.js";
export type { ResolveOptions } from "./resolve.js";
export { DecoderLoadError, nodeDecoders } from "@sgfp4/decoders/node";
export {
  COMMAND_PLACEHOLDERS,
  CommandRejection,
  ERROR_LINE,
  REJECT_EXIT_STATUS,
  checkTemplate,
  createCommandDecoder,
  fillTemplate,
  isCommandDecoder,
  shellQuote,
} from "./command-decoder.js";
export type { CommandDecoderOptions } from "./command-decoder.js";
