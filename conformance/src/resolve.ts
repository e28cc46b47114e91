/**
 * The decoders of a conformance run: names and module paths from the decoder registry
 * (@sgfp4/decoders/node), plus one command decoder per --backend-cmd template.
 */
import { DecoderLoadError, nodeDecoders, openDecoders, type DecoderRegistry } from "@sgfp4/decoders/node";
import type { Decoder } from "@sgfp4/format";
import { createCommandDecoder } from "./command-decoder.js";

export interface ResolveOptions {
  /** --backend-cmd templates, each one decoder ("cmd", "cmd-2", ...) */
  commands?: readonly string[];
  /** per-decode limit of command decoders */
  commandTimeoutMs?: number;
  /** base for relative module paths (default process.cwd()) */
  cwd?: string;
  /** default nodeDecoders */
  registry?: DecoderRegistry;
}

/** Names: registry names, "all", or module paths; an unknown name throws DecoderLoadError. */
export async function resolveDecoders(names: readonly string[], opts: ResolveOptions = {}): Promise<Decoder[]> {
  const out = await openDecoders(names, { ...(opts.cwd ? { cwd: opts.cwd } : {}), registry: opts.registry ?? nodeDecoders });
  (opts.commands ?? []).forEach((template, i) => {
    const d = createCommandDecoder(template, { name: i === 0 ? "cmd" : `cmd-${i + 1}`, ...(opts.commandTimeoutMs ? { timeoutMs: opts.commandTimeoutMs } : {}) });
    if (out.some((o) => o.name === d.name)) throw new DecoderLoadError(`two decoders are named "${d.name}"`);
    out.push(d);
  });
  return out;
}
