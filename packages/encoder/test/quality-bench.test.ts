/**
 * `pnpm bench:quality --quick` on one small input: it exits 0, and its table has a row for every
 * encoder setting and every baseline, each measured (finite SNR and bpw; no row skipped; every
 * container valid and bit-exact on the CPU decoder).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { BASELINES } from "../bench/baselines.mjs";
import { splice, type QualityResult, type QualityRow as Row } from "../bench/quality/report.mjs";

it("the quick quality benchmark measures every row", () => {
  const out = mkdtempSync(join(tmpdir(), "sgfp4-bench-quality-"));
  const bench = new URL("../bench/quality.mjs", import.meta.url).pathname;
  execFileSync(process.execPath, [bench, "--quick", "--input", "gaussian", "--size", "128", "--out", out], { stdio: ["ignore", "ignore", "pipe"], timeout: 120_000 });
  const result = JSON.parse(readFileSync(join(out, "quality.json"), "utf8")) as { rows: Row[] };
  const md = readFileSync(join(out, "quality.md"), "utf8");

  const settings = ["--bpw 3", "--bpw 3.5", "--bpw 4", "--bpw 4.25", "--bpw 4.5", "--bpw 5", "default"];
  expect(result.rows.filter((r) => r.method === "sgfp4").map((r) => r.setting)).toEqual(settings);
  expect(result.rows.filter((r) => r.method === "baseline").map((r) => r.name)).toEqual(BASELINES.map((b) => b.name));
  expect(BASELINES.length).toBe(15);
  for (const r of result.rows) {
    expect(r.input).toBe("gaussian");
    expect(r.skipped).toBeUndefined();
    expect(Number.isFinite(r.snrDb) && r.snrDb > 5).toBe(true);
    expect(r.bpw).toBeGreaterThan(2);
    expect(md).toContain(`| ${r.name} |`);
  }
  for (const r of result.rows.filter((x) => x.method === "sgfp4")) expect([r.invalid, r.mismatched]).toEqual([0, 0]);
  // rate control meets its targets from below
  for (const r of result.rows.filter((x) => x.setting.startsWith("--bpw"))) expect(r.bpw).toBeLessThanOrEqual(Number(r.setting.slice(6)) + 1e-9);
  expect(readFileSync(join(out, "bpw_snr.svg"), "utf8")).toContain("ggml Q4_K");
}, 180_000);

it("a run with an input that cannot be loaded fails", () => {
  const bench = new URL("../bench/quality.mjs", import.meta.url).pathname;
  expect(() => execFileSync(process.execPath, [bench, "--quick", "--input", "no-such-input"], { stdio: "ignore", timeout: 60_000 })).toThrow();
});

it("splice refreshes the marked blocks of a document and leaves the rest alone", () => {
  const result: QualityResult = {
    meta: { command: "pnpm bench:quality", date: "D", machine: "M", node: "20", encoderVersion: "0.1.0", commit: "abc", encoderOptions: {} },
    inputs: [{ name: "gaussian", description: "g" }],
    rows: [{ input: "gaussian", method: "baseline", name: "ggml Q4_0", setting: "ggml Q4_0", bpw: 4.5, snrDb: 21.44 }],
    vad: null,
  };
  const doc = "prose\n<!-- bench:quality at-4.5 -->\nold\n<!-- /bench:quality at-4.5 -->\n<!-- bench:quality task -->\nkept\n<!-- /bench:quality task -->\nend\n";
  const out = splice(doc, result);
  expect(out).toContain("| ggml Q4_0 | 21.44 (4.500) |\n<!-- /bench:quality at-4.5 -->");
  expect(out).not.toContain("\nold\n");
  expect(out.startsWith("prose\n") && out.endsWith("<!-- bench:quality task -->\nkept\n<!-- /bench:quality task -->\nend\n")).toBe(true);
});
