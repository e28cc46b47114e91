/**
 * The readable reference: one plain loop over the leaf table, element by element. The fast paths
 * are tested against it bit for bit.
 */
import { floatBitsToHalfBits, halfToFloat, type Container } from "@sgfp4/format";
import { parseForDecode, type DecodeOptions } from "./options.js";

/** T158 2-bit symbol -> code (spec 22.6.2; 11 is reserved and decodes as 0). */
const T158_CODE = [0, 1, -1, 0] as const;

/** Write every kept element of every leaf of `c` into `out` (length O*I). */
export function expandReference(c: Container, bytes: Uint8Array, out: Float32Array): void {
  const [rows, cols] = c.shape;
  const t = c.leafTable;
  for (let n = 0; n < c.leafCount; n++) {
    const block = t[4 * n]!;
    const geometry = t[4 * n + 1]!;
    const params = t[4 * n + 2]!;
    const payload = t[4 * n + 3]!;
    const by = Math.floor(block / c.tilesX);
    const bx = block % c.tilesX;
    const y = geometry & 63;
    const x = (geometry >>> 6) & 63;
    const size = 1 << ((geometry >>> 12) & 7);
    const isT158 = ((geometry >>> 15) & 1) === 1;
    const scale = halfToFloat(params >>> 16);
    const bias = halfToFloat(params & 0xffff);
    for (let i = 0; i < size; i++) {
      for (let j = 0; j < size; j++) {
        const r = by * 64 + y + i;
        const col = bx * 64 + x + j;
        if (r >= rows || col >= cols) continue; // cropped: outside the (O, I) tensor
        const k = i * size + j; // row-major index inside the leaf
        let code: number;
        if (isT158) {
          code = T158_CODE[(bytes[payload + (k >> 2)]! >> (2 * (k & 3))) & 3]!;
        } else {
          const nibble = (bytes[payload + (k >> 1)]! >> (4 * (k & 1))) & 15;
          code = nibble >= 8 ? nibble - 16 : nibble;
        }
        // scale * code is exact in double (and in float32); the double sum rounded once to float32
        // by the store equals the float32 sum (double rounding is harmless for one add: 53 >= 2*24+2).
        out[r * cols + col] = scale * code + bias;
      }
    }
  }
}

export function decodeReference(bytes: Uint8Array, opts: DecodeOptions): Float32Array {
  const c = parseForDecode(bytes, opts);
  const out = new Float32Array(c.shape[0] * c.shape[1]);
  expandReference(c, bytes, out);
  return out;
}

/**
 * f32 values -> f16 or bf16 bit patterns, round to nearest even (P10): for engines without the
 * wasm kernel, which converts in SIMD. Decoded values are finite, so bf16 needs no NaN case.
 */
export function toHalfBits(f32: Float32Array, format: "f16" | "bf16"): Uint16Array {
  const bits = new Uint32Array(f32.buffer, f32.byteOffset, f32.length);
  const out = new Uint16Array(f32.length);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i]!;
    out[i] = format === "f16" ? floatBitsToHalfBits(b) : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
  return out;
}
