/**
 * @sgfp4/cpu-decoder main entry (browser-safe). decode/decodeInto run the WebAssembly SIMD
 * kernel on the calling thread; decodeReference is the readable loop they are tested against.
 * Worker-thread decode lives in the Node-only entry "@sgfp4/cpu-decoder/parallel".
 */
import { Sgfp4Error, checkShape, detectProfile, requestedFormat, type Container, type Decoder } from "@sgfp4/format";
import {
  MAX_WASM_BYTES,
  WASM_PAGE,
  BAND_RESERVE_BYTES,
  bandChunkBlocks,
  fillInputs,
  fusedLayout,
  instantiate,
  kernelModule,
  pagesFor,
  planMemory,
  validateInMemory,
  validatedLayout,
  type KernelExports,
  type ValidatedLayout,
} from "./kernel.js";
import { asSgfp4Error, parseForDecode, type DecodeOptions } from "./options.js";
import { expandReference } from "./reference.js";

export type { DecodeOptions } from "./options.js";
export { decodeReference } from "./reference.js";
export { preloadKernel } from "./kernel.js";

/** True when decode uses the WebAssembly SIMD kernel here (false: the JS reference loop). */
export function kernelAvailable(): boolean {
  return kernelModule() !== null;
}

/**
 * Decode to a new Float32Array of O*I values (a plain, transferable ArrayBuffer).
 *
 * Why not return a view of a per-call WebAssembly.Memory: fresh wasm memory is always freshly
 * mmapped, so every output page faults on first touch, while the JS allocator often reuses
 * already-mapped memory. Measured (BENCHMARKS.md), decoding band by band into cache-sized scratch
 * and copying into a new array is several times faster up to tens of MiB and no slower beyond.
 */
export function decode(bytes: Uint8Array, opts: DecodeOptions): Float32Array {
  const request = fastRequest(bytes, opts);
  if (request?.profile === "v2") {
    const out = decodeV2InBands(bytes, request);
    if (out) return out;
    // not ok: parse() below throws the exact error
  }
  const validated = request && request.profile === "v1" && validateInScratch(bytes, request);
  if (validated) {
    const out = allocateOutput(request.rows * request.cols);
    expandBands(validated, request, out);
    return out;
  }
  const c = parseForDecode(bytes, opts);
  const out = allocateOutput(c.shape[0] * c.shape[1]);
  expand(c, bytes, out);
  return out;
}

/**
 * v2 to a new array in one pass: each band of macroblock rows is validated and expanded into
 * cache-sized scratch (validate_decode_v2_rows) and copied out. A stream that fails is dropped
 * with the array, so writing before the fault is harmless here. The array is allocated only once
 * the first band has passed, so a short hostile stream with a huge shape allocates no output.
 * null: the stream is not valid (or the scratch does not fit): the caller runs parse().
 */
