/**
 * Docs with runnable examples: every ```js block of the READMEs runs, against the built packages,
 * and exits 0. A block that cannot run here (browser only) is preceded by the line
 * `<!-- example: not run (reason) -->`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
const readmes = ["README.md", "packages/format/README.md", "packages/cpu-decoder/README.md", "packages/encoder/README.md", "packages/webgpu-decoder/README.md", "packages/vulkan-addon/README.md", "packages/decoders/README.md", "conformance/README.md", "apps/cli/README.md"]
  .map((p) => join(root, p))
  .filter(existsSync);

interface Example { file: string; line: number; code: string }

function examples(file: string): Example[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(js|javascript|mjs)\s*$/.test(lines[i]!)) continue;
    const skipped = /<!-- example: not run/.test(lines[i - 1] ?? "") || /<!-- example: not run/.test(lines[i - 2] ?? "");
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith("```"); i++) body.push(lines[i]!);
    if (!skipped) out.push({ file, line: start + 1, code: body.join("\n") });
  }
  return out;
}

const scratch = join(import.meta.dirname, "..", ".examples");
const all = readmes.flatMap(examples);

describe("README examples run", () => {
  it("finds examples to run", () => expect(all.length).toBeGreaterThan(3));
  it.each(all.map((e) => [`${relative(root, e.file)}:${e.line}`, e] as const))("%s", (name, e) => {
    mkdirSync(scratch, { recursive: true });
    const path = join(scratch, name.replace(/[^a-z0-9]+/gi, "_") + ".mjs");
    writeFileSync(path, e.code + "\n");
    try {
      execFileSync(process.execPath, [path], { cwd: scratch, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000, encoding: "utf8" });
    } catch (err) {
      const x = err as { stderr?: string; stdout?: string };
      throw new Error(`${name} failed:\n${x.stderr ?? ""}\n${x.stdout ?? ""}`);
    }
  }, 130_000);
});
