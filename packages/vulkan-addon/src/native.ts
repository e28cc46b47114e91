/**
 * Finding and loading the native addon. Candidates, in order: SGFP4_VULKAN_ADDON (a path to a
 * .node file, for bundled code whose own location is not the package), build/Release (a source
 * build), prebuilds/<platform>-<arch> (shipped for linux-x64). When none loads, the error lists
 * each candidate with why it failed and what to do.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Sgfp4Error } from "@sgfp4/format";
import type { DecodedArray } from "@sgfp4/format";
import type { VulkanInfo } from "./index.js";

/** Options the native entry points read (all optional). */
export interface NativeOptions {
  maxOutputBytes?: number;
  device?: string;
  format?: string;
}

export interface NativeAddon {
  parse(bytes: Uint8Array, profile: string, rows: number, cols: number, options?: NativeOptions): { leafTable: Uint32Array; blockFirstLeaf: Uint32Array; leafCount: number };
  decode(bytes: Uint8Array, profile: string, rows: number, cols: number, options?: NativeOptions): DecodedArray;
  decodeInto(bytes: Uint8Array, profile: string, rows: number, cols: number, out: DecodedArray, options?: NativeOptions): void;
  /** Validates synchronously (throws), then decodes on a libuv pool thread; out null = a new array. */
  decodeAsync(bytes: Uint8Array, profile: string, rows: number, cols: number, out: DecodedArray | null, options?: NativeOptions): Promise<DecodedArray>;
  info(options?: NativeOptions): VulkanInfo;
  /** Frees the buffers the device keeps between decodes. */
  trim(options?: NativeOptions): void;
  /** Idle pooled buffers, and host-memory imports so far (tests of reuse and of the import path). */
  stats(options?: NativeOptions): {
    idleBuffers: number;
    hostImports: number;
    buffersMade: number;
    idleSubmissions: number;
    /** VkMemoryPropertyFlags of the last buffer made of each kind (0: none made yet). */
    memoryFlags: { device: number; upload: number; readback: number };
  };
  /** sha256 of the native sources this binary was built from (scripts/native-sources.mjs). */
  readonly sourceHash: string;
}

export const packageRoot = fileURLToPath(new URL("..", import.meta.url));
/** The newest glibc symbol version the linux-x64 prebuild needs (test/prebuild.test.ts pins it). */
export const PREBUILT_GLIBC = "2.36";

/** The .node files tried, in order. */
export function addonCandidates(): string[] {
  const fromEnv = process.env.SGFP4_VULKAN_ADDON;
  return [
    ...(fromEnv ? [fromEnv] : []),
    join(packageRoot, "build", "Release", "sgfp4_vulkan.node"),
    join(packageRoot, "prebuilds", `${process.platform}-${process.arch}`, "node.napi.node"),
  ];
}

function glibcVersion(): string | undefined {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime;
}

function loadFailure(tried: string[]): Sgfp4Error {
  const glibc = glibcVersion();
  const platform = `${process.platform}-${process.arch}${glibc ? ` (glibc ${glibc})` : ""}`;
  const message =
    `the native addon of @sgfp4/vulkan-addon could not be loaded on ${platform}. Tried:\n` +
    tried.map((t) => `  - ${t}\n`).join("") +
    `The prebuilt binary covers linux-x64 with glibc >= ${PREBUILT_GLIBC}. Elsewhere, build from source: install a C++ ` +
    "toolchain, Python 3, make and the Vulkan headers (Debian/Ubuntu: apt-get install g++ make python3 libvulkan-dev), then run " +
    "`npm rebuild @sgfp4/vulkan-addon --build-from-source` in your project (or `npx node-gyp rebuild` in " +
    `${packageRoot}). SGFP4_VULKAN_ADDON may name a built sgfp4_vulkan.node.`;
  const e = new Sgfp4Error("BACKEND_FAILURE", message);
  Object.defineProperty(e, "reason", { value: "addon-not-built", enumerable: true });
  return e;
}

let loaded: { addon: NativeAddon } | { error: Sgfp4Error } | undefined;

/** The native addon. Throws BACKEND_FAILURE (reason "addon-not-built") listing what was tried. */
export function nativeAddon(): NativeAddon {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    const tried: string[] = [];
    for (const path of addonCandidates()) {
      if (!existsSync(path)) {
        tried.push(`${path}: not present`);
        continue;
      }
      try {
        loaded = { addon: require(path) as NativeAddon };
        break;
      } catch (e) {
        tried.push(`${path}: ${String((e as Error).message).split("\n")[0]}`);
      }
    }
    loaded ??= { error: loadFailure(tried) };
  }
  if ("error" in loaded) throw loaded.error;
  return loaded.addon;
}
