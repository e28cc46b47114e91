/**
 * Linear memory layouts of the kernel calls (where the output or band, the leaf table, the stream
 * copy and the scratch areas lie), and the copies that fill them. Browser-safe.
 */
import { align16, type Container } from "@sgfp4/format";
import type { KernelExports } from "./kernel.js";

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
 * Linear memory for buildLeafTable on a v2 stream: [leaf table (cap) | first leaf per block (B+1) |
 * header and record offset table (stream bytes [0, base)) | window]. The records are copied into
 * the window a slice at a time (validateWindowed), so the stream is never copied whole.
 */
export interface WindowedLayout {
  tableAt: number;
  tableCap: number;
  blockFirstAt: number;
  headAt: number;
  /** stream bytes [0, headBytes) are the header and the record offset table (fewer for a short stream) */
  headBytes: number;
  windowAt: number;
  windowBytes: number;
  totalBytes: number;
}

/**
 * Stream bytes per validate_v2_window call: small enough that the copy into the window stays in
 * cache (glibc copies from about 0.75 MiB up with non-temporal stores, which leave the bytes in
 * memory; a window reused for every slice is never a cache miss to write), large enough that a
 * call per slice costs nothing. A valid record takes at most 5136 bytes, far less than a window.
 */
export const VALIDATE_WINDOW_BYTES = 512 * 1024;

export function windowedLayout(streamBytes: number, blockCount: number, windowBytes = VALIDATE_WINDOW_BYTES): WindowedLayout {
  const { tableAt, tableCap, blockFirstAt } = validatedLayout(0, "v2", streamBytes, blockCount);
  const headAt = align16(blockFirstAt + (blockCount + 1) * 4);
  const headBytes = Math.min(streamBytes, v2RecordBase(blockCount));
  const windowAt = align16(headAt + headBytes);
  const window = Math.max(16, Math.min(windowBytes, streamBytes - headBytes));
  return { tableAt, tableCap, blockFirstAt, headAt, headBytes, windowAt, windowBytes: window, totalBytes: windowAt + window + INPUT_SLACK_BYTES };
}

/** Where a v2 stream's records start: after the 16-byte header and the offset table, 16-aligned. */
export const v2RecordBase = (blockCount: number) => (16 + 4 * blockCount + 15) & ~15;

/** validateWindowed's answer for a stream it cannot judge a window at a time (a record longer than the window: never valid). */
export const WINDOW_UNDECIDED = -2;

/**
 * validateInMemory for a v2 stream through a window (windowedLayout): the header and offset table
 * are copied once, then the records a window at a time from a record's start; validate_v2_window
 * validates what the window holds and stops at the first record it cannot judge yet, and the next
 * window starts at that record. Same answers and leaf table as validateInMemory (the leaf count,
 * or -1), or WINDOW_UNDECIDED where a window made no progress (the caller then copies the stream
 * whole: validateInMemory).
 */
export function validateWindowed(kernel: KernelExports, buffer: ArrayBufferLike, bytes: Uint8Array, blockCount: number, layout: WindowedLayout, addrBase: number): number {
  const len = bytes.length;
  const { headAt, headBytes, windowAt, windowBytes } = layout;
  new Uint8Array(buffer, headAt, headBytes).set(bytes.subarray(0, headBytes));
  const window = new Uint8Array(buffer, windowAt, windowBytes);
  const offsets = new Uint32Array(buffer, headAt, headBytes >> 2); // words 4.. are the record offsets
  const base = v2RecordBase(blockCount);
  let lo = headBytes & ~15; // the records start at or after base (= headBytes for a stream long enough to have records)
  for (let b = 0; ; ) {
    const hi = Math.min(len, lo + windowBytes);
    window.set(bytes.subarray(lo, hi));
    b = kernel.validate_v2_window(headAt, windowAt, lo, len, hi, blockCount, b, layout.tableAt, layout.tableCap, addrBase, layout.blockFirstAt);
    if (b < 0) return -1;
    if (b === blockCount) return new Uint32Array(buffer, layout.blockFirstAt + 4 * blockCount, 1)[0]!;
    if (hi === len) return -1; // never: with the whole stream in, the kernel answers done or -1
    // the kernel stopped at record b after checking its offset (16-aligned, rising, inside the stream)
    const next = base + offsets[4 + b]!;
    if (next <= lo) return WINDOW_UNDECIDED;
    lo = next;
  }
}

/**
 * The output band (native/decode.c, "Output bands"): inner macroblocks are expanded into a band
 * of 64 rows x `chunkBlocks` macroblocks, then copied out with memory.copy.
 */
