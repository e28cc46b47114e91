// The golden vectors as inputs of fuzz/parse_fuzzer.cpp and fuzz/leak_check.cpp: a 5-byte
// prefix (flags: bit 0 = v2, bit 1 = also try the other profile; rows u16 LE; cols u16 LE)
// followed by the container.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
export const vectorsDir = join(packageRoot, "..", "..", "golden-vectors", "vectors");

export function fuzzInput(profile, [rows, cols], container) {
  const p = Buffer.alloc(5);
  p[0] = (profile === "v2" ? 1 : 0) | 2;
  p.writeUInt16LE(rows, 1);
  p.writeUInt16LE(cols, 3);
  return Buffer.concat([p, container]);
}

/** The golden vectors: {id, profile, shape, bytes, reject} (reject: the expected code or undefined). */
export function goldenVectors() {
  return JSON.parse(readFileSync(join(vectorsDir, "index.json"), "utf8")).vectors.map((file) => {
    const v = JSON.parse(readFileSync(join(vectorsDir, file), "utf8"));
    return { id: v.id, profile: v.profile, shape: v.shape, bytes: readFileSync(join(vectorsDir, v.container)), reject: v.expect.reject };
  });
}

/** Writes every golden vector that fits the prefix into a fresh `dir`; returns the count. */
export function writeGoldenSeeds(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let n = 0;
  for (const v of goldenVectors()) {
    if (v.shape.some((d) => d > 0xffff)) continue;
    writeFileSync(join(dir, `golden-${v.id}`), fuzzInput(v.profile, v.shape, v.bytes));
    n++;
  }
  return n;
}
