/**
 * The differential fuzz loop. Case i of seed s is generated from Rng(s, i) alone, so any case
 * reproduces with `--seed s --from i --cases 1`. Each case goes to every backend:
 *   valid   every backend decodes it, bit for bit equal to the output known from construction
 *   mutated every backend rejects it with a DECISIONS.md section 3 code (codes may differ:
 *           several faults allow any), or every backend decodes it to the same bits
 * An error without a section-3 code, a timeout, or a thrown non-Sgfp4 error is always a finding.
 */
import { STREAM_ERROR_CODES } from "@sgfp4/format";
import type { Decoder } from "@sgfp4/format";
import { Rng, generateValid, mutate, type GeneratedCase, type Profile } from "@sgfp4/testkit";

export type Outcome =
  | { kind: "decoded"; bits: Uint32Array }
  | { kind: "rejected"; code: string; message: string }
  /** threw something that is not a section-3 rejection (usage code, plain Error, crash) */
  | { kind: "error"; code?: string; message: string }
  | { kind: "timeout"; ms: number };

export interface FuzzInput {
  profile: Profile;
  shape: [number, number];
  bytes: Uint8Array;
}

export interface Finding {
  caseIndex: number;
  seed: number;
  mutated: boolean;
  ops: string[];
  input: FuzzInput;
  /** expected output from construction (valid cases only) */
  expected?: Float32Array;
  outcomes: Record<string, Outcome>;
  reason: string;
}

export interface BackendStats {
  cases: number;
  decoded: number;
  rejected: Record<string, number>;
  errors: number;
  timeouts: number;
  ms: number;
}

export interface FuzzStats {
  seed: number;
  cases: number;
  valid: number;
  mutated: number;
  /** mutated inputs that every backend still decoded (identically) */
  mutatedDecoded: number;
  backends: Record<string, BackendStats>;
  findings: Finding[];
  durationMs: number;
}

export interface FuzzOptions {
  seed: number;
  /** first case index (to reproduce one case) */
  from?: number;
  /** stop after this many cases (default unbounded when seconds is set, else 100) */
  cases?: number;
  /** stop after this many seconds */
  seconds?: number;
  /** share of cases that are mutated (default 0.6) */
  mutateRatio?: number;
  caseTimeoutMs?: number;
  maxTiles?: number;
  onCaseStart?: (index: number) => void;
  /** after each case, with its outcomes, the finding if any, and each backend's time (ms) */
  onCaseDone?: (index: number, outcomes: Record<string, Outcome>, info: { mutated: boolean; finding?: Finding; ms: Record<string, number> }) => void | Promise<void>;
  onFinding?: (f: Finding) => void | Promise<void>;
}

const STREAM_CODES = new Set<string>(STREAM_ERROR_CODES);

class Timeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Timeout()), ms)))]).finally(() => clearTimeout(timer));
}

export async function decodeOutcome(backend: Decoder, input: FuzzInput, timeoutMs: number): Promise<Outcome> {
  try {
    const out = await withTimeout(
      Promise.resolve().then(() => backend.decode(input.bytes, { profile: input.profile, shape: input.shape })),
      timeoutMs,
    );
    if (!(out instanceof Float32Array)) return { kind: "error", message: `decode returned ${Object.prototype.toString.call(out)}` };
    return { kind: "decoded", bits: new Uint32Array(out.buffer, out.byteOffset, out.length).slice() };
  } catch (e) {
    if (e instanceof Timeout) return { kind: "timeout", ms: timeoutMs };
    const code = typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : undefined;
    const message = e instanceof Error ? e.message : String(e);
    if (code && STREAM_CODES.has(code)) return { kind: "rejected", code, message };
    return { kind: "error", ...(code ? { code } : {}), message };
  }
}

const sameBits = (a: Uint32Array, b: Uint32Array): boolean => a.length === b.length && a.every((w, i) => w === b[i]);

export function describeOutcome(o: Outcome): string {
  switch (o.kind) {
    case "decoded":
      return `decoded ${o.bits.length} floats`;
    case "rejected":
      return `rejected ${o.code}`;
    case "error":
      return `error${o.code ? ` ${o.code}` : ""}: ${o.message}`;
    case "timeout":
      return `timeout after ${o.ms} ms`;
  }
}

function firstDifference(a: Uint32Array, b: Uint32Array): string {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  const i = a.findIndex((w, k) => w !== b[k]);
  return `element ${i}: 0x${a[i]!.toString(16).padStart(8, "0")} vs 0x${b[i]!.toString(16).padStart(8, "0")}`;
}

/**
 * The verdict on one input's outcomes: null when they satisfy the rules above, else why not.
 * `expected` is given for valid (unmutated) inputs.
 */
