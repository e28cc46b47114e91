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

/** A band's place in its memory and in the output (bands.ts Band). */
export interface BandPlace {
  rowBase: number;
  colBase: number;
  keptRows: number;
  keptCols: number;
  stride: number;
}

/**
 * Copies bands the kernel wrote at byte `at` of `buffer` into an output: one copy when a band
 * spans the whole width, else one per row (the row views are made once per call and reused: a
 * view costs about as much as copying a short row). For f16/bf16 the kernel first converts the
 * band in place (half the bytes to copy; a row of `stride` f32 becomes `stride` u16 at half the offset).
 */
export class BandRows {
  private readonly views = new Map<number, DecodedArray[]>();
  constructor(
    private readonly kernel: KernelExports,
    private readonly buffer: ArrayBufferLike,
    private readonly at: number,
    private readonly format: OutputFormat,
    /** f16/bf16: the kernel wrote the band's halves already (no conversion here) */
    private readonly halvesWritten = false,
  ) {}

  emit(band: BandPlace, out: DecodedArray, cols: number): void {
    const { keptRows, keptCols, stride } = band;
    const half = this.format !== "f32";
    if (half && !this.halvesWritten) {
      const n = keptRows * stride;
      if (this.format === "f16") this.kernel.convert_f16(this.at, this.at, n);
      else this.kernel.convert_bf16(this.at, this.at, n);
    }
    const outAt = band.rowBase * cols + band.colBase;
    if (keptCols === cols && stride === cols) {
      out.set(half ? new Uint16Array(this.buffer, this.at, keptRows * cols) : new Float32Array(this.buffer, this.at, keptRows * cols), outAt);
      return;
    }
    const views = this.rowViews(keptCols, stride, half);
    for (let r = 0; r < keptRows; r++) out.set(views[r]!, outAt + r * cols);
  }

  private rowViews(keptCols: number, stride: number, half: boolean): DecodedArray[] {
    let views = this.views.get(keptCols);
    if (!views) {
      views = [];
      for (let r = 0; r < 64; r++) {
        views.push(half ? new Uint16Array(this.buffer, this.at + r * stride * 2, keptCols) : new Float32Array(this.buffer, this.at + r * stride * 4, keptCols));
      }
      this.views.set(keptCols, views);
    }
    return views;
  }
}
