/**
 * The routes from container bytes to a plain output array, each through the one band loop
 * (bands.ts). Every route answers null for "not ok"; the caller then runs parse() (parsed.ts),
 * which throws the exact error, so a valid stream is validated once.
 */
import { bandBytes, bandTargetFor, runBands, type BandTarget } from "./bands.js";
import { MAX_WASM_BYTES, kernelModule } from "./kernel.js";
import { fusedLayout, validateInMemory, validatedLayout } from "./layouts.js";
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
  const layout = fusedLayout(bandBytes(r.tilesY, r.tilesX, r.cols, bandTarget), bytes.length, r.tilesX, 0); // the band is the output: no output band
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
 * The whole stream is validated first (the wasm validator writes the leaf table into scratch
 * memory), then expanded band by band; a rejected stream writes nothing. Used for v1, whose
 * validation is cheap (one leaf per block); v2 takes the one pass above.
 */
export function validatedBands(bytes: Uint8Array, r: FastRequest, target: BandTarget): DecodedArray | null {
  const module = kernelModule();
  if (!module) return null;
  const bandTarget = bandTargetFor(r.rows, r.cols, target.format);
  const layout = validatedLayout(bandBytes(r.tilesY, r.tilesX, r.cols, bandTarget), r.profile, bytes.length, r.blockCount);
  if (layout.totalBytes > MAX_WASM_BYTES) return null;
  try {
    const { memory, kernel } = scratchMemory(module, layout.totalBytes);
    if (validateInMemory(kernel, memory.buffer, bytes, r.profile, r.blockCount, layout, layout.streamAt) < 0) return null;
    const blockFirst = new Uint32Array(memory.buffer, layout.blockFirstAt, r.blockCount + 1);
    return runBands(kernel, memory, target, (b) => {
      const first = blockFirst[b.b0]!;
      kernel.decode_leaves_window(layout.tableAt + first * 16, blockFirst[b.b1]! - first, 0, b.stride, r.rows, r.cols, r.tilesX, b.rowBase, b.colBase);
      return true;
    }, bandTarget);
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}
