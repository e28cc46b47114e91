/**
 * Tiny vector folders built with @sgfp4/format's writer. Expected outputs come from the codes,
 * scales and biases chosen here (S * code + Bias with exact small values), never from a decoder.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { writeV1, writeV2, type LeafSpec } from "@sgfp4/format";

export type Answer = { floats: Float32Array } | { code: string };

export interface BuiltSet {
  dir: string;
  /** sha256(container) -> what a correct decoder answers */
  answers: Map<string, Answer>;
  ids: string[];
}

export const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

const fp4Codes = (n: number, seed: number): number[] => Array.from({ length: n }, (_, i) => ((i * 7 + seed) % 16) - 8);
const t158Codes = (n: number, seed: number): number[] => Array.from({ length: n }, (_, i) => ((i + seed) % 3) - 1);

/** v1, one FP4 block, scale 0.5 (0x3800), bias -1 (0xbc00): w = 0.5*code - 1. */
export function v1Case(shape: [number, number]): { bytes: Uint8Array; floats: Float32Array } {
  const codes = fp4Codes(64 * 64, 3);
  const bytes = writeV1({ shape, blocks: [{ mode: 0, scaleBits: 0x3800, biasBits: 0xbc00, codes }] });
  const [O, I] = shape;
  const floats = new Float32Array(O * I);
  for (let r = 0; r < O; r++) for (let c = 0; c < I; c++) floats[r * I + c] = 0.5 * codes[r * 64 + c]! - 1;
  return { bytes, floats };
}

/**
 * v2, one record UNIFORM_32: leaves TL, TR, BL, BR with scales 1, 2, 4, 8 (0x3c00 + k*0x400),
 * bias 1.0 (0x3c00) on odd leaves, leaf 3 in T158 mode.
 */
export function v2Case(shape: [number, number]): { bytes: Uint8Array; floats: Float32Array } {
  const leaves: LeafSpec[] = [];
  const grid = new Float32Array(64 * 64);
  for (let k = 0; k < 4; k++) {
    const mode = k === 3 ? 1 : 0;
    const codes = mode ? t158Codes(32 * 32, k) : fp4Codes(32 * 32, k);
    const scale = 2 ** k;
    const bias = k % 2 ? 1 : 0;
    leaves.push({ mode, scaleBits: 0x3c00 + k * 0x400, biasBits: k % 2 ? 0x3c00 : 0, codes });
    const y0 = Math.floor(k / 2) * 32;
    const x0 = (k % 2) * 32;
    for (let i = 0; i < 32; i++) for (let j = 0; j < 32; j++) grid[(y0 + i) * 64 + x0 + j] = scale * codes[i * 32 + j]! + bias;
  }
  const bytes = writeV2({ shape, records: [{ layout: 1, leaves }] });
  const [O, I] = shape;
  const floats = new Float32Array(O * I);
  for (let r = 0; r < O; r++) for (let c = 0; c < I; c++) floats[r * I + c] = grid[r * 64 + c]!;
  return { bytes, floats };
}

export interface VectorEntry {
  id: string;
  profile: "v1" | "v2";
  shape: [number, number];
  bytes: Uint8Array;
  expect: { floats: Float32Array; keepOutput?: boolean } | { reject: string };
  /** the code a correct decoder gives for "ANY" vectors */
  actualCode?: string;
}

export function leBytes(f: Float32Array): Uint8Array {
  const out = new Uint8Array(f.length * 4);
  const dv = new DataView(out.buffer);
  const w = new Uint32Array(f.buffer, f.byteOffset, f.length);
  for (let i = 0; i < w.length; i++) dv.setUint32(4 * i, w[i]!, true);
  return out;
}

/** The standard small set: two decode vectors and two reject vectors. */
export function standardEntries(): VectorEntry[] {
  const a = v1Case([3, 5]);
  const b = v2Case([40, 50]);
  const badVersion = v2Case([2, 2]).bytes.slice();
  badVersion[4] = 3;
  const truncatedV1 = v1Case([1, 1]).bytes.slice(0, 100);
  return [
    { id: "v1-basic", profile: "v1", shape: [3, 5], bytes: a.bytes, expect: { floats: a.floats } },
    { id: "v2-uniform32-crop", profile: "v2", shape: [40, 50], bytes: b.bytes, expect: { floats: b.floats } },
    { id: "v2-bad-version", profile: "v2", shape: [2, 2], bytes: badVersion, expect: { reject: "BAD_VERSION" } },
    { id: "v1-size-any", profile: "v1", shape: [1, 1], bytes: truncatedV1, expect: { reject: "ANY" }, actualCode: "SIZE_MISMATCH" },
  ];
}

export async function buildVectorSet(entries: VectorEntry[] = standardEntries(), parent?: string): Promise<BuiltSet> {
  const dir = parent ?? (await mkdtemp(path.join(tmpdir(), "sgfp4-vectors-")));
  await mkdir(dir, { recursive: true });
  const answers = new Map<string, Answer>();
  const files: string[] = [];
  for (const e of entries) {
    const container = `${e.id}.${e.profile === "v1" ? "fp4" : "sgfp4"}`;
    await writeFile(path.join(dir, container), e.bytes);
    let expect: unknown;
    if ("floats" in e.expect) {
      const le = leBytes(e.expect.floats);
      const decode: Record<string, string> = { sha256: sha256(le) };
      if (e.expect.keepOutput !== false) {
        decode.output = `${e.id}.f32`;
        await writeFile(path.join(dir, decode.output), le);
      }
      expect = { decode };
      answers.set(sha256(e.bytes), { floats: e.expect.floats });
    } else {
      expect = { reject: e.expect.reject };
      answers.set(sha256(e.bytes), { code: e.actualCode ?? e.expect.reject });
    }
    const meta = { id: e.id, profile: e.profile, container, shape: e.shape, clauses: [], description: "", expect };
    await writeFile(path.join(dir, `${e.id}.json`), JSON.stringify(meta));
    files.push(`${e.id}.json`);
  }
  await writeFile(path.join(dir, "index.json"), JSON.stringify({ format: "sgfp4-golden-vectors", version: 1, vectors: files }));
  return { dir, answers, ids: entries.map((e) => e.id) };
}
