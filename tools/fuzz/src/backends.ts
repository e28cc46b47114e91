/**
 * The backends a fuzz run compares: the built-ins through the conformance package's
 * resolveBackends (cpu, webgpu, vulkan), plus "python", the independent example decoder under
 * examples/python-decoder run through the conformance command protocol.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createCommandBackend, resolveBackends, type ConformanceBackend } from "@sgfp4/conformance";

export const KNOWN_BACKENDS = ["cpu", "cpu-kmem", "webgpu", "vulkan", "python"] as const;

export interface LoadedBackends {
  ready: ConformanceBackend[];
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

function renamed(name: string, b: ConformanceBackend): ConformanceBackend {
  return { name, available: () => b.available(), decode: (bytes, o) => b.decode(bytes, o), ...(b.close ? { close: () => b.close!() } : {}) };
}

/**
 * resolveBackends imports the backend packages from the conformance package's location; when
 * that package does not list one as a dependency yet, try this package's own resolution.
 */
async function importDirect(name: string): Promise<ConformanceBackend | undefined> {
  const specifier = { cpu: "@sgfp4/cpu-decoder", webgpu: "@sgfp4/webgpu-decoder", vulkan: "@sgfp4/vulkan-addon" }[name];
  if (!specifier) return undefined;
  try {
    const mod = (await import(specifier)) as { createConformanceBackend?: () => ConformanceBackend | Promise<ConformanceBackend> };
    if (typeof mod.createConformanceBackend !== "function") return undefined;
    return renamed(name, await mod.createConformanceBackend());
  } catch {
    return undefined;
  }
}

/**
 * "cpu-kmem": the CPU decoder's other fast path, decodeInto an array from createOutput() (the
 * kernel writes in place; v2 streams are validated and expanded in one pass), so fuzzing holds
 * it to the same rules as decode().
 */
async function cpuKernelMemoryBackend(): Promise<ConformanceBackend> {
  const cpu = await import("@sgfp4/cpu-decoder");
  return {
    name: "cpu-kmem",
    available: async () => ({ ok: true, detail: "decodeInto a createOutput() array" }),
    decode: async (bytes, o) => {
      const out = cpu.createOutput(o.shape);
      cpu.decodeInto(bytes, o, out);
      return out.slice(); // the arena is reused by nothing else, but the caller keeps a plain array
    },
  };
}

export async function loadBackends(names: readonly string[], opts: { commandTimeoutMs?: number } = {}): Promise<LoadedBackends> {
  const ready: ConformanceBackend[] = [];
  const unavailable: LoadedBackends["unavailable"] = [];
  for (const name of names) {
    let backend: ConformanceBackend;
    if (name === "python") {
      backend = createCommandBackend(pythonBackendTemplate(), { name: "python", timeoutMs: opts.commandTimeoutMs ?? 30_000 });
    } else if (name === "cpu-kmem") {
      backend = await cpuKernelMemoryBackend();
    } else {
      [backend] = (await resolveBackends([name])) as [ConformanceBackend];
    }
    let a = await backend.available().catch((e: unknown) => ({ ok: false as const, reason: String(e) }));
    if (!a.ok) {
      const direct = await importDirect(name);
      if (direct) {
        const b = await direct.available().catch((e: unknown) => ({ ok: false as const, reason: String(e) }));
        if (b.ok) {
          backend = direct;
          a = b;
        }
      }
    }
    if (a.ok) ready.push(backend);
    else {
      unavailable.push({ name, reason: a.reason });
      await backend.close?.().catch(() => undefined);
    }
  }
  return { ready, unavailable };
}
