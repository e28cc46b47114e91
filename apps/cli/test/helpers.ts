/**
 * Containers and vector folders built with @sgfp4/format's writer; expected outputs come from
 * the chosen codes, scales and biases, never from a decoder.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeV1, writeV2, type LeafSpec } from "@sgfp4/format";

const here = path.dirname(fileURLToPath(import.meta.url));
export const BIN = path.resolve(here, "../dist/bin.js");
export const REF_BACKEND = path.resolve(here, "fixtures/ref-backend.mjs");

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function sgfp4(args: string[], cwd?: string): CliRun {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", cwd, timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export const tempDir = (): Promise<string> => mkdtemp(path.join(tmpdir(), "sgfp4-cli-"));
export const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

export function leBytes(f: Float32Array): Uint8Array {
  const out = new Uint8Array(f.length * 4);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < f.length; i++) dv.setFloat32(4 * i, f[i]!, true);
  return out;
}

const fp4Codes = (n: number, seed: number): number[] => Array.from({ length: n }, (_, i) => ((i * 5 + seed) % 16) - 8);

/** v1, one FP4 block, scale 0.25 (0x3400), bias 2 (0x4000): w = 0.25*code + 2. */
export function v1Case(shape: [number, number]): { bytes: Uint8Array; floats: Float32Array } {
  const codes = fp4Codes(4096, 1);
  const bytes = writeV1({ shape, blocks: [{ mode: 0, scaleBits: 0x3400, biasBits: 0x4000, codes }] });
  const [O, I] = shape;
  const floats = new Float32Array(O * I);
  for (let r = 0; r < O; r++) for (let c = 0; c < I; c++) floats[r * I + c] = 0.25 * codes[r * 64 + c]! + 2;
  return { bytes, floats };
}

/**
 * v2, one UNIFORM_32 record: leaf k (TL, TR, BL, BR) has scale 2^k (0x3c00 + k*0x400), bias
 * 1.0 (0x3c00) on odd k and 0 on even k; leaf 3 is T158 with codes cycling -1, 0, 1.
 */
export function v2Case(shape: [number, number], trailing?: Uint8Array): { bytes: Uint8Array; floats: Float32Array } {
  const leaves: LeafSpec[] = [];
  const grid = new Float32Array(4096);
  for (let k = 0; k < 4; k++) {
    const t158 = k === 3;
    const codes = t158 ? Array.from({ length: 1024 }, (_, i) => (i % 3) - 1) : fp4Codes(1024, k);
    leaves.push({ mode: t158 ? 1 : 0, scaleBits: 0x3c00 + k * 0x400, biasBits: k % 2 ? 0x3c00 : 0, codes });
    const y0 = Math.floor(k / 2) * 32;
    const x0 = (k % 2) * 32;
    for (let i = 0; i < 32; i++) for (let j = 0; j < 32; j++) grid[(y0 + i) * 64 + x0 + j] = 2 ** k * codes[i * 32 + j]! + (k % 2);
  }
  const bytes = writeV2({ shape, records: [{ layout: 1, leaves }], ...(trailing ? { trailing } : {}) });
  const [O, I] = shape;
  const floats = new Float32Array(O * I);
  for (let r = 0; r < O; r++) for (let c = 0; c < I; c++) floats[r * I + c] = grid[r * 64 + c]!;
  return { bytes, floats };
}

export function badVersion(): Uint8Array {
  const b = v2Case([2, 2]).bytes.slice();
  b[4] = 7;
  return b;
}

/** A vector folder: two decode vectors, one reject vector. */
export async function vectorFolder(): Promise<{ dir: string; answers: Record<string, { floats?: number[]; code?: string }> }> {
  const dir = await tempDir();
  const a = v1Case([5, 9]);
  const b = v2Case([33, 47]);
  const entries = [
    { id: "v1-small", profile: "v1", shape: [5, 9], bytes: a.bytes, floats: a.floats },
    { id: "v2-small", profile: "v2", shape: [33, 47], bytes: b.bytes, floats: b.floats },
    { id: "v2-bad-version", profile: "v2", shape: [2, 2], bytes: badVersion(), reject: "BAD_VERSION" },
  ] as const;
  const answers: Record<string, { floats?: number[]; code?: string }> = {};
  for (const e of entries) {
    const container = `${e.id}.${e.profile === "v1" ? "fp4" : "sgfp4"}`;
    await writeFile(path.join(dir, container), e.bytes);
    let expect: unknown;
    if ("floats" in e) {
      const le = leBytes(e.floats);
      await writeFile(path.join(dir, `${e.id}.f32`), le);
      expect = { decode: { sha256: sha256(le), output: `${e.id}.f32` } };
      answers[sha256(e.bytes)] = { floats: [...e.floats] };
    } else {
      expect = { reject: e.reject };
      answers[sha256(e.bytes)] = { code: e.reject };
    }
    await writeFile(path.join(dir, `${e.id}.json`), JSON.stringify({ id: e.id, profile: e.profile, container, shape: e.shape, clauses: [], description: "", expect }));
  }
  await writeFile(path.join(dir, "index.json"), JSON.stringify({ format: "sgfp4-golden-vectors", version: 1, vectors: entries.map((e) => `${e.id}.json`) }));
  return { dir, answers };
}

/** A module backend answering from construction; FLIP flips element 0 of every decode. */
export async function mockModule(dir: string, answers: Record<string, unknown>, opts: { name: string; flip?: boolean; unavailable?: string }): Promise<string> {
  const file = path.join(dir, `${opts.name}.mjs`);
  await writeFile(
    file,
    `import { createHash } from "node:crypto";
const answers = ${JSON.stringify(answers)};
export default {
  name: ${JSON.stringify(opts.name)},
  available: async () => (${opts.unavailable ? `{ ok: false, reason: ${JSON.stringify(opts.unavailable)} }` : "{ ok: true }"}),
  async decode(bytes) {
    const a = answers[createHash("sha256").update(bytes).digest("hex")];
    if (a.code) throw Object.assign(new Error(a.code + ": mock"), { code: a.code });
    const f = new Float32Array(a.floats);
    ${opts.flip ? "new Uint32Array(f.buffer)[0] ^= 1;" : ""}
    return f;
  },
};
`,
  );
  return file;
}

/** A safetensors file built by hand (F32 unless a dtype is given), optionally with __metadata__. */
export function safetensors(tensors: { name: string; shape: number[]; data: Float32Array | Uint8Array; dtype?: string }[], metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = metadata ? { __metadata__: metadata } : {};
  let at = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype ?? "F32", shape: t.shape, data_offsets: [at, at + t.data.byteLength] };
    at += t.data.byteLength;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + at);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let p = 8 + json.length;
  for (const t of tensors) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), p);
    p += t.data.byteLength;
  }
  return out;
}

/** A safetensors file read by hand: name -> shape, dtype, bytes (metadata under "__metadata__" is skipped). */
export function readSafetensors(file: Uint8Array): Map<string, { shape: number[]; dtype: string; data: Uint8Array }> {
  const bytes = new Uint8Array(file); // a plain copy (not a Buffer) so comparisons see plain arrays
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const out = new Map();
  for (const [name, v] of Object.entries<{ shape: number[]; dtype: string; data_offsets: [number, number] }>(header)) {
    if (name === "__metadata__") continue;
    out.set(name, { shape: v.shape, dtype: v.dtype, data: bytes.slice(8 + n + v.data_offsets[0], 8 + n + v.data_offsets[1]) });
  }
  return out;
}

