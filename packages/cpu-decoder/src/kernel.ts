/**
 * WebAssembly kernel runtime (browser-safe: no node: imports, no file reads).
 * Linear memory layout for one decode: [output | leaf table copy | payload bytes copy].
 */
import type { Container } from "@sgfp4/format";
import { KERNEL_SHARED_WASM_BASE64, KERNEL_WASM_BASE64 } from "./wasm-bytes.generated.js";

export const WASM_PAGE = 65536;
/** wasm32 linear memory tops out at 65536 pages (4 GiB). */
export const MAX_WASM_BYTES = 65536 * WASM_PAGE;

export interface KernelExports {
  decode_leaves(table: number, count: number, out: number, rows: number, cols: number, tilesX: number, rowBase: number): void;
  /** Validating parsers (native/decode.c): the leaf count, or -1 for "not ok" (parse() then says why). */
  validate_v1(input: number, len: number, blocks: number, table: number, tableCap: number, addrBase: number, blockFirst: number): number;
  validate_v2(input: number, len: number, blocks: number, table: number, tableCap: number, addrBase: number, blockFirst: number): number;
  /** Validate and expand a v2 stream record by record (0 ok, -1 not ok; `out` is then partly written). */
  validate_decode_v2(input: number, len: number, blocks: number, scratch: number, out: number, rows: number, cols: number, tilesX: number, band: number, chunkBlocks: number): number;
  /** validate_decode_v2 over records b0..b1-1 into `out` holding output rows from rowBase on (no band). */
  validate_decode_v2_rows(input: number, len: number, blocks: number, b0: number, b1: number, scratch: number, out: number, rows: number, cols: number, tilesX: number, rowBase: number): number;
  /** Expand a validated v1 leaf table through an output band. */
  decode_v1_banded(table: number, blocks: number, out: number, rows: number, cols: number, tilesX: number, band: number, chunkBlocks: number): void;
}

