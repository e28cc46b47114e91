/**
 * Runs a golden-vector folder (VECTORS.md, version 1) against the page's decoders with the
 * suite's own core (@sgfp4/conformance/core: schema, judge, bit comparison), one row per vector
 * as it completes. The folder comes from the page's own build (./vectors/) or from a folder
 * the person picks.
 */
import { compareBits, floatWords, hex32, judgeCase, readVectorSet, type Vector, type VectorSource, type Verdict } from "@sgfp4/conformance/core";
import type { Decoder, Profile } from "@sgfp4/format";

export type { VectorSource };

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

async function fetched(url: URL): Promise<Response> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url.pathname}: HTTP ${r.status}`);
  return r;
}

export const httpSource = (base: string): VectorSource => ({
  label: base,
  text: async (path) => (await fetched(new URL(path, base))).text(),
  bytes: async (path) => new Uint8Array(await (await fetched(new URL(path, base))).arrayBuffer()),
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
    size: async (p) => byPath.get(p)?.size,
  };
}

/** Index of the first element whose bits differ (the shorter length when only lengths differ), or -1. */
export function firstDifference(a: Float32Array, b: Float32Array): number {
  const d = compareBits(floatWords(a), floatWords(b), 1);
  return d === null ? -1 : d.kind === "mismatch" ? d.index : Math.min(a.length, b.length);
}

export const floatBitsHex = (a: Float32Array, i: number): string => (i < a.length ? hex32(floatWords(a)[i]!) : "(none)");

function outcome(v: Vector, verdict: Verdict): Outcome | { skipped: string } {
  if (verdict.status === "skipped") return { skipped: verdict.reason };
  if (verdict.status === "failed") return { pass: false, detail: verdict.failure.message };
  if (verdict.rejectedWith) return { pass: true, detail: `rejected ${verdict.rejectedWith}` };
  return { pass: true, detail: v.expect.kind === "decode" && v.expect.output === undefined ? "sha256 matches" : "bit-exact" };
}

/** Run every vector; `onRow` is called as each row completes (the table fills in live). */
export async function runVectors(
  src: VectorSource,
  backends: { backend: Decoder; usable: boolean; reason?: string }[],
  onRow: (row: ConformanceRow, index: number, total: number) => void,
): Promise<ConformanceRow[]> {
  const set = await readVectorSet(src);
  const rows: ConformanceRow[] = [];
  for (const [i, v] of set.vectors.entries()) {
    const row: ConformanceRow = {
      id: v.id,
      profile: v.profile,
      shape: v.shape.join("x"),
      expect: v.expect.kind === "decode" ? "decode" : `reject ${v.expect.code}`,
      description: v.description,
      results: {},
    };
    for (const b of backends) {
      row.results[b.backend.name] = b.usable ? outcome(v, await judgeCase(b.backend, v, src)) : { skipped: b.reason ?? "not available" };
    }
    rows.push(row);
    onRow(row, i, set.vectors.length);
  }
  return rows;
}
