/** The CPU decoder behind the shared Decoder interface (BRIEF / @sgfp4/format decoder.ts), named "cpu". */
import type { Availability, ConformanceBackend, DecodeRequest } from "@sgfp4/format";
import { decode, kernelAvailable } from "./index.js";
import { OUTPUT_FORMATS, type DecodedArray, type OutputFormat } from "./options.js";

/** @sgfp4/format's DecodeRequest with the output format (default "f32"). */
export type CpuDecodeRequest = DecodeRequest & { format?: OutputFormat };

export interface CpuDecoder {
  readonly name: "cpu";
  readonly formats: readonly OutputFormat[];
  available(): Promise<Availability>;
  decode(bytes: Uint8Array, req: CpuDecodeRequest): Promise<DecodedArray>;
}

export function createDecoder(): CpuDecoder {
  return {
    name: "cpu",
    formats: OUTPUT_FORMATS,
    async available() {
      return { ok: true, detail: kernelAvailable() ? "WebAssembly SIMD kernel" : "JS reference loop (this engine cannot run the wasm SIMD kernel)" };
    },
    async decode(bytes, req) {
      return decode(bytes, { profile: req.profile, shape: req.shape, ...(req.format ? { format: req.format } : {}) });
    },
  };
}

export type { ConformanceBackend } from "@sgfp4/format";

/** @deprecated use createDecoder (kept one release). */
export function createConformanceBackend(): ConformanceBackend {
  const d = createDecoder();
  return { name: d.name, available: d.available, decode: async (bytes, opts) => decode(bytes, opts) };
}
