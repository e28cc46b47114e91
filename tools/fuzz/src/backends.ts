/**
 * The decoders a fuzz run compares: the Node decoder registry (@sgfp4/decoders/node: cpu,
 * webgpu, vulkan) with three fuzz entries added on the same mechanism: "cpu-kmem" (the CPU
 * decoder's in-place path), "python", the independent example decoder under
 * examples/python-decoder, and "c", the single-header C decoder of packages/c-decoder
 * (c-decoder.ts), both run through the conformance command protocol.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createCommandDecoder } from "@sgfp4/conformance";
import { factoryEntry, nodeDecoders, openDecoders, type DecoderRegistry } from "@sgfp4/decoders/node";
import type { Decoder } from "@sgfp4/format";
import { createCDecoder } from "./c-decoder.js";

export interface LoadedBackends {
  ready: Decoder[];
  unavailable: { name: string; reason: string }[];
}

/** The repository root, found by walking up from this file. */
export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, "pnpm-workspace.yaml"))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error("not inside the SGFP4 repository");
    dir = up;
  }
}

export function pythonDecoderPath(): string {
  return path.join(repoRoot(), "examples", "python-decoder", "sgfp4_decode.py");
}

/** The command template of the example decoder (also what its README tells users to run). */
export function pythonBackendTemplate(python = process.env.PYTHON ?? "python3"): string {
  return `${python} ${JSON.stringify(pythonDecoderPath())} {container} {profile} {rows} {cols} {output}`;
}

/**
 * "cpu-kmem": the CPU decoder's other fast path, decodeInto an array from createOutput() (the
 * kernel writes in place; v2 streams are validated and expanded in one pass), so fuzzing holds
 * it to the same rules as decode().
 */
async function cpuKernelMemory(): Promise<Decoder> {
  const cpu = await import("@sgfp4/cpu-decoder");
  return {
    name: "cpu-kmem",
    formats: ["f32"],
    available: async () => ({ ok: true, detail: "decodeInto a createOutput() array" }),
    decode: async (bytes, o) => {
      const out = cpu.createOutput(o.shape);
      cpu.decodeInto(bytes, o, out);
      return out.slice(); // the arena is reused by nothing else, but the caller keeps a plain array
    },
  };
}

/** The registry a fuzz run opens its decoders from. */
export function fuzzDecoders(opts: { commandTimeoutMs?: number } = {}): DecoderRegistry {
  return nodeDecoders.with(
    factoryEntry("cpu-kmem", "@sgfp4/cpu-decoder decodeInto a createOutput() array", cpuKernelMemory),
    factoryEntry("python", "examples/python-decoder through the command protocol", () =>
      createCommandDecoder(pythonBackendTemplate(), { name: "python", timeoutMs: opts.commandTimeoutMs ?? 30_000 }),
    ),
    factoryEntry("c", "@sgfp4/c-decoder's sgfp4.h (cli/sgfp4-decode.c, compiled with $CC or cc) through the command protocol", () =>
      createCDecoder({ timeoutMs: opts.commandTimeoutMs ?? 30_000 }),
    ),
  );
}

export const KNOWN_BACKENDS = fuzzDecoders().names;

/** Names from fuzzDecoders() or decoder module paths; unavailable ones are listed with the reason. */
export async function loadBackends(names: readonly string[], opts: { commandTimeoutMs?: number } = {}): Promise<LoadedBackends> {
  const registry = fuzzDecoders(opts);
  const ready: Decoder[] = [];
  const unavailable: LoadedBackends["unavailable"] = [];
  for (const name of names) {
    const [decoder] = (await openDecoders([name], { registry })) as [Decoder];
    const a = await decoder.available().catch((e: unknown) => ({ ok: false as const, reason: String(e) }));
    if (a.ok) ready.push(decoder);
    else {
      unavailable.push({ name, reason: a.reason });
      await decoder.close?.().catch(() => undefined);
    }
  }
  return { ready, unavailable };
}
