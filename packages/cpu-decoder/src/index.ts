/**
 * @sgfp4/cpu-decoder main entry (browser-safe). decode/decodeInto run the WebAssembly SIMD
 * kernel on the calling thread; decodeReference is the readable loop they are tested against.
 * Worker-thread decode lives in the Node-only entry "@sgfp4/cpu-decoder/parallel".
 */
import { Sgfp4Error, type Container } from "@sgfp4/format";
import { MAX_WASM_BYTES, WASM_PAGE, fillInputs, instantiate, kernelModule, pagesFor, planMemory, type KernelExports } from "./kernel.js";
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
 * Decode to a new Float32Array of O*I values. With the kernel, the array views a
 * WebAssembly.Memory made for this call (its .buffer is that memory's, somewhat larger than the
 * array and not transferable); nothing else keeps or grows that memory.
 */
export function decode(bytes: Uint8Array, opts: DecodeOptions): Float32Array {
  const c = parseForDecode(bytes, opts);
  const count = c.shape[0] * c.shape[1];
  const module = kernelModule();
  const plan = planMemory(c, count * 4);
  if (!module || plan.totalBytes > MAX_WASM_BYTES) return decodeWithJs(c, bytes, new Float32Array(count));
  try {
    const pages = pagesFor(plan.totalBytes);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    fillInputs(memory.buffer, c, bytes, plan);
    instantiate(module, memory).decode_leaves(plan.tableAt, c.leafCount, 0, c.shape[0], c.shape[1], c.tilesX, 0);
    return new Float32Array(memory.buffer, 0, count);
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}

function decodeWithJs(c: Container, bytes: Uint8Array, out: Float32Array): Float32Array {
  expandReference(c, bytes, out);
  return out;
}

/** Scratch memory reused by decodeInto (only calls whose scratch fits SCRATCH_KEEP_BYTES keep it). */
let scratch: { memory: WebAssembly.Memory; kernel: KernelExports } | undefined;
const SCRATCH_KEEP_BYTES = 64 * 1024 * 1024;
/** decodeInto expands a band of macroblock rows at a time into this much scratch (cache-sized). */
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
 * Decode into the caller's array (length O*I). The kernel writes a band of macroblock rows into
 * scratch wasm memory, which is then copied to `out` while it is still in cache.
 */
export function decodeInto(bytes: Uint8Array, opts: DecodeOptions, out: Float32Array): void {
  if (!(out instanceof Float32Array)) throw new Sgfp4Error("INVALID_ARGUMENT", "out must be a Float32Array");
  const c = parseForDecode(bytes, opts);
  const [rows, cols] = c.shape;
  if (out.length !== rows * cols) throw new Sgfp4Error("INVALID_ARGUMENT", `out has ${out.length} elements, expected O*I = ${rows * cols}`);
  const module = kernelModule();
  const bandBlockRows = Math.max(1, Math.min(c.tilesY, Math.floor(BAND_TARGET_BYTES / (64 * cols * 4))));
  const plan = planMemory(c, bandBlockRows * 64 * cols * 4);
  if (!module || plan.totalBytes > MAX_WASM_BYTES) {
    decodeWithJs(c, bytes, out);
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

/** Conformance backend interface (docs/ARCHITECTURE.md). */
export interface ConformanceBackend {
  readonly name: string;
  available(): Promise<{ ok: true; detail?: string } | { ok: false; reason: string }>;
  decode(bytes: Uint8Array, opts: { profile: "v1" | "v2"; shape: readonly [number, number] }): Promise<Float32Array>;
  close?(): Promise<void>;
}

export function createConformanceBackend(): ConformanceBackend {
  return {
    name: "cpu",
    async available() {
      return { ok: true, detail: kernelAvailable() ? "WebAssembly SIMD kernel" : "JS reference loop (this engine cannot run the wasm SIMD kernel)" };
    },
    async decode(bytes, opts) {
      return decode(bytes, opts);
    },
  };
}