export const BAND_BYTES = 256 * 1024;
export const BLOCK_BYTES = 64 * 64 * 4;
/**
 * Outputs up to this size are written directly: they stay in cache, where the band's copy is pure
 * overhead (measured ~20% slower at 4 MiB, ~20-35% faster at 16 MiB; docs/history/cpu-decoder-benchmarks.md run 4).
 */
export const BAND_MIN_OUTPUT_BYTES = 8 * 1024 * 1024;
/**
 * Outputs from this size up (larger than the caches) use a band of the tensor's whole width when
 * that is at most WIDE_BAND_MAX_BYTES: flush_band then copies it out with one memory.copy instead
 * of 64 row copies of 4 KiB (why: bands.ts `bandTargetFor`, which the plain-array routes use with
 * the same two sizes).
 */
export const WIDE_BAND_MIN_OUTPUT_BYTES = 16 * 1024 * 1024;
export const WIDE_BAND_MAX_BYTES = 4 * 1024 * 1024;
/** Macroblocks per band chunk, 0 for no band. */
export const bandChunkBlocks = (tilesX: number, outBytes: number) =>
  outBytes < BAND_MIN_OUTPUT_BYTES
    ? 0
    : outBytes >= WIDE_BAND_MIN_OUTPUT_BYTES && tilesX * BLOCK_BYTES <= WIDE_BAND_MAX_BYTES
      ? tilesX
      : Math.max(1, Math.min(tilesX, BAND_BYTES / BLOCK_BYTES));

/** The same for an output of `outBytes` (a whole-width band is reserved from WIDE_BAND_MIN_OUTPUT_BYTES up). */
export const bandReserveBytes = (outBytes: number) =>
  (outBytes >= WIDE_BAND_MIN_OUTPUT_BYTES ? WIDE_BAND_MAX_BYTES : BAND_BYTES) + 256 * 16 + 64;

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
 * Bytes past a band's last record start that its window holds: a valid record takes at most
 * 5136 bytes (16 of layout and map, 256 headers, 256 4x4 payloads of 16 bytes) and the expansion
 * reads up to 16 bytes past a payload.
 */
export const RECORD_REACH_BYTES = 5136 + 16;
/** Largest window per band; a stream whose bands need more (records far apart) is copied whole. */
export const MAX_BAND_WINDOW_BYTES = 2 * 1024 * 1024;

/** The stream bytes [lo, hi) that band [b0, b1) of a v2 stream can need, from its offset table (untrusted: the kernel checks every offset). */
export function bandWindow(view: DataView, base: number, len: number, b0: number, b1: number): { lo: number; hi: number } {
  const start = base + view.getUint32(16 + 4 * b0, true);
  const lo = start - (start % 16);
  const hi = Math.min(len, base + view.getUint32(16 + 4 * (b1 - 1), true) + RECORD_REACH_BYTES);
  return { lo, hi };
}

/** Slice of a v2 stream copied in per validate_v2_from call: validated while it is still in cache. */
export const STREAM_SLICE_BYTES = 1 << 20;

/**
 * Copy the stream into `buffer` and run the wasm validator: it applies every reject rule of
 * DECISIONS.md section 3 and writes the leaf table (payload addresses = addrBase + stream offset)
 * and the first leaf of each block. Returns the leaf count, or -1 when the stream is not valid
 * (or, never for valid streams, does not fit tableCap): the caller then runs parse(). A v2 stream
 * is copied in slices, each validated right after its copy (validate_v2_from), while it is in
 * cache: one pass over a stream larger than the cache would otherwise wait on memory per record.
 */
export function validateInMemory(
  kernel: KernelExports,
  buffer: ArrayBufferLike,
  bytes: Uint8Array,
  profile: "v1" | "v2",
  blockCount: number,
  layout: ValidatedLayout,
  addrBase: number,
  sliceBytes = STREAM_SLICE_BYTES,
): number {
  const len = bytes.length;
  const into = new Uint8Array(buffer, layout.streamAt, len);
  if (profile === "v1") {
    into.set(bytes);
    return kernel.validate_v1(layout.streamAt, len, blockCount, layout.tableAt, layout.tableCap, addrBase, layout.blockFirstAt);
  }
  let avail = Math.min(len, 32 + 4 * blockCount + sliceBytes); // the offset table and a first slice
  into.set(bytes.subarray(0, avail));
  for (let b = 0; ; ) {
    b = kernel.validate_v2_from(layout.streamAt, len, avail, blockCount, b, layout.tableAt, layout.tableCap, addrBase, layout.blockFirstAt);
    if (b < 0) return -1;
    if (b === blockCount) return new Uint32Array(buffer, layout.blockFirstAt + 4 * blockCount, 1)[0]!;
    if (avail === len) return -1; // never: with the whole stream in, the kernel answers done or -1
    const end = Math.min(len, avail + sliceBytes);
    into.set(bytes.subarray(avail, end), avail);
    avail = end;
  }
}
