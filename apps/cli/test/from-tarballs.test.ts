/**
 * Issue 17, "conformance from the registry": packs the packages a backend implementer installs
 * (`pnpm pack`, as they are published), installs the tarballs with npm in an empty folder and
 * runs `npx @sgfp4/cli conformance` there on the published golden vectors, against the CPU
 * backend and the Python example decoder (--backend-cmd), with a JUnit report.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
/** What `npm install @sgfp4/cli` brings (the CLI's @sgfp4 dependencies and optional dependencies, transitively). */
const PACKAGES = ["packages/format", "packages/cpu-decoder", "packages/encoder", "packages/decoders", "packages/webgpu-decoder", "packages/vulkan-addon", "golden-vectors", "conformance", "apps/cli"];
const PYTHON_TEMPLATE = `python3 ${JSON.stringify(path.join(repo, "examples/python-decoder/sgfp4_decode.py"))} {container} {profile} {rows} {cols} {output}`;
const vectorCount = (JSON.parse(readFileSync(path.join(repo, "golden-vectors/vectors/index.json"), "utf8")) as { vectors: string[] }).vectors.length;

function run(cmd: string, args: string[], cwd: string, timeout = 120_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout, env: { ...process.env, npm_config_update_notifier: "false" } });
  if (r.error) throw r.error;
  return r;
}

let root: string;
let app: string;

beforeAll(async () => {
  root = await tempDir();
  const tarballs = path.join(root, "tarballs");
  app = path.join(root, "app");
  await mkdir(tarballs);
  await mkdir(app);
  for (const p of PACKAGES) {
    const r = run("pnpm", ["pack", "--pack-destination", tarballs], path.join(repo, p));
    expect(r.status, `pnpm pack in ${p}: ${r.stderr}`).toBe(0);
  }
  await writeFile(path.join(app, "package.json"), JSON.stringify({ name: "implementer", private: true }));
  const files = (await readdir(tarballs)).map((f) => path.join(tarballs, f));
  const r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", ...files], app);
  expect(r.status, `npm install: ${r.stderr}`).toBe(0);
}, 150_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("from packed tarballs in an empty folder", () => {
  it("npx @sgfp4/cli conformance runs every published vector on cpu and on the Python decoder, with JUnit", async () => {
    const r = run("npx", ["@sgfp4/cli", "conformance", "--backend", "cpu", "--backend-cmd", PYTHON_TEMPLATE, "--jobs", "4", "--report", "junit=report.xml", "--json"], app, 150_000);
    expect(r.stderr).toBe("");
    const doc = JSON.parse(r.stdout);
    expect(doc.vectors.package).toBe("@sgfp4/golden-vectors@" + (JSON.parse(readFileSync(path.join(repo, "golden-vectors/package.json"), "utf8")) as { version: string }).version);
    expect(doc.vectors.dir).toBe(path.join(app, "node_modules/@sgfp4/golden-vectors/vectors"));
    expect(doc.vectors.count).toBe(vectorCount);
    expect(doc.rows.map((x: { backend: string; format: string; passed: number; failed: number }) => [x.backend, x.format, x.passed, x.failed])).toEqual([
      ["cpu", "f32", vectorCount, 0],
      ["cpu", "f16", vectorCount, 0],
      ["cpu", "bf16", vectorCount, 0],
      ["cmd", "f32", vectorCount, 0],
    ]);
    expect(doc.ok).toBe(true);
    expect(r.status).toBe(0);
    const junit = await readFile(path.join(app, "report.xml"), "utf8");
    expect(junit).toContain(`<testsuite name="cpu" tests="${vectorCount}" failures="0"`);
    expect(junit).toContain(`<testsuite name="cpu f16" tests="${vectorCount}" failures="0"`);
    expect(junit).toContain(`<testsuite name="cmd" tests="${vectorCount}" failures="0"`);
  }, 180_000);

  it("a backend that cannot run here is reported unavailable with what to install, and a run of only that fails", () => {
    // @sgfp4/webgpu-decoder comes with the CLI, the Node WebGPU engine (the webgpu package, Dawn) does not
    const r = run("npx", ["@sgfp4/cli", "conformance", "--backend", "webgpu", "--filter", "v1-crop"], app);
    expect(r.stdout).toMatch(/^webgpu\s+f32\s+unavailable\s+0\s+0\s+\d+\s+\S.*'webgpu' package/m);
    expect(r.stdout).toMatch(/FAIL: no case ran/);
    expect(r.status).toBe(1);
  });
});
