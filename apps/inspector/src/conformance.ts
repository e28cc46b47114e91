/**
 * Runs a golden-vector folder (VECTORS.md, version 1) against the page's decoders and
 * compares bit patterns. The folder comes from the page's own build (./vectors/) or from a
 * folder the person picks.
 */
import { decodedSha256, isErrorCode, STREAM_ERROR_CODES, type Profile } from "@sgfp4/format";
import { toFailure, type DecoderBackend } from "./decoders/types";

export interface VectorSource {
  label: string;
  text(path: string): Promise<string>;
  bytes(path: string): Promise<Uint8Array>;
}

export interface VectorMeta {
  id: string;
  profile: Profile;
  container: string;
  shape: [number, number];
  clauses?: string[];
  description?: string;
  expect: { decode: { sha256: string; output?: string } } | { reject: string };
}

export interface Outcome {
  pass: boolean;
  /** what happened, in a few words: "bit-exact", "rejected TRUNCATED", "element 5 differs" */
  detail: string;
}

export interface ConformanceRow {
  id: string;
  profile: Profile | "?";
  shape: string;
  expect: string;
  description: string;
  results: Record<string, Outcome | { skipped: string }>;
}

export const httpSource = (base: string): VectorSource => ({
  label: base,
  async text(path) {
    const r = await fetch(new URL(path, base));
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    return r.text();
  },
  async bytes(path) {
    const r = await fetch(new URL(path, base));
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    return new Uint8Array(await r.arrayBuffer());
  },
});

/** Files from an <input webkitdirectory>: paths are relative to the folder that holds index.json. */
export function filesSource(files: readonly File[]): VectorSource {
  const index = files.find((f) => /(^|\/)index\.json$/.test(f.webkitRelativePath || f.name));
  const root = index ? (index.webkitRelativePath || index.name).replace(/index\.json$/, "") : "";
  const byPath = new Map(files.map((f) => [(f.webkitRelativePath || f.name).slice(root.length), f]));
  const get = (p: string) => {
    const f = byPath.get(p);
    if (!f) throw new Error(`${p} is not in the picked folder`);
    return f;
  };
  return {
    label: root.replace(/\/$/, "") || "picked folder",
    text: (p) => get(p).text(),
    bytes: async (p) => new Uint8Array(await get(p).arrayBuffer()),
  };
}

export async function listVectors(src: VectorSource): Promise<string[]> {
  const index = JSON.parse(await src.text("index.json")) as { format?: unknown; version?: unknown; vectors?: unknown };
  if (index.format !== "sgfp4-golden-vectors" || index.version !== 1 || !Array.isArray(index.vectors)) {
    throw new Error(`index.json is not a version-1 sgfp4-golden-vectors index`);
  }
  return index.vectors.filter((v): v is string => typeof v === "string");
}

function safePath(p: unknown): string {
  if (typeof p !== "string" || !p || p.includes("..") || p.startsWith("/")) throw new Error(`bad path ${JSON.stringify(p)} in vector metadata`);
  return p;
}

export function firstDifference(a: Float32Array, b: Float32Array): number {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return i;
  return x.length === y.length ? -1 : n;
}

const hex8 = (n: number) => "0x" + (n >>> 0).toString(16).padStart(8, "0");
export const floatBitsHex = (a: Float32Array, i: number): string => (i < a.length ? hex8(new Uint32Array(a.buffer, a.byteOffset + 4 * i, 1)[0]!) : "(none)");

async function judge(meta: VectorMeta, expected: Float32Array | undefined, backend: DecoderBackend, bytes: Uint8Array): Promise<Outcome> {
  let out: Float32Array;
  try {
    out = await backend.decode(bytes, { profile: meta.profile, shape: meta.shape });
  } catch (e) {
    const f = toFailure(e);
    if ("reject" in meta.expect) {
      const want = meta.expect.reject;
      const ok = want === "ANY" ? (STREAM_ERROR_CODES as readonly string[]).includes(f.code) : f.code === want;
      return { pass: ok, detail: `rejected ${f.code}${ok ? "" : ` (expected ${want}): ${f.message}`}` };
    }
    return { pass: false, detail: `rejected ${f.code}: ${f.message}` };
  }
  if ("reject" in meta.expect) return { pass: false, detail: `decoded ${out.length} values, expected reject ${meta.expect.reject}` };
  if (expected) {
    const [, cols] = meta.shape;
    const d = firstDifference(out, expected);
    if (d < 0) return { pass: true, detail: "bit-exact" };
    if (out.length !== expected.length) return { pass: false, detail: `${out.length} values, expected ${expected.length}` };
    return { pass: false, detail: `element ${d} (row ${Math.floor(d / cols)}, col ${d % cols}): ${floatBitsHex(out, d)}, expected ${floatBitsHex(expected, d)}` };
  }
  const got = decodedSha256(out);
  return got === meta.expect.decode.sha256 ? { pass: true, detail: "sha256 matches" } : { pass: false, detail: `sha256 ${got.slice(0, 12)}... differs` };
}

/** Run every vector; `onRow` is called as each row completes (the table fills in live). */
export async function runVectors(
  src: VectorSource,
  backends: { backend: DecoderBackend; usable: boolean; reason?: string }[],
  onRow: (row: ConformanceRow, index: number, total: number) => void,
): Promise<ConformanceRow[]> {
  const names = await listVectors(src);
  const rows: ConformanceRow[] = [];
  for (const [i, name] of names.entries()) {
    const row: ConformanceRow = { id: name, profile: "?", shape: "", expect: "", description: "", results: {} };
    try {
      const meta = JSON.parse(await src.text(safePath(name))) as VectorMeta;
      row.id = String(meta.id ?? name);
      row.profile = meta.profile;
      row.shape = Array.isArray(meta.shape) ? meta.shape.join("x") : "?";
      row.description = meta.description ?? "";
      if ("reject" in meta.expect) {
        if (meta.expect.reject !== "ANY" && !isErrorCode(meta.expect.reject)) throw new Error(`unknown reject code ${meta.expect.reject}`);
        row.expect = `reject ${meta.expect.reject}`;
      } else row.expect = "decode";
      const bytes = await src.bytes(safePath(meta.container));
      let expected: Float32Array | undefined;
      if ("decode" in meta.expect && meta.expect.decode.output) {
        const raw = await src.bytes(safePath(meta.expect.decode.output));
        if (raw.length % 4) throw new Error(`${meta.expect.decode.output} is not whole float32s`);
        expected = new Float32Array(raw.slice().buffer);
        if (decodedSha256(expected) !== meta.expect.decode.sha256) throw new Error(`${meta.expect.decode.output} does not match its sha256 in the metadata`);
      }
      for (const b of backends) {
        row.results[b.backend.name] = b.usable ? await judge(meta, expected, b.backend, bytes) : { skipped: b.reason ?? "not available" };
      }
    } catch (e) {
      for (const b of backends) row.results[b.backend.name] = { pass: false, detail: `vector unreadable: ${(e as Error).message}` };
    }
    rows.push(row);
    onRow(row, i, names.length);
  }
  return rows;
}
