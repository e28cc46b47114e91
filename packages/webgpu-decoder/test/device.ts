/** The tests' Dawn device, or why there is none (the GPU suites are then reported skipped with it). */
import { requestDevice } from "../src/gpu.js";

const got = await requestDevice();
export const noGpu = "error" in got ? got.error : undefined;
if (noGpu) console.warn(`webgpu-decoder GPU tests skipped: ${noGpu}`);
export const device = "error" in got ? undefined : got.device;
