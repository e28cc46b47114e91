/**
 * Kernel entry points run on their own in a fresh memory, with forced band widths, so that tests
 * can hold each path to parse() and decodeReference (the decode routes pick these by size).
 */
import { instantiate, kernelModule, pagesFor } from "../src/kernel.js";
import { BLOCK_BYTES, INPUT_SLACK_BYTES, bandWindow, fusedLayout, v2RecordBase, validateInMemory, validatedLayout } from "../src/layouts.js";

/**
 * The one-pass path (validate_decode_v2) on its own, in a fresh memory: the output, or null for
 * "not ok". For tests, which hold it to parse() and decodeReference; decodeInto uses it for v2
 * streams decoded into createOutput() arrays.
 */
export function fusedDecodeV2(
  bytes: Uint8Array,
  shape: readonly [number, number],
  tilesX: number,
  blockCount: number,
  chunkBlocks?: number,
): Float32Array | null {
  const module = kernelModule();
  if (!module) throw new Error("the wasm kernel cannot run here");
  const outBytes = shape[0] * shape[1] * 4;
  const planned = fusedLayout(outBytes, bytes.length, tilesX);
  // tests force a band width (0 = none) to cover chunk flushes on small shapes
  const layout = chunkBlocks === undefined ? planned : { ...planned, chunkBlocks, streamAt: planned.bandAt + chunkBlocks * BLOCK_BYTES };
  layout.totalBytes = layout.streamAt + bytes.length + INPUT_SLACK_BYTES;
  const memory = new WebAssembly.Memory({ initial: pagesFor(layout.totalBytes) });
  new Uint8Array(memory.buffer, layout.streamAt, bytes.length).set(bytes);
  const status = instantiate(module, memory).validate_decode_v2(
    layout.streamAt, bytes.length, blockCount, layout.scratchAt, 0, shape[0], shape[1], tilesX, layout.bandAt, layout.chunkBlocks,
  );
  return status === 0 ? new Float32Array(memory.buffer, 0, shape[0] * shape[1]).slice() : null;
}

/**
 * The one-pass path as decodeInto runs it for a createOutput() array (validate_decode_v2_window_banded):
 * each macroblock row's records copied into one reused window first, with a forced band width.
 * The output, null for "not ok", or "no window" where decodeInto would copy the whole stream instead. For tests.
 */
export function windowedDecodeV2(
  bytes: Uint8Array,
  shape: readonly [number, number],
  tilesX: number,
  blockCount: number,
  chunkBlocks: number,
): Float32Array | null | "no window" {
  const module = kernelModule();
  if (!module) throw new Error("the wasm kernel cannot run here");
  const len = bytes.length, base = v2RecordBase(blockCount);
  if (base > len) return "no window";
  const view = new DataView(bytes.buffer, bytes.byteOffset, len);
  let most = 0;
  for (let b0 = 0; b0 < blockCount; b0 += tilesX) {
    const { lo, hi } = bandWindow(view, base, len, b0, b0 + tilesX);
    if (!(hi > lo) || hi - lo > 2 * 1024 * 1024) return "no window";
    most = Math.max(most, hi - lo);
  }
  const outBytes = shape[0] * shape[1] * 4;
  const scratchAt = Math.ceil(outBytes / 16) * 16, bandAt = scratchAt + 256 * 16, headAt = bandAt + chunkBlocks * BLOCK_BYTES;
  const windowAt = Math.ceil((headAt + base) / 16) * 16;
  const memory = new WebAssembly.Memory({ initial: pagesFor(windowAt + most + INPUT_SLACK_BYTES) });
  const kernel = instantiate(module, memory);
  new Uint8Array(memory.buffer, headAt, base).set(bytes.subarray(0, base));
  const window = new Uint8Array(memory.buffer, windowAt, most);
  for (let b0 = 0; b0 < blockCount; b0 += tilesX) {
    const { lo, hi } = bandWindow(view, base, len, b0, b0 + tilesX);
    window.fill(0xa5); // stale bytes of the previous row must not be read as this row's
    window.set(bytes.subarray(lo, hi));
    const status = kernel.validate_decode_v2_window_banded(headAt, windowAt, lo, hi, len, blockCount, b0, b0 + tilesX, scratchAt, 0, shape[0], shape[1], tilesX, bandAt, chunkBlocks);
    if (status !== 0) return null;
  }
  return new Float32Array(memory.buffer, 0, shape[0] * shape[1]).slice();
}

/** v1 through the output band (decode_v1_banded) with a forced band width, in a fresh memory; null when the stream is not valid. For tests. */
export function bandedDecodeV1(bytes: Uint8Array, shape: readonly [number, number], tilesX: number, blockCount: number, chunkBlocks: number): Float32Array | null {
  const module = kernelModule();
  if (!module) throw new Error("the wasm kernel cannot run here");
  const outBytes = shape[0] * shape[1] * 4;
  const layout = validatedLayout(outBytes, "v1", bytes.length, blockCount);
  const memory = new WebAssembly.Memory({ initial: pagesFor(layout.bandAt + chunkBlocks * BLOCK_BYTES) });
  const kernel = instantiate(module, memory);
  const count = validateInMemory(kernel, memory.buffer, bytes, "v1", blockCount, layout, layout.streamAt);
  if (count < 0) return null;
  kernel.decode_v1_banded(layout.tableAt, count, 0, shape[0], shape[1], tilesX, layout.bandAt, chunkBlocks);
  return new Float32Array(memory.buffer, 0, shape[0] * shape[1]).slice();
}
