/**
 * @sgfp4/cpu-decoder main entry (browser-safe). decode/decodeInto run the WebAssembly SIMD
 * kernel on the calling thread; decodeReference is the readable loop they are tested against.
 * Worker-thread decode lives in the Node-only entry "@sgfp4/cpu-decoder/parallel", the host
 * validator for other backends in "@sgfp4/cpu-decoder/validate".
 *
 * Routes (each validates a valid stream once; on "not ok" parse() runs to throw the exact error):
 * - decode, v2: one pass, band by band (routes.ts fusedBands); v1: validate, then bands.
 * - decodeInto a plain array: as decode, into the caller's array (after an error its contents
 *   are unspecified: the bands before a faulty v2 record have been written).
 * - decodeInto a createOutput array: the kernel writes in place (arena.ts).
 * - anything else (very wide tensors, no wasm SIMD): parse() and its leaf table (parsed.ts).
 */
import { decodeInPlace, expandParsedInPlace, INVALID, NO_ROOM } from "./arena.js";
import { kernelModule } from "./kernel.js";
import { formatOf, parseForDecode, type DecodeOptions, type DecodedArray } from "./options.js";
import { allocateOutput, checkOutLength, checkOutType } from "./output.js";
import { decodeParsed, expandParsed } from "./parsed.js";
import { fastRequest } from "./request.js";
import { fusedBands, validatedBands } from "./routes.js";

export type { DecodeOptions } from "./options.js";
export type { ConformanceBackend, DecodedArray, Decoder, OutputFormat } from "@sgfp4/format";
export { decodeReference } from "./reference.js";
export { preloadKernel } from "./kernel.js";
export { createOutput, isKernelOutput, type OutputOptions } from "./arena.js";
export { createConformanceBackend, createDecoder } from "./decoder.js";

/** True when decode uses the WebAssembly SIMD kernel here (false: the JS reference loop). */
export function kernelAvailable(): boolean {
  return kernelModule() !== null;
}

/**
 * Decode to a new array of O*I values (a plain, transferable ArrayBuffer): a Float32Array, or a
 * Uint16Array of f16/bf16 bit patterns for `format: "f16" | "bf16"`.
 *
 * Why not return a view of a per-call WebAssembly.Memory: fresh wasm memory is always freshly
 * mmapped, so every output page faults on first touch, while the JS allocator often reuses
 * already-mapped memory. Measured (docs/history/cpu-decoder-benchmarks.md), decoding band by band into cache-sized scratch
 * and copying into a new array is several times faster up to tens of MiB and no slower beyond.
 */
export function decode(bytes: Uint8Array, opts: DecodeOptions & { format?: "f32" }): Float32Array;
export function decode(bytes: Uint8Array, opts: DecodeOptions & { format: "f16" | "bf16" }): Uint16Array;
export function decode(bytes: Uint8Array, opts: DecodeOptions): DecodedArray;
export function decode(bytes: Uint8Array, opts: DecodeOptions): DecodedArray {
  const format = formatOf(opts);
  const r = fastRequest(bytes, opts);
  if (r) {
    const target = { tilesY: r.tilesY, tilesX: r.tilesX, rows: r.rows, cols: r.cols, format, out: () => allocateOutput(format, r.rows * r.cols) };
    const out = r.profile === "v2" ? fusedBands(bytes, r, target) : validatedBands(bytes, r, target);
    if (out) return out;
  }
  return decodeParsed(bytes, opts, format);
}

/**
 * decodeInto: the caller's array (length O*I; a Float32Array, or a Uint16Array for f16/bf16)
 * receives the output. An array from createOutput() (or a subarray of it) is written by the
 * kernel in place, with no copy; any other array gets the output through cache-sized bands. When
 * it throws on a v2 stream, `out` may already hold the rows before the fault (each record is
 * validated as it is expanded, so a valid stream is read once); v1 streams are validated first.
 */
export function decodeInto(bytes: Uint8Array, opts: DecodeOptions, out: DecodedArray): void {
  const format = formatOf(opts);
  checkOutType(out, format);
  const r = fastRequest(bytes, opts);
  if (r) {
    const inPlace = format === "f32" ? decodeInPlace(bytes, r, out as Float32Array) : NO_ROOM;
    if (inPlace === true) return;
    if (inPlace !== INVALID) {
      // the length is checked once the first band is known to be valid (parse() orders its errors so)
      const target = { tilesY: r.tilesY, tilesX: r.tilesX, rows: r.rows, cols: r.cols, format, out: () => (checkOutLength(out, r.rows, r.cols), out) };
      if (r.profile === "v2" ? fusedBands(bytes, r, target) : validatedBands(bytes, r, target)) return;
    }
  }
  // not ok (parse() throws the exact error), or a route the fast paths do not take
  const c = parseForDecode(bytes, opts);
  checkOutLength(out, c.shape[0], c.shape[1]);
  if (format === "f32" && expandParsedInPlace(c, bytes, out as Float32Array)) return;
  expandParsed(c, bytes, format, out);
}
