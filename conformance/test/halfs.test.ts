/**
 * P10: the judge's own f16/bf16 conversion. Checked against a brute-force nearest-value search
 * (not a bit trick), and on the golden vector v1-half-format-rounding with expectations written
 * out by hand from the IEEE definitions.
 */
import { describe, expect, it } from "vitest";
import { halfToFloat } from "@sgfp4/format";
import { defaultVectorsDir, expectedWords, f32ToBf16Bits, f32ToF16Bits, loadVectorSet, wordsFromLE } from "../src/index.js";

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number): number => ((f32[0] = x), u32[0]!);
const valueOfBits = (b: number): number => ((u32[0] = b >>> 0), f32[0]!);

/** Finite non-negative binary16 values, ascending: index = bit pattern. */
const HALVES = Array.from({ length: 0x7c00 }, (_, h) => halfToFloat(h));

/** RNE to binary16 by search: nearest value; ties go to the even pattern; 65520 and up is Inf. */
function referenceF16(x: number): number {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00;
  let lo = 0;
  let hi = HALVES.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (HALVES[mid]! <= a) lo = mid;
    else hi = mid - 1;
  }
  if (HALVES[lo] === a || lo === HALVES.length - 1) return sign | lo;
  // exact differences: a lies between two neighbours within a factor of two (or next to 0)
  const down = a - HALVES[lo]!;
  const up = HALVES[lo + 1]! - a;
  if (down < up) return sign | lo;
  if (up < down) return sign | (lo + 1);
  return sign | (lo % 2 === 0 ? lo : lo + 1);
}

describe("f32 -> f16 (P10)", () => {
  it("matches a nearest-value search on edge and random inputs", () => {
    const inputs: number[] = [0, -0, 1, -1, 65504, 65519.99, 65520, 65536, 1e9, -1e9, 2 ** -24, 2 ** -25, 3 * 2 ** -25, 2 ** -25 + 2 ** -40, 2 ** -14, 2 ** -14 - 2 ** -25, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -149, 2 ** -126];
    let seed = 12345;
    const rand = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), seed);
    for (let i = 0; i < 20000; i++) {
      // exponents around the binary16 range, random mantissas, both signs
      const e = (rand() % 50) - 30;
      inputs.push(valueOfBits(((rand() & 1) << 31) | ((e + 127) << 23) | (rand() & 0x7fffff)));
    }
    for (const x of inputs) {
      const b = bitsOf(x);
      expect(f32ToF16Bits(b), `input ${x} (0x${b.toString(16)})`).toBe(referenceF16(valueOfBits(b)));
    }
  });

  it("keeps NaN a NaN and Inf an Inf", () => {
    expect(f32ToF16Bits(0x7f800000)).toBe(0x7c00);
    expect(f32ToF16Bits(0xff800000)).toBe(0xfc00);
    expect(f32ToF16Bits(0x7fc00000) & 0x7e00).toBe(0x7e00);
    expect(f32ToBf16Bits(0x7f800001) & 0x7fc0).toBe(0x7fc0);
  });
});

describe("golden vector v1-half-format-rounding", () => {
  // value -> [f16 bits, bf16 bits], worked out by hand from the IEEE definitions
  const CASES: [number, number, number][] = [
    [1 + 2 ** -11, 0x3c00, 0x3f80], // f16 tie, down to even
    [1 + 3 * 2 ** -11, 0x3c02, 0x3f80], // f16 tie, up to even
    [1 + 5 * 2 ** -11, 0x3c02, 0x3f80], // f16 tie, down
    [1 + 7 * 2 ** -11, 0x3c04, 0x3f80], // f16 tie, up
    [-(1 + 2 ** -11), 0xbc00, 0xbf80],
    [-(1 + 3 * 2 ** -11), 0xbc02, 0xbf80],
    [1 - 2 ** -11, 0x3bff, 0x3f80], // exact in f16; bf16 rounds up to 1
    [1 + 2 ** -8, 0x3c04, 0x3f80], // bf16 tie, down to even
    [1 + 3 * 2 ** -8, 0x3c0c, 0x3f82], // bf16 tie, up to even
    [1 + 5 * 2 ** -8, 0x3c14, 0x3f82], // bf16 tie, down
    [1 + 7 * 2 ** -8, 0x3c1c, 0x3f84], // bf16 tie, up
    [-(1 + 2 ** -8), 0xbc04, 0xbf80],
    [-(1 + 3 * 2 ** -8), 0xbc0c, 0xbf82],
    [3 * 2 ** -24, 0x0003, 0x3440], // f16 subnormal kept; bf16 exact
    [-8 * 2 ** -24, 0x8008, 0xb500],
    [3069 * 2 ** -24, 0x09fe, 0x3940], // f16 tie among small normals (510.5 units), down to even; bf16: 0x393fd000 rounds up
    [65504, 0x7bff, 0x4780], // 65504 = 0x477fe000 in float32 -> bf16 rounds up to 0x4780
    [65520, 0x7c00, 0x4780], // f16 tie at the top: to even is +Inf
    [65488, 0x7bfe, 0x4780], // f16 tie, down to even; bf16 0x477fd000 rounds up
    [65456, 0x7bfe, 0x4780], // f16 tie, up to even; bf16 0x477fb000 rounds up
    [131008, 0x7c00, 0x4800], // overflow
    [-524032, 0xfc00, 0xc900], // overflow, negative
  ];

  it("holds every case, and the judge's conversion gives the hand-worked bits", async () => {
    const set = await loadVectorSet(defaultVectorsDir());
    const v = set.vectors.find((x) => x.id === "v1-half-format-rounding");
    expect(v, "v1-half-format-rounding is in the published golden vectors").toBeDefined();
    const words = wordsFromLE(await set.source.bytes(v!.expect.kind === "decode" ? v!.expect.output! : ""));
    const f16 = expectedWords(words, "f16");
    const bf16 = expectedWords(words, "bf16");
    for (const [value, h, b] of CASES) {
      const i = words.indexOf(bitsOf(value));
      expect(i, `${value} is an output of the vector`).toBeGreaterThanOrEqual(0);
      expect(f16[i], `f16 of ${value}`).toBe(h);
      expect(bf16[i], `bf16 of ${value}`).toBe(b);
    }
  });
});