export function judge(outcomes: Record<string, Outcome>, expected?: Float32Array): string | null {
  const entries = Object.entries(outcomes);
  for (const [name, o] of entries) {
    if (o.kind === "error" || o.kind === "timeout") return `${name}: ${describeOutcome(o)}`;
  }
  if (expected) {
    const want = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
    for (const [name, o] of entries) {
      if (o.kind !== "decoded") return `${name} ${describeOutcome(o)} on a valid stream`;
      if (!sameBits(o.bits, want)) return `${name} differs from the constructed output at ${firstDifference(o.bits, want)}`;
    }
    return null;
  }
  const decoded = entries.filter(([, o]) => o.kind === "decoded") as [string, Extract<Outcome, { kind: "decoded" }>][];
  if (decoded.length === 0) return null; // all rejected, any section-3 codes
  if (decoded.length !== entries.length) {
    const rejected = entries.filter(([, o]) => o.kind !== "decoded").map(([n, o]) => `${n} ${describeOutcome(o)}`);
    return `${decoded.map(([n]) => n).join(", ")} decoded but ${rejected.join(", ")}`;
  }
  const [firstName, first] = decoded[0]!;
  for (const [name, o] of decoded.slice(1)) {
    if (!sameBits(o.bits, first.bits)) return `${name} and ${firstName} decode differently (${firstDifference(o.bits, first.bits)})`;
  }
  return null;
}

export function newStats(seed: number, backends: readonly Decoder[]): FuzzStats {
  const stats: FuzzStats = { seed, cases: 0, valid: 0, mutated: 0, mutatedDecoded: 0, backends: {}, findings: [], durationMs: 0 };
  for (const b of backends) stats.backends[b.name] = { cases: 0, decoded: 0, rejected: {}, errors: 0, timeouts: 0, ms: 0 };
  return stats;
}

/** Case i of a seed: the valid container, and its mutation when this case is a mutated one. */
export function makeCase(seed: number, index: number, opts: { mutateRatio?: number; maxTiles?: number } = {}): { valid: GeneratedCase; mutated?: ReturnType<typeof mutate> } {
  const rng = new Rng(seed, index);
  const valid = generateValid(rng, { maxTiles: opts.maxTiles ?? 3 });
  if (!rng.chance(opts.mutateRatio ?? 0.6)) return { valid };
  return { valid, mutated: mutate(rng, valid) };
}

export async function runOutcomes(backends: readonly Decoder[], input: FuzzInput, timeoutMs: number, stats?: FuzzStats, ms?: Record<string, number>): Promise<Record<string, Outcome>> {
  const outcomes: Record<string, Outcome> = {};
  for (const b of backends) {
    const t0 = performance.now();
    const o = await decodeOutcome(b, input, timeoutMs);
    outcomes[b.name] = o;
    const took = performance.now() - t0;
    if (ms) ms[b.name] = took;
    if (stats) {
      const s = stats.backends[b.name]!;
      s.cases++;
      s.ms += took;
      if (o.kind === "decoded") s.decoded++;
      else if (o.kind === "rejected") s.rejected[o.code] = (s.rejected[o.code] ?? 0) + 1;
      else if (o.kind === "timeout") s.timeouts++;
      else s.errors++;
    }
  }
  return outcomes;
}

export async function runFuzz(backends: readonly Decoder[], opts: FuzzOptions): Promise<FuzzStats> {
  const started = Date.now();
  const stats = newStats(opts.seed, backends);
  const timeoutMs = opts.caseTimeoutMs ?? 30_000;
  const limit = opts.cases ?? (opts.seconds !== undefined ? Infinity : 100);
  const deadline = opts.seconds !== undefined ? started + opts.seconds * 1000 : Infinity;
  const from = opts.from ?? 0;
  for (let i = from; i < from + limit && Date.now() < deadline; i++) {
    const { valid, mutated } = makeCase(opts.seed, i, opts);
    const input: FuzzInput = mutated ? { profile: mutated.profile, shape: mutated.shape, bytes: mutated.bytes } : { profile: valid.profile, shape: valid.shape, bytes: valid.bytes };
    if (mutated) stats.mutated++;
    else stats.valid++;
    opts.onCaseStart?.(i);
    const ms: Record<string, number> = {};
    const outcomes = await runOutcomes(backends, input, timeoutMs, stats, ms);
    stats.cases++;
    const expected = mutated ? undefined : valid.expected;
    if (mutated && Object.values(outcomes).every((o) => o.kind === "decoded")) stats.mutatedDecoded++;
    const reason = judge(outcomes, expected);
    let finding: Finding | undefined;
    if (reason !== null) {
      finding = { caseIndex: i, seed: opts.seed, mutated: !!mutated, ops: mutated?.ops ?? [], input, outcomes, reason, ...(expected ? { expected } : {}) };
      stats.findings.push(finding);
      await opts.onFinding?.(finding);
    }
    await opts.onCaseDone?.(i, outcomes, { mutated: !!mutated, ms, ...(finding ? { finding } : {}) });
  }
  stats.durationMs = Date.now() - started;
  return stats;
}
