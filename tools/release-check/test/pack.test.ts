/**
 * Every publishable package could be published alone: `pnpm pack` ships its built entry points
 * and type declarations, its README, and no sources, tests or build debris.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
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

describe.each(packages.map((p) => [p.pkg.name as string, p]))("%s", (_name, { dir, pkg }) => {
  it("ships its entry points, declarations and README, and nothing from src or test", () => {
    const out = execFileSync("pnpm", ["pack", "--dry-run", "--json"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const files: string[] = JSON.parse(out.slice(out.indexOf("{"))).files.map((f: { path: string }) => f.path);
    expect(files).toContain("package.json");
    expect(files).toContain("README.md");
    const targets = exportTargets(pkg.exports).filter((t) => !t.includes("*")).map((t) => t.replace(/^\.\//, ""));
    expect(targets.length).toBeGreaterThan(0);
    for (const t of targets) expect(files, `${pkg.name} exports ${t}`).toContain(t);
    expect(targets.some((t) => t.endsWith(".d.ts"))).toBe(true);
    for (const bin of Object.values<string>(typeof pkg.bin === "string" ? { x: pkg.bin } : (pkg.bin ?? {}))) expect(files).toContain(bin.replace(/^\.\//, ""));
    expect(files.filter((f) => /^(src|test)\//.test(f) || f.endsWith(".map") || f.endsWith(".tsbuildinfo"))).toEqual([]);
    expect(pkg.type).toBe("module");
  });
});
