// The native sources of the shipped addon, and their hash (what `sourceHash` of a build reports).
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
export const gen = join(packageRoot, "native", "gen");
export const prebuilt = join(packageRoot, "prebuilds", "linux-x64", "node.napi.node");
/** @sgfp4/format's generated leaf-table contract (sgfp4_leaf_table.h / .glsl): every compile takes -I of it. */
export const formatGenerated = join(dirname(createRequire(join(packageRoot, "package.json")).resolve("@sgfp4/format/package.json")), "generated");

/** Paths (relative to the package) that determine the shipped binary, sorted. */
export function nativeSources() {
  const list = (dir, ext) => readdirSync(join(packageRoot, dir)).filter((f) => ext.some((e) => f.endsWith(e))).map((f) => `${dir}/${f}`);
  return [...list("native/src", [".cpp", ".hpp"]), ...list("native/shaders", [".comp"]), "binding.gyp"].sort();
}

/** The contract files the native build includes from @sgfp4/format. */
const CONTRACT = ["sgfp4_leaf_table.h", "sgfp4_leaf_table.glsl"];

export function sourceHash() {
  const h = createHash("sha256");
  for (const rel of nativeSources()) h.update(`${rel}\0`).update(readFileSync(join(packageRoot, rel))).update("\0");
  for (const file of CONTRACT) h.update(`@sgfp4/format/generated/${file}\0`).update(readFileSync(join(formatGenerated, file))).update("\0");
  return h.digest("hex");
}

/** node-gyp arguments for Node's own headers (installed beside this node binary), so it never downloads them. */
export function nodedirArgs() {
  const prefix = dirname(dirname(process.execPath));
  return existsSync(join(prefix, "include", "node", "node_api.h")) ? [`--nodedir=${prefix}`] : [];
}
