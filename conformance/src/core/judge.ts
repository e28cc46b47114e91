/**
 * The case judge: one decoder, one vector, one output format -> passed, failed (with what went
 * wrong) or skipped (with why). f16/bf16 expectations come from the vector's float32 file
 * through the judge's own conversion (halfs.ts, P10).
 */
import { STREAM_ERROR_CODES, decodedSha256, type Decoder, type OutputFormat } from "@sgfp4/format";
import { compareBits, hexBits, wordsFromLE, type BitMismatch, type LengthMismatch } from "./compare.js";
import { expectedWords } from "./halfs.js";
import type { Vector, VectorSource } from "./vectors.js";

export type CaseFailure = (
  | BitMismatch
  | LengthMismatch
  | { kind: "hash"; expectedSha256: string; actualSha256: string }
  | { kind: "unexpected-error"; code?: string; errorMessage: string }
  | { kind: "wrong-code"; expectedCode: string; actualCode: string; errorMessage: string }
  | { kind: "decoded-reject"; expectedCode: string }
  | { kind: "bad-result"; detail: string }
  | { kind: "timeout"; timeoutMs: number }
  | { kind: "required-unavailable"; reason: string }
  | { kind: "unreadable"; errorMessage: string }
) & { /** one line saying what went wrong */ message: string };

export type Verdict = { status: "passed"; /** the code of an accepted refusal */ rejectedWith?: string } | { status: "failed"; failure: CaseFailure } | { status: "skipped"; reason: string };

const PASSED: Verdict = { status: "passed" };
const failed = (failure: CaseFailure): Verdict => ({ status: "failed", failure });

function errorCode(e: unknown): string | undefined {
  if (typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string") return (e as { code: string }).code;
  return undefined;
}
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** What a decoder threw, as the code (when it carries one) and the message. */
export function describeError(e: unknown): { code?: string; message: string } {
  const code = errorCode(e);
  return { ...(code ? { code } : {}), message: errorMessage(e) };
}

const kindOf = (x: unknown): string => Object.prototype.toString.call(x);
const ARRAY_OF: Record<OutputFormat, string> = { f32: "[object Float32Array]", f16: "[object Uint16Array]", bf16: "[object Uint16Array]" };

class CaseTimeout extends Error {}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CaseTimeout()), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const fmtValue = (x: number): string => (Object.is(x, -0) ? "-0" : String(x));

function mismatchMessage(m: BitMismatch, format: OutputFormat): string {
  return `element ${m.index} (row ${m.row}, col ${m.col}): expected ${hexBits(m.expectedBits, format)} (${fmtValue(m.expectedValue)}), got ${hexBits(m.actualBits, format)} (${fmtValue(m.actualValue)}); ${m.differing} of ${m.total} elements differ`;
}

function judgeError(vector: Vector, e: unknown): Verdict {
  const { code, message: msg } = describeError(e);
  if (vector.expect.kind === "decode") {
    return failed({ kind: "unexpected-error", code, errorMessage: msg, message: `expected a decode, decoder refused${code ? ` with ${code}` : ""}: ${msg}` });
  }
  const want = vector.expect.code;
  if (code === undefined) return failed({ kind: "unexpected-error", errorMessage: msg, message: `expected reject ${want}, decoder threw an error without a code: ${msg}` });
  const accepted = want === "ANY" ? (STREAM_ERROR_CODES as readonly string[]).includes(code) : code === want;
  if (accepted) return { status: "passed", rejectedWith: code };
  return failed({ kind: "wrong-code", expectedCode: want, actualCode: code, errorMessage: msg, message: `expected reject ${want === "ANY" ? "with any section-3 code" : want}, got ${code}: ${msg}` });
}

export interface JudgeOptions {
  /** default "f32" */
  format?: OutputFormat;
  /** limit for the decode promise; default 120 s */
  timeoutMs?: number;
}

/** Judge one decoder's answer for one vector of `source`, in one output format. */
export async function judgeCase(decoder: Decoder, vector: Vector, source: VectorSource, opts: JudgeOptions = {}): Promise<Verdict> {
  const format = opts.format ?? "f32";
  const timeoutMs = opts.timeoutMs ?? 120_000;
  if (format !== "f32" && vector.expect.kind === "decode" && vector.expect.output === undefined) {
    return { status: "skipped", reason: `hash-only vector: no float32 values to derive the ${format} expectation from` };
  }
  let bytes: Uint8Array;
  try {
    bytes = await source.bytes(vector.container);
  } catch (e) {
    return failed({ kind: "unreadable", errorMessage: errorMessage(e), message: `cannot read ${vector.container}: ${errorMessage(e)}` });
  }
  let output: unknown;
  try {
    output = await withTimeout(Promise.resolve().then(() => decoder.decode(bytes, { profile: vector.profile, shape: vector.shape, format })), timeoutMs);
  } catch (e) {
    if (e instanceof CaseTimeout) return failed({ kind: "timeout", timeoutMs, message: `no answer within ${timeoutMs} ms` });
    return judgeError(vector, e);
  }
  if (vector.expect.kind === "reject") {
    return failed({ kind: "decoded-reject", expectedCode: vector.expect.code, message: `expected reject ${vector.expect.code}, decoder decoded the stream` });
  }
  if (kindOf(output) !== ARRAY_OF[format]) {
    return failed({ kind: "bad-result", detail: kindOf(output), message: `decode returned ${kindOf(output)}, not a ${ARRAY_OF[format].slice(8, -1)} for ${format}` });
  }
  const actual = output as Float32Array | Uint16Array;
  const [rows, cols] = vector.shape;
  const expectedLength = rows * cols;
  if (vector.expect.output === undefined) {
    // Only the hash is kept (f32 only, see above): length first, then the sha256 of the LE bytes.
    if (actual.length !== expectedLength) return failed({ kind: "length", expectedLength, actualLength: actual.length, message: `output has ${actual.length} elements, expected ${expectedLength}` });
    const actualSha256 = decodedSha256(actual as Float32Array);
    if (actualSha256 === vector.expect.sha256) return PASSED;
    return failed({ kind: "hash", expectedSha256: vector.expect.sha256, actualSha256, message: `output sha256 ${actualSha256} != expected ${vector.expect.sha256} (no expected output file, so no element detail)` });
  }
  let f32: Uint32Array;
  try {
    f32 = wordsFromLE(await source.bytes(vector.expect.output));
  } catch (e) {
    return failed({ kind: "unreadable", errorMessage: errorMessage(e), message: `cannot read ${vector.expect.output}: ${errorMessage(e)}` });
  }
  const actualWords = format === "f32" ? new Uint32Array(actual.buffer, actual.byteOffset, actual.length) : (actual as Uint16Array);
  const diff = compareBits(expectedWords(f32, format), actualWords, cols, format);
  if (diff === null) return PASSED;
  if (diff.kind === "length") return failed({ ...diff, message: `output has ${diff.actualLength} elements, expected ${diff.expectedLength}` });
  return failed({ ...diff, message: mismatchMessage(diff, format) });
}
