/** The decoder `webgpu` of the kit's registry (docs/ARCHITECTURE.md): the shared Decoder interface. */
import { Sgfp4Error, type ConformanceBackend, type Profile, type Shape } from "@sgfp4/format";
import { WebGpuDecoder, type WebGpuDecoderOptions } from "./decoder.js";
import { OUTPUT_FORMATS, type DecodedArray, type OutputFormat } from "./formats.js";
import { requestDevice } from "./gpu.js";

export type { ConformanceBackend };

/** The BRIEF's `Decoder` shape (to be typed by @sgfp4/format's `Decoder` once it exports it). */
export interface WebGpuBackend {
  readonly name: "webgpu";
  readonly formats: readonly OutputFormat[];
  available(): Promise<{ ok: true; detail?: string } | { ok: false; reason: string }>;
  decode(bytes: Uint8Array, req: { profile: Profile; shape: Shape; format?: OutputFormat }): Promise<DecodedArray>;
  close(): Promise<void>;
}

export function createDecoder(options: WebGpuDecoderOptions = {}): WebGpuBackend {
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
    formats: OUTPUT_FORMATS,
    async available() {
      const s = await open();
      return "error" in s ? { ok: false, reason: s.error } : { ok: true, detail: s.detail };
    },
    async decode(bytes, req) {
      const s = await open();
      if ("error" in s) throw new Sgfp4Error("BACKEND_FAILURE", s.error);
      return s.decoder.decode(bytes, { profile: req.profile, shape: req.shape, format: req.format });
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

/** @deprecated use `createDecoder` (kept for one release). */
export function createConformanceBackend(options: WebGpuDecoderOptions = {}): ConformanceBackend {
  return createDecoder(options) as unknown as ConformanceBackend;
}
