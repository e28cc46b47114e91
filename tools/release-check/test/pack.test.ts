/**
 * Every publishable package could be published alone: `pnpm pack` ships its built entry points,
 * type declarations with declaration maps whose sources ship too (go-to-definition lands in
 * src/), its README, the repository's LICENSE and an `engines` field, and no tests or build debris.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, posix, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
const dirs = ["packages", "apps"].flatMap((d) => readdirSync(join(root, d)).map((n) => join(root, d, n))).concat(join(root, "conformance"), join(root, "golden-vectors"));
const packages = dirs
  .filter((d) => existsSync(join(d, "package.json")))
  .map((dir) => ({ dir, pkg: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
  .filter(({ pkg }) => !pkg.private);

function exportTargets(exp: unknown): string[] {
  if (typeof exp === "string") return [exp];
  if (exp && typeof exp === "object") return Object.values(exp).flatMap(exportTargets);
  return [];
}

function packedFiles(dir: string): string[] {
  const out = execFileSync("pnpm", ["pack", "--dry-run", "--json"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return JSON.parse(out.slice(out.indexOf("{"))).files.map((f: { path: string }) => f.path);
}

describe.each(packages.map((p) => [p.pkg.name as string, p]))("%s", (_name, { dir, pkg }) => {
  it("ships its entry points, declarations and README, and nothing from src or test", () => {
    const files = packedFiles(dir);
    expect(files).toContain("package.json");
    expect(files).toContain("README.md");
    const targets = exportTargets(pkg.exports).filter((t) => !t.includes("*")).map((t) => t.replace(/^\.\//, ""));
    expect(targets.length).toBeGreaterThan(0);
    for (const t of targets) expect(files, `${pkg.name} exports ${t}`).toContain(t);
    expect(targets.some((t) => t.endsWith(".d.ts"))).toBe(true);
    for (const bin of Object.values<string>(typeof pkg.bin === "string" ? { x: pkg.bin } : (pkg.bin ?? {}))) expect(files).toContain(bin.replace(/^\.\//, ""));
    expect(files.filter((f) => /^test\//.test(f) || (f.endsWith(".map") && !f.endsWith(".d.ts.map")) || f.endsWith(".tsbuildinfo"))).toEqual([]);
    expect(pkg.type).toBe("module");
  });

  it("ships the repository's LICENSE and says which Node it needs", () => {
    const files = packedFiles(dir);
    expect(files).toContain("LICENSE");
    expect(readFileSync(join(dir, "LICENSE"), "utf8"), "package LICENSE differs from the repository's").toBe(readFileSync(join(root, "LICENSE"), "utf8"));
    expect(pkg.license).toBe("Apache-2.0");
    expect(pkg.engines?.node).toMatch(/^>=\s*\d+/);
  });

  it("declaration maps point at sources that ship", () => {
    const files = packedFiles(dir);
    const maps = files.filter((f) => f.endsWith(".d.ts.map"));
    expect(maps.length, "no declaration maps (declarationMap in tsconfig.base.json)").toBeGreaterThan(0);
    const missing = maps.flatMap((m) => (JSON.parse(readFileSync(join(dir, m), "utf8")).sources as string[]).map((src) => posix.join(posix.dirname(m), src)).filter((src) => !files.includes(src)));
    expect(missing).toEqual([]);
  });
});
