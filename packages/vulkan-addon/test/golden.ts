/** The repository's golden vectors (VECTORS.md format), read once for the test files that run them. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface GoldenVector {
  id: string;
  profile: "v1" | "v2";
  container: string;
  shape: [number, number];
  expect: { decode?: { output?: string }; reject?: string };
}

export const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "golden-vectors", "vectors");

/** Every vector of the set ([] when the folder is missing, which the callers' "are present" test catches). */
export function goldenVectors(): GoldenVector[] {
  if (!existsSync(join(GOLDEN_DIR, "index.json"))) return [];
  const index = JSON.parse(readFileSync(join(GOLDEN_DIR, "index.json"), "utf8")) as { vectors: string[] };
  return index.vectors.map((file) => JSON.parse(readFileSync(join(GOLDEN_DIR, file), "utf8")) as GoldenVector);
}

/** The `code` of what `run` throws, or undefined when it returns. */
export function thrownCode(run: () => unknown): string | undefined {
  try {
    run();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}
