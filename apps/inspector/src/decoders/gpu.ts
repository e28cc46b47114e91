/**
 * The WebGPU decoder of the page: the registry's "webgpu" decoder (@sgfp4/webgpu-decoder on a
 * device from navigator.gpu, with raised buffer limits), under the column name "WebGPU".
 */
import { browserDecoders } from "@sgfp4/decoders";
import { decodeFloat32, type Availability, type DecodeRequest, type Decoder } from "@sgfp4/format";
import { toFailure } from "./failure";

const NO_WEBGPU = "this browser exposes no WebGPU (navigator.gpu is missing: not enabled, or not a secure context)";

export class WebGpuBackend implements Decoder {
  readonly name = "WebGPU";
  readonly formats = ["f32"] as const;
  private opened: Promise<Decoder> | undefined;

  private open(): Promise<Decoder> {
    return (this.opened ??= browserDecoders.open("webgpu"));
  }

  async available(): Promise<Availability> {
    // The page can say why better than the decoder can: the usual causes are browser settings.
    if (!(globalThis.navigator as Navigator | undefined)?.gpu) return { ok: false, reason: NO_WEBGPU };
    return (await this.open()).available();
  }

  async decode(bytes: Uint8Array, req: DecodeRequest): Promise<Float32Array> {
    try {
      return await decodeFloat32(await this.open(), bytes, req);
    } catch (e) {
      throw toFailure(e);
    }
  }

  async close(): Promise<void> {
    const d = this.opened && (await this.opened);
    this.opened = undefined;
    await d?.close?.();
  }
}
