/**
 * Mutations of a valid container: blind ones (bit flips, byte writes, truncation, extension)
 * and structure-aware ones that rewrite header fields and offsets. The structure comes from
 * @sgfp4/format's parse of the valid input; it only says where fields are, the verdict on the
 * mutated bytes is left to the backends.
 */
import { parse, type Container } from "@sgfp4/format";
import type { Profile } from "./generate.js";
import type { Rng } from "./prng.js";

export interface MutationInput {
  profile: Profile;
  shape: readonly [number, number];
  bytes: Uint8Array;
}

export interface Mutated {
  profile: Profile;
  shape: [number, number];
  bytes: Uint8Array;
  /** what was done, in order, e.g. ["flip-bit@123.4", "truncate@900"] */
  ops: string[];
}

export const MUTATION_KINDS = [
  "flip-bit",
  "set-byte",
  "truncate",
  "extend",
  "header-field",
  "record-offset",
  "sb-header",
  "leaf-header",
  "split-map",
  "v1-offset",
  "shape",
] as const;
export type MutationKind = (typeof MUTATION_KINDS)[number];

const NONFINITE_HALVES = [0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xffff];

function setU32(b: Uint8Array, at: number, v: number): void {
  if (at < 0 || at + 4 > b.length) return;
  new DataView(b.buffer, b.byteOffset, b.byteLength).setUint32(at, v >>> 0, true);
}
function getU32(b: Uint8Array, at: number): number {
  if (at < 0 || at + 4 > b.length) return 0;
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(at, true);
}

function structure(input: MutationInput): Container | undefined {
  try {
    return parse(input.bytes, { profile: input.profile, shape: input.shape });
  } catch {
    return undefined; // already mutated past parsing: blind mutations only
  }
}

