/** Output arrays of each format: allocation, checks, and the copy of an expanded band into them. */
import { Sgfp4Error } from "@sgfp4/format";
import type { KernelExports } from "./kernel.js";
import { asSgfp4Error, type DecodedArray, type OutputFormat } from "./options.js";

export function allocateOutput(format: OutputFormat, elements: number): DecodedArray {
  try {
    return format === "f32" ? new Float32Array(elements) : new Uint16Array(elements);
  } catch (e) {
    throw asSgfp4Error(e, "allocating the output");
  }
}

/** `out` must be a Float32Array for f32, a Uint16Array for f16/bf16 (checked before anything runs). */
export function checkOutType(out: unknown, format: OutputFormat): asserts out is DecodedArray {
  const want = format === "f32" ? Float32Array : Uint16Array;
  if (!(out instanceof want)) throw new Sgfp4Error("INVALID_ARGUMENT", `out must be a ${want.name} for format ${format}`);
}

/** `out` must hold O*I elements (checked once the stream is known to be valid, as parse() orders its errors). */
export function checkOutLength(out: DecodedArray, rows: number, cols: number): void {
  if (out.length !== rows * cols) throw new Sgfp4Error("INVALID_ARGUMENT", `out has ${out.length} elements, expected O*I = ${rows * cols}`);
}

/**
 * Copy `count` f32 values the kernel wrote at byte `at` of `buffer` into `out` from element
 * `outAt`. For f16/bf16 the kernel first converts them in place (half the bytes to copy).
 */
export function emitBand(kernel: KernelExports, buffer: ArrayBufferLike, at: number, count: number, out: DecodedArray, outAt: number, format: OutputFormat): void {
  if (format === "f32") {
    out.set(new Float32Array(buffer, at, count), outAt);
    return;
  }
  if (format === "f16") kernel.convert_f16(at, at, count);
  else kernel.convert_bf16(at, at, count);
  out.set(new Uint16Array(buffer, at, count), outAt);
}
