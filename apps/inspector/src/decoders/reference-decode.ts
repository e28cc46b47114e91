/**
 * Stand-in CPU decode used only until @sgfp4/cpu-decoder is wired in (see cpu-impl.ts): a
 * plain walk over the leaf table, DECISIONS.md section 2 arithmetic.
 */
import { bitsToFloat32, halfBitsToFloatBits, parse, type Profile, type Shape } from "@sgfp4/format";

const T158_CODE = [0, 1, -1, 0]; // symbol 11 decodes as 0 (normative)

export function referenceDecode(bytes: Uint8Array, opts: { profile: Profile; shape: Shape }): Float32Array {
  const c = parse(bytes, opts);
  const [rows, cols] = c.shape;
  const out = new Float32Array(rows * cols);
  const t = c.leafTable;
  for (let i = 0; i < c.leafCount; i++) {
    const b = t[4 * i]!;
    const w1 = t[4 * i + 1]!;
    const hdr = t[4 * i + 2]!;
    const payload = t[4 * i + 3]!;
    const size = 1 << ((w1 >>> 12) & 7);
    const t158 = (w1 >>> 15) & 1;
    const r0 = Math.floor(b / c.tilesX) * 64 + (w1 & 63);
    const c0 = (b % c.tilesX) * 64 + ((w1 >>> 6) & 63);
    // S*code is exact in float32 and the double sum rounds once to float32 correctly.
    const scale = bitsToFloat32(halfBitsToFloatBits(hdr >>> 16));
    const bias = bitsToFloat32(halfBitsToFloatBits(hdr & 0xffff));
    for (let ii = 0; ii < size; ii++) {
      const r = r0 + ii;
      if (r >= rows) break;
      for (let jj = 0; jj < size; jj++) {
        const col = c0 + jj;
        if (col >= cols) break;
        const k = ii * size + jj;
        let code: number;
        if (t158) code = T158_CODE[(bytes[payload + (k >>> 2)]! >>> ((k & 3) * 2)) & 3]!;
        else {
          const n = (bytes[payload + (k >>> 1)]! >>> ((k & 1) * 4)) & 15;
          code = n >= 8 ? n - 16 : n;
        }
        out[r * cols + col] = Math.fround(scale * code + bias);
      }
    }
  }
  return out;
}