/** One mutation applied in place (bytes may be replaced); returns its description. */
export function mutateOnce(rng: Rng, m: Mutated, kind: MutationKind, c: Container | undefined): string {
  const b = m.bytes;
  const n = b.length;
  switch (kind) {
    case "flip-bit": {
      if (n === 0) return "flip-bit(empty)";
      const at = rng.int(0, n - 1);
      const bit = rng.int(0, 7);
      b[at]! ^= 1 << bit;
      return `flip-bit@${at}.${bit}`;
    }
    case "set-byte": {
      if (n === 0) return "set-byte(empty)";
      const at = rng.int(0, n - 1);
      const v = rng.pick([0, 0xff, 0x80, 0x7f, rng.int(0, 255)]);
      b[at] = v;
      return `set-byte@${at}=${v}`;
    }
    case "truncate": {
      const len = rng.chance(0.3) ? rng.int(0, Math.min(n, 64)) : rng.int(0, Math.max(0, n - 1));
      m.bytes = b.slice(0, len);
      return `truncate@${len}`;
    }
    case "extend": {
      const extra = rng.chance(0.5) ? new Uint8Array(rng.int(1, 64)) : rng.bytes(rng.int(1, 64));
      const out = new Uint8Array(n + extra.length);
      out.set(b);
      out.set(extra, n);
      m.bytes = out;
      return `extend+${extra.length}`;
    }
    case "header-field": {
      if (m.profile === "v1") return mutateOnce(rng, m, "v1-offset", c);
      const field = rng.int(0, 3);
      if (field === 0) {
        const at = rng.int(0, 3);
        b[at] = rng.int(0, 255);
        return `magic@${at}`;
      }
      if (field === 1) {
        b[4] = rng.pick([0, 1, 3, 0x20, 0xff]);
        return `version=${b[4]}`;
      }
      if (field === 2) {
        const count = getU32(b, 5);
        const v = rng.pick([count + 1, count - 1, 0, 0xffffffff, count * 2, 0x40000000]);
        setU32(b, 5, v);
        return `record-count=${v >>> 0}`;
      }
      const at = rng.int(9, 15);
      if (at < n) b[at] = rng.int(1, 255);
      return `header-pad@${at}`;
    }
    case "record-offset": {
      if (m.profile === "v1") return mutateOnce(rng, m, "v1-offset", c);
      const B = c?.blockCount ?? Math.max(1, getU32(b, 5) % 64);
      const i = rng.int(0, B - 1);
      const at = 16 + 4 * i;
      const cur = getU32(b, at);
      const v = rng.pick([cur + 16, cur - 16, cur + 1, cur + 8, 0, n, n + 16, 0xfffffff0, cur * 2, getU32(b, at + 4)]);
      setU32(b, at, v);
      return `record-offset[${i}]=${v >>> 0}`;
    }
    case "sb-header": {
      if (m.profile === "v1" || !c) return mutateOnce(rng, m, "flip-bit", c);
      const blk = c.blocks[rng.int(0, c.blockCount - 1)]!;
      const cur = getU32(b, blk.offset);
      const v = rng.pick([6, 7, rng.int(0, 5), cur | (1 << rng.int(3, 31)), 4, 0]);
      setU32(b, blk.offset, v);
      return `sb-header[${blk.index}]=${v >>> 0}`;
    }
    case "leaf-header": {
      if (!c || c.leafCount === 0) return mutateOnce(rng, m, "flip-bit", c);
      const blk = c.blocks[rng.int(0, c.blockCount - 1)]!;
      const leaf = rng.int(0, blk.leafCount - 1);
      const at = m.profile === "v1" ? 4 * blk.index : blk.offset + (blk.layout === 4 ? 16 : 4) + 4 * leaf;
      const cur = getU32(b, at);
      const what = rng.int(0, 3);
      let v: number;
      if (what === 0) v = (cur & 0xffff) | (rng.pick(NONFINITE_HALVES) << 16); // scale Inf/NaN
      else if (what === 1) {
        // bias Inf/NaN; v2 keeps the leaf's flag nibble, which lies under the bias mask
        const bias = rng.pick(NONFINITE_HALVES);
        v = m.profile === "v2" ? (cur & 0xffff000f) | (bias & 0xfff0) : (cur & 0xffff0000) | bias;
      }
      else if (what === 2) v = cur ^ (1 << rng.int(0, 3)); // flag bits (v2: mode / reserved)
      else v = cur ^ 1; // v2: mode switch changes the payload size
      setU32(b, at, v);
      return `leaf-header[${blk.index}.${leaf}]=${(v >>> 0).toString(16)}`;
    }
    case "split-map": {
      const mixed = c?.blocks.filter((blk) => blk.layout === 4) ?? [];
      if (m.profile === "v1" || mixed.length === 0) return mutateOnce(rng, m, "sb-header", c);
      const blk = rng.pick(mixed);
      const k = rng.int(0, 95);
      const at = blk.offset + 4 + (k >>> 3);
      if (at < b.length) b[at]! ^= 1 << (k & 7);
      return `split-map[${blk.index}]^bit${k}`;
    }
    case "v1-offset": {
      if (m.profile === "v2") return mutateOnce(rng, m, "record-offset", c);
      if (!c) return mutateOnce(rng, m, "flip-bit", c);
      const i = rng.int(0, c.blockCount - 1);
      const at = 4 * c.blockCount + 4 * i;
      const cur = getU32(b, at);
      const v = rng.pick([cur | 4, cur | 8, cur ^ 1, cur ^ 2, cur + 2048 * c.blockCount, cur + 16, 0xfffffff0, cur - 16]);
      setU32(b, at, v);
      return `v1-offset[${i}]=${(v >>> 0).toString(16)}`;
    }
    case "shape": {
      const [rows, cols] = m.shape;
      const dim = rng.int(0, 1);
      const delta = rng.pick([1, -1, 64, -64, 63]);
      const next: [number, number] = [rows, cols];
      next[dim] = Math.max(1, next[dim]! + delta);
      m.shape = next;
      return `shape=[${next[0]},${next[1]}]`;
    }
  }
}

/** One to `maxOps` mutations, mostly structure-aware first, then blind. */
export function mutate(rng: Rng, input: MutationInput, maxOps = 3): Mutated {
  const m: Mutated = { profile: input.profile, shape: [input.shape[0], input.shape[1]], bytes: input.bytes.slice(), ops: [] };
  const count = rng.int(1, maxOps);
  for (let i = 0; i < count; i++) {
    const c = structure(m);
    const kind = MUTATION_KINDS[rng.weighted([6, 3, 2, 1, 2, 2, 2, 3, 2, 2, 1])]!;
    m.ops.push(mutateOnce(rng, m, kind, c));
  }
  return m;
}
