/** The decoder `webgpu` (the Decoder interface, docs/ARCHITECTURE.md). */
import { requestedFormat, type Decoder, type Shape } from "@sgfp4/format";

export type { ConformanceBackend, Decoder } from "@sgfp4/format";
import { WebGpuDecoder, type WebGpuDecoderOptions } from "./decoder.js";
import { requestDevice } from "./gpu.js";

export function createDecoder(options: WebGpuDecoderOptions = {}): Decoder {
  const formats = ["f32"] as const;
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
    async decode(bytes, opts) {
      requestedFormat(opts, formats, "webgpu");
      const s = await open();
      if ("error" in s) {
        const { Sgfp4Error } = await import("@sgfp4/format");
        throw new Sgfp4Error("BACKEND_FAILURE", s.error);
      }
      return s.decoder.decode(bytes, { profile: opts.profile, shape: opts.shape as Shape });
    },
    async close() {
      const s = state && (await state);
      state = undefined;
      if (s && !("error" in s)) s.decoder.device.destroy();
    },
  };
}

/** @deprecated use createDecoder; kept for one release. */
export const createConformanceBackend = createDecoder;
