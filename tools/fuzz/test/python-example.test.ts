/**
 * The worked example of examples/python-decoder, run the way its README tells a backend
 * implementer to: the `sgfp4 conformance` CLI with --backend-cmd over the repository's golden
 * vectors. Every vector (decodes bit for bit, rejects with the exact code) must pass.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../src/index.js";

const run = promisify(execFile);
const cliBin = path.join(path.dirname(createRequire(import.meta.url).resolve("@sgfp4/cli/package.json")), "dist", "bin.js");
const TEMPLATE = "python3 examples/python-decoder/sgfp4_decode.py {container} {profile} {rows} {cols} {output}";

interface Report {
  vectorCount: number;
  ok: boolean;
  totals: { passed: number; failed: number; skipped: number };
  backends: { name: string; cases: { vector: string; status: string; failure?: { message: string } }[] }[];
}

describe("examples/python-decoder through sgfp4 conformance --backend-cmd", () => {
  it("passes every golden vector", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "py-example-"));
    try {
      const reportFile = path.join(dir, "report.json");
      let exitCode = 0;
      let stdout = "";
      try {
        ({ stdout } = await run(process.execPath, [cliBin, "conformance", "--backend-cmd", TEMPLATE, "--report", `json=${reportFile}`], { cwd: repoRoot(), maxBuffer: 16 << 20 }));
      } catch (e) {
        exitCode = (e as { code?: number }).code ?? -1;
        stdout = (e as { stdout?: string }).stdout ?? "";
      }
      const report = JSON.parse(await readFile(reportFile, "utf8")) as Report;
      const failures = report.backends.flatMap((b) => b.cases.filter((c) => c.status !== "passed").map((c) => `${c.vector}: ${c.failure?.message ?? c.status}`));
      expect(failures, stdout).toEqual([]);
      expect(report.vectorCount).toBeGreaterThan(50);
      expect(report.totals).toEqual({ passed: report.vectorCount, failed: 0, skipped: 0 });
      expect(exitCode).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
