/**
 * Bytes from intent: valid streams come from @sgfp4/format's writer (checked by the tests
 * against the builder's own layout and packing); hand-assembled streams and faults are byte
 * edits at offsets computed from the intent.
 */
import { writeV1, writeV2, type V1BlockSpec, type LeafSpec } from "@sgfp4/format";
import { T158, align16, packLeaf, recordLeaves, type Intent, type LeafIntent, type V1Intent, type V2Intent } from "./intent.js";

function leafSpec(leaf: LeafIntent, size: number): LeafSpec {
  const base = { mode: leaf.mode, scaleBits: leaf.scaleBits, biasBits: leaf.biasBits };
  // Raw symbols (the reserved 11 included) go in as a payload; plain codes through the writer's packer.
  if (leaf.symbols) return { ...base, payload: packLeaf(leaf, size) };
  return { ...base, codes: leaf.codes! };
}

export function writeIntent(intent: Intent): Uint8Array {
  if (intent.profile === "v1") return writeV1Intent(intent);
  return writeV2Intent(intent);
}

function writeV1Intent(intent: V1Intent): Uint8Array {
  const blocks: V1BlockSpec[] = intent.blocks.map((b) => ({ ...leafSpec(b, 64), ...(b.errorHint ? { errorHint: true } : {}) }));
  return writeV1({ shape: intent.shape, blocks, ...(intent.slots ? { slots: intent.slots } : {}) });
}

function writeV2Intent(intent: V2Intent): Uint8Array {
  return writeV2({
    shape: intent.shape,
    records: intent.records.map((rec) => {
      const geometry = recordLeaves(rec);
      return {
        layout: rec.layout,
        ...(rec.tree ? { tree: rec.tree } : {}),
        ...(rec.gapBefore ? { gapBefore: rec.gapBefore } : {}),
        leaves: rec.leaves.map((l, i) => leafSpec(l, geometry[i]!.size)),
      };
    }),
    ...(intent.trailing ? { trailing: intent.trailing } : {}),
  });
}


/** A copy of `bytes` with `edit` applied. */
export function patched(bytes: Uint8Array, edit: (b: Uint8Array, dv: DataView) => void): Uint8Array {
  const out = bytes.slice();
  edit(out, new DataView(out.buffer));
  return out;
}

export const setU32 = (b: Uint8Array, at: number, v: number): void => new DataView(b.buffer, b.byteOffset).setUint32(at, v >>> 0, true);
export const getU32 = (b: Uint8Array, at: number): number => new DataView(b.buffer, b.byteOffset).getUint32(at, true);

/**
 * Hand-assemble a v2 stream: the fixed header, the offset table and its pad written from the
 * spec (22.8.1), then each record's bytes at base + offset. Later pieces overwrite earlier ones,
 * so callers assert that any bytes two pieces share agree.
 */
export function assembleV2(recordCount: number, pieces: readonly { offset: number; bytes: Uint8Array }[], tableOffsets: readonly number[], totalLength?: number): Uint8Array {
  const base = align16(16 + 4 * recordCount);
  const end = Math.max(base, ...pieces.map((p) => base + p.offset + p.bytes.length));
  const out = new Uint8Array(totalLength ?? end);
  out.set([0x53, 0x47, 0x46, 0x34, 0x02], 0);
  setU32(out, 5, recordCount);
  tableOffsets.forEach((o, i) => setU32(out, 16 + 4 * i, o));
  for (const p of pieces) {
    const at = base + p.offset;
    for (let i = 0; i < p.bytes.length; i++) {
      if (at + i < out.length) out[at + i] = p.bytes[i]!;
    }
  }
  return out;
}

/** The bytes of the single record of a one-record (64x64) stream. */
export function recordBytes(intent: V2Intent): Uint8Array {
  if (intent.records.length !== 1) throw new Error("one record expected");
  return writeIntent(intent).slice(32);
}

export const isT158 = (leaf: LeafIntent): boolean => leaf.mode === T158;
