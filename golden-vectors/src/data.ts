/**
 * The published package's entry: where the vector set lies once installed. The builder (the
 * rest of src/) stays in the repository; the package ships only this, vectors/ and the README.
 */
import { fileURLToPath } from "node:url";

/** Absolute path of the vector folder (VECTORS.md format: index.json, <id>.json, containers, .f32). */
export const vectorsDir: string = fileURLToPath(new URL("../vectors", import.meta.url));
