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
 * Decode to a new Float32Array of O*I values (a plain, transferable ArrayBuffer).
 *
 * Why not return a view of a per-call WebAssembly.Memory: fresh wasm memory is always freshly
 * mmapped, so every output page faults on first touch, while the JS allocator often reuses
 * already-mapped memory. Measured (BENCHMARKS.md), decoding band by band into cache-sized scratch
 * and copying into a new array is several times faster up to tens of MiB and no slower beyond.
 */
export function decode(bytes: Uint8Array, opts: DecodeOptions): Float32Array {
  const c = parseForDecode(bytes, opts);
  let out: Float32Array;
  try {
    out = new Float32Array(c.shape[0] * c.shape[1]);
  } catch (e) {
    throw asSgfp4Error(e, "allocating the output");
  }
  expand(c, bytes, out);
  return out;
}

/** decodeInto: the caller's array (length O*I) receives the output. */
export function decodeInto(bytes: Uint8Array, opts: DecodeOptions, out: Float32Array): void {
  if (!(out instanceof Float32Array)) throw new Sgfp4Error("INVALID_ARGUMENT", "out must be a Float32Array");
  const c = parseForDecode(bytes, opts);
  if (out.length !== c.shape[0] * c.shape[1]) {
    throw new Sgfp4Error("INVALID_ARGUMENT", `out has ${out.length} elements, expected O*I = ${c.shape[0] * c.shape[1]}`);
  }
  expand(c, bytes, out);
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
