/**
 * The parse() route: @sgfp4/format's parse() validates (and throws the exact Sgfp4Error), then its
 * leaf table is expanded band by band, or by the reference loop where the kernel cannot run.
 * Taken when the wasm validator says "not ok" (to report why), and for inputs the fast routes
 * do not take (very wide tensors, no wasm SIMD).
 */
import type { Container } from "@sgfp4/format";
import { bandBytes, bandTargetFor, runBands } from "./bands.js";
import { MAX_WASM_BYTES, kernelModule } from "./kernel.js";
import { fillInputs, planMemory } from "./layouts.js";
import { asSgfp4Error, parseForDecode, type DecodeOptions, type DecodedArray, type OutputFormat } from "./options.js";
import { allocateOutput } from "./output.js";
import { expandReference, toHalfBits } from "./reference.js";
import { scratchMemory } from "./scratch.js";

/** Parse, then expand into a new array. */
export function decodeParsed(bytes: Uint8Array, opts: DecodeOptions, format: OutputFormat): DecodedArray {
  const c = parseForDecode(bytes, opts);
  const out = allocateOutput(format, c.shape[0] * c.shape[1]);
  expandParsed(c, bytes, format, out);
  return out;
}

/** Expand every leaf of a parsed container into `out`. */
export function expandParsed(c: Container, bytes: Uint8Array, format: OutputFormat, out: DecodedArray): void {
  const [rows, cols] = c.shape;
  const module = kernelModule();
  const bandTarget = bandTargetFor(rows, cols, format);
  const plan = planMemory(c, bandBytes(c.tilesY, c.tilesX, cols, bandTarget));
  if (!module || plan.totalBytes > MAX_WASM_BYTES) {
    const f32 = format === "f32" ? (out as Float32Array) : new Float32Array(rows * cols);
    expandReference(c, bytes, f32);
    if (format !== "f32") out.set(toHalfBits(f32, format));
    return;
  }
  try {
    const { memory, kernel } = scratchMemory(module, plan.totalBytes);
    fillInputs(memory.buffer, c, bytes, plan);
    const firstLeaf = (block: number) => (block < c.blockCount ? c.blocks[block]!.firstLeaf : c.leafCount);
    runBands(kernel, memory, { tilesY: c.tilesY, tilesX: c.tilesX, rows, cols, format, out }, (b) => {
      const first = firstLeaf(b.b0);
      kernel.decode_leaves_window(plan.tableAt + first * 16, firstLeaf(b.b1) - first, plan.outAt, b.stride, rows, cols, c.tilesX, b.rowBase, b.colBase);
      return true;
    }, bandTarget);
  } catch (e) {
    throw asSgfp4Error(e, "WebAssembly decode failed");
  }
}
