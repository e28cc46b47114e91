/**
 * The C decoder (cli/sgfp4-decode.c over sgfp4.h) through `sgfp4 conformance --backend-cmd`, the
 * way a native engine's CI would run it: every golden vector of @sgfp4/golden-vectors must decode
 * bit for bit or be rejected with its exact code. Built twice: optimized with warnings as errors,
 * and under AddressSanitizer + UndefinedBehaviorSanitizer (any report aborts the process, which
 * the runner counts as a failure).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { vectorsDir } from "@sgfp4/golden-vectors";
import { describe, expect, it } from "vitest";
import { SANITIZE, cliBin, compile, sanitizerUnavailable } from "./native.js";

const run = promisify(execFile);

interface Report {
  vectorCount: number;
  totals: { passed: number; failed: number; skipped: number };
  backends: { name: string; cases: { vector: string; status: string; failure?: { message: string } }[] }[];
}

async function conformance(exe: string): Promise<{ report: Report; exitCode: number; stdout: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "c-conformance-"));
  try {
    const reportFile = path.join(dir, "report.json");
    const args = [cliBin, "conformance", "--vectors", vectorsDir, "--backend-cmd", `${exe} {container} {profile} {rows} {cols} {output}`, "--report", `json=${reportFile}`, "--jobs", "2"];
    let exitCode = 0;
    let stdout = "";
    try {
      ({ stdout } = await run(process.execPath, args, { maxBuffer: 16 << 20 }));
    } catch (e) {
      exitCode = (e as { code?: number }).code ?? -1;
      stdout = (e as { stdout?: string }).stdout ?? "";
    }
    return { report: JSON.parse(await readFile(reportFile, "utf8")) as Report, exitCode, stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function expectAllPassed({ report, exitCode, stdout }: Awaited<ReturnType<typeof conformance>>): void {
  const failures = report.backends.flatMap((b) => b.cases.filter((c) => c.status !== "passed").map((c) => `${c.vector}: ${c.failure?.message ?? c.status}`));
  expect(failures, stdout).toEqual([]);
  expect(report.vectorCount).toBeGreaterThan(50);
  expect(report.totals).toEqual({ passed: report.vectorCount, failed: 0, skipped: 0 });
  expect(exitCode).toBe(0);
}

describe("sgfp4-decode (C) through sgfp4 conformance --backend-cmd", () => {
  it("passes every golden vector (-O2 -Wall -Wextra -Werror)", async () => {
    expectAllPassed(await conformance(compile("sgfp4-decode", ["cli/sgfp4-decode.c"], ["-O2"])));
  }, 300_000);

  const noSanitizer = sanitizerUnavailable();
  it.skipIf(noSanitizer !== null)(`passes every golden vector under -fsanitize=address,undefined${noSanitizer ? ` (skipped: ${noSanitizer})` : ""}`, async () => {
    expectAllPassed(await conformance(compile("sgfp4-decode-asan", ["cli/sgfp4-decode.c"], SANITIZE)));
  }, 300_000);
});
