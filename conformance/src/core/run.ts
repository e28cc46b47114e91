/**
 * Runs every vector of a set against every decoder, in each output format the decoder
 * declares, and collects one result row per decoder and format. Runtime-independent: the
 * vectors come through the set's VectorSource.
 */
import { decoderFormats, type Availability, type Decoder, type OutputFormat } from "@sgfp4/format";
import { errorMessage, judgeCase, type CaseFailure } from "./judge.js";
import type { Vector, VectorSet } from "./vectors.js";

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

/** One decoder in one output format. */
export interface BackendResult {
  name: string;
  format: OutputFormat;
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
  /** why the run is not ok beyond failed cases (a required decoder that is unavailable fails its cases): nothing was checked */
  problems: string[];
  /** true only when some case passed and none failed (an unavailable required decoder fails its cases) */
  ok: boolean;
}

export type ProgressEvent =
  | { type: "backend-start"; backend: string; format: OutputFormat; available: boolean; reason?: string; total: number }
  /** index: how many cases of this row had finished before this one */
  | { type: "case"; backend: string; format: OutputFormat; index: number; total: number; vector: string; status: CaseResult["status"] }
  | { type: "backend-end"; backend: string; format: OutputFormat; result: BackendResult };

export interface RunOptions {
  vectors: VectorSet;
  backends: readonly Decoder[];
  /** decoder names that must be available (an unavailable one fails all its cases) */
  require?: readonly string[];
  /** output formats to judge (default all three); each decoder runs those it declares */
  formats?: readonly OutputFormat[];
  onProgress?: (e: ProgressEvent) => void;
  /** per-case limit for a decoder's decode promise; default 120 s */
  caseTimeoutMs?: number;
  /**
   * Cases run at once per decoder (default 1). Worth raising for command decoders, which
   * spend most of their time starting a process; in-process decoders gain little.
   */
  concurrency?: number | ((backend: Decoder) => number);
  /** close() each decoder at the end (default true) */
  closeBackends?: boolean;
}

export const ALL_FORMATS: readonly OutputFormat[] = ["f32", "f16", "bf16"];

const describeExpect = (v: Vector): string => (v.expect.kind === "decode" ? "decode" : `reject ${v.expect.code}`);

async function safeAvailable(b: Decoder): Promise<Availability> {
  try {
    const a = await b.available();
    if (a && typeof a === "object" && (a.ok === true || a.ok === false)) return a;
    return { ok: false, reason: "available() returned something other than {ok: ...}" };
  } catch (e) {
    return { ok: false, reason: `available() threw: ${errorMessage(e)}` };
  }
}

/** Run `count` tasks, `workers` at a time; results keep task order. */
async function pool<T>(count: number, workers: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      out[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(workers, count)) }, worker));
  return out;
}

async function runRow(opts: RunOptions, backend: Decoder, format: OutputFormat, availability: Availability, required: boolean): Promise<BackendResult> {
  const vectors = opts.vectors.vectors;
  const t0 = Date.now();
  const result: BackendResult = { name: backend.name, format, available: availability.ok, required, passed: 0, failed: 0, skipped: 0, durationMs: 0, cases: [] };
  if (availability.ok) {
    if (availability.detail) result.detail = availability.detail;
  } else result.reason = availability.reason;
  opts.onProgress?.({ type: "backend-start", backend: backend.name, format, available: availability.ok, ...(availability.ok ? {} : { reason: availability.reason }), total: vectors.length });
  let done = 0;
  const runOne = async (i: number): Promise<CaseResult> => {
    const vector = vectors[i]!;
    const base = { vector: vector.id, expect: describeExpect(vector) };
    let c: CaseResult;
    if (!availability.ok) {
      const reason = availability.reason;
      c = required
        ? { ...base, status: "failed", durationMs: 0, failure: { kind: "required-unavailable", reason, message: `required decoder is unavailable: ${reason}` } }
        : { ...base, status: "skipped", durationMs: 0, reason };
    } else {
      const c0 = Date.now();
      const verdict = await judgeCase(backend, vector, opts.vectors.source, { format, ...(opts.caseTimeoutMs ? { timeoutMs: opts.caseTimeoutMs } : {}) });
      c = { ...base, status: verdict.status, durationMs: Date.now() - c0 };
      if (verdict.status === "failed") c.failure = verdict.failure;
      if (verdict.status === "skipped") c.reason = verdict.reason;
    }
    opts.onProgress?.({ type: "case", backend: backend.name, format, index: done++, total: vectors.length, vector: c.vector, status: c.status });
    return c;
  };
  const wanted = typeof opts.concurrency === "function" ? opts.concurrency(backend) : (opts.concurrency ?? 1);
  const cases = await pool(vectors.length, availability.ok ? Math.floor(wanted) || 1 : 1, runOne);
  for (const c of cases) {
    result[c.status]++;
    result.cases.push(c);
  }
  result.durationMs = Date.now() - t0;
  opts.onProgress?.({ type: "backend-end", backend: backend.name, format, result });
  return result;
}

export async function runConformance(opts: RunOptions): Promise<ConformanceResult> {
  const started = Date.now();
  const required = new Set(opts.require ?? []);
  const names = new Set(opts.backends.map((b) => b.name));
  for (const r of required) {
    if (!names.has(r)) throw new Error(`--require ${r}: no decoder of that name is in the run (decoders: ${[...names].join(", ") || "none"})`);
  }
  const wantedFormats = opts.formats ?? ALL_FORMATS;
  const results: BackendResult[] = [];
  try {
    for (const backend of opts.backends) {
      const availability = await safeAvailable(backend);
      const formats = decoderFormats(backend).filter((f) => wantedFormats.includes(f));
      for (const format of formats) results.push(await runRow(opts, backend, format, availability, required.has(backend.name)));
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
  const problems: string[] = [];
  if (opts.vectors.vectors.length === 0) problems.push("the vector set has no vectors");
  else if (results.length === 0) problems.push("no decoder in the run writes any of the requested formats");
  else if (totals.passed + totals.failed === 0) problems.push("no case ran: every case was skipped (see the reasons above)");
  for (const name of required) {
    if (!results.some((r) => r.name === name)) problems.push(`required decoder ${name} writes none of the requested formats`);
  }
  return {
    vectorsDir: opts.vectors.dir,
    vectorCount: opts.vectors.vectors.length,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    backends: results,
    totals,
    problems,
    ok: totals.failed === 0 && totals.passed > 0 && problems.length === 0,
  };
}
