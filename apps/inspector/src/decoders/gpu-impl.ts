/**
 * The WebGPU decode the page runs, given the page's GPUDevice. Null until
 * @sgfp4/webgpu-decoder is built; then this file adapts its API.
 */
import type { DecodeOptions } from "./types";

export type GpuDecode = (bytes: Uint8Array, opts: DecodeOptions) => Promise<Float32Array>;
export interface GpuDecoderFactory {
  label: string;
  create(device: GPUDevice): Promise<{ decode: GpuDecode; close?: () => void }>;
}

export const gpuDecoderFactory: GpuDecoderFactory | null = null;
