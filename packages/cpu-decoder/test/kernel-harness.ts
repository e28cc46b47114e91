/**
 * Kernel entry points run on their own in a fresh memory, with forced band widths, so that tests
 * can hold each path to parse() and decodeReference (the decode routes pick these by size).
 */
import { instantiate, kernelModule, pagesFor } from "../src/kernel.js";
import { BLOCK_BYTES, INPUT_SLACK_BYTES, fusedLayout, validateInMemory, validatedLayout } from "../src/layouts.js";

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
