/**
 * Bit-pattern comparison of decoded outputs: equal means every element has the same bits
 * (32 for f32, 16 for the f16/bf16 output formats).
 */
import { halfToFloat, type OutputFormat } from "@sgfp4/format";

export interface BitMismatch {
  kind: "mismatch";
  /** first differing element, its row and column in the (O, I) output */
  index: number;
  row: number;
  col: number;
  expectedBits: number;
  actualBits: number;
  expectedValue: number;
  actualValue: number;
  /** how many elements differ in all */
  differing: number;
  total: number;
}

export interface LengthMismatch {
  kind: "length";
  expectedLength: number;
  actualLength: number;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
export function bitsToValue(bits: number): number {
  u32[0] = bits >>> 0;
  return f32[0]!;
}

export const hex32 = (bits: number): string => "0x" + (bits >>> 0).toString(16).padStart(8, "0");
export const hex16 = (bits: number): string => "0x" + (bits & 0xffff).toString(16).padStart(4, "0");

/** An element's bit pattern as hex, in its format's width. */
export const hexBits = (bits: number, format: OutputFormat = "f32"): string => (format === "f32" ? hex32(bits) : hex16(bits));

/** The number an element's bits stand for in its format. */
export function valueOf(bits: number, format: OutputFormat = "f32"): number {
  if (format === "f16") return halfToFloat(bits & 0xffff);
  if (format === "bf16") return bitsToValue((bits & 0xffff) << 16);
  return bitsToValue(bits);
}

/** Little-endian float32 file bytes -> words (copied, so alignment never matters). */
export function wordsFromLE(bytes: Uint8Array): Uint32Array {
  const n = bytes.length >>> 2;
  const out = new Uint32Array(n);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < n; i++) out[i] = dv.getUint32(4 * i, true);
  return out;
}

export function floatWords(a: Float32Array): Uint32Array {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/** null when identical; otherwise the first difference and the count. */
export function compareBits(expected: Uint32Array | Uint16Array, actual: Uint32Array | Uint16Array, cols: number, format: OutputFormat = "f32"): BitMismatch | LengthMismatch | null {
  if (expected.length !== actual.length) return { kind: "length", expectedLength: expected.length, actualLength: actual.length };
  let first = -1;
  let differing = 0;
  for (let i = 0; i < expected.length; i++) {
    if (expected[i] !== actual[i]) {
      if (first < 0) first = i;
      differing++;
    }
  }
  if (first < 0) return null;
  const expectedBits = expected[first]!;
  const actualBits = actual[first]!;
  return {
    kind: "mismatch",
    index: first,
    row: Math.floor(first / cols),
    col: first % cols,
    expectedBits,
    actualBits,
    expectedValue: valueOf(expectedBits, format),
    actualValue: valueOf(actualBits, format),
    differing,
    total: expected.length,
  };
}
