/**
 * Encoding across machines: `--shard i/N` encodes a deterministic, weight-balanced subset of the
 * tensors and writes a partial manifest (`manifest.part.json`); merging N parts gives the manifest
 * a one-process encode writes, byte for byte (a one-process encode is itself one part, merged).
 */
import { MANIFEST_FORMAT, MANIFEST_VERSION, Sgfp4Error, type Manifest, type ManifestTensor } from "@sgfp4/format";
import type { SourceLayout } from "./source.js";

export const PART_FORMAT = "sgfp4-manifest-part";
export const PART_VERSION = 1;
export const PART_FILE = "manifest.part.json";

/** The manifest with the source layout (an optional field of manifest version 1). */
export type ModelManifest = Manifest & { source?: SourceLayout };

export interface ManifestPart {
  format: typeof PART_FORMAT;
  version: typeof PART_VERSION;
  shard: { index: number; count: number };
  /** sha256 of what every shard must agree on: the tensors to encode, the settings, the source layout */
  plan: string;
  encoder: Manifest["encoder"];
  /** tensors to encode in the whole model, and their weights */
  totalTensors: number;
  totalWeights: number;
  /** this shard's tensors, with their index among all tensors to encode */
  tensors: { index: number; entry: ManifestTensor }[];
  containerBytes: number;
  /** written by shard 0: the passthrough file and the source layout */
  passthrough?: Manifest["passthrough"];
  passthroughSha256?: string;
  source?: SourceLayout;
}

const bad = (why: string): never => {
  throw new Sgfp4Error("INVALID_ARGUMENT", why);
};

/** "i/N" -> [i, N] with 0 <= i < N. */
export function parseShard(text: string): [number, number] {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const shard: [number, number] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  if (!(shard[1] >= 1 && shard[0] >= 0 && shard[0] < shard[1])) bad(`shard must be i/N with 0 <= i < N (e.g. 0/4), got "${text}"`);
  return shard;
}

/**
 * Shard of each tensor, balancing weights: largest first (ties: lower index), each to the shard
 * with the fewest weights so far (ties: lower shard). Depends only on the sizes and N.
 */
export function assignShards(weights: readonly number[], count: number): number[] {
  const order = weights.map((_, i) => i).sort((a, b) => weights[b]! - weights[a]! || a - b);
  const load = new Array<number>(count).fill(0);
  const out = new Array<number>(weights.length).fill(0);
  for (const i of order) {
    let best = 0;
    for (let s = 1; s < count; s++) if (load[s]! < load[best]!) best = s;
    out[i] = best;
    load[best]! += weights[i]!;
  }
  return out;
}

export const round4 = (x: number): number => (Number.isFinite(x) ? Math.round(x * 1e4) / 1e4 : x > 0 ? 999 : -999);

/** One manifest from all N parts (any order); refuses parts of different plans, missing or repeated shards. */
export function assembleManifest(parts: readonly ManifestPart[]): ModelManifest {
  if (!parts.length) bad("no partial manifests to merge");
  for (const p of parts) if (p.format !== PART_FORMAT || p.version !== PART_VERSION) bad(`not a partial manifest (format ${String(p.format)} version ${String(p.version)})`);
  const first = parts[0]!;
  const count = first.shard.count;
  const byShard = new Map<number, ManifestPart>();
  for (const p of parts) {
    if (p.plan !== first.plan || p.shard.count !== count) bad(`shard ${p.shard.index}/${p.shard.count} is of another encode (other model, tensors or settings) than shard ${first.shard.index}/${count}`);
    if (byShard.has(p.shard.index)) bad(`shard ${p.shard.index}/${count} is given twice`);
    byShard.set(p.shard.index, p);
  }
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !byShard.has(i));
  if (missing.length) bad(`missing shard(s) ${missing.map((i) => `${i}/${count}`).join(", ")} of ${count}`);
  const slots = new Array<ManifestTensor | undefined>(first.totalTensors);
  let bytes = 0;
  for (const p of parts) {
    bytes += p.containerBytes;
    for (const { index, entry } of p.tensors) {
      if (!(index >= 0 && index < slots.length) || slots[index]) bad(`tensor index ${index} of shard ${p.shard.index} is out of range or repeated`);
      slots[index] = entry;
    }
  }
  if (slots.some((t) => !t)) bad("the parts do not hold every tensor");
  const tensors = slots as ManifestTensor[];
  const lead = byShard.get(0)!;
  const total = first.totalWeights;
  const clipped = tensors.reduce((s, t) => s + Number(t.stats?.clipped ?? 0), 0);
  return {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    encoder: first.encoder,
    tensors,
    ...(lead.passthrough ? { passthrough: lead.passthrough } : {}),
    ...(lead.source ? { source: lead.source } : {}),
    stats: {
      encodedWeights: total,
      bitsPerWeight: total ? round4((bytes * 8) / total) : 0,
      clipped,
      ...(lead.passthroughSha256 ? { passthroughSha256: lead.passthroughSha256 } : {}),
    },
  };
}

/** The files a part's folder contributes to the merged folder. */
export function partFiles(p: ManifestPart): string[] {
  return [...p.tensors.map((t) => t.entry.file), ...(p.passthrough ? [p.passthrough.file] : []), ...(p.source?.skeleton ? [p.source.skeleton.file] : [])];
}
