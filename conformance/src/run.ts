/** Runs every vector of a set against every backend and collects per-case results. */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { STREAM_ERROR_CODES } from "@sgfp4/format";
import type { Availability, ConformanceBackend } from "./backend.js";
import { compareBits, floatWords, hex32, wordsFromLE, type BitMismatch, type LengthMismatch } from "./compare.js";
import type { Vector, VectorSet } from "./vectors.js";

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
) & { /** one line saying what went wrong */ message: string };

export interface CaseResult {
  vector: string;
  /** "decode" or "reject CODE" */
  expect: string;
  status: "passed" | "failed" | "skipped";
  durationMs: number;
  failure?: CaseFailure;
  /** why a case was skipped */
  reason?: string;
}

export interface BackendResult {
  name: string;
  available: boolean;
  /** availability detail (device name...) or the reason it is unavailable */
  detail?: string;
  reason?: string;
  required: boolean;
  passed: number;
  failed: number;
  skipped: number;
  durationMs: number;
  cases: CaseResult[];
}

export interface ConformanceResult {
  vectorsDir: string;
  vectorCount: number;
  startedAt: string;
  durationMs: number;
  backends: BackendResult[];
  totals: { passed: number; failed: number; skipped: number };
  /** false when any available backend failed a case, or a required backend is unavailable */
  ok: boolean;
}

export type ProgressEvent =
  | { type: "backend-start"; backend: string; available: boolean; reason?: string; total: number }
  /** index: how many cases of this backend had finished before this one */
  | { type: "case"; backend: string; index: number; total: number; vector: string; status: CaseResult["status"] }
  | { type: "backend-end"; backend: string; result: BackendResult };

export interface RunOptions {
  vectors: VectorSet;
  backends: readonly ConformanceBackend[];
  /** backend names that must be available (an unavailable one fails all its cases) */
  require?: readonly string[];
  onProgress?: (e: ProgressEvent) => void;
  /** per-case limit for a backend's decode promise; default 120 s */
  caseTimeoutMs?: number;
  /**
   * Cases run at once per backend (default 1). Worth raising for --backend-cmd decoders, which
   * spend most of their time starting a process; in-process backends gain little.
   */
  concurrency?: number | ((backend: ConformanceBackend) => number);
  /** close() each backend at the end (default true) */
  closeBackends?: boolean;
}

const describeExpect = (v: Vector): string => (v.expect.kind === "decode" ? "decode" : `reject ${v.expect.code}`);

