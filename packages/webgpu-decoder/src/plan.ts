/**
 * Host planning of a decode, with no GPU in it (unit-tested on its own): the output windows one
 * storage binding can hold, which leaves each window needs, and the compact copy of a window's
 * leaves used when the whole container does not fit one binding. Work here is proportional to the
 * number of windows, except `compactLeaves`, which runs only on that oversize path.
 */
import { LEAF_BLOCK_WORD, LEAF_GEOMETRY_WORD, LEAF_PAYLOAD_WORD, LEAF_WORDS, MACROBLOCK, PAYLOAD_ALIGN, geometryLog2, geometryMode, leafPayloadBytes, tiling, type Shape } from "@sgfp4/format";


/** One dispatch's share of the output: elements [outBase, outBase + outCount), blocks [firstBlock, firstBlock + blockCount). */
export interface OutputWindow {
  outBase: number;
  outCount: number;
  /** The window's macroblocks are contiguous in row-major order. */
  firstBlock: number;
  blockCount: number;
}

export const align = (n: number, a: number): number => Math.ceil(n / a) * a;

/**
 * Output windows of at most `maxElems` elements (a multiple of 64): whole macroblock rows while one
 * of them fits (each block decoded once), else element windows, each dispatching the macroblocks
 * it touches (a block cut by a window boundary is expanded by both, each keeping its own part).
 */
export function planWindows(shape: Shape, maxElems: number): OutputWindow[] {
  if (maxElems < 64 || maxElems % 64 !== 0) throw new RangeError(`window of ${maxElems} elements is not a positive multiple of 64`);
  const [rows, cols] = shape;
  const { tilesY, tilesX } = tiling(shape);
  const total = rows * cols;
  const out: OutputWindow[] = [];
  const blockRowsPerWindow = Math.floor(maxElems / (MACROBLOCK * cols));
  if (blockRowsPerWindow >= 1) {
    for (let by = 0; by < tilesY; by += blockRowsPerWindow) {
      const byEnd = Math.min(by + blockRowsPerWindow, tilesY);
      const outBase = by * MACROBLOCK * cols;
      out.push({ outBase, outCount: Math.min(byEnd * MACROBLOCK, rows) * cols - outBase, firstBlock: by * tilesX, blockCount: (byEnd - by) * tilesX });
    }
    return out;
  }
  for (let e0 = 0; e0 < total; e0 += maxElems) {
    const e1 = Math.min(e0 + maxElems, total);
    const r0 = Math.floor(e0 / cols);
    const r1 = Math.floor((e1 - 1) / cols);
    const by0 = Math.floor(r0 / MACROBLOCK);
    const by1 = Math.floor(r1 / MACROBLOCK);
    // within one row: the blocks its columns touch; across rows: whole block rows
    const bx0 = r0 === r1 ? Math.floor((e0 % cols) / MACROBLOCK) : 0;
    const bx1 = r0 === r1 ? Math.floor(((e1 - 1) % cols) / MACROBLOCK) : tilesX - 1;
    const firstBlock = by0 * tilesX + bx0;
    out.push({ outBase: e0, outCount: e1 - e0, firstBlock, blockCount: by1 * tilesX + bx1 + 1 - firstBlock });
  }
  return out;
}

/**
 * Index of the first leaf of macroblock `block` (leafCount when block is past the last one).
 * Leaves are in macroblock order and every macroblock has at least one (the validator guarantees
 * both), so a binary search over word 0 finds it.
 */
export function firstLeafOf(leafTable: Uint32Array, block: number): number {
  let lo = 0;
  let hi = leafTable.length / LEAF_WORDS;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (leafTable[mid * LEAF_WORDS + LEAF_BLOCK_WORD]! < block) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Leaves [l0, l1) a window reads. */
export function windowLeaves(leafTable: Uint32Array, w: OutputWindow): { l0: number; l1: number } {
  return { l0: firstLeafOf(leafTable, w.firstBlock), l1: firstLeafOf(leafTable, w.firstBlock + w.blockCount) };
}

/** Payload bytes of a leaf from its geometry word (FP4: size^2 / 2, T158: size^2 / 4). */
export const geometryPayloadBytes = (geo: number): number => leafPayloadBytes(geometryLog2(geo), geometryMode(geo));

/** Bytes `compactLeaves` needs for leaves [l0, l1): payloads 16-byte aligned, and the leaf entries. */
export function compactSize(leafTable: Uint32Array, l0: number, l1: number): { payload: number; leaves: number } {
  let payload = 0;
  for (let i = l0; i < l1; i++) payload += align(geometryPayloadBytes(leafTable[i * LEAF_WORDS + LEAF_GEOMETRY_WORD]!), PAYLOAD_ALIGN);
  return { payload, leaves: (l1 - l0) * LEAF_WORDS * 4 };
}

/**
 * Leaves [l0, l1) with their payloads packed back to back (16-byte aligned) into `payload`, and
 * their entries into `leaves` with the payload word rewritten to the new offsets.
 */
export function compactLeaves(bytes: Uint8Array, leafTable: Uint32Array, l0: number, l1: number, payload: Uint8Array, leaves: Uint32Array): void {
  let at = 0;
  for (let i = l0; i < l1; i++) {
    const n = geometryPayloadBytes(leafTable[i * LEAF_WORDS + LEAF_GEOMETRY_WORD]!);
    const from = leafTable[i * LEAF_WORDS + LEAF_PAYLOAD_WORD]!;
    payload.set(bytes.subarray(from, from + n), at);
    leaves.set(leafTable.subarray(i * LEAF_WORDS, (i + 1) * LEAF_WORDS), (i - l0) * LEAF_WORDS);
    leaves[(i - l0) * LEAF_WORDS + LEAF_PAYLOAD_WORD] = at;
    at += align(n, PAYLOAD_ALIGN);
  }
}
