/**
 * The Node registry: the browser decoders plus vulkan (a native addon), and decoders given as a
 * module path (`--backend ./my-decoder.mjs`).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Decoder } from "@sgfp4/format";
import { browserDecoders } from "./index.js";
import { DecoderLoadError, asDecoder, decoderFromModule, packageEntry, type DecoderRegistry } from "./registry.js";

export * from "./index.js";

export const nodeDecoders: DecoderRegistry = browserDecoders.with(packageEntry("vulkan", "@sgfp4/vulkan-addon", () => import("@sgfp4/vulkan-addon")));

/** A name with a slash or a .js/.mjs/.cjs ending is a module path, not a registry name. */
export const looksLikePath = (n: string): boolean => n.includes("/") || n.includes("\\") || /\.[cm]?js$/.test(n);

/**
 * A decoder module given by path: it exports `createDecoder()` (or the deprecated
 * `createConformanceBackend()`), or a default export that is the decoder or a factory of it.
 * A path the user named must load, so failures throw DecoderLoadError instead of a silent skip.
 */
export async function loadModuleDecoder(modulePath: string, cwd = process.cwd()): Promise<Decoder> {
  const abs = path.resolve(cwd, modulePath);
  if (!existsSync(abs)) throw new DecoderLoadError(`decoder module ${abs} does not exist`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
  } catch (e) {
    throw new DecoderLoadError(`importing decoder module ${abs} failed: ${(e as Error).message}`);
  }
  try {
    if (typeof mod.createDecoder === "function" || typeof mod.createConformanceBackend === "function") return await decoderFromModule(mod, modulePath);
    if (typeof mod.default === "function") return asDecoder(await (mod.default as () => unknown)(), `the object returned by ${modulePath} default export`);
    if (mod.default !== undefined) return asDecoder(mod.default, `${modulePath} default export`);
  } catch (e) {
    throw new DecoderLoadError((e as Error).message);
  }
  throw new DecoderLoadError(`${modulePath} exports neither createDecoder() nor a default decoder`);
}

export interface OpenOptions {
  /** default nodeDecoders */
  registry?: DecoderRegistry;
  /** base of relative module paths (default process.cwd()) */
  cwd?: string;
}

/**
 * Names: registry names, "all" (every registry name), or module paths. Order is kept,
 * duplicates dropped; an unknown name or two decoders of one name throw DecoderLoadError.
 */
export async function openDecoders(names: readonly string[], opts: OpenOptions = {}): Promise<Decoder[]> {
  const registry = opts.registry ?? nodeDecoders;
  const requested: string[] = [];
  for (const n of names) for (const e of n === "all" ? registry.names : [n]) if (!requested.includes(e)) requested.push(e);
  const out: Decoder[] = [];
  for (const n of requested) {
    let d: Decoder;
    if (registry.has(n)) d = await registry.open(n);
    else if (looksLikePath(n)) d = await loadModuleDecoder(n, opts.cwd);
    else throw new DecoderLoadError(`unknown decoder "${n}" (known: ${registry.names.join(", ")}, all; a module path must contain a slash, e.g. ./my-decoder.mjs)`);
    if (out.some((o) => o.name === d.name)) throw new DecoderLoadError(`two decoders are named "${d.name}"`);
    out.push(d);
  }
  return out;
}
