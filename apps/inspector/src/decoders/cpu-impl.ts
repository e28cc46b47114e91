/** The CPU decode the worker runs: @sgfp4/cpu-decoder's browser-safe main entry (wasm SIMD kernel). */
import { decode, kernelAvailable } from "@sgfp4/cpu-decoder";

export const cpuDecoderLabel = (): string => `@sgfp4/cpu-decoder, ${kernelAvailable() ? "WebAssembly SIMD kernel" : "JS reference loop (no wasm SIMD here)"}`;
export const decodeOnCpu = decode;
