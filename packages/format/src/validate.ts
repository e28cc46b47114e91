import { isSgfp4Error, type Sgfp4ErrorCode } from "./errors.js";
import { parse, type Container, type ParseOptions, type Warning } from "./parse.js";

export interface ValidateOptions extends ParseOptions {
  /** Also report the warnings of DECISIONS.md section 4 (ignored bytes, negative scales). */
  strict?: boolean;
}

export type ValidationResult =
  | { ok: true; container: Container; warnings: readonly Warning[] }
  | { ok: false; code: Sgfp4ErrorCode; message: string; warnings: readonly Warning[] };

/**
 * The decode-level checks without decoding. With `strict`, warnings make the result fail too
 * (ok is false with code undefined is never returned: warnings are listed, `ok` stays true
 * unless `strict` and there are warnings, in which case `ok` is false with the first one).
 */
export function validate(bytes: Uint8Array, opts: ValidateOptions): ValidationResult & { strictOk: boolean } {
  try {
    const container = parse(bytes, opts);
    const warnings = opts.strict ? container.warnings : [];
    return { ok: true, container, warnings, strictOk: warnings.length === 0 };
  } catch (e) {
    if (!isSgfp4Error(e)) throw e;
    return { ok: false, code: e.code, message: e.message, warnings: [], strictOk: false };
  }
}
