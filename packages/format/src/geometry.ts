/** Tiling and payload-size rules shared by both profiles (spec 22.2, 22.6). */
import { codeBits, type Mode } from "./leaf-table.js";

export { MODE_FP4, MODE_T158, type Mode } from "./leaf-table.js";

export type Profile = "v1" | "v2";
/** Tensor shape (O, I): rows, columns. Supplied by the manifest or the caller, never the stream. */
export type Shape = readonly [number, number];

export const MACROBLOCK = 64;
export const V1_PAYLOAD_BYTES = 2048;

/** v2 sb_header layouts (22.8.2). */
export const LAYOUT = {
  UNIFORM_64: 0,
  UNIFORM_32: 1,
  UNIFORM_16: 2,
  UNIFORM_8: 3,
  MIXED: 4,
  FULL_4x4: 5,
} as const;
export type Layout = (typeof LAYOUT)[keyof typeof LAYOUT];
export const LAYOUT_NAMES = ["UNIFORM_64", "UNIFORM_32", "UNIFORM_16", "UNIFORM_8", "MIXED", "FULL_4x4"] as const;
/** Leaf size of each uniform layout (MIXED has none). */
export const UNIFORM_LEAF_SIZE: Readonly<Record<number, number>> = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 };

export interface Tiling {
  tilesY: number;
  tilesX: number;
  blockCount: number;
}

export function tiling([rows, cols]: Shape): Tiling {
  const tilesY = Math.ceil(rows / MACROBLOCK);
  const tilesX = Math.ceil(cols / MACROBLOCK);
  return { tilesY, tilesX, blockCount: tilesY * tilesX };
}

/** Meaningful payload bytes of a leaf (before its padding to 16). */
export function payloadBytes(size: number, mode: Mode): number {
  return (size * size * codeBits(mode)) / 8;
}

export const align16 = (n: number): number => Math.ceil(n / 16) * 16;
