/**
 * The band loop: the kernel expands a band at address 0 of its memory (about 256 KiB of f32: a
 * few macroblock rows, or for wide tensors a run of macroblocks of one row), and the band is
 * copied into the output while it is still in cache (converted to f16/bf16 there first). Every
 * route that writes a caller's plain array goes through it; the parallel entry hands the same
 * bands to workers.
 */
import type { KernelExports } from "./kernel.js";
import type { DecodedArray, OutputFormat } from "./options.js";
import { BandRows } from "./output.js";
import { WIDE_BAND_MAX_BYTES, WIDE_BAND_MIN_OUTPUT_BYTES } from "./layouts.js";

/** Target size of one band's f32 output: fits in L2 next to the inputs. */
export const BAND_TARGET_BYTES = 256 * 1024;

/**
 * Outputs of at least WIDE_BAND_MIN_OUTPUT_BYTES (larger than the caches; layouts.ts, shared with
 * the in-place route's whole-width band) are copied out in bands of whole macroblock rows of
 * ROW_BAND_BYTES to WIDE_BAND_MAX_BYTES, one `set` each: a copy that large is
 * written by the C library's memmove with non-temporal stores (no read of each output line
 * before it is overwritten), while 64 short rows per band (runs of macroblocks) are read for
 * ownership first. Session 13, encoder v2 4096x8192 on the 2-core AMD EPYC: the copy-out of
 * 128 MiB took ~15.6 ms in 4 KiB rows and ~7.7 ms in 2 MiB bands; the kernel itself writing a
 * 2 MiB band instead of a 256 KiB one was at most ~5% slower (BENCHMARKS.md, session 13).
 */
export const ROW_BAND_BYTES = 2 * 1024 * 1024;

/** Band target of the single-thread routes for an output of rows x cols in `format`. */
export function bandTargetFor(rows: number, cols: number, format: OutputFormat): number {
  if (rows * cols * (format === "f32" ? 4 : 2) < WIDE_BAND_MIN_OUTPUT_BYTES) return BAND_TARGET_BYTES;
  return Math.max(ROW_BAND_BYTES, Math.min(WIDE_BAND_MAX_BYTES, 64 * cols * 4));
}

/**
 * Macroblock rows [by0, by1) x macroblock columns [bx0, bx1): output rows [rowBase, rowBase +
 * keptRows) x columns [colBase, colBase + keptCols), records [b0, b1) (contiguous: a band spans
 * the whole width or lies in one macroblock row). In the band area element (r, c) lies at
 * (r - rowBase) * stride + c - colBase.
 */
export interface Band {
  by0: number;
  by1: number;
  bx0: number;
  bx1: number;
  b0: number;
  b1: number;
  rowBase: number;
  colBase: number;
  keptRows: number;
  keptCols: number;
  stride: number;
}

/**
 * The band shape for a tensor `cols` wide: whole rows of macroblocks when one fits the target
 * (stride = cols), else runs of macroblocks of one row (a 64-row x 4 KiB band: a wide tensor's
 * macroblock row would be megabytes, out of cache, and each 4x4 leaf would touch rows tens of KiB
 * apart). The single-thread routes use BAND_TARGET_BYTES; decodeParallel passes a larger target
 * (parallel.ts: whole rows copy out faster when many threads share the memory bus).
 */
function bandGrid(tilesY: number, tilesX: number, cols: number, target: number): { blockRows: number; blockCols: number; stride: number } {
  if (64 * cols * 4 <= target) {
    return { blockRows: Math.max(1, Math.min(tilesY, Math.floor(target / (64 * cols * 4)))), blockCols: tilesX, stride: cols };
  }
  const blockCols = Math.max(1, Math.min(tilesX, Math.floor(target / (64 * 64 * 4))));
  return { blockRows: 1, blockCols, stride: blockCols * 64 };
}

/** Bytes of the largest band: the f32 area a route reserves for it (at most about `target`, whatever the shape). */
export function bandBytes(tilesY: number, tilesX: number, cols: number, target = BAND_TARGET_BYTES): number {
  const g = bandGrid(tilesY, tilesX, cols, target);
  return g.blockRows * 64 * g.stride * 4;
}

export function bandsOf(tilesY: number, tilesX: number, rows: number, cols: number, target = BAND_TARGET_BYTES): Band[] {
  const g = bandGrid(tilesY, tilesX, cols, target);
  const bands: Band[] = [];
  for (let by0 = 0; by0 < tilesY; by0 += g.blockRows) {
    const by1 = Math.min(tilesY, by0 + g.blockRows);
    for (let bx0 = 0; bx0 < tilesX; bx0 += g.blockCols) {
      const bx1 = Math.min(tilesX, bx0 + g.blockCols);
      bands.push({
        by0, by1, bx0, bx1,
        b0: by0 * tilesX + bx0,
        b1: (by1 - 1) * tilesX + bx1,
        rowBase: by0 * 64,
        colBase: bx0 * 64,
        keptRows: Math.min(rows, by1 * 64) - by0 * 64,
        keptCols: Math.min(cols, bx1 * 64) - bx0 * 64,
        stride: g.stride,
      });
    }
  }
  return bands;
}

export interface BandTarget {
  tilesY: number;
  tilesX: number;
  rows: number;
  cols: number;
  format: OutputFormat;
  /** the output, or a function that allocates it once the first band has been expanded */
  out: DecodedArray | (() => DecodedArray);
}

/**
 * Run `expand` (the kernel writes the band's f32 values at address 0, as Band places them; or,
 * with halvesWritten, its f16/bf16 values, two bytes each) over every band and copy each into the
 * output. null when `expand` reports a fault (false): the
 * caller then runs parse() for the exact error; a lazily allocated output is then never made.
 */
export function runBands(
  kernel: KernelExports,
  memory: WebAssembly.Memory,
  t: BandTarget,
  expand: (band: Band) => boolean,
  target = bandTargetFor(t.rows, t.cols, t.format),
  halvesWritten = false,
): DecodedArray | null {
  let out = typeof t.out === "function" ? null : t.out;
  const rows = new BandRows(kernel, memory.buffer, 0, t.format, halvesWritten);
  for (const band of bandsOf(t.tilesY, t.tilesX, t.rows, t.cols, target)) {
    if (!expand(band)) return null;
    out ??= (t.out as () => DecodedArray)();
    rows.emit(band, out, t.cols);
  }
  return out ?? (t.out as () => DecodedArray)();
}