function base64ToBytes(b64: string): Uint8Array<ArrayBuffer> {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

let plainModule: WebAssembly.Module | null | undefined;
let sharedModule: WebAssembly.Module | null | undefined;

function compile(b64: string): WebAssembly.Module | null {
  try {
    if (typeof WebAssembly !== "object") return null;
    const bytes = base64ToBytes(b64);
    if (!WebAssembly.validate(bytes)) return null; // no SIMD support: the JS path takes over
    return new WebAssembly.Module(bytes);
  } catch {
    return null; // e.g. a browser that refuses synchronous compiles on its main thread
  }
}

/** The kernel module, or null when this engine cannot run it (callers fall back to JS). */
export function kernelModule(): WebAssembly.Module | null {
  if (plainModule === undefined) plainModule = compile(KERNEL_WASM_BASE64);
  return plainModule;
}

/** The same kernel importing a shared memory (worker_threads). */
export function sharedKernelModule(): WebAssembly.Module | null {
  if (sharedModule === undefined) sharedModule = compile(KERNEL_SHARED_WASM_BASE64);
  return sharedModule;
}

/** Compile the kernel off the main thread's critical path (browsers limit synchronous compiles). */
export async function preloadKernel(): Promise<boolean> {
  if (plainModule) return true;
  try {
    const bytes = base64ToBytes(KERNEL_WASM_BASE64);
    if (!WebAssembly.validate(bytes)) return false;
    plainModule = await WebAssembly.compile(bytes);
    return true;
  } catch {
    return false;
  }
}

export function instantiate(module: WebAssembly.Module, memory: WebAssembly.Memory): KernelExports {
  return new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as KernelExports;
}

export interface MemoryPlan {
  /** where the output (or band) area starts and its size */
  outAt: number;
  outBytes: number;
  tableAt: number;
  payloadAt: number;
  /** stream range [payloadStart, payloadEnd) copied to payloadAt */
  payloadStart: number;
  payloadEnd: number;
  totalBytes: number;
}

const align16 = (n: number) => Math.ceil(n / 16) * 16;

/** Bytes kept after the copied payloads: the kernel loads an 8x8 leaf's second 16-byte chunk
 * even for T158 (16 payload bytes) and discards it, so that load must stay inside memory. */
export const INPUT_SLACK_BYTES = 16;

/**
 * Size the memory for `outBytes` of output and the container's leaves and payloads. The payload
 * range comes from the blocks (B entries, not one per leaf): parse() guarantees that every leaf's
 * payload, with its padding to 16 bytes, lies inside its block's [offset, offset + byteLength)
 * (v2: the record; v1: the 2048-byte payload slot), so whole 16-byte vector loads stay inside.
 */
export function planMemory(c: Container, outBytes: number): MemoryPlan {
  let payloadStart = Infinity;
  let payloadEnd = 0;
  for (const block of c.blocks) {
    if (block.offset < payloadStart) payloadStart = block.offset;
    if (block.offset + block.byteLength > payloadEnd) payloadEnd = block.offset + block.byteLength;
  }
  if (payloadStart > payloadEnd) payloadStart = payloadEnd;
  const tableAt = align16(outBytes);
  const payloadAt = tableAt + c.leafCount * 16;
  const totalBytes = payloadAt + (payloadEnd - payloadStart) + INPUT_SLACK_BYTES;
  return { outAt: 0, outBytes, tableAt, payloadAt, payloadStart, payloadEnd, totalBytes };
}

export const pagesFor = (bytes: number) => Math.max(1, Math.ceil(bytes / WASM_PAGE));

/** Copy the leaf table (payload addresses rebased into linear memory) and the payload bytes. */
export function fillInputs(buffer: ArrayBufferLike, c: Container, bytes: Uint8Array, plan: MemoryPlan): void {
  const table = new Uint32Array(buffer, plan.tableAt, c.leafCount * 4);
  table.set(c.leafTable);
  const rebase = plan.payloadAt - plan.payloadStart;
  for (let n = 3; n < table.length; n += 4) table[n] = table[n]! + rebase;
  new Uint8Array(buffer, plan.payloadAt, plan.payloadEnd - plan.payloadStart).set(bytes.subarray(plan.payloadStart, plan.payloadEnd));
}

/**
 * Linear memory for the wasm validator: [output | leaf table (cap) | first leaf per block (B+1) |
 * stream copy]; v1 into a createOutput array then uses an output band at bandAt (past totalBytes).
 */
export interface ValidatedLayout {
  tableAt: number;
  tableCap: number;
  blockFirstAt: number;
  streamAt: number;
  bandAt: number;
  totalBytes: number;
}

export function validatedLayout(outBytes: number, profile: "v1" | "v2", streamBytes: number, blockCount: number): ValidatedLayout {
  const tableAt = align16(outBytes);
  // Same bound as parse(): a v2 leaf costs at least 20 stream bytes (4 header + 16 payload).
  const tableCap = profile === "v1" ? blockCount : Math.min(blockCount * 256, Math.floor(streamBytes / 20) + 16);
  const blockFirstAt = tableAt + tableCap * 16;
  const streamAt = align16(blockFirstAt + (blockCount + 1) * 4);
  const bandAt = align16(streamAt + streamBytes + INPUT_SLACK_BYTES);
  return { tableAt, tableCap, blockFirstAt, streamAt, bandAt, totalBytes: streamAt + streamBytes + INPUT_SLACK_BYTES };
}

/**
 * The output band (native/decode.c, "Output bands"): inner macroblocks are expanded into a band
 * of 64 rows x `chunkBlocks` macroblocks, then copied out with memory.copy.
 */
export const BAND_BYTES = 256 * 1024;
const BLOCK_BYTES = 64 * 64 * 4;
/**
 * Outputs up to this size are written directly: they stay in cache, where the band's copy is pure
 * overhead (measured ~20% slower at 4 MiB, ~20-35% faster at 16 MiB; BENCHMARKS.md run 4).
 */
export const BAND_MIN_OUTPUT_BYTES = 8 * 1024 * 1024;
/** Macroblocks per band chunk, 0 for no band. */
export const bandChunkBlocks = (tilesX: number, outBytes: number) =>
  outBytes < BAND_MIN_OUTPUT_BYTES ? 0 : Math.max(1, Math.min(tilesX, BAND_BYTES / BLOCK_BYTES));
/** Memory a band and the one-record leaf scratch take, at most (reserved by createOutput). */
export const BAND_RESERVE_BYTES = BAND_BYTES + 256 * 16 + 64;

/** Linear memory for validate_decode_v2: [output | scratch: one record's leaf table (256 leaves, 4 KiB) | band | stream copy]. */
export interface FusedLayout {
  scratchAt: number;
  bandAt: number;
  chunkBlocks: number;
  streamAt: number;
  totalBytes: number;
}

export function fusedLayout(outBytes: number, streamBytes: number, tilesX: number, decodedBytes = outBytes): FusedLayout {
  const scratchAt = align16(outBytes);
  const bandAt = scratchAt + 256 * 16;
  const chunkBlocks = bandChunkBlocks(tilesX, decodedBytes);
  const streamAt = bandAt + chunkBlocks * BLOCK_BYTES;
  return { scratchAt, bandAt, chunkBlocks, streamAt, totalBytes: streamAt + streamBytes + INPUT_SLACK_BYTES };
}

/**
 * Copy the stream into `buffer` and run the wasm validator: it applies every reject rule of
 * DECISIONS.md section 3 and writes the leaf table (payload addresses = addrBase + stream offset)
 * and the first leaf of each block. Returns the leaf count, or -1 when the stream is not valid
 * (or, never for valid streams, does not fit tableCap): the caller then runs parse().
 */
export function validateInMemory(
  kernel: KernelExports,
  buffer: ArrayBufferLike,
  bytes: Uint8Array,
  profile: "v1" | "v2",
  blockCount: number,
  layout: ValidatedLayout,
  addrBase: number,
): number {
  new Uint8Array(buffer, layout.streamAt, bytes.length).set(bytes);
  const validate = profile === "v1" ? kernel.validate_v1 : kernel.validate_v2;
  return validate(layout.streamAt, bytes.length, blockCount, layout.tableAt, layout.tableCap, addrBase, layout.blockFirstAt);
}

/**
 * The wasm validator's verdict and leaf table with stream offsets (addrBase 0), comparable word
 * for word with parse().leafTable; null for "not ok". For tests: decode uses validateInMemory.
 */
export function validatedLeafTable(bytes: Uint8Array, profile: "v1" | "v2", blockCount: number): { table: Uint32Array; blockFirst: Uint32Array } | null {
  const module = kernelModule();
  if (!module) throw new Error("the wasm kernel cannot run here");
  const layout = validatedLayout(0, profile, bytes.length, blockCount);
  const memory = new WebAssembly.Memory({ initial: pagesFor(layout.totalBytes) });
  const count = validateInMemory(instantiate(module, memory), memory.buffer, bytes, profile, blockCount, layout, 0);
  if (count < 0) return null;
  return {
    table: new Uint32Array(memory.buffer, layout.tableAt, count * 4).slice(),
    blockFirst: new Uint32Array(memory.buffer, layout.blockFirstAt, blockCount + 1).slice(),
  };
}

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
