import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, type Container } from "@sgfp4/format";
import type { Rng } from "@sgfp4/testkit";

type Profile = "v1" | "v2";

/** Shapes that crop at the edges (1x1, 3x200, 65x63, 130x70), exact tiles, and wide ones that need several bands. */
export const SHAPES: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [3, 200],
  [65, 63],
  [130, 70],
  [64, 64],
  [128, 192],
  [200, 1100],
  [70, 2051],
  [257, 5],
];

/** parse()'s container, or null where parse() rejects the stream. */
export function parseOrNull(bytes: Uint8Array, profile: Profile, shape: readonly [number, number]): Container | null {
  try {
    return parse(bytes, { profile, shape });
  } catch {
    return null;
  }
}

/** The golden vectors (golden-vectors/vectors, VECTORS.md): read a container as join(vectorsDir, v.container). */
export const vectorsDir = join(__dirname, "../../../golden-vectors/vectors");
export interface Vector {
  id: string;
  profile: Profile;
  container: string;
  shape: [number, number];
  expect: { decode?: { output: string }; reject?: string };
}
export const vectors: Vector[] = (JSON.parse(readFileSync(join(vectorsDir, "index.json"), "utf8")).vectors as string[]).map(
  (f) => JSON.parse(readFileSync(join(vectorsDir, f), "utf8")) as Vector,
);

/** The code of the Sgfp4Error that `run` throws, the error as text for another throw, or "no error". */
export function errorCode(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
  return "no error";
}

/** Set one byte of a leaf's padding (the zero bytes after its codes, up to 16-byte alignment) to nonzero. */
export function corruptPadding(rng: Rng, bytes: Uint8Array, shape: readonly [number, number]): Uint8Array | null {
  const c = parse(bytes, { profile: "v2", shape });
  const padded: number[] = [];
  for (let i = 0; i < c.leafCount; i++) {
    const geometry = c.leafTable[4 * i + 1]!;
    const area = 1 << (2 * ((geometry >>> 12) & 7));
    const used = (geometry >>> 15) & 1 ? area / 4 : area / 2;
    if (used % 16) padded.push(i);
  }
  if (padded.length === 0) return null;
  const i = rng.pick(padded);
  const geometry = c.leafTable[4 * i + 1]!;
  const area = 1 << (2 * ((geometry >>> 12) & 7));
  const used = (geometry >>> 15) & 1 ? area / 4 : area / 2;
  const out = bytes.slice();
  out[c.leafTable[4 * i + 3]! + rng.int(used, 15)] = rng.int(1, 255);
  return out;
}
