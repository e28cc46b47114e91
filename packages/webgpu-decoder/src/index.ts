/// <reference types="@webgpu/types" preserve="true" />
/**
 * @sgfp4/webgpu-decoder: bit-exact SGFP4 decode with WGSL compute shaders. This entry has no
 * Node-only import: pass a GPUDevice from `navigator.gpu` in browsers, or use "./node" (Dawn).
 */
export {
  WebGpuDecoder,
  PreparedContainer,
  OUTPUT_USAGE,
  type DecodeOptions,
  type WebGpuDecoderOptions,
  type TensorInput,
  type DecodedTensor,
} from "./decoder.js";
export { parseValidator, wasmValidator, type StreamValidator, type ValidatedStream } from "./job.js";
export type { ValidatorPool, ValidationRequest } from "./validation.js";
export { createDecoder, createConformanceBackend, type ConformanceBackend, type Decoder } from "./backend.js";
export { getGpu, requestDevice, type DeviceRequest } from "./gpu.js";
export { COPY_SHADER } from "./shader.js";
