/** Opens one decoder for the decode commands from the decoder registry: a name (cpu, webgpu, vulkan) or a module path. */
import { DecoderLoadError, openDecoders } from "@sgfp4/decoders/node";
import type { Decoder } from "@sgfp4/format";
import { CliError, EXIT, usage } from "./util.js";

export async function openBackend(name: string): Promise<Decoder> {
  if (name === "all") throw usage("--backend all is for conformance; decode needs one backend (cpu, webgpu, vulkan or ./module.mjs)");
  let decoder: Decoder | undefined;
  try {
    [decoder] = await openDecoders([name]);
  } catch (e) {
    if (e instanceof DecoderLoadError) throw usage(e.message);
    throw e;
  }
  const a = await decoder!.available().catch((e: unknown) => ({ ok: false as const, reason: String(e) }));
  if (!a.ok) throw new CliError(`backend ${name} is unavailable: ${a.reason}`, EXIT.FAILURE);
  return decoder!;
}
