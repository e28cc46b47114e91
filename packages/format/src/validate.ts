import { isSgfp4Error, type Sgfp4ErrorCode } from "./errors.js";
import { parse, type Container, type ParseOptions, type Warning } from "./parse.js";

export interface ValidateOptions extends ParseOptions {
  /** Also fail on the warnings of DECISIONS.md section 4 (ignored bytes) and negative scales. */
  strict?: boolean;
}

export interface ValidationReport {
  /** false when the stream is rejected, or with `strict` when there is any warning */
  ok: boolean;
  /** the rejection code (DECISIONS.md section 3), when the stream is rejected */
  code?: Sgfp4ErrorCode;
  message?: string;
  /** non-fatal findings; always listed, they fail validation only with `strict` */
  warnings: readonly Warning[];
  container?: Container;
}

/** The decode-level checks without decoding. Never throws for a bad stream; throws for bad arguments. */
export function validate(bytes: Uint8Array, opts: ValidateOptions): ValidationReport {
  let container: Container;
  try {
    container = parse(bytes, opts);
  } catch (e) {
    if (isSgfp4Error(e) && e.isStreamError) return { ok: false, code: e.code, message: e.message, warnings: [] };
    throw e;
  }
  const warnings = container.warnings;
  return { ok: !(opts.strict && warnings.length > 0), warnings, container };
}
