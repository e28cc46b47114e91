/**
 * Entry "@sgfp4/cpu-decoder/validate" (browser-safe): the host validator for every backend. The
 * wasm validator (native/validate.h) applies every reject rule of DECISIONS.md section 3 and
 * builds the leaf table exactly as @sgfp4/format's parse() does (docs/ARCHITECTURE.md layout;
 * tested word for word); parse() runs only on a reject, to throw its detailed Sgfp4Error.
 */
import type { Shape } from "@sgfp4/format";
import { kernelModule } from "./kernel.js";
import { VALIDATE_WINDOW_BYTES, WINDOW_UNDECIDED, validatedLayout, validateInMemory, validateWindowed, windowedLayout } from "./layouts.js";
import { asSgfp4Error, parseForDecode, type DecodeOptions } from "./options.js";
import { fastRequest } from "./request.js";
import { scratchMemory, type KernelMemory } from "./scratch.js";

export interface LeafTable {
  profile: "v1" | "v2";
  shape: Shape;
  tilesY: number;
  tilesX: number;
  /** 4 u32 words per leaf (docs/ARCHITECTURE.md); word 3 = the payload's byte offset in the stream */
  leafTable: Uint32Array;
  leafCount: number;
  /** B + 1 entries: blockFirst[b] = first leaf of macroblock b, blockFirst[B] = leafCount */
  blockFirst: Uint32Array;
}

/**
 * Validate `bytes` and return its leaf table; throws the Sgfp4Error parse() gives (codes of
 * DECISIONS.md: LIMIT_EXCEEDED / INVALID_ARGUMENT before anything is allocated, then the reject
 * codes). Where the wasm kernel cannot run, parse() does the work (same result, slower).
 */
export function buildLeafTable(bytes: Uint8Array, opts: DecodeOptions): LeafTable {
  const table = validateLeafTable(bytes, opts);
  if (table) return table;
  const c = parseForDecode(bytes, opts); // not ok (or no kernel): the exact error, or the table
  const blockFirst = new Uint32Array(c.blockCount + 1);
  c.blocks.forEach((b, i) => (blockFirst[i] = b.firstLeaf));
  blockFirst[c.blockCount] = c.leafCount;
  return { profile: c.profile, shape: c.shape, tilesY: c.tilesY, tilesX: c.tilesX, leafTable: c.leafTable, leafCount: c.leafCount, blockFirst };
}

/**
 * The wasm validator alone: the leaf table, or null for "not ok" (or no kernel). Throws for bad
 * options. A v2 stream passes through a window of `windowBytes` (tests pass small ones).
 */
export function validateLeafTable(bytes: Uint8Array, opts: DecodeOptions, windowBytes = VALIDATE_WINDOW_BYTES): LeafTable | null {
  const module = kernelModule();
  const r = fastRequest(bytes, opts);
  if (!module || !r) return null;
  try {
    let held: KernelMemory | undefined;
    let at: { tableAt: number; blockFirstAt: number } | undefined;
    let count = -1;
    if (r.profile === "v2") {
      // the records pass through a window reused slice after slice: the stream is never copied whole
      const layout = windowedLayout(bytes.length, r.blockCount, windowBytes);
      held = scratchMemory(module, layout.totalBytes);
      count = validateWindowed(held.kernel, held.memory.buffer, bytes, r.blockCount, layout, 0);
      at = layout;
    }
    if (r.profile === "v1" || count === WINDOW_UNDECIDED) {
      const layout = validatedLayout(0, r.profile, bytes.length, r.blockCount);
      held = scratchMemory(module, layout.totalBytes);
      count = validateInMemory(held.kernel, held.memory.buffer, bytes, r.profile, r.blockCount, layout, 0);
      at = layout;
    }
    if (count < 0 || !held || !at) return null;
    const buffer = held.memory.buffer;
    return {
      profile: r.profile,
      shape: [r.rows, r.cols],
      tilesY: r.tilesY,
      tilesX: r.tilesX,
      leafTable: copyOut(buffer, at.tableAt, count * 4),
      leafCount: count,
      blockFirst: copyOut(buffer, at.blockFirstAt, r.blockCount + 1),
    };
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly validation failed");
  }
}

/**
 * A copy of `words` u32 at byte `at` of kernel memory, in an array of its own (exactly that size).
 * From 1 MiB up, where the engine offers uninitialised memory (Node's Buffer.allocUnsafeSlow: an
 * ArrayBuffer of its own, not the pool's), it is used, since every word is overwritten at once:
 * zeroing a fresh array first cost about a third of the copy-out (a leaf table is 16 bytes a leaf,
 * 9 MiB for the encoder's 4096x8192 Student-t). Smaller copies (and engines without it) use
 * slice(), which measured a few percent faster there (BENCHMARKS.md, session 14).
 */