function decodeV2InBands(bytes: Uint8Array, r: FastRequest): Float32Array | null {
  const module = kernelModule();
  if (!module) return null;
  if (64 * r.cols * 4 > 4 * BAND_TARGET_BYTES) return null; // very wide tensors: the parse() path
  const bandBlockRows = Math.max(1, Math.min(r.tilesY, Math.floor(BAND_TARGET_BYTES / (64 * r.cols * 4))));
  const layout = fusedLayout(bandBlockRows * 64 * r.cols * 4, bytes.length, r.tilesX, 0); // no output band: scratch is the band
  if (layout.totalBytes > MAX_WASM_BYTES) return null;
  let out: Float32Array | null = null;
  try {
    const { memory, kernel } = scratchMemory(module, layout.totalBytes);
    new Uint8Array(memory.buffer, layout.streamAt, bytes.length).set(bytes);
    for (let by0 = 0; by0 < r.tilesY; by0 += bandBlockRows) {
      const by1 = Math.min(r.tilesY, by0 + bandBlockRows);
      const rowBase = by0 * 64;
      const status = kernel.validate_decode_v2_rows(
        layout.streamAt, bytes.length, r.blockCount, by0 * r.tilesX, by1 * r.tilesX, layout.scratchAt, 0, r.rows, r.cols, r.tilesX, rowBase,
      );
      if (status !== 0) return null;
      out ??= allocateOutput(r.rows * r.cols);
      const keptRows = Math.min(r.rows, by1 * 64) - rowBase;
      out.set(new Float32Array(memory.buffer, 0, keptRows * r.cols), rowBase * r.cols);
    }
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
  return out;
}

function allocateOutput(elements: number): Float32Array {
  try {
    return new Float32Array(elements);
  } catch (e) {
    throw asSgfp4Error(e, "allocating the output");
  }
}

/**
 * decodeInto: the caller's array (length O*I) receives the output. An array from createOutput()
 * (or a subarray of it) is written by the kernel in place, with no copy; any other Float32Array
 * gets the output through cache-sized bands copied out of scratch memory. When it throws on a v2
 * stream, a createOutput() array may already hold the records before the fault (one-pass path).
 */
export function decodeInto(bytes: Uint8Array, opts: DecodeOptions, out: Float32Array): void {
  if (!(out instanceof Float32Array)) throw new Sgfp4Error("INVALID_ARGUMENT", "out must be a Float32Array");
  const request = fastRequest(bytes, opts);
  if (request) {
    const arena = kernelOutputs.get(out.buffer);
    if (arena && out.byteOffset + out.byteLength <= arena.outputBytes) {
      if (request.profile === "v2" && out.length === request.rows * request.cols) {
        const fused = decodeFusedInArena(arena, bytes, request, out);
        if (fused === true) return;
        if (fused === INVALID) return decodeIntoParsed(bytes, opts, out); // parse() throws the exact error
      }
      const table = validateInArena(arena, bytes, request);
      if (typeof table === "object") {
        checkOutLength(out, request.rows, request.cols);
        const chunkBlocks = bandChunkBlocks(request.tilesX, out.byteLength);
        if (request.profile === "v1" && chunkBlocks > 0 && table.bandAt + chunkBlocks * 64 * 64 * 4 <= arena.memory.buffer.byteLength) {
          runKernel(() =>
            arena.kernel.decode_v1_banded(table.tableAt, table.count, out.byteOffset, request.rows, request.cols, request.tilesX, table.bandAt, chunkBlocks),
          );
        } else {
          runKernel(() => arena.kernel.decode_leaves(table.tableAt, table.count, out.byteOffset, request.rows, request.cols, request.tilesX, 0));
        }
        return;
      }
      if (table === INVALID) return decodeIntoParsed(bytes, opts, out); // parse() throws the exact error
    }
    const validated = validateInScratch(bytes, request);
    if (validated) {
      checkOutLength(out, request.rows, request.cols);
      expandBands(validated, request, out);
      return;
    }
  }
  decodeIntoParsed(bytes, opts, out);
}

/** The parse() path: the exact Sgfp4Error for a bad stream, and the decode should the wasm validator ever refuse a stream parse() accepts. */
function decodeIntoParsed(bytes: Uint8Array, opts: DecodeOptions, out: Float32Array): void {
  const c = parseForDecode(bytes, opts);
  checkOutLength(out, c.shape[0], c.shape[1]);
  const arena = kernelOutputs.get(out.buffer);
  if (arena && out.byteOffset + out.byteLength <= arena.outputBytes && expandInPlace(arena, c, bytes, out)) return;
  expand(c, bytes, out);
}

function checkOutLength(out: Float32Array, rows: number, cols: number): void {
  if (out.length !== rows * cols) {
    throw new Sgfp4Error("INVALID_ARGUMENT", `out has ${out.length} elements, expected O*I = ${rows * cols}`);
  }
}

function runKernel(call: () => void): void {
  try {
    call();
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}

/** A decode request whose options are checked (shape, limits: before anything is allocated). */
interface FastRequest {
  profile: "v1" | "v2";
  rows: number;
  cols: number;
  tilesY: number;
  tilesX: number;
  blockCount: number;
}

/**
 * Check the options as parse() does, in the same order, without parsing the stream. Throws
 * INVALID_ARGUMENT / LIMIT_EXCEEDED (checkShape, before any allocation); null when parse() must
 * run (no kernel, a bad argument it reports, a v1 stream of the wrong size).
 */
function fastRequest(bytes: Uint8Array, opts: DecodeOptions): FastRequest | null {
  if (typeof opts !== "object" || opts === null || !(bytes instanceof Uint8Array) || !kernelModule()) return null;
  const { tilesY, tilesX, blockCount } = checkShape(opts.shape, opts.limits ?? {});
  const profile = opts.profile === "auto" ? detectProfile(bytes, opts.shape) : opts.profile;
  if (profile !== "v1" && profile !== "v2") return null;
  if (profile === "v1" && bytes.length !== 2056 * blockCount) return null;
  // Memory for the validator grows with B (first leaf per block): only when the stream can hold
  // B record offsets, so a short hostile stream with a huge shape allocates nothing (parse() rejects it).
  if (profile === "v2" && bytes.length < 16 + 4 * blockCount) return null;
  return { profile, rows: opts.shape[0], cols: opts.shape[1], tilesY, tilesX, blockCount };
}

const INVALID = -1;
const NO_ROOM = -2;

/** Validate into the arena after its output region: the leaf table, or INVALID / NO_ROOM. */
function validateInArena(arena: KernelArena, bytes: Uint8Array, r: FastRequest): { tableAt: number; bandAt: number; count: number } | typeof INVALID | typeof NO_ROOM {
  const layout = validatedLayout(arena.outputBytes, r.profile, bytes.length, r.blockCount);
  if (layout.totalBytes > arena.memory.buffer.byteLength) return NO_ROOM;
  let count: number;
  try {
    count = validateInMemory(arena.kernel, arena.memory.buffer, bytes, r.profile, r.blockCount, layout, layout.streamAt);
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly validation failed");
  }
  return count < 0 ? INVALID : { tableAt: layout.tableAt, bandAt: layout.bandAt, count };
}

/**
 * v2 into a kernel-memory output: validate and expand record by record in one pass (see
 * validate_decode_v2). On an invalid stream the records before the fault are already written.
 */
function decodeFusedInArena(arena: KernelArena, bytes: Uint8Array, r: FastRequest, out: Float32Array): true | typeof INVALID | typeof NO_ROOM {
  // the arena's output region may be larger than this output (a subarray): the band choice follows this one
  const layout = fusedLayout(arena.outputBytes, bytes.length, r.tilesX, out.byteLength);
  if (layout.totalBytes > arena.memory.buffer.byteLength) return NO_ROOM;
  let status: number;
  try {
    new Uint8Array(arena.memory.buffer, layout.streamAt, bytes.length).set(bytes);
    status = arena.kernel.validate_decode_v2(
      layout.streamAt, bytes.length, r.blockCount, layout.scratchAt, out.byteOffset, r.rows, r.cols, r.tilesX, layout.bandAt, layout.chunkBlocks,
    );
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
  return status === 0 ? true : INVALID;
}

interface ValidatedScratch {
  memory: WebAssembly.Memory;
  kernel: KernelExports;
  layout: ValidatedLayout;
  bandBlockRows: number;
}

/** Validate into scratch memory sized for one band of output; null when parse() must run. */
function validateInScratch(bytes: Uint8Array, r: FastRequest): ValidatedScratch | null {
  const module = kernelModule();
  if (!module) return null;
  // The band is allocated before the stream is validated: keep it small (very wide tensors take
  // the parse() path, which validates first).
  if (64 * r.cols * 4 > 4 * BAND_TARGET_BYTES) return null;
  const bandBlockRows = Math.max(1, Math.min(r.tilesY, Math.floor(BAND_TARGET_BYTES / (64 * r.cols * 4))));
  const layout = validatedLayout(bandBlockRows * 64 * r.cols * 4, r.profile, bytes.length, r.blockCount);
  if (layout.totalBytes > MAX_WASM_BYTES) return null;
  let count: number;
  let memory: WebAssembly.Memory;
  let kernel: KernelExports;
  try {
    ({ memory, kernel } = scratchMemory(module, layout.totalBytes));
    count = validateInMemory(kernel, memory.buffer, bytes, r.profile, r.blockCount, layout, layout.streamAt);
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly validation failed");
  }
  return count < 0 ? null : { memory, kernel, layout, bandBlockRows };
}

/** Expand a validated stream band by band: the kernel writes a band into scratch, JS copies it out while in cache. */
function expandBands({ memory, kernel, layout, bandBlockRows }: ValidatedScratch, r: FastRequest, out: Float32Array): void {
  try {
    const buffer = memory.buffer;
    const blockFirst = new Uint32Array(buffer, layout.blockFirstAt, r.blockCount + 1);
    for (let by0 = 0; by0 < r.tilesY; by0 += bandBlockRows) {
      const by1 = Math.min(r.tilesY, by0 + bandBlockRows);
      const firstLeaf = blockFirst[by0 * r.tilesX]!;
      const leafEnd = blockFirst[by1 * r.tilesX]!;
      const rowBase = by0 * 64;
      kernel.decode_leaves(layout.tableAt + firstLeaf * 16, leafEnd - firstLeaf, 0, r.rows, r.cols, r.tilesX, rowBase);
      const keptRows = Math.min(r.rows, by1 * 64) - rowBase;
      out.set(new Float32Array(buffer, 0, keptRows * r.cols), rowBase * r.cols);
    }
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}

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
    const wanted = Math.min(MAX_WASM_BYTES, outputBytes + 1024 + blockCount * INPUT_BYTES_PER_BLOCK + BAND_RESERVE_BYTES);
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
export function isKernelOutput(out: Float32Array): boolean {
  const arena = kernelOutputs.get(out.buffer);
  return arena !== undefined && out.byteOffset + out.byteLength <= arena.outputBytes;
}

/** The kernel expands every leaf straight into `out`; false when the inputs do not fit the arena. */
function expandInPlace(arena: KernelArena, c: Container, bytes: Uint8Array, out: Float32Array): boolean {
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

/** Scratch memory reused across calls (only while a call's scratch fits SCRATCH_KEEP_BYTES). */
let scratch: { memory: WebAssembly.Memory; kernel: KernelExports } | undefined;
const SCRATCH_KEEP_BYTES = 128 * 1024 * 1024;
/** The kernel expands a band of macroblock rows at a time into this much scratch (cache-sized). */
const BAND_TARGET_BYTES = 256 * 1024;

function scratchMemory(module: WebAssembly.Module, bytes: number): { memory: WebAssembly.Memory; kernel: KernelExports } {
  const pages = pagesFor(bytes);
  if (bytes > SCRATCH_KEEP_BYTES) {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    return { memory, kernel: instantiate(module, memory) };
  }
  if (!scratch) {
    const memory = new WebAssembly.Memory({ initial: pages, maximum: SCRATCH_KEEP_BYTES / WASM_PAGE });
    scratch = { memory, kernel: instantiate(module, memory) };
  } else if (scratch.memory.buffer.byteLength < bytes) {
    scratch.memory.grow(pages - scratch.memory.buffer.byteLength / WASM_PAGE);
  }
  return scratch;
}

/**
 * Expand all leaves of a parsed container into `out`: the kernel writes a band of macroblock rows
 * into scratch wasm memory, which is copied to `out` while it is still in cache.
 */
function expand(c: Container, bytes: Uint8Array, out: Float32Array): void {
  const [rows, cols] = c.shape;
  const module = kernelModule();
  const bandBlockRows = Math.max(1, Math.min(c.tilesY, Math.floor(BAND_TARGET_BYTES / (64 * cols * 4))));
  const plan = planMemory(c, bandBlockRows * 64 * cols * 4);
  if (!module || plan.totalBytes > MAX_WASM_BYTES) {
    expandReference(c, bytes, out);
    return;
  }
  try {
    const { memory, kernel } = scratchMemory(module, plan.totalBytes);
    fillInputs(memory.buffer, c, bytes, plan);
    const buffer = memory.buffer;
    for (let by0 = 0; by0 < c.tilesY; by0 += bandBlockRows) {
      const by1 = Math.min(c.tilesY, by0 + bandBlockRows);
      const firstLeaf = c.blocks[by0 * c.tilesX]!.firstLeaf;
      const lastBlock = c.blocks[by1 * c.tilesX - 1]!;
      const leafEnd = lastBlock.firstLeaf + lastBlock.leafCount;
      const rowBase = by0 * 64;
      kernel.decode_leaves(plan.tableAt + firstLeaf * 16, leafEnd - firstLeaf, plan.outAt, rows, cols, c.tilesX, rowBase);
      const keptRows = Math.min(rows, by1 * 64) - rowBase;
      out.set(new Float32Array(buffer, plan.outAt, keptRows * cols), rowBase * cols);
    }
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}

export type { ConformanceBackend, Decoder } from "@sgfp4/format";

/** The decoder "cpu" (the Decoder interface of @sgfp4/format). */
export function createDecoder(): Decoder {
  const formats = ["f32"] as const;
  return {
    name: "cpu",
    formats,
    async available() {
      return { ok: true, detail: kernelAvailable() ? "WebAssembly SIMD kernel" : "JS reference loop (this engine cannot run the wasm SIMD kernel)" };
    },
    async decode(bytes, req) {
      requestedFormat(req, formats, "cpu");
      return decode(bytes, req);
    },
  };
}

/** @deprecated use createDecoder; kept for one release. */
export const createConformanceBackend = createDecoder;
