/**
 * Kernel-memory outputs: createOutput() returns a Float32Array that lives in the kernel's own
 * WebAssembly.Memory, so decodeInto lets the kernel write the output in place (no copy).
 * Layout of such a memory: [output region | kernel input space (table, stream copy, band)].
 */
import { Sgfp4Error, align16, checkShape, type Container } from "@sgfp4/format";
import { MAX_WASM_BYTES, WASM_PAGE, instantiate, kernelModule, pagesFor, type KernelExports } from "./kernel.js";
import {
  BLOCK_BYTES, INPUT_SLACK_BYTES, MAX_BAND_WINDOW_BYTES, bandChunkBlocks, bandReserveBytes, bandWindow, fillInputs, fusedLayout, planMemory,
  v2RecordBase, validateInMemory, validatedLayout,
} from "./layouts.js";
import { asSgfp4Error } from "./options.js";
import type { FastRequest } from "./request.js";

/** A WebAssembly.Memory that holds one caller-visible output region followed by kernel input space. */
interface KernelArena {
  memory: WebAssembly.Memory;
  kernel: KernelExports;
  /** bytes [0, outputBytes) are the output region handed to the caller */
  outputBytes: number;
}

/** Buffers of createOutput() arrays -> their arena (weak: the arena lives as long as the buffer). */
const kernelOutputs = new WeakMap<ArrayBufferLike, KernelArena>();

/**
 * Input space reserved per macroblock after the output region: the worst case without gaps
 * between records (v2 all 4x4 leaves: 256 table entries of 16 bytes, a 5136-byte record with
 * 16-byte-padded payloads). Pages that are never touched cost no physical memory.
 */
const INPUT_BYTES_PER_BLOCK = 256 * 16 + 5136 + 16;

export interface OutputOptions {
  /** Same limit as decode's (default 2^31 bytes of output). */
  limits?: { maxOutputBytes?: number };
}

/**
 * A Float32Array of O*I zeros that lives in the decoder kernel's own WebAssembly.Memory, so that
 * `decodeInto(bytes, opts, out)` lets the kernel write the output straight into it (no extra pass
 * over the output). Allocate it once and reuse it across calls.
 *
 * Lifetime rules:
 * - Every decodeInto overwrites it in place; copy (`out.slice()`) what must outlive the next call.
 * - Its memory is never grown, so the view never detaches; it is freed by the garbage collector
 *   once the array (and every view of its buffer) is unreachable.
 * - `out.buffer` is larger than the output (kernel input space follows it): use `out` itself or
 *   `out.subarray(...)`, never `new Float32Array(out.buffer)`. The buffer cannot be transferred
 *   with postMessage (a WebAssembly.Memory buffer is not detachable); structured clone copies it.
 * - A container whose inputs do not fit the space reserved for them (only possible with large
 *   gaps between v2 records) still decodes correctly, through the banded copy path.
 * - Where the wasm SIMD kernel cannot run, a plain Float32Array is returned.
 */
export function createOutput(shape: readonly [number, number], opts: OutputOptions = {}): Float32Array {
  const { blockCount } = checkShape(shape, opts.limits ?? {});
  const elements = shape[0] * shape[1];
  const module = kernelModule();
  try {
    if (!module) return new Float32Array(elements);
    const outputBytes = elements * 4;
    if (outputBytes + WASM_PAGE > MAX_WASM_BYTES) {
      throw new Sgfp4Error("LIMIT_EXCEEDED", `an output of ${outputBytes} bytes does not fit the kernel's 4 GiB memory`);
    }
    const wanted = Math.min(MAX_WASM_BYTES, outputBytes + 1024 + blockCount * INPUT_BYTES_PER_BLOCK + bandReserveBytes(outputBytes));
    const pages = pagesFor(wanted);
    // initial === maximum: the memory can never grow, so views of it never detach.
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    const arena: KernelArena = { memory, kernel: instantiate(module, memory), outputBytes };
    kernelOutputs.set(memory.buffer, arena);
    return new Float32Array(memory.buffer, 0, elements);
  } catch (e) {
    throw asSgfp4Error(e, "allocating a kernel-memory output");
  }
}

/** True when `out` is (a view into) an array made by createOutput that decodeInto fills in place. */
export function isKernelOutput(out: ArrayBufferView): boolean {
  return arenaOf(out) !== undefined;
}

function arenaOf(out: ArrayBufferView): KernelArena | undefined {
  const arena = kernelOutputs.get(out.buffer);
  return arena && out instanceof Float32Array && out.byteOffset + out.byteLength <= arena.outputBytes ? arena : undefined;
}

/** Outcome of an in-place route: done, "not ok" (parse() says why), or the inputs do not fit. */
export const INVALID = -1;
export const NO_ROOM = -2;
export type InPlace = true | typeof INVALID | typeof NO_ROOM;

/**
 * decodeInto a createOutput array (length O*I, checked by the caller for the parsed route):
 * v2 validated and expanded record by record in one pass (validate_decode_v2; on a fault the
 * records before it are already written), v1 validated whole, then expanded through the output band.
 */
