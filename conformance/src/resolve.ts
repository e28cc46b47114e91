/** Turns backend names (built-in, module path, command template) into ConformanceBackend objects. */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { checkBackendShape, unavailableBackend, type ConformanceBackend } from "./backend.js";
import { createCommandBackend } from "./command-backend.js";

/** Built-in backend name -> the package whose main entry exports createConformanceBackend(). */
export const BUILTIN_BACKENDS = {
  cpu: "@sgfp4/cpu-decoder",
  webgpu: "@sgfp4/webgpu-decoder",
  vulkan: "@sgfp4/vulkan-addon",
} as const;
export type BuiltinBackendName = keyof typeof BUILTIN_BACKENDS;
export const ALL_BUILTINS = Object.keys(BUILTIN_BACKENDS) as BuiltinBackendName[];

export class BackendLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackendLoadError";
  }
}

const isBuiltin = (n: string): n is BuiltinBackendName => Object.prototype.hasOwnProperty.call(BUILTIN_BACKENDS, n);
const looksLikePath = (n: string): boolean => n.includes("/") || n.includes("\\") || /\.[cm]?js$/.test(n);

/** Keep the requested name (what --require and reports use) whatever the package calls itself. */
function renamed(name: string, b: ConformanceBackend): ConformanceBackend {
  return {
    name,
    available: () => b.available(),
    decode: (bytes, opts) => b.decode(bytes, opts),
    ...(b.close ? { close: () => b.close!() } : {}),
  };
}

async function callFactory(factory: unknown, where: string): Promise<ConformanceBackend> {
  if (typeof factory !== "function") throw new Error(`${where} is not a function`);
  return checkBackendShape(await (factory as () => unknown)(), `the object returned by ${where}`);
}

/** A built-in backend; a missing package or a failing import makes it unavailable, with the reason. */
export async function loadBuiltinBackend(name: BuiltinBackendName): Promise<ConformanceBackend> {
  const specifier: string = BUILTIN_BACKENDS[name];
  let mod: Record<string, unknown>;
  try {
    mod = (await import(specifier)) as Record<string, unknown>;
  } catch (e) {
    const err = e as { code?: string; message?: string };
    const missing = (err.code === "ERR_MODULE_NOT_FOUND" && String(err.message).includes(specifier)) || err.code === "ERR_PACKAGE_PATH_NOT_EXPORTED";
    return unavailableBackend(name, missing ? `package ${specifier} is not installed or not built` : `importing ${specifier} failed: ${err.message ?? String(e)}`);
  }
  try {
    return renamed(name, await callFactory(mod.createConformanceBackend, `${specifier} createConformanceBackend()`));
  } catch (e) {
    return unavailableBackend(name, `${specifier}: ${(e as Error).message}`);
  }
}

/**
 * A backend module given by path: it exports `createConformanceBackend()` or a default export
 * that is the backend object or a factory returning it. A path the user named must load, so
 * failures throw BackendLoadError instead of turning into a silent skip.
 */
export async function loadModuleBackend(modulePath: string, cwd = process.cwd()): Promise<ConformanceBackend> {
  const abs = path.resolve(cwd, modulePath);
  if (!existsSync(abs)) throw new BackendLoadError(`backend module ${abs} does not exist`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
  } catch (e) {
    throw new BackendLoadError(`importing backend module ${abs} failed: ${(e as Error).message}`);
  }
  try {
    if (typeof mod.createConformanceBackend === "function") return await callFactory(mod.createConformanceBackend, `${modulePath} createConformanceBackend()`);
    if (typeof mod.default === "function") return await callFactory(mod.default, `${modulePath} default export`);
    if (mod.default !== undefined) return checkBackendShape(mod.default, `${modulePath} default export`);
  } catch (e) {
    throw new BackendLoadError((e as Error).message);
  }
  throw new BackendLoadError(`${modulePath} exports neither createConformanceBackend() nor a default backend`);
}

export interface ResolveOptions {
  /** --backend-cmd templates, each one backend ("cmd", "cmd-2", ...) */
  commands?: readonly string[];
  /** per-decode limit of command backends */
  commandTimeoutMs?: number;
  /** base for relative module paths (default process.cwd()) */
  cwd?: string;
}

/**
 * Names: "cpu", "webgpu", "vulkan", "all" (the three), or a module path (./x.mjs, /abs/x.js).
 * Order is kept, duplicates are dropped; an unknown name throws BackendLoadError.
 */
export async function resolveBackends(names: readonly string[], opts: ResolveOptions = {}): Promise<ConformanceBackend[]> {
  const out: ConformanceBackend[] = [];
  const add = (b: ConformanceBackend): void => {
    if (out.some((o) => o.name === b.name)) throw new BackendLoadError(`two backends are named "${b.name}"`);
    out.push(b);
  };
  const requested: string[] = [];
  for (const n of names) {
    const expanded = n === "all" ? ALL_BUILTINS : [n];
    for (const e of expanded) if (!requested.includes(e)) requested.push(e);
  }
  for (const n of requested) {
    if (isBuiltin(n)) add(await loadBuiltinBackend(n));
    else if (looksLikePath(n)) add(await loadModuleBackend(n, opts.cwd));
    else throw new BackendLoadError(`unknown backend "${n}" (built-in: ${ALL_BUILTINS.join(", ")}, all; a module path must contain a slash, e.g. ./my-backend.mjs)`);
  }
  (opts.commands ?? []).forEach((template, i) => {
    add(createCommandBackend(template, { name: i === 0 ? "cmd" : `cmd-${i + 1}`, ...(opts.commandTimeoutMs ? { timeoutMs: opts.commandTimeoutMs } : {}) }));
  });
  return out;
}

/**
 * The repository's golden vectors (golden-vectors/vectors), found by walking up from this
 * package and then from the working directory to the workspace root. Outside the repository
 * there is no default: pass a folder explicitly.
 */
export function defaultVectorsDir(cwd = process.cwd()): string {
  const starts = [path.dirname(fileURLToPath(import.meta.url)), cwd];
  for (const start of starts) {
    let dir = path.resolve(start);
    for (;;) {
      if (existsSync(path.join(dir, "pnpm-workspace.yaml")) && existsSync(path.join(dir, "golden-vectors"))) {
        return path.join(dir, "golden-vectors", "vectors");
      }
      const up = path.dirname(dir);
      if (up === dir) break;
      dir = up;
    }
  }
  throw new Error("no default vector folder: not inside the SGFP4 repository (pass --vectors DIR)");
}
