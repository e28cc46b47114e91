// A build of the encoder for the benchmarks: a folder with index.js (a `dist`) or index.mjs + worker.js (an
// esbuild bundle, e.g. for another machine; see bench/ab.mjs). In a dist, internal.js (everything, internals
// included; not a public entry) is preferred; builds before it had everything in index.js.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const ENTRIES = ["index.mjs", "internal.js", "index.js"];
export const loadBuild = (folder = new URL("../dist", import.meta.url).pathname) =>
  import(pathToFileURL(resolve(folder, ENTRIES.find((e) => existsSync(resolve(folder, e))) ?? "index.js")).href);
