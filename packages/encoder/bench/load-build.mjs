// A build of the encoder for the benchmarks: a folder with index.js (a `dist`) or index.mjs + worker.js (an
// esbuild bundle, e.g. for another machine; see bench/ab.mjs).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const loadBuild = (folder) => import(pathToFileURL(resolve(folder, existsSync(resolve(folder, "index.mjs")) ? "index.mjs" : "index.js")).href);
