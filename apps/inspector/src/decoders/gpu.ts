/** WebGPU decoder backend: asks navigator.gpu for a device once and says plainly why it cannot. */
import { gpuDecoderFactory, type GpuDecode } from "./gpu-impl";
import { toFailure, type Availability, type DecodeOptions, type DecoderBackend } from "./types";

export class WebGpuBackend implements DecoderBackend {
  readonly name = "WebGPU";
  private ready: Promise<{ ok: true; decode: GpuDecode; close?: () => void; detail: string } | { ok: false; reason: string }> | undefined;

  private init() {
    this.ready ??= (async () => {
      const gpu = (globalThis.navigator as Navigator | undefined)?.gpu;
      if (!gpu) return { ok: false as const, reason: "this browser exposes no WebGPU (navigator.gpu is missing: not enabled, or not a secure context)" };
      let adapter: GPUAdapter | null;
      try {
        adapter = await gpu.requestAdapter();
      } catch (e) {
        return { ok: false as const, reason: `requestAdapter failed: ${(e as Error).message}` };
      }
      if (!adapter) return { ok: false as const, reason: "navigator.gpu.requestAdapter() returned no adapter (no usable GPU or software fallback)" };
      const info = adapter.info;
      const name = [info?.vendor, info?.architecture, info?.device, info?.description].filter(Boolean).join(" ") || "unnamed adapter";
      if (!gpuDecoderFactory) return { ok: false as const, reason: `WebGPU adapter found (${name}) but the page was built without @sgfp4/webgpu-decoder` };
      try {
        const device = await adapter.requestDevice({ requiredLimits: pickLimits(adapter) });
        const d = await gpuDecoderFactory.create(device);
        return { ok: true as const, decode: d.decode, ...(d.close ? { close: d.close } : {}), detail: `${gpuDecoderFactory.label} on ${name}` };
      } catch (e) {
        return { ok: false as const, reason: `could not start the WebGPU decoder on ${name}: ${(e as Error).message}` };
      }
    })();
    return this.ready;
  }

  async available(): Promise<Availability> {
    const r = await this.init();
    return r.ok ? { ok: true, detail: r.detail } : { ok: false, reason: r.reason };
  }

  async decode(bytes: Uint8Array, opts: DecodeOptions): Promise<Float32Array> {
    const r = await this.init();
    if (!r.ok) throw toFailure({ code: "BACKEND_FAILURE", message: r.reason });
    try {
      return await r.decode(bytes, opts);
    } catch (e) {
      throw toFailure(e);
    }
  }

  close(): void {
    void this.ready?.then((r) => (r.ok ? r.close?.() : undefined));
  }
}

/** Ask for the adapter's largest buffers so big tensors fit (defaults are 128-256 MiB). */
function pickLimits(adapter: GPUAdapter): Record<string, number> {
  return {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
  };
}
