/**
 * @sgfp4/format public API, listed by name (a new export is a decision, not a side effect of
 * `export *`). Internals (the parser's split-map walk, the portable contract's expression tree)
 * stay in their modules; tests import those by relative path.
 */
export { STREAM_ERROR_CODES, USAGE_ERROR_CODES, Sgfp4Error, isSgfp4Error, isErrorCode } from "./errors.js";
export type { StreamErrorCode, UsageErrorCode, Sgfp4ErrorCode, ErrorLocation } from "./errors.js";

export { halfBitsToFloatBits, halfToFloat, floatBitsToHalfBits, floatToHalf, float32Bits, bitsToFloat32, isHalfNonFinite, HALF_MAX, HALF_EXPONENT_MASK } from "./fp16.js";

export { MACROBLOCK, V1_PAYLOAD_BYTES, LAYOUT, LAYOUT_NAMES, UNIFORM_LEAF_SIZE, tiling, payloadBytes, align16 } from "./geometry.js";
export type { Profile, Shape, Layout, Tiling } from "./geometry.js";

// The leaf-table contract (docs/ARCHITECTURE.md "The leaf table").
export {
  LEAF_WORDS,
  LEAF_BLOCK_WORD,
  LEAF_GEOMETRY_WORD,
  LEAF_PARAMS_WORD,
  LEAF_PAYLOAD_WORD,
  GEOMETRY_FIELDS,
  PARAMS_FIELDS,
  MIN_LEAF_LOG2,
  MAX_LEAF_LOG2,
  PAYLOAD_ALIGN,
  MODE_FP4,
  MODE_T158,
  FP4_CODE_BITS,
  T158_CODE_BITS,
  T158_CODES,
  V2_LEAF_HEADER,
  V1_OFFSET_FLAGS,
  V1_T158_BYTES,
  fieldMask,
  geometryY,
  geometryX,
  geometryLog2,
  geometryMode,
  packGeometry,
  paramsScaleBits,
  paramsBiasBits,
  packParams,
  v2HeaderParams,
  codeBits,
  leafPayloadBytes,
  fp4Code,
  t158Code,
  readLeaf,
  writeLeaf,
} from "./leaf-table.js";
export type { BitField, Mode, LeafEntry } from "./leaf-table.js";
// The same contract as C/C++, GLSL and WGSL source (also published as files in generated/).
export { LEAF_TABLE_WGSL, CONTRACT_FILES, emitContract } from "./emit.js";
export type { ContractLanguage } from "./emit.js";

export { parse, parseUntilFault, leafAt, checkShape, detectProfile, DEFAULT_MAX_OUTPUT_BYTES } from "./parse.js";
export type { Limits, ParseOptions, PartialParse, BlockInfo, Leaf, Warning, Container } from "./parse.js";
export { validate } from "./validate.js";
export type { ValidateOptions, ValidationReport } from "./validate.js";
export { writeV1, writeV2, writeV2Record, assembleV2, v2Prefix, encodeTree, packCodes } from "./writer.js";
export type { LeafSpec, V1BlockSpec, V1Spec, QuadTree, V2RecordSpec, V2Spec } from "./writer.js";

export { MANIFEST_FORMAT, MANIFEST_VERSION, sha256Hex, decodedSha256, parseManifest, serializeManifest, verifyManifest } from "./manifest.js";
export type { ManifestTensor, Manifest, TensorVerification, VerifyReport } from "./manifest.js";

export { OUTPUT_FORMATS, decoderFormats, requestedFormat, decodeFloat32 } from "./decoder.js";
export type { Availability, DecodeRequest, DecodedArray, Decoder, OutputFormat, ConformanceBackend } from "./decoder.js";
