// Builds the bench-only addon (scripts/build-bench.mjs) into .bench/ and bundles bench/bench.ts
// (with @sgfp4/format and @sgfp4/testkit) into .bench/bench.mjs beside it: a folder that runs on
// a machine with only Node.js (the GPU machine). Then runs it unless --bundle-only. Other
// arguments go to the benchmark (--max-mib, --min-mib, --sizes, --reps, --json).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { build } from "esbuild";
import { buildBenchAddon } from "./build-bench.mjs";
import { packageRoot as root } from "./native-sources.mjs";

buildBenchAddon();
const outfile = join(root, ".bench", "bench.mjs");
await build({
  entryPoints: [join(root, "bench", "bench.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outfile,
  // the addon loader uses require(); give the ESM bundle one
  banner: { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' },
  logLevel: "warning",
});
const args = process.argv.slice(2).filter((a) => a !== "--bundle-only");
if (!process.argv.includes("--bundle-only")) execFileSync(process.execPath, [outfile, ...(args.length ? args : ["--max-mib", "64"])], { stdio: "inherit" });
