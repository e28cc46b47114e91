/**
 * Docs with runnable examples: every ```js block of the READMEs runs, against the built packages,
 * and exits 0. A block that cannot run here (browser only) is preceded by the line
 * `<!-- example: not run (reason) -->`.
 *
 * What a line prints is checked against its comment: in `console.log(x); // 1 0` the comment is
 * the expected output (whitespace inside brackets and braces ignored, `...` matches anything,
 * `A, then B` is what the line printed on its first and second run, e.g. in a loop). A comment
 * that starts with `e.g.` is an illustration of machine-dependent output and is not checked.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
const readmes = ["README.md", "packages/format/README.md", "packages/cpu-decoder/README.md", "packages/encoder/README.md", "packages/webgpu-decoder/README.md", "packages/vulkan-addon/README.md", "packages/decoders/README.md", "packages/c-decoder/README.md", "conformance/README.md", "apps/cli/README.md"]
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
const shim = join(import.meta.dirname, "console-shim.mjs");

/** Spacing that util.inspect adds and docs leave out: runs of whitespace, and inside brackets. */
const normalise = (s: string): string => s.replace(/\s+/g, " ").replace(/([[({]) /g, "$1").replace(/ ([\])}])/g, "$1").trim();
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Lines whose `// comment` differs from what they printed, as "line N: expected ... printed ...". */
function mismatches(code: string, printed: readonly { line: number; text: string }[]): string[] {
  const out: string[] = [];
  code.split("\n").forEach((src, i) => {
    const at = src.lastIndexOf("// ");
    if (!src.includes("console.log(") || at < 0 || at < src.indexOf("console.log(")) return;
    const comment = src.slice(at + 3).trim();
    if (comment.startsWith("e.g.")) return;
    const expected = comment.split(", then ").map(normalise);
    const got = printed.filter((p) => p.line === i + 1).map((p) => normalise(p.text));
    const ok = got.length === expected.length && expected.every((want, k) => new RegExp(`^${want.split("...").map(escape).join(".*")}$`).test(got[k]!));
    if (!ok) out.push(`line ${i + 1}: expected ${JSON.stringify(comment)}, printed ${JSON.stringify(got)}`);
  });
  return out;
}
const all = readmes.flatMap(examples);

describe("README examples run", () => {
  it("finds examples to run", () => expect(all.length).toBeGreaterThan(3));
  it.each(all.map((e) => [`${relative(root, e.file)}:${e.line}`, e] as const))("%s", (name, e) => {
    mkdirSync(scratch, { recursive: true });
    const path = join(scratch, name.replace(/[^a-z0-9]+/gi, "_") + ".mjs");
    writeFileSync(path, e.code + "\n");
    const log = `${path}.log.json`;
    try {
      execFileSync(process.execPath, ["--import", pathToFileURL(shim).href, path], {
        cwd: scratch,
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 120_000,
        encoding: "utf8",
        env: { ...process.env, SGFP4_EXAMPLE_FILE: pathToFileURL(path).href, SGFP4_EXAMPLE_LOG: log },
      });
    } catch (err) {
      const x = err as { stderr?: string; stdout?: string };
      throw new Error(`${name} failed:\n${x.stderr ?? ""}\n${x.stdout ?? ""}`);
    }
    const printed = JSON.parse(readFileSync(log, "utf8")) as { line: number; text: string }[];
    expect(mismatches(e.code, printed), `${name}: printed values differ from the comments`).toEqual([]);
  }, 130_000);
});

describe("printed-value comments", () => {
  const line = 'console.log(x); // ';
  it("match exactly, with ..., bracket spacing and `then`; and fail otherwise", () => {
    const run = (comment: string, ...texts: string[]) => mismatches(line + comment, texts.map((text) => ({ line: 1, text })));
    expect(run("Float32Array(2) [-1, -1]", "Float32Array(2) [ -1, -1 ]")).toEqual([]);
    expect(run("v2 1 1 { size: 64, ... }", "v2 1 1 {\n  size: 64,\n  mode: 0 }")).toEqual([]);
    expect(run("-4 3.5, then -16 14", "-4 3.5", "-16 14")).toEqual([]);
    expect(run("e.g. whatever", "something else")).toEqual([]);
    expect(run("1 0", "1 1")).toHaveLength(1);
    expect(run("true", "true", "false")).toHaveLength(1);
    expect(run("true")).toHaveLength(1); // printed nothing
  });
});
