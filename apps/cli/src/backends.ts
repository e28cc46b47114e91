/** Picks one backend for decode: a built-in name or a module path (see @sgfp4/conformance). */
import { BackendLoadError, resolveBackends, type ConformanceBackend } from "@sgfp4/conformance";
import { CliError, EXIT, usage } from "./util.js";

export async function openBackend(name: string): Promise<ConformanceBackend> {
  if (name === "all") throw usage("--backend all is for conformance; decode needs one backend (cpu, webgpu, vulkan or ./module.mjs)");
  let backend: ConformanceBackend | undefined;
  try {
    [backend] = await resolveBackends([name]);
  } catch (e) {
    if (e instanceof BackendLoadError) throw usage(e.message);
    throw e;
  }
  const a = await backend!.available().catch((e: unknown) => ({ ok: false as const, reason: String(e) }));
  if (!a.ok) throw new CliError(`backend ${name} is unavailable: ${a.reason}`, EXIT.FAILURE);
  return backend!;
}
