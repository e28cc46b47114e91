/// <reference types="@webgpu/types" preserve="true" />
/**
 * @sgfp4/webgpu-decoder: bit-exact SGFP4 decode with WGSL compute shaders. This entry has no
 * Node-only import: pass a GPUDevice from `navigator.gpu` in browsers, or use "./node" (Dawn).
 */
export { WebGpuDecoder, PreparedContainer, OUTPUT_USAGE, type DecodeOptions, type WebGpuDecoderOptions, type KernelOption } from "./decoder.js";
export { createConformanceBackend, type ConformanceBackend } from "./backend.js";
export { getGpu, requestDevice, type DeviceRequest } from "./gpu.js";
export { decodeShader, COPY_SHADER, WORKGROUP_SIZE, type KernelVariant } from "./shader.js";
