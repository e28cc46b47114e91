/**
 * The routes from container bytes to a plain output array, each through the one band loop
 * (bands.ts). Every route answers null for "not ok"; the caller then runs parse() (parsed.ts),
 * which throws the exact error, so a valid stream is validated once.
 */
import { align16 } from "@sgfp4/format";
import { bandBytes, bandTargetFor, bandsOf, runBands, type BandTarget } from "./bands.js";
import { MAX_WASM_BYTES, kernelModule } from "./kernel.js";
import { INPUT_SLACK_BYTES, MAX_BAND_WINDOW_BYTES, bandWindow, fusedLayout, v2RecordBase, validateInMemory, validatedLayout } from "./layouts.js";
import { asSgfp4Error, type DecodedArray } from "./options.js";
import type { FastRequest } from "./request.js";
import { scratchMemory } from "./scratch.js";

/**
 * v2 in one pass: each band of macroblock rows is validated and expanded record by record
 * (validate_decode_v2_window) and copied out. The records before a fault have been written when it
 * answers null (decode drops its new array, allocated only once the first band has passed, so a
 * short hostile stream with a huge shape allocates none; decodeInto documents that its output is
 * unspecified after an error).
 */
export function fusedBands(bytes: Uint8Array, r: FastRequest, target: BandTarget): DecodedArray | null {
  const module = kernelModule();
  if (!module) return null;
  const bandTarget = bandTargetFor(r.rows, r.cols, target.format);
  const outBytes = bandBytes(r.tilesY, r.tilesX, r.cols, bandTarget);
  const windows = bandWindows(bytes, r, bandTarget);
  if (windows) return windowedBands(module, bytes, r, target, bandTarget, outBytes, windows);
  const layout = fusedLayout(outBytes, bytes.length, r.tilesX, 0); // the band is the output: no output band
  if (layout.totalBytes > MAX_WASM_BYTES) return null;
  try {
    const { memory, kernel } = scratchMemory(module, layout.totalBytes);
    new Uint8Array(memory.buffer, layout.streamAt, bytes.length).set(bytes);
    return runBands(kernel, memory, target, (b) =>
      kernel.validate_decode_v2_window(layout.streamAt, bytes.length, r.blockCount, b.b0, b.b1, layout.scratchAt, 0, b.stride, r.rows, r.cols, r.tilesX, b.rowBase, b.colBase) === 0,
      bandTarget,
    );
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}

/**
 * The largest window the bands of a v2 stream need, or null where the stream is to be copied
 * whole (a band whose records lie far apart, or offsets out of order or past the end: the
 * whole-stream route then gives the kernel's verdict).
 */
function bandWindows(bytes: Uint8Array, r: FastRequest, bandTarget: number): number | null {
  const len = bytes.length;
  const base = v2RecordBase(r.blockCount);
  if (base > len) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, len);
  let most = 0;
  for (const b of bandsOf(r.tilesY, r.tilesX, r.rows, r.cols, bandTarget)) {
    const { lo, hi } = bandWindow(view, base, len, b.b0, b.b1);
    if (!(hi > lo) || hi - lo > MAX_BAND_WINDOW_BYTES) return null;
    most = Math.max(most, hi - lo);
  }
  return most;
}

/**
 * fusedBands through a window: the header and offset table are copied once, then each band's
 * records (bandWindow) into one window that every band reuses, where the kernel reads them while
 * they are in cache (validate_decode_v2_stream_window), instead of the whole stream first.
 * Memory: [band | f16/bf16: one f32 macroblock | scratch (one record's leaf table) | header and
 * offset table | window].
 */
function windowedBands(module: WebAssembly.Module, bytes: Uint8Array, r: FastRequest, target: BandTarget, bandTarget: number, outBytes: number, windowBytes: number): DecodedArray | null {
  const len = bytes.length;
  const base = v2RecordBase(r.blockCount);
  // f16/bf16: the kernel writes the band's halves itself, two bytes a weight
  // (validate_decode_v2_half_window: inner records by table, edge records through a 16 KiB f32
  // macroblock): no f32 band, no separate conversion pass over it
  const half = target.format !== "f32";
  const bf16 = target.format === "bf16" ? 1 : 0;
  const blockAt = align16(half ? outBytes / 2 : outBytes);
  const scratchAt = half ? blockAt + 64 * 64 * 4 : blockAt;
  const headAt = scratchAt + 256 * 16;
  const windowAt = align16(headAt + base);
  const totalBytes = windowAt + windowBytes + INPUT_SLACK_BYTES;
  if (totalBytes > MAX_WASM_BYTES) return null;
  try {
    const { memory, kernel } = scratchMemory(module, totalBytes);
    new Uint8Array(memory.buffer, headAt, base).set(bytes.subarray(0, base));
    const window = new Uint8Array(memory.buffer, windowAt, windowBytes);
    const view = new DataView(bytes.buffer, bytes.byteOffset, len);
    return runBands(kernel, memory, target, (b) => {
      const { lo, hi } = bandWindow(view, base, len, b.b0, b.b1);
      window.set(bytes.subarray(lo, hi));
      return half
        ? kernel.validate_decode_v2_half_window(headAt, windowAt, lo, hi, len, r.blockCount, b.b0, b.b1, scratchAt, blockAt, 0, b.stride, r.rows, r.cols, r.tilesX, b.rowBase, b.colBase, bf16) === 0
        : kernel.validate_decode_v2_stream_window(headAt, windowAt, lo, hi, len, r.blockCount, b.b0, b.b1, scratchAt, 0, b.stride, r.rows, r.cols, r.tilesX, b.rowBase, b.colBase) === 0;
    }, bandTarget, half);
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}


/**
 * The whole stream is validated first (the wasm validator writes the leaf table into scratch
 * memory), then expanded band by band; a rejected stream writes nothing. Used for v1, whose
 * validation is cheap (one leaf per block); v2 takes the one pass above.
 */
export function validatedBands(bytes: Uint8Array, r: FastRequest, target: BandTarget): DecodedArray | null {
  const module = kernelModule();
  if (!module) return null;
  const bandTarget = bandTargetFor(r.rows, r.cols, target.format);
  const outBytes = bandBytes(r.tilesY, r.tilesX, r.cols, bandTarget);
  // f16/bf16: the kernel writes the halves by table (decode_leaves_half_window): a band of halves,
  // then one f32 macroblock for leaves cut by the tensor's edge
  const half = target.format !== "f32";
  const blockAt = align16(outBytes / 2);
  const layout = validatedLayout(half ? blockAt + 64 * 64 * 4 : outBytes, r.profile, bytes.length, r.blockCount);
  if (layout.totalBytes > MAX_WASM_BYTES) return null;
  try {
    const { memory, kernel } = scratchMemory(module, layout.totalBytes);
    if (validateInMemory(kernel, memory.buffer, bytes, r.profile, r.blockCount, layout, layout.streamAt) < 0) return null;
    const blockFirst = new Uint32Array(memory.buffer, layout.blockFirstAt, r.blockCount + 1);
    const bf16 = target.format === "bf16" ? 1 : 0;
    return runBands(kernel, memory, target, (b) => {
      const first = blockFirst[b.b0]!;
      const table = layout.tableAt + first * 16, count = blockFirst[b.b1]! - first;
      if (half) kernel.decode_leaves_half_window(table, count, blockAt, 0, b.stride, r.rows, r.cols, r.tilesX, b.rowBase, b.colBase, bf16);
      else kernel.decode_leaves_window(table, count, 0, b.stride, r.rows, r.cols, r.tilesX, b.rowBase, b.colBase);
      return true;
    }, bandTarget, half);
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}
