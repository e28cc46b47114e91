/** The decoder `webgpu` (the Decoder interface of @sgfp4/format, docs/ARCHITECTURE.md). */
import { OUTPUT_FORMATS, Sgfp4Error, requestedFormat, type Decoder } from "@sgfp4/format";
import { WebGpuDecoder, type WebGpuDecoderOptions } from "./decoder.js";
import { requestDevice } from "./gpu.js";

export type { ConformanceBackend, Decoder } from "@sgfp4/format";

export function createDecoder(options: WebGpuDecoderOptions = {}): Decoder {
  const formats = OUTPUT_FORMATS; // the kernel writes f32, f16 and bf16
  let state: Promise<{ decoder: WebGpuDecoder; detail: string } | { error: string }> | undefined;
  const open = () =>
    (state ??= requestDevice().then((r) => {
      if ("error" in r) return r;
      const info = r.adapter.info;
      const detail = [info?.vendor, info?.architecture, info?.device, info?.description].filter(Boolean).join(" ") || "WebGPU adapter";
      return { decoder: new WebGpuDecoder(r.device, options), detail };
    }));
  return {
    name: "webgpu",
    formats,
    async available() {
      const s = await open();
      return "error" in s ? { ok: false, reason: s.error } : { ok: true, detail: s.detail };
    },
    async decode(bytes, req) {
      const format = requestedFormat(req, formats, "webgpu");
      const s = await open();
      if ("error" in s) throw new Sgfp4Error("BACKEND_FAILURE", s.error);
      return s.decoder.decode(bytes, { profile: req.profile, shape: req.shape, format });
    },
    async close() {
      const s = state && (await state);
      state = undefined;
      if (s && !("error" in s)) {
        s.decoder.destroy();
        s.decoder.device.destroy();
      }
    },
  };
}

/** @deprecated use createDecoder; kept for one release. */
export const createConformanceBackend = createDecoder;