function errorCode(e: unknown): string | undefined {
  if (typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string") return (e as { code: string }).code;
  return undefined;
}
function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

const isFloat32Array = (x: unknown): x is Float32Array => Object.prototype.toString.call(x) === "[object Float32Array]";

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

function fmtValue(x: number): string {
  return Object.is(x, -0) ? "-0" : String(x);
}

function mismatchMessage(m: BitMismatch): string {
  return `element ${m.index} (row ${m.row}, col ${m.col}): expected ${hex32(m.expectedBits)} (${fmtValue(m.expectedValue)}), got ${hex32(m.actualBits)} (${fmtValue(m.actualValue)}); ${m.differing} of ${m.total} elements differ`;
}

/** Judge one backend's answer for one vector. Exported for tests and other runners. */
export async function checkCase(backend: ConformanceBackend, vector: Vector, caseTimeoutMs = 120_000): Promise<CaseFailure | null> {
  const bytes = new Uint8Array(await readFile(vector.containerPath));
  let output: unknown;
  try {
    output = await withTimeout(Promise.resolve().then(() => backend.decode(bytes, { profile: vector.profile, shape: vector.shape })), caseTimeoutMs);
  } catch (e) {
    if (e instanceof CaseTimeout) return { kind: "timeout", timeoutMs: caseTimeoutMs, message: `no answer within ${caseTimeoutMs} ms` };
    const code = errorCode(e);
    const msg = errorMessage(e);
    if (vector.expect.kind === "decode") {
      return { kind: "unexpected-error", code, errorMessage: msg, message: `expected a decode, backend refused${code ? ` with ${code}` : ""}: ${msg}` };
    }
    const want = vector.expect.code;
    if (code === undefined) return { kind: "unexpected-error", errorMessage: msg, message: `expected reject ${want}, backend threw an error without a code: ${msg}` };
    const accepted = want === "ANY" ? (STREAM_ERROR_CODES as readonly string[]).includes(code) : code === want;
    if (accepted) return null;
    return { kind: "wrong-code", expectedCode: want, actualCode: code, errorMessage: msg, message: `expected reject ${want === "ANY" ? "with any section-3 code" : want}, got ${code}: ${msg}` };
  }
  if (vector.expect.kind === "reject") {
    return { kind: "decoded-reject", expectedCode: vector.expect.code, message: `expected reject ${vector.expect.code}, backend decoded the stream` };
  }
  if (!isFloat32Array(output)) {
    return { kind: "bad-result", detail: Object.prototype.toString.call(output), message: `decode returned ${Object.prototype.toString.call(output)}, not a Float32Array` };
  }
  const [, cols] = vector.shape;
  const expectedLength = vector.shape[0] * cols;
  if (vector.expect.outputPath === undefined) {
    // Only the hash is kept: length first, then the sha256 of the LE bytes.
    if (output.length !== expectedLength) return { kind: "length", expectedLength, actualLength: output.length, message: `output has ${output.length} elements, expected ${expectedLength}` };
    const le = new Uint8Array(output.length * 4);
    const dv = new DataView(le.buffer);
    const words = floatWords(output);
    for (let i = 0; i < words.length; i++) dv.setUint32(4 * i, words[i]!, true);
    const actualSha256 = createHash("sha256").update(le).digest("hex");
    if (actualSha256 === vector.expect.sha256) return null;
    return { kind: "hash", expectedSha256: vector.expect.sha256, actualSha256, message: `output sha256 ${actualSha256} != expected ${vector.expect.sha256} (no expected output file, so no element detail)` };
  }
  const expected = wordsFromLE(new Uint8Array(await readFile(vector.expect.outputPath)));
  const diff = compareBits(expected, floatWords(output), cols);
  if (diff === null) return null;
  if (diff.kind === "length") return { ...diff, message: `output has ${diff.actualLength} elements, expected ${diff.expectedLength}` };
  return { ...diff, message: mismatchMessage(diff) };
}

async function safeAvailable(b: ConformanceBackend): Promise<Availability> {
  try {
    const a = await b.available();
    if (a && typeof a === "object" && (a.ok === true || a.ok === false)) return a;
    return { ok: false, reason: "available() returned something other than {ok: ...}" };
  } catch (e) {
    return { ok: false, reason: `available() threw: ${errorMessage(e)}` };
  }
}

export async function runConformance(opts: RunOptions): Promise<ConformanceResult> {
  const started = Date.now();
  const required = new Set(opts.require ?? []);
  const names = new Set(opts.backends.map((b) => b.name));
  for (const r of required) {
    if (!names.has(r)) throw new Error(`--require ${r}: no backend of that name is in the run (backends: ${[...names].join(", ") || "none"})`);
  }
  const vectors = opts.vectors.vectors;
  const results: BackendResult[] = [];
  try {
    for (const backend of opts.backends) {
      const t0 = Date.now();
      const availability = await safeAvailable(backend);
      const isRequired = required.has(backend.name);
      const result: BackendResult = {
        name: backend.name,
        available: availability.ok,
        required: isRequired,
        passed: 0,
        failed: 0,
        skipped: 0,
        durationMs: 0,
        cases: [],
      };
      if (availability.ok) {
        if (availability.detail) result.detail = availability.detail;
      } else result.reason = availability.reason;
      opts.onProgress?.({ type: "backend-start", backend: backend.name, available: availability.ok, ...(availability.ok ? {} : { reason: availability.reason }), total: vectors.length });
      const runOne = async (vector: Vector): Promise<CaseResult> => {
        const c0 = Date.now();
        if (!availability.ok) {
          const reason = availability.reason;
          return isRequired
            ? { vector: vector.id, expect: describeExpect(vector), status: "failed", durationMs: 0, failure: { kind: "required-unavailable", reason, message: `required backend is unavailable: ${reason}` } }
            : { vector: vector.id, expect: describeExpect(vector), status: "skipped", durationMs: 0, reason };
        }
        const failure = await checkCase(backend, vector, opts.caseTimeoutMs);
        const c: CaseResult = { vector: vector.id, expect: describeExpect(vector), status: failure ? "failed" : "passed", durationMs: Date.now() - c0 };
        if (failure) c.failure = failure;
        return c;
      };
      // Cases of one backend run `concurrency` at a time; results stay in vector order.
      const cases: CaseResult[] = new Array(vectors.length);
      let next = 0;
      let done = 0;
      const worker = async (): Promise<void> => {
        while (next < vectors.length) {
          const i = next++;
          const c = await runOne(vectors[i]!);
          cases[i] = c;
          opts.onProgress?.({ type: "case", backend: backend.name, index: done++, total: vectors.length, vector: c.vector, status: c.status });
        }
      };
      const wanted = typeof opts.concurrency === "function" ? opts.concurrency(backend) : (opts.concurrency ?? 1);
      const workers = availability.ok ? Math.max(1, Math.min(Math.floor(wanted) || 1, vectors.length)) : 1;
      await Promise.all(Array.from({ length: workers }, worker));
      for (const c of cases) {
        result[c.status]++;
        result.cases.push(c);
      }
      result.durationMs = Date.now() - t0;
      results.push(result);
      opts.onProgress?.({ type: "backend-end", backend: backend.name, result });
    }
  } finally {
    if (opts.closeBackends !== false) {
      // a failing close() must not hide the results
      for (const b of opts.backends) await Promise.resolve().then(() => b.close?.()).catch(() => undefined);
    }
  }
  const totals = { passed: 0, failed: 0, skipped: 0 };
  for (const r of results) {
    totals.passed += r.passed;
    totals.failed += r.failed;
    totals.skipped += r.skipped;
  }
  // A required backend with an empty vector set still has to be there.
  const missingRequired = results.some((r) => r.required && !r.available);
  return {
    vectorsDir: opts.vectors.dir,
    vectorCount: vectors.length,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    backends: results,
    totals,
    ok: totals.failed === 0 && !missingRequired,
  };
}
