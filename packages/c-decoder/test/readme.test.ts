/** The README's C example, compiled (warnings as errors) and run on golden vectors. */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { vectorsDir } from "@sgfp4/golden-vectors";
import { describe, expect, it } from "vitest";
import { compile, pkgRoot } from "./native.js";

const readme = readFileSync(path.join(pkgRoot, "README.md"), "utf8");
const example = /```c\n([\s\S]*?)```/.exec(readme)?.[1];

interface Vector {
  container: string;
  shape: [number, number];
  expect: { decode?: { output: string }; reject?: string };
}
const vector = (id: string) => JSON.parse(readFileSync(path.join(vectorsDir, `${id}.json`), "utf8")) as Vector;

describe("README example", () => {
  it("compiles and decodes / rejects as the README says", () => {
    expect(example).toBeDefined();
    const file = path.join(mkdtempSync(path.join(tmpdir(), "sgfp4-readme-")), "example.c");
    writeFileSync(file, example!);
    const exe = compile("readme-example", [file], ["-O2", "-I", pkgRoot]);

    const ok = vector("v2-all-layouts");
    const first = readFileSync(path.join(vectorsDir, ok.expect.decode!.output)).readFloatLE(0);
    const out = execFileSync(exe, [path.join(vectorsDir, ok.container), String(ok.shape[0]), String(ok.shape[1])], { encoding: "utf8" });
    expect(out).toBe(`w[0][0] = ${first}\n`);

    const bad = vector("v2-reject-truncated-fixed-header");
    const r = spawnSync(exe, [path.join(vectorsDir, bad.container), String(bad.shape[0]), String(bad.shape[1])], { encoding: "utf8" });
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(new RegExp(`^error: ${bad.expect.reject}: `));
  }, 60_000);
});
