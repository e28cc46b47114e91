/**
 * Compiling this package's C programs for the tests with the system compiler ($CC or cc), warnings
 * as errors, and optionally under AddressSanitizer + UndefinedBehaviorSanitizer.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

export const pkgRoot = path.join(import.meta.dirname, "..");
export const repoRoot = path.join(pkgRoot, "..", "..");
export const CC = process.env.CC ?? "cc";
export const WARNINGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"];
export const SANITIZE = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"];

const outDir = mkdtempSync(path.join(tmpdir(), "sgfp4-c-"));

/** Compile `sources` (paths relative to the package) to an executable; throws with the compiler's output. */
export function compile(name: string, sources: string[], flags: string[]): string {
  const exe = path.join(outDir, name);
  execFileSync(CC, [...WARNINGS, ...flags, "-o", exe, ...sources.map((s) => path.resolve(pkgRoot, s))], { encoding: "utf8", stdio: "pipe" });
  return exe;
}

/** Why the compiler cannot build sanitized programs here, or null when it can. */
export function sanitizerUnavailable(): string | null {
  try {
    const probe = path.join(outDir, "probe.c");
    writeFileSync(probe, "int main(void) { return 0; }\n");
    const exe = path.join(outDir, "probe");
    execFileSync(CC, [...SANITIZE, "-o", exe, probe], { stdio: "pipe" });
    execFileSync(exe, { stdio: "pipe" });
    return null;
  } catch (e) {
    return `${CC} cannot build and run -fsanitize=address,undefined programs: ${String((e as Error).message).split("\n")[0]}`;
  }
}

/** The `sgfp4` CLI (dist/bin.js of @sgfp4/cli). */
export const cliBin = path.join(path.dirname(createRequire(import.meta.url).resolve("@sgfp4/cli/package.json")), "dist", "bin.js");
