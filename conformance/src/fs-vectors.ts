/** Vector sets on disk: a folder as a VectorSource, and the default set (@sgfp4/golden-vectors). */
import { readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { readVectorSet, type VectorSet, type VectorSource } from "./core/index.js";

/** A folder as a VectorSource: paths are resolved inside it (readVectorSet refuses '..'). */
export function folderSource(dirArg: string): VectorSource {
  const dir = path.resolve(dirArg);
  const abs = (rel: string): string => path.join(dir, ...rel.split("/"));
  return {
    label: dir,
    text: (rel) => readFile(abs(rel), "utf8"),
    bytes: async (rel) => new Uint8Array(await readFile(abs(rel))),
    size: async (rel) => {
      try {
        const s = await stat(abs(rel));
        return s.isFile() ? s.size : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/** Read and check a vector folder (VECTORS.md, version 1). */
export function loadVectorSet(dir: string): Promise<VectorSet> {
  return readVectorSet(folderSource(dir));
}

/** The published golden vectors: the `vectors` folder of @sgfp4/golden-vectors, wherever it is installed. */
export function defaultVectorsDir(): string {
  const require = createRequire(import.meta.url);
  let pkg: string;
  try {
    pkg = require.resolve("@sgfp4/golden-vectors/package.json");
  } catch {
    throw new Error("no default vector folder: the package @sgfp4/golden-vectors is not installed (npm install @sgfp4/golden-vectors, or pass --vectors DIR)");
  }
  return path.join(path.dirname(pkg), "vectors");
}

/** The version of the installed @sgfp4/golden-vectors (ties a run to the decisions its vectors pin). */
export async function goldenVectorsVersion(): Promise<string | undefined> {
  try {
    const require = createRequire(import.meta.url);
    return (JSON.parse(await readFile(require.resolve("@sgfp4/golden-vectors/package.json"), "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}
