// Builds the bench-only addon .bench/sgfp4_vulkan_bench.node: the shipped sources plus
// native/bench (kernel and transfer timings, the candidate and copy shaders) with SGFP4_BENCH.
// It exports everything the shipped addon does, so a benchmark points SGFP4_VULKAN_ADDON at it
// and the public API and the bench-only timings share one Vulkan device. Not part of the package.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { formatGenerated, gen, packageRoot as root } from "./native-sources.mjs";

export const benchAddon = join(root, ".bench", "sgfp4_vulkan_bench.node");

export function buildBenchAddon() {
  execFileSync(process.execPath, [join(root, "scripts", "gen-shaders.mjs"), "--bench"], { stdio: "inherit" });
  const nodeInclude = join(dirname(dirname(process.execPath)), "include", "node");
  if (!existsSync(join(nodeInclude, "node_api.h"))) throw new Error(`vulkan-addon bench: Node's headers not found at ${nodeInclude}`);
  const addonApi = createRequire(import.meta.url)("node-addon-api").include_dir;
  const sources = ["native/src", "native/bench"].flatMap((dir) => readdirSync(join(root, dir)).filter((f) => f.endsWith(".cpp")).map((f) => join(root, dir, f)));
  mkdirSync(dirname(benchAddon), { recursive: true });
  const flags = ["-std=c++17", "-O2", "-fPIC", "-shared", "-fexceptions", "-Wall", "-Wextra", "-Wno-missing-field-initializers"];
  const defines = ["-DSGFP4_BENCH", "-DNAPI_VERSION=8", "-DNODE_ADDON_API_DISABLE_DEPRECATED"];
  const includes = [nodeInclude, addonApi, gen, formatGenerated, join(root, "native", "src")].map((d) => `-I${d}`);
  execFileSync("g++", [...flags, ...defines, ...includes, "-o", benchAddon, ...sources, "-ldl", "-pthread", "-static-libstdc++", "-static-libgcc"], { stdio: "inherit" });
  return benchAddon;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(`vulkan-addon: built ${buildBenchAddon()}`);