const UNINITIALISED_MIN_BYTES = 1 << 20;

function copyOut(buffer: ArrayBufferLike, at: number, words: number): Uint32Array {
  const from = new Uint32Array(buffer, at, words);
  const unsafe = (globalThis as { Buffer?: { allocUnsafeSlow?: (size: number) => Uint8Array } }).Buffer?.allocUnsafeSlow;
  if (typeof unsafe !== "function" || words * 4 < UNINITIALISED_MIN_BYTES) return from.slice();
  const bytes = unsafe(words * 4);
  const out = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
  out.set(from);
  return out;
}

/**
 * Records [b0, b1) of a v2 stream: validation split across threads (each thread validates one
 * range of records, the parts are joined in order). `b0`..`b1` come from `recordRanges`.
 */
export interface RecordRange {
  b0: number;
  b1: number;
}

/**
 * Split a v2 stream's records into at most `parts` ranges of about equal bytes (by its record
 * offset table, read without trusting it: a hostile table only makes the ranges uneven, and the
 * range validator rejects it). null where the stream cannot take the split route (v1, options
 * parse() must judge, no kernel); throws what buildLeafTable throws for bad options.
 */
export function recordRanges(bytes: Uint8Array, opts: DecodeOptions, parts: number): RecordRange[] | null {
  const r = fastRequest(bytes, opts); // null without the kernel
  if (!r || r.profile !== "v2") return null;
  const blocks = r.blockCount;
  const k = Math.max(1, Math.min(Math.floor(parts), blocks));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const base = recordBase(blocks);
  const ranges: RecordRange[] = [];
  let b0 = 0;
  for (let i = 1; i < k && b0 < blocks - 1; i++) {
    const want = (bytes.length * i) / k;
    let b = b0 + 1;
    while (b < blocks - 1 && base + view.getUint32(16 + 4 * b, true) < want) b++;
    ranges.push({ b0, b1: b });
    b0 = b;
  }
  ranges.push({ b0, b1: blocks });
  return ranges;
}

/**
 * The leaf table words of records [b0, b1) of a v2 stream (each record judged as buildLeafTable
 * judges it, bytes past the range's end counted as absent), or null for "not ok here": the caller
 * then validates the whole stream on one thread (the exact error, or a table for a stream whose
 * records the split cannot judge alone). Joined in range order, the parts are the words
 * buildLeafTable gives: records are judged against a shorter stream, and a record accepted there
 * is accepted with the same leaves against the whole (native/validate.h, validate_v2_from).
 * Only the header, the offset table and the range's records are copied into kernel memory.
 */
export function validateRecordRange(bytes: Uint8Array, opts: DecodeOptions, range: RecordRange): Uint32Array | null {
  const module = kernelModule();
  const r = fastRequest(bytes, opts);
  const { b0, b1 } = range;
  if (!module || !r || r.profile !== "v2" || !(Number.isInteger(b0) && Number.isInteger(b1) && b0 >= 0 && b0 < b1 && b1 <= r.blockCount)) return null;
  const len = bytes.length;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const base = recordBase(r.blockCount);
  if (base > len) return null;
  const from = base + view.getUint32(16 + 4 * b0, true);
  const end = b1 === r.blockCount ? len : base + view.getUint32(16 + 4 * b1, true);
  if (!(from >= base && from < end && end <= len)) return null;
  const layout = validatedLayout(0, "v2", len, r.blockCount);
  try {
    const { memory, kernel } = scratchMemory(module, layout.totalBytes);
    const into = new Uint8Array(memory.buffer, layout.streamAt, len);
    into.set(bytes.subarray(0, base));
    into.set(bytes.subarray(from, end), from);
    const blockFirst = new Uint32Array(memory.buffer, layout.blockFirstAt, r.blockCount + 1);
    blockFirst[b0] = 0; // the range's leaves start at the table's start
    const stop = kernel.validate_v2_from(layout.streamAt, len, end, r.blockCount, b0, layout.tableAt, layout.tableCap, 0, layout.blockFirstAt);
    if (stop !== b1) return null;
    const count = blockFirst[b1]!;
    return new Uint32Array(memory.buffer, layout.tableAt, count * 4).slice();
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly validation failed");
  }
}

/** Where a v2 stream's records start: after the 16-byte header and the offset table, 16-aligned. */
const recordBase = (blocks: number) => (16 + 4 * blocks + 15) & ~15;
