/** The page's decoders, both from the decoder registry (@sgfp4/decoders): CPU in a worker, WebGPU on navigator.gpu. */
import type { Decoder } from "@sgfp4/format";

export { CpuWorkerBackend } from "./cpu";
export { WebGpuBackend } from "./gpu";
export { DecodeFailure, toFailure } from "./failure";
export type { Availability } from "@sgfp4/format";

/** The page shows float32 values, so its decoders are asked for f32 and answer with a Float32Array. */
export type PageDecoder = Omit<Decoder, "decode"> & { decode(...args: Parameters<Decoder["decode"]>): Promise<Float32Array> };
