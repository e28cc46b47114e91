/**
 * "c": the single-header C decoder of @sgfp4/c-decoder (its sgfp4.h behind its
 * cli/sgfp4-decode.c) through the conformance command protocol, compiled on demand with the
 * system compiler ($CC or cc) under AddressSanitizer + UndefinedBehaviorSanitizer where it has
 * them (a sanitizer report aborts the decode, which the judge counts as a finding), else -O2.
 * The executable is cached in the temp folder under a hash of its sources and flags.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createCommandDecoder } from "@sgfp4/conformance";
import { cliSourcePath, headerPath } from "@sgfp4/c-decoder";
import type { Decoder } from "@sgfp4/format";

const WARNINGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"];
const SANITIZED = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"];

function build(cc: string, flags: string[], sources: { header: string; cli: string }): string {
  const hash = createHash("sha256").update([cc, ...flags].join(" ")).update(readFileSync(sources.header)).update(readFileSync(sources.cli)).digest("hex").slice(0, 16);
  const dir = path.join(tmpdir(), "sgfp4-fuzz-c");
  const exe = path.join(dir, `sgfp4-decode-${hash}`);
  if (existsSync(exe)) return exe;
  mkdirSync(dir, { recursive: true });
  const partial = `${exe}.${process.pid}`; // renamed into place: concurrent runs never see half a file
  execFileSync(cc, [...WARNINGS, ...flags, "-o", partial, sources.cli], { stdio: "pipe" });
  renameSync(partial, exe);
  return exe;
}

/** Compiles (or reuses) the decoder; throws with the compiler's reason when it cannot (the registry reports it unavailable). */
export function createCDecoder(opts: { timeoutMs?: number } = {}): Decoder {
  const cc = process.env.CC ?? "cc";
  const sources = { header: headerPath, cli: cliSourcePath };
  if (!existsSync(sources.header)) throw new Error(`${sources.header} is missing (it is generated: pnpm --filter @sgfp4/c-decoder build)`);
  let exe: string;
  let how = "sanitized (address, undefined)";
  try {
    exe = build(cc, SANITIZED, sources);
  } catch {
    how = "-O2 (no sanitizer runtime)";
    try {
      exe = build(cc, ["-O2"], sources);
    } catch (e) {
      const stderr = String((e as { stderr?: unknown }).stderr ?? "").trim();
      throw new Error(`cannot compile ${sources.cli} with ${cc}: ${stderr || (e as Error).message}`);
    }
  }
  const decoder = createCommandDecoder(`${JSON.stringify(exe)} {container} {profile} {rows} {cols} {output}`, { name: "c", timeoutMs: opts.timeoutMs ?? 30_000 });
  // the same object (isCommandDecoder knows it), with a detail that says how it was built
  return Object.assign(decoder, { available: async () => ({ ok: true as const, detail: `${exe} (${cc}, ${how})` }) });
}
