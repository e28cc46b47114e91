/** The CPU decoder behind @sgfp4/format's Decoder interface, named "cpu". */
import { OUTPUT_FORMATS, requestedFormat, type Decoder } from "@sgfp4/format";
import { decode, kernelAvailable } from "./index.js";

/** The decoder "cpu": every output format, written by the wasm kernel. */
export function createDecoder(): Decoder {
  return {
    name: "cpu",
    formats: OUTPUT_FORMATS,
    async available() {
      return { ok: true, detail: kernelAvailable() ? "WebAssembly SIMD kernel" : "JS reference loop (this engine cannot run the wasm SIMD kernel)" };
    },
    async decode(bytes, req) {
      const format = requestedFormat(req, OUTPUT_FORMATS, "cpu");
      return decode(bytes, { profile: req.profile, shape: req.shape, format });
    },
  };
}

/** @deprecated use createDecoder; kept for one release. */
export const createConformanceBackend = createDecoder;
