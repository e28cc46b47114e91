/**
 * The registry of SGFP4 decoders (docs/ARCHITECTURE.md, "Decoder interface"): the CLI, the
 * conformance suite, the fuzzer and the inspector open decoders by name here. This entry runs
 * anywhere (browsers, workers, Node); `@sgfp4/decoders/node` adds the Node-only decoders.
 */
import { DecoderRegistry, packageEntry } from "./registry.js";

export { DecoderLoadError, DecoderRegistry, asDecoder, decoderFromModule, factoryEntry, named, packageEntry, unavailableDecoder } from "./registry.js";
export type { DecoderEntry } from "./registry.js";
export type { Availability, DecodeRequest, DecodedArray, Decoder, OutputFormat } from "@sgfp4/format";

/** Decoders that run in a browser as well as in Node. */
export const browserDecoders = new DecoderRegistry([
  packageEntry("cpu", "@sgfp4/cpu-decoder", () => import("@sgfp4/cpu-decoder")),
  packageEntry("webgpu", "@sgfp4/webgpu-decoder", () => import("@sgfp4/webgpu-decoder")),
]);
