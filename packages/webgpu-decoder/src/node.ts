/// <reference types="@webgpu/types" preserve="true" />
/**
 * Node entry: a device from the `webgpu` package (Dawn), with the adapter's highest storage
 * binding limits, and a decoder on it. Browsers use the main entry with their own device.
 */
import { create, globals } from "webgpu";
import { WebGpuDecoder, type WebGpuDecoderOptions } from "./decoder.js";
import { requestDevice, type DeviceRequest } from "./gpu.js";
import { Sgfp4Error } from "@sgfp4/format";
import { nodeValidatorPool } from "./worker-pool.js";

const REGISTRY = Symbol.for("@sgfp4/webgpu-decoder.gpu");
const g = globalThis as unknown as Record<symbol, { gpu?: GPU } | undefined>;
const reg = (g[REGISTRY] ??= {});
if (!reg.gpu) {
  for (const [k, v] of Object.entries(globals)) if (!(k in globalThis)) (globalThis as Record<string, unknown>)[k] = v;
  // kept for the life of the process: Dawn crashes later if this object is collected
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  reg.gpu = create((env?.SGFP4_DAWN_FLAGS ?? "").split(/\s+/).filter(Boolean)) as unknown as GPU;
}

/** Create a Dawn device (limits raised to the adapter's). Throws BACKEND_FAILURE if there is none. */
export async function createNodeDevice(req: DeviceRequest = {}): Promise<GPUDevice> {
  const r = await requestDevice(req);
  if ("error" in r) throw new Sgfp4Error("BACKEND_FAILURE", r.error);
  return r.device;
}

/**
 * A decoder on a new Dawn device; call `decoder.device.destroy()` when done. Unless `validator`
 * or `validatorPool` is given, `decodeMany` validates on worker threads (nodeValidatorPool()).
 */
export async function createNodeDecoder(options: WebGpuDecoderOptions & DeviceRequest = {}): Promise<WebGpuDecoder> {
  const validatorPool = options.validatorPool ?? (options.validator ? undefined : nodeValidatorPool());
  return new WebGpuDecoder(await createNodeDevice(options), { ...options, ...(validatorPool ? { validatorPool } : {}) });
}

export { requestDevice };
export { WorkerValidatorPool, nodeValidatorPool } from "./worker-pool.js";
export { decodeModelFolder, type ModelFolderOptions } from "./model-folder.js";
