/** The core must run in a browser: no node: imports, and it bundles for the browser platform. */
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const coreDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "../src/core");

describe("@sgfp4/conformance/core is runtime-independent", () => {
  it("no core file imports a node: module or a Node-only file of this package", async () => {
    const files = (await readdir(coreDir)).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(4);
    for (const f of files) {
      const text = await readFile(path.join(coreDir, f), "utf8");
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);
      for (const s of specifiers) {
        expect(s, `${f} imports ${s}`).not.toMatch(/^node:|^(fs|path|os|child_process|crypto|url|module)(\/|$)/);
        if (s.startsWith(".")) expect(s, `${f} imports ${s} from outside core/`).not.toMatch(/^\.\.\//);
      }
    }
  });

  it("bundles for the browser with its dependencies", async () => {
    const r = await build({ entryPoints: [path.join(coreDir, "index.ts")], bundle: true, platform: "browser", format: "esm", write: false, logLevel: "silent" });
    expect(r.errors).toEqual([]);
    const text = r.outputFiles[0]!.text;
    expect(text).toContain("sgfp4-golden-vectors");
    expect(text).not.toMatch(/["']node:/);
  });
});
