/**
 * @sgfp4/conformance/core: the runtime-independent half of the suite (vector schema, case
 * judge, bit comparison, f16/bf16 expectations, report model and views). No `node:` imports:
 * the inspector runs it in the browser; test/core-browser.test.ts bundles it for the browser.
 */
export { readVectorSet, setPath, VectorSetError, VECTOR_SET_FORMAT, VECTOR_SET_VERSION } from "./vectors.js";
export type { ExpectedRejectCode, Vector, VectorExpectation, VectorSet, VectorSource } from "./vectors.js";
export { bitsToValue, compareBits, floatWords, hex16, hex32, hexBits, valueOf, wordsFromLE } from "./compare.js";
export type { BitMismatch, LengthMismatch } from "./compare.js";
export { expectedWords, f32ToBf16Bits, f32ToF16Bits } from "./halfs.js";
export { describeError, judgeCase } from "./judge.js";
export type { CaseFailure, JudgeOptions, Verdict } from "./judge.js";
export { ALL_FORMATS, runConformance } from "./run.js";
export type { BackendResult, CaseResult, ConformanceResult, ProgressEvent, RunOptions } from "./run.js";
export { formatTable, rowName, summaryLine, toJSON, toJUnit, xmlEscape } from "./report.js";
export type { TableOptions } from "./report.js";
export type { Availability, DecodeRequest, DecodedArray, Decoder, OutputFormat } from "@sgfp4/format";
/** @deprecated use Decoder; kept for one release */
export type { ConformanceBackend } from "@sgfp4/format";
