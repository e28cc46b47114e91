/**
 * Greedy shrinking of a failing input and writing it as a golden-vector candidate
 * (shared/spec/VECTORS.md, version 1) into a findings folder for a human to review.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Decoder } from "@sgfp4/format";
import { describeOutcome, judge, runOutcomes, type Finding, type FuzzInput, type Outcome } from "./run.js";

export interface ShrinkOptions {
  timeoutMs?: number;
  /** most backend rounds spent shrinking (each round decodes once on every backend) */
  maxRounds?: number;
}

/**
 * Removes chunks of bytes (halves, quarters, ... single bytes), then zeroes chunks, keeping each
 * change while the backends still disagree. Only cross-backend disagreements shrink: when every
 * backend agrees and only the constructed output differs, the constructed case is the vector.
 */
export async function shrink(backends: readonly Decoder[], input: FuzzInput, opts: ShrinkOptions = {}): Promise<{ input: FuzzInput; outcomes: Record<string, Outcome>; rounds: number }> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxRounds = opts.maxRounds ?? 300;
  let rounds = 0;
  let best = input;
  let bestOutcomes = await runOutcomes(backends, best, timeoutMs);
  rounds++;
  const stillFails = async (candidate: FuzzInput): Promise<boolean> => {
    if (rounds >= maxRounds) return false;
    rounds++;
    const o = await runOutcomes(backends, candidate, timeoutMs);
    if (judge(o) === null) return false;
    best = candidate;
    bestOutcomes = o;
    return true;
  };
  for (let chunk = Math.max(1, best.bytes.length >> 1); chunk >= 1 && rounds < maxRounds; chunk >>= 1) {
    for (let at = 0; at + chunk <= best.bytes.length && rounds < maxRounds; ) {
      const b = best.bytes;
      const candidate = new Uint8Array(b.length - chunk);
      candidate.set(b.subarray(0, at));
      candidate.set(b.subarray(at + chunk), at);
      if (!(await stillFails({ ...best, bytes: candidate }))) at += chunk;
    }
  }
  for (let chunk = Math.max(1, best.bytes.length >> 2); chunk >= 1 && rounds < maxRounds; chunk >>= 2) {
    for (let at = 0; at < best.bytes.length && rounds < maxRounds; at += chunk) {
      const b = best.bytes;
      if (b.subarray(at, at + chunk).every((v) => v === 0)) continue;
      const candidate = b.slice();
      candidate.fill(0, at, at + chunk);
      await stillFails({ ...best, bytes: candidate });
    }
  }
  return { input: best, outcomes: bestOutcomes, rounds };
}

function leBytes(bits: Uint32Array): Uint8Array {
  const out = new Uint8Array(bits.length * 4);
  const dv = new DataView(out.buffer);
  bits.forEach((w, i) => dv.setUint32(4 * i, w, true));
  return out;
}

/** Append one candidate vector to the folder (creating index.json), return its id. */
export async function writeCandidate(
  dir: string,
  id: string,
  input: FuzzInput,
  expect: { decode: Uint32Array } | { reject: string },
  description: string,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const ext = input.profile === "v1" ? "fp4" : "sgfp4";
  const container = `${id}.${ext}`;
  await writeFile(path.join(dir, container), input.bytes);
  let expectJson: unknown;
  if ("decode" in expect) {
    const f32 = leBytes(expect.decode);
    await writeFile(path.join(dir, `${id}.f32`), f32);
    expectJson = { decode: { sha256: createHash("sha256").update(f32).digest("hex"), output: `${id}.f32` } };
  } else expectJson = { reject: expect.reject };
  const meta = { id, profile: input.profile, container, shape: input.shape, clauses: [], description, expect: expectJson };
  await writeFile(path.join(dir, `${id}.json`), JSON.stringify(meta, null, 2) + "\n");
  const indexPath = path.join(dir, "index.json");
  let index: { format: string; version: number; vectors: string[] } = { format: "sgfp4-golden-vectors", version: 1, vectors: [] };
  try {
    index = JSON.parse(await readFile(indexPath, "utf8")) as typeof index;
  } catch {
    // first candidate in this folder
  }
  if (!index.vectors.includes(`${id}.json`)) index.vectors.push(`${id}.json`);
  await writeFile(indexPath, JSON.stringify(index, null, 2) + "\n");
  return id;
}

/**
 * The expectation a candidate is written with: the constructed output for a valid case that
 * did not shrink; otherwise the outcome most backends gave (marked unconfirmed: a human decides
 * which side DECISIONS.md supports before the vector joins golden-vectors/).
 */
export function candidateExpectation(outcomes: Record<string, Outcome>, constructed?: Float32Array): { expect: { decode: Uint32Array } | { reject: string }; confirmed: boolean } {
  if (constructed) return { expect: { decode: new Uint32Array(constructed.buffer, constructed.byteOffset, constructed.length) }, confirmed: true };
  const votes = new Map<string, { n: number; expect: { decode: Uint32Array } | { reject: string } }>();
  for (const o of Object.values(outcomes)) {
    let key: string;
    let expect: { decode: Uint32Array } | { reject: string };
    if (o.kind === "decoded") {
      key = "decode:" + createHash("sha256").update(leBytes(o.bits)).digest("hex");
      expect = { decode: o.bits };
    } else if (o.kind === "rejected") {
      key = "reject";
      expect = { reject: "ANY" };
    } else continue;
    const v = votes.get(key) ?? { n: 0, expect };
    v.n++;
    votes.set(key, v);
  }
  const best = [...votes.values()].sort((a, b) => b.n - a.n)[0];
  return { expect: best?.expect ?? { reject: "ANY" }, confirmed: false };
}

export async function saveFinding(dir: string, backends: readonly Decoder[], f: Finding, opts: ShrinkOptions = {}): Promise<string> {
  const allAgree = new Set(Object.values(f.outcomes).map((o) => (o.kind === "decoded" ? "d" + o.bits.join(",") : o.kind === "rejected" ? "r" : o.kind))).size === 1;
  let input = f.input;
  let outcomes = f.outcomes;
  let constructed = f.expected;
  let note = "";
  if (!(f.expected && allAgree)) {
    const s = await shrink(backends, f.input, opts);
    if (s.input.bytes.length !== f.input.bytes.length || s.input.bytes.some((v, i) => v !== f.input.bytes[i])) {
      input = s.input;
      outcomes = s.outcomes;
      constructed = undefined; // the bytes changed, the construction no longer applies
      note = ` Shrunk from ${f.input.bytes.length} to ${input.bytes.length} bytes in ${s.rounds} rounds.`;
    }
  }
  const { expect, confirmed } = candidateExpectation(outcomes, constructed);
  const seen = Object.entries(outcomes).map(([n, o]) => `${n}: ${describeOutcome(o)}`).join("; ");
  const description = `fuzz seed ${f.seed} case ${f.caseIndex}${f.ops.length ? ` (${f.ops.join(", ")})` : ""}: ${f.reason}.${note} Backends: ${seen}.${confirmed ? "" : " UNCONFIRMED expectation (majority of backends): check it against DECISIONS.md."}`;
  return writeCandidate(dir, `fuzz-s${f.seed}-c${f.caseIndex}`, input, expect, description);
}