export function decodeInPlace(bytes: Uint8Array, r: FastRequest, out: Float32Array): InPlace {
  const arena = arenaOf(out);
  if (!arena || out.length !== r.rows * r.cols) return NO_ROOM;
  try {
    if (r.profile === "v2") {
      const windowed = windowedInPlace(arena, bytes, r, out);
      if (windowed !== NO_ROOM) return windowed;
      // the arena's output region may be larger than this output (a subarray): the band choice follows this one
      const layout = fusedLayout(arena.outputBytes, bytes.length, r.tilesX, out.byteLength);
      if (layout.totalBytes <= arena.memory.buffer.byteLength) {
        new Uint8Array(arena.memory.buffer, layout.streamAt, bytes.length).set(bytes);
        const status = arena.kernel.validate_decode_v2(
          layout.streamAt, bytes.length, r.blockCount, layout.scratchAt, out.byteOffset, r.rows, r.cols, r.tilesX, layout.bandAt, layout.chunkBlocks,
        );
        return status === 0 ? true : INVALID;
      }
    }
    const layout = validatedLayout(arena.outputBytes, r.profile, bytes.length, r.blockCount);
    if (layout.totalBytes > arena.memory.buffer.byteLength) return NO_ROOM;
    const count = validateInMemory(arena.kernel, arena.memory.buffer, bytes, r.profile, r.blockCount, layout, layout.streamAt);
    if (count < 0) return INVALID;
    const chunkBlocks = bandChunkBlocks(r.tilesX, out.byteLength);
    if (r.profile === "v1" && chunkBlocks > 0 && layout.bandAt + chunkBlocks * 64 * 64 * 4 <= arena.memory.buffer.byteLength) {
      arena.kernel.decode_v1_banded(layout.tableAt, count, out.byteOffset, r.rows, r.cols, r.tilesX, layout.bandAt, chunkBlocks);
    } else {
      arena.kernel.decode_leaves(layout.tableAt, count, out.byteOffset, r.rows, r.cols, r.tilesX, 0);
    }
    return true;
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}

/**
 * v2 in place, each macroblock row's records copied into one reused window (in cache) and
 * validated and expanded from there (validate_decode_v2_window_banded), instead of copying the
 * whole stream into kernel memory first: the copy then costs no write and re-read of the stream
 * through main memory. NO_ROOM where a row's records lie far apart (offsets untrusted: the
 * whole-stream route then gives the verdict), where the window does not fit, or where `bytes`
 * itself lies in this memory (a window could overwrite bytes still to be read).
 * Memory after the output region: [scratch (one record's leaf table) | band | header and offset table | window].
 */
function windowedInPlace(arena: KernelArena, bytes: Uint8Array, r: FastRequest, out: Float32Array): InPlace {
  const len = bytes.length, base = v2RecordBase(r.blockCount);
  if (base > len || bytes.buffer === arena.memory.buffer) return NO_ROOM;
  const view = new DataView(bytes.buffer, bytes.byteOffset, len);
  let most = 0;
  for (let b0 = 0; b0 < r.blockCount; b0 += r.tilesX) {
    const { lo, hi } = bandWindow(view, base, len, b0, b0 + r.tilesX);
    if (!(hi > lo) || hi - lo > MAX_BAND_WINDOW_BYTES) return NO_ROOM;
    most = Math.max(most, hi - lo);
  }
  const chunkBlocks = bandChunkBlocks(r.tilesX, out.byteLength);
  const scratchAt = align16(arena.outputBytes), bandAt = scratchAt + 256 * 16;
  const headAt = bandAt + chunkBlocks * BLOCK_BYTES, windowAt = align16(headAt + base);
  if (windowAt + most + INPUT_SLACK_BYTES > arena.memory.buffer.byteLength) return NO_ROOM;
  new Uint8Array(arena.memory.buffer, headAt, base).set(bytes.subarray(0, base));
  const window = new Uint8Array(arena.memory.buffer, windowAt, most);
  for (let b0 = 0; b0 < r.blockCount; b0 += r.tilesX) {
    const b1 = b0 + r.tilesX, { lo, hi } = bandWindow(view, base, len, b0, b1);
    window.set(bytes.subarray(lo, hi));
    const status = arena.kernel.validate_decode_v2_window_banded(
      headAt, windowAt, lo, hi, len, r.blockCount, b0, b1, scratchAt, out.byteOffset, r.rows, r.cols, r.tilesX, bandAt, chunkBlocks,
    );
    if (status !== 0) return INVALID;
  }
  return true;
}


/** A parsed container expanded straight into a createOutput array; false when not one or its inputs do not fit. */
export function expandParsedInPlace(c: Container, bytes: Uint8Array, out: Float32Array): boolean {
  const arena = arenaOf(out);
  if (!arena) return false;
  const plan = planMemory(c, arena.outputBytes);
  if (plan.totalBytes > arena.memory.buffer.byteLength) return false;
  try {
    // fillInputs copies with TypedArray.set, correct even if `bytes` itself lies in this memory.
    fillInputs(arena.memory.buffer, c, bytes, plan);
    arena.kernel.decode_leaves(plan.tableAt, c.leafCount, out.byteOffset, c.shape[0], c.shape[1], c.tilesX, 0);
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
  return true;
}
