#!/usr/bin/env node
// Writes the leaf-table contract in the kernels' languages to generated/ (committed, shipped in
// the package) from the built definition in dist/. `--check` exits 1 if a committed file differs.
// Run by `pnpm build`; test/contract-generated.test.ts fails on a stale file too.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONTRACT_FILES, emitContract } from "../dist/emit.js";

const out = join(dirname(fileURLToPath(import.meta.url)), "..", "generated");
const files = Object.entries(CONTRACT_FILES).map(([lang, name]) => [join(out, name), emitContract(lang)]);

if (process.argv.includes("--check")) {
  const read = (f) => { try { return readFileSync(f, "utf8"); } catch { return null; } };
  const stale = files.filter(([f, text]) => read(f) !== text).map(([f]) => f);
  if (stale.length) {
    console.error(`stale generated contract files (run pnpm --filter @sgfp4/format build):\n  ${stale.join("\n  ")}`);
    process.exit(1);
  }
  console.log("generated contract files are current");
} else {
  mkdirSync(out, { recursive: true });
  for (const [f, text] of files) writeFileSync(f, text);
  console.log(`wrote ${files.map(([f]) => f).join(", ")}`);
}
