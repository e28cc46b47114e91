/**
 * A plain reference decode over the leaf table, written for these tests only and independent of
 * the kernel: JavaScript doubles give S*code + Bias exactly, Math.fround rounds once to float32,
 * and IEEE-754 signed zeros come for free.
 */
import { halfToFloat, type Container } from "@sgfp4/format";

export function referenceDecode(bytes: Uint8Array, c: Container): Float32Array {
  const [rows, cols] = c.shape;
  const out = new Float32Array(rows * cols);
  const t = c.leafTable;
  for (let l = 0; l < c.leafCount; l++) {
    const b = t[l * 4]!;
    const geo = t[l * 4 + 1]!;
    const y = geo & 63;
    const x = (geo >>> 6) & 63;
    const size = 1 << ((geo >>> 12) & 7);
    const t158 = (geo >>> 15) & 1;
    const s = halfToFloat(t[l * 4 + 2]! >>> 16);
    const bias = halfToFloat(t[l * 4 + 2]! & 0xffff);
    const at = t[l * 4 + 3]!;
    const by = Math.floor(b / c.tilesX);
    const bx = b % c.tilesX;
    for (let i = 0; i < size; i++) {
      for (let j = 0; j < size; j++) {
        const k = i * size + j;
        let code: number;
        if (t158) {
          const sym = (bytes[at + (k >> 2)]! >> ((k & 3) * 2)) & 3;
          code = sym === 1 ? 1 : sym === 2 ? -1 : 0;
        } else {
          const nib = (bytes[at + (k >> 1)]! >> ((k & 1) * 4)) & 15;
          code = nib >= 8 ? nib - 16 : nib;
        }
        const r = by * 64 + y + i;
        const col = bx * 64 + x + j;
        if (r < rows && col < cols) out[r * cols + col] = Math.fround(s * code + bias);
      }
    }
  }
  return out;
}

/** Index of the first element whose bit pattern differs, or -1. */
export function firstBitDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}
