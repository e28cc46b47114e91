/**
 * Host half of device validation. v2: the checks whose cost grows with the records, not the
 * leaves. It applies every rule of DECISIONS.md section 3 that the stream header, the offset
 * table, the sb_headers, the split maps' bit counts and the leaf-header areas decide, and counts
 * each record's leaves, so the GPU knows where each record's part of the leaf table goes.
 * The rules that need every leaf (reserved flags, Inf/NaN parameters, payload extents and their
 * zero padding, the split-map walk itself) run on the GPU (leaves-shader.ts), which builds the
 * leaf table from the uploaded stream; nothing is decoded unless both halves accept.
 *
 * v1 (`v1LeafTable`): everything but the zero upper halves of T158 payloads, which the GPU reads.
 *
 * It only answers "the records look valid" or "not": on "not", or when the GPU refuses, the caller
 * runs @sgfp4/format's parse() for the detailed error. Reads only inside `bytes`; allocates in
 * proportion to B after the stream has shown it holds B offsets (v2) or has the v1 size.
 */
import { LEAF_WORDS, MAX_LEAF_LOG2, V1_PAYLOAD_BYTES, checkShape, detectProfile, packGeometry, type Limits, type Profile, type Shape } from "@sgfp4/format";

export interface RecordCounts {
  profile: "v2";
  shape: Shape;
  /** B + 1 entries: the first leaf of record b, and the leaf count at [B] */
  blockFirst: Uint32Array;
  leafCount: number;
}

/** Leaves of the uniform layouts, by layout value (4 = MIXED, from its split map). */
const UNIFORM_LEAVES = [1, 4, 16, 64, 0, 256];
/** A MIXED map splits at most the 85 nodes of size 8 and up (1 + 4 + 16 + 64). */
const MAX_SPLITS = 85;

const popcount = (v: number): number => {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
};

/**
 * "undefined": not a v2 request (the caller validates on the host). Throws INVALID_ARGUMENT /
 * LIMIT_EXCEEDED for the shape and limits, as parse() does, before allocating. Returns null when
 * the stream breaks a record-level rule (run parse() for the error), else the leaf counts.
 */
export function countRecordLeaves(bytes: Uint8Array, opts: { profile: Profile | "auto"; shape: Shape; limits?: Limits }): RecordCounts | null | undefined {
  if (!(bytes instanceof Uint8Array) || (opts.profile !== "v2" && opts.profile !== "auto")) return undefined;
  const { blockCount: B } = checkShape(opts.shape, opts.limits);
  if (opts.profile === "auto" && detectProfile(bytes, opts.shape) !== "v2") return undefined;
  const len = bytes.length;
  const tableEnd = 16 + 4 * B;
  const base = (tableEnd + 15) & ~15;
  if (len < base) return null;
  if (bytes[0] !== 0x53 || bytes[1] !== 0x47 || bytes[2] !== 0x46 || bytes[3] !== 0x34 || bytes[4] !== 0x02) return null;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, len);
  if (dv.getUint32(5, true) !== B) return null;
  for (let o = 9; o < 16; o++) if (bytes[o] !== 0) return null;
  for (let o = tableEnd; o < base; o++) if (bytes[o] !== 0) return null;

  const blockFirst = new Uint32Array(B + 1);
  let leaves = 0;
  let prev = -1;
  for (let b = 0; b < B; b++) {
    const rel = dv.getUint32(16 + 4 * b, true);
    if (rel % 16 !== 0 || rel <= prev) return null;
    prev = rel;
    const start = base + rel;
    if (start + 4 > len) return null; // also "starts at or past the end"
    const sb = dv.getUint32(start, true);
    if (sb > 5) return null; // reserved bits 3-31, or layout 6 / 7
    let n = UNIFORM_LEAVES[sb]!;
    let headersAt = start + 4;
    if (sb === 4) {
      if (start + 16 > len) return null;
      const splits = popcount(dv.getUint32(start + 4, true)) + popcount(dv.getUint32(start + 8, true)) + popcount(dv.getUint32(start + 12, true));
      if (splits > MAX_SPLITS) return null;
      n = 1 + 3 * splits; // every split turns a leaf into four (the GPU's walk checks the map)
      headersAt = start + 16;
    }
    const headersEnd = headersAt + 4 * n;
    const payloadStart = (headersEnd + 15) & ~15;
    if (payloadStart > len) return null;
    for (let o = headersEnd; o < payloadStart; o++) if (bytes[o] !== 0) return null;
    blockFirst[b] = leaves;
    leaves += n;
  }
  blockFirst[B] = leaves;
  return { profile: "v2", shape: [opts.shape[0], opts.shape[1]], blockFirst, leafCount: leaves };
}

/**
 * The host half of device validation for v1: every rule but the zero upper halves of T158
 * payloads (DECISIONS.md section 3: size, offset flag bits 2-3, payload range, Inf/NaN
 * parameters), and the leaf table, one leaf per block, built from the header and offset words
 * without reading the payloads. "undefined": not a v1 request; null: a fault (run parse()).
 */
export function v1LeafTable(bytes: Uint8Array, opts: { profile: Profile | "auto"; shape: Shape; limits?: Limits }): Uint32Array | null | undefined {
  if (!(bytes instanceof Uint8Array) || (opts.profile !== "v1" && opts.profile !== "auto")) return undefined;
  const { blockCount: B } = checkShape(opts.shape, opts.limits);
  if (opts.profile === "auto" && detectProfile(bytes, opts.shape) !== "v1") return undefined;
  if (bytes.length !== (8 + V1_PAYLOAD_BYTES) * B) return null;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const blob = V1_PAYLOAD_BYTES * B;
  const table = new Uint32Array(B * LEAF_WORDS);
  for (let b = 0; b < B; b++) {
    const header = dv.getUint32(4 * b, true);
    const offset = dv.getUint32(4 * B + 4 * b, true);
    const base = offset - (offset & 0xf);
    if (offset & 0xc || base + V1_PAYLOAD_BYTES > blob) return null; // reserved flags, out of range
    if ((header & 0x7c000000) === 0x7c000000 || (header & 0x7c00) === 0x7c00) return null; // Inf/NaN scale or bias
    table[b * 4] = b;
    table[b * 4 + 1] = packGeometry(0, 0, MAX_LEAF_LOG2, offset & 1);
    table[b * 4 + 2] = header;
    table[b * 4 + 3] = 8 * B + base;
  }
  return table;
}
