/** The CLI survives backends that crash or hang, reports those cases, and goes on. */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadVectorSet } from "@sgfp4/conformance";

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, "..", "dist", "cli.js");
const run = promisify(execFile);

describe("fuzz CLI isolation", () => {
  it("records crashes and hangs as findings, restarts the worker, finishes every case", async () => {
    const out = await mkdtemp(path.join(tmpdir(), "fuzz-crash-"));
    try {
      let stdout = "";
      let code = 0;
      try {
        ({ stdout } = await run(process.execPath, [cli, "--seed", "3", "--cases", "8", "--backends", path.join(here, "fixtures", "crashy-backend.mjs"), "--timeout-ms", "300", "--no-shrink", "--out", out, "--json"], { maxBuffer: 16 << 20 }));
      } catch (e) {
        code = (e as { code: number }).code;
        stdout = (e as { stdout: string }).stdout;
      }
      expect(code).toBe(1);
      expect(stdout).toMatch(/CRASH seed 3 case \d+: worker died \(signal SIGSEGV\)/);
      expect(stdout).toMatch(/CRASH seed 3 case \d+: hang: no answer within 5300 ms/);
      const summary = JSON.parse(stdout.slice(stdout.indexOf("\n{") + 1, stdout.lastIndexOf("}") + 1)) as { cases: number; restarts: number };
      expect(summary.cases).toBe(8);
      expect(summary.restarts).toBeGreaterThan(0);
      // crash candidates are a loadable vector set
      const set = await loadVectorSet(out);
      expect(set.vectors.length).toBeGreaterThan(0);
      expect(JSON.parse(await readFile(path.join(out, "index.json"), "utf8")).format).toBe("sgfp4-golden-vectors");
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 120_000);
});
