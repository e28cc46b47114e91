/**
 * Every failure in the kit is an Sgfp4Error. Stream faults carry a code from DECISIONS.md
 * section 3; the last three codes are about the call, not the stream.
 */
export const STREAM_ERROR_CODES = [
  "SIZE_MISMATCH",
  "BAD_MAGIC",
  "BAD_VERSION",
  "TRUNCATED",
  "NONZERO_PADDING",
  "RECORD_COUNT_MISMATCH",
  "MISALIGNED_OFFSET",
  "NONMONOTONIC_OFFSET",
  "OFFSET_OUT_OF_RANGE",
  "UNKNOWN_LAYOUT",
  "RESERVED_BITS",
  "NONFINITE_PARAMETER",
] as const;

/** Codes about the call rather than the stream (our additions, see docs/DECISIONS-LOCAL.md). */
export const USAGE_ERROR_CODES = [
  /** shape, profile or option out of its domain */
  "INVALID_ARGUMENT",
  /** DECISIONS.md section 5: the call would exceed a configured resource limit */
  "LIMIT_EXCEEDED",
  /** a backend failed for a reason that is not the stream's (device lost, out of memory) */
  "BACKEND_FAILURE",
  /** a model manifest that does not follow the manifest schema */
  "INVALID_MANIFEST",
] as const;

export type StreamErrorCode = (typeof STREAM_ERROR_CODES)[number];
export type UsageErrorCode = (typeof USAGE_ERROR_CODES)[number];
export type Sgfp4ErrorCode = StreamErrorCode | UsageErrorCode;

/** Where in the stream a fault was found. */
export interface ErrorLocation {
  /** byte offset in the stream */
  offset?: number;
  /** v2 record / v1 block index */
  record?: number;
  /** leaf index within the record */
  leaf?: number;
}

export class Sgfp4Error extends Error {
  readonly code: Sgfp4ErrorCode;
  readonly location: ErrorLocation;

  constructor(code: Sgfp4ErrorCode, detail: string, location: ErrorLocation = {}) {
    super(`${code}: ${detail}${describeLocation(location)}`);
    this.name = "Sgfp4Error";
    this.code = code;
    this.location = location;
  }

  /** True for the codes of DECISIONS.md section 3 (the stream is at fault). */
  get isStreamError(): boolean {
    return (STREAM_ERROR_CODES as readonly string[]).includes(this.code);
  }
}

export function isSgfp4Error(e: unknown): e is Sgfp4Error {
  return e instanceof Sgfp4Error || (typeof e === "object" && e !== null && (e as { name?: unknown }).name === "Sgfp4Error" && typeof (e as { code?: unknown }).code === "string");
}

export function isErrorCode(s: string): s is Sgfp4ErrorCode {
  return (STREAM_ERROR_CODES as readonly string[]).includes(s) || (USAGE_ERROR_CODES as readonly string[]).includes(s);
}

function describeLocation(loc: ErrorLocation): string {
  const parts: string[] = [];
  if (loc.record !== undefined) parts.push(`record ${loc.record}`);
  if (loc.leaf !== undefined) parts.push(`leaf ${loc.leaf}`);
  if (loc.offset !== undefined) parts.push(`byte offset ${loc.offset}`);
  return parts.length ? ` (at ${parts.join(", ")})` : "";
}
