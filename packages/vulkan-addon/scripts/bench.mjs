// Bundles bench/bench.ts (with @sgfp4/format and node-gyp-build) into .bench/bench.mjs, a single
// file that runs on a machine with only Node.js (the GPU machine), then runs it unless
// --bundle-only. Other arguments go to the benchmark (--max-mib, --min-mib, --reps, --json).
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outfile = join(root, ".bench", "bench.mjs");
await build({
  entryPoints: [join(root, "bench", "bench.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outfile,
  // node-gyp-build loads the .node file with require(); give the ESM bundle one.
  banner: { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' },
  logLevel: "warning",
});
const args = process.argv.slice(2).filter((a) => a !== "--bundle-only");
if (!process.argv.includes("--bundle-only")) execFileSync(process.execPath, [outfile, ...(args.length ? args : ["--max-mib", "64"])], { stdio: "inherit" });
