#!/usr/bin/env node
// Committed launcher for dist/bin.js: pnpm links workspace bins at install time, before
// `pnpm build` has produced dist/, and skips (with a warning) a bin whose file is missing.
import("../dist/bin.js").catch((e) => {
  if (e && e.code === "ERR_MODULE_NOT_FOUND" && String(e.message).includes("dist/bin.js")) {
    process.stderr.write("error: sgfp4 is not built yet: run `pnpm build` in the repository root (or `pnpm --filter @sgfp4/cli... build`)\n");
  } else process.stderr.write(`error: ${e && e.stack ? e.stack : e}\n`);
  process.exitCode = 1;
});
