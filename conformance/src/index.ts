export type { Availability, ConformanceBackend, DecodeRequest, VectorProfile } from "./backend.js";
export { checkBackendShape, unavailableBackend } from "./backend.js";
export { loadVectorSet, sha256File, VectorSetError, VECTOR_SET_FORMAT, VECTOR_SET_VERSION } from "./vectors.js";
export type { ExpectedRejectCode, Vector, VectorExpectation, VectorSet } from "./vectors.js";
export { compareBits, wordsFromLE, floatWords, hex32, bitsToValue } from "./compare.js";
export type { BitMismatch, LengthMismatch } from "./compare.js";
export { runConformance, checkCase } from "./run.js";
export type { BackendResult, CaseFailure, CaseResult, ConformanceResult, ProgressEvent, RunOptions } from "./run.js";
export { formatTable, summaryLine, toJSON, toJUnit, xmlEscape } from "./report.js";
export type { TableOptions } from "./report.js";
export {
  ALL_BUILTINS,
  BUILTIN_BACKENDS,
  BackendLoadError,
  defaultVectorsDir,
  loadBuiltinBackend,
  loadModuleBackend,
  resolveBackends,
} from "./resolve.js";
export type { BuiltinBackendName, ResolveOptions } from "./resolve.js";
export {
  COMMAND_PLACEHOLDERS,
  CommandRejection,
  ERROR_LINE,
  REJECT_EXIT_STATUS,
  checkTemplate,
  createCommandBackend,
  isCommandBackend,
  fillTemplate,
  shellQuote,
} from "./command-backend.js";
export type { CommandBackendOptions } from "./command-backend.js";
