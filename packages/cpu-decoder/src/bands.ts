/**
 * The band loop: the kernel expands a band of macroblock rows (about 256 KiB of f32) at address 0
 * of its memory, and the band is copied into the output while it is still in cache (converted to
 * f16/bf16 there first). Every route that writes a caller's plain array goes through it; the
 * parallel entry hands the same bands to workers.
 */
import type { KernelExports } from "./kernel.js";
import type { DecodedArray, OutputFormat } from "./options.js";
import { emitBand } from "./output.js";

/** Target size of one band's f32 output: fits in L2 next to the inputs. */
export const BAND_TARGET_BYTES = 256 * 1024;

/** A run of macroblock rows [by0, by1): output rows [rowBase, rowBase + keptRows). */
export interface Band {
  by0: number;
  by1: number;
  rowBase: number;
  keptRows: number;
}

/** Macroblock rows per band for a tensor `cols` wide (at least one). */
export function bandBlockRows(tilesY: number, cols: number): number {
  return Math.max(1, Math.min(tilesY, Math.floor(BAND_TARGET_BYTES / (64 * cols * 4))));
}

/** Bytes of one band: the f32 area a route reserves at address 0. */
export const bandBytes = (tilesY: number, cols: number) => bandBlockRows(tilesY, cols) * 64 * cols * 4;

/**
 * A band is allocated before the stream is validated: very wide tensors (one macroblock row over
 * four times the target) take the routes that validate first.
 */
export const bandFitsBeforeValidation = (cols: number) => 64 * cols * 4 <= 4 * BAND_TARGET_BYTES;

export function bandsOf(tilesY: number, rows: number, cols: number): Band[] {
  const step = bandBlockRows(tilesY, cols);
  const bands: Band[] = [];
  for (let by0 = 0; by0 < tilesY; by0 += step) {
    const by1 = Math.min(tilesY, by0 + step);
    bands.push({ by0, by1, rowBase: by0 * 64, keptRows: Math.min(rows, by1 * 64) - by0 * 64 });
  }
  return bands;
}

export interface BandTarget {
  tilesY: number;
  rows: number;
  cols: number;
  format: OutputFormat;
  /** the output, or a function that allocates it once the first band has been expanded */
  out: DecodedArray | (() => DecodedArray);
}

/**
 * Run `expand` (the kernel writes the band's f32 rows at address 0, row base `band.rowBase`) over
 * every band and copy each into the output. null when `expand` reports a fault (false): the
 * caller then runs parse() for the exact error; a lazily allocated output is then never made.
 */
export function runBands(kernel: KernelExports, memory: WebAssembly.Memory, t: BandTarget, expand: (band: Band) => boolean): DecodedArray | null {
  let out = typeof t.out === "function" ? null : t.out;
  for (const band of bandsOf(t.tilesY, t.rows, t.cols)) {
    if (!expand(band)) return null;
    out ??= (t.out as () => DecodedArray)();
    emitBand(kernel, memory.buffer, 0, band.keptRows * t.cols, out, band.rowBase * t.cols, t.format);
  }
  return out ?? (t.out as () => DecodedArray)();
}
