/** `pnpm --filter @sgfp4/golden-vectors build-vectors [DIR]`: (re)write the committed set. */
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import { updateReadme, writeVectorSet } from "./build.js";
import { allVectors } from "./vectors.js";

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = resolve(process.argv[2] ?? join(packageRoot, "vectors"));
const bytes = writeVectorSet(dir);
if (!process.argv[2]) updateReadme(join(packageRoot, "README.md"));
console.log(`wrote ${allVectors().length} vectors (${(bytes / 1024).toFixed(0)} KiB) to ${dir}`);
