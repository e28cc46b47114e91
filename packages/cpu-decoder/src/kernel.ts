/**
 * The WebAssembly kernel (native/kernel.c): compiling it from the embedded bytes, its exports,
 * instantiating it on a memory. Browser-safe: no node: imports, no file reads.
 */
import { KERNEL_SHARED_WASM_BASE64, KERNEL_WASM_BASE64 } from "./wasm-bytes.generated.js";

export const WASM_PAGE = 65536;
/** wasm32 linear memory tops out at 65536 pages (4 GiB). */
export const MAX_WASM_BYTES = 65536 * WASM_PAGE;

export interface KernelExports {
  decode_leaves(table: number, count: number, out: number, rows: number, cols: number, tilesX: number, rowBase: number): void;
  /** Validating parsers (native/decode.c): the leaf count, or -1 for "not ok" (parse() then says why). */
  validate_v1(input: number, len: number, blocks: number, table: number, tableCap: number, addrBase: number, blockFirst: number): number;
  validate_v2(input: number, len: number, blocks: number, table: number, tableCap: number, addrBase: number, blockFirst: number): number;
  /** validate_v2 over the first `avail` bytes copied so far, from record b on: the record it stopped at, blocks when done, -1 not ok. */
  validate_v2_from(input: number, len: number, avail: number, blocks: number, b: number, table: number, tableCap: number, addrBase: number, blockFirst: number): number;
  /** validate_v2_from with the header and offset table at `head` and stream bytes [lo, avail) at `window` (lo: a record start). */
  validate_v2_window(head: number, window: number, lo: number, len: number, avail: number, blocks: number, b: number, table: number, tableCap: number, addrBase: number, blockFirst: number): number;
  /** Validate and expand a v2 stream record by record (0 ok, -1 not ok; `out` is then partly written). */
  validate_decode_v2(input: number, len: number, blocks: number, scratch: number, out: number, rows: number, cols: number, tilesX: number, band: number, chunkBlocks: number): number;
  /** decode_leaves into a window: element (r, c) at out + 4 * ((r - rowBase) * stride + c - colBase). */
  decode_leaves_window(table: number, count: number, out: number, stride: number, rows: number, cols: number, tilesX: number, rowBase: number, colBase: number): void;
  /** validate_decode_v2 over records b0..b1-1 into a window of the output, as decode_leaves_window places it (no band). */
  validate_decode_v2_window(input: number, len: number, blocks: number, b0: number, b1: number, scratch: number, out: number, stride: number, rows: number, cols: number, tilesX: number, rowBase: number, colBase: number): number;
  /** validate_decode_v2_window with the header and offset table at `head` and stream bytes [lo, avail) at `window`. */
  validate_decode_v2_stream_window(head: number, window: number, lo: number, avail: number, len: number, blocks: number, b0: number, b1: number, scratch: number, out: number, stride: number, rows: number, cols: number, tilesX: number, rowBase: number, colBase: number): number;
  /** validate_decode_v2 over records b0..b1-1 read from a window as validate_decode_v2_stream_window, inner blocks through the output band (out: the whole output). */
  validate_decode_v2_window_banded(head: number, window: number, lo: number, avail: number, len: number, blocks: number, b0: number, b1: number, scratch: number, out: number, rows: number, cols: number, tilesX: number, band: number, chunkBlocks: number): number;
  /** validate_decode_v2_stream_window writing f16 (bf16 = 0) or bf16 (bf16 = 1) patterns: `out` is a window of the u16 output. */
  validate_decode_v2_half_window(head: number, window: number, lo: number, avail: number, len: number, blocks: number, b0: number, b1: number, scratch: number, block: number, out: number, stride: number, rows: number, cols: number, tilesX: number, rowBase: number, colBase: number, bf16: number): number;
  /** decode_leaves_window writing f16 (bf16 = 0) or bf16 (bf16 = 1) patterns into a window of the u16 output; block: 16 KiB of f32 for leaves cut by the edge. */
  decode_leaves_half_window(table: number, count: number, block: number, out: number, stride: number, rows: number, cols: number, tilesX: number, rowBase: number, colBase: number, bf16: number): void;
  /** Expand a validated v1 leaf table through an output band. */
  decode_v1_banded(table: number, blocks: number, out: number, rows: number, cols: number, tilesX: number, band: number, chunkBlocks: number): void;
  /** n floats at src -> n f16 / bf16 patterns (RNE) at dst; dst may equal src. */
  convert_f16(src: number, dst: number, n: number): void;
  convert_bf16(src: number, dst: number, n: number): void;
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

export const pagesFor = (bytes: number) => Math.max(1, Math.ceil(bytes / WASM_PAGE));
