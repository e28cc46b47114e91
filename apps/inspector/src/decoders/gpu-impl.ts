/** The WebGPU decode the page runs: @sgfp4/webgpu-decoder on the page's own GPUDevice. */
import { WebGpuDecoder } from "@sgfp4/webgpu-decoder";
import type { DecodeOptions } from "./types";

export type GpuDecode = (bytes: Uint8Array, opts: DecodeOptions) => Promise<Float32Array>;
export interface GpuDecoderFactory {
  label: string;
  create(device: GPUDevice): Promise<{ decode: GpuDecode; close?: () => void }>;
}

export const gpuDecoderFactory: GpuDecoderFactory | null = {
  label: "@sgfp4/webgpu-decoder (WGSL compute)",
  async create(device) {
    const decoder = new WebGpuDecoder(device);
    return { decode: (bytes, opts) => decoder.decode(bytes, opts), close: () => decoder.destroy() };
  },
};
