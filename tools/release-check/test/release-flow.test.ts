/**
 * The changesets release flow, without publishing: `changeset version` on a scratch worktree of
 * HEAD bumps versions and writes changelogs, and `pnpm publish --dry-run` accepts every package.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../../..");
const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });

const pendingChangesets = readdirSync(join(root, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md");
const scratch = mkdtempSync(join(tmpdir(), "sgfp4-release-"));
afterAll(() => {
  try {
    run("git", ["worktree", "remove", "--force", scratch], root);
  } catch {
    rmSync(scratch, { recursive: true, force: true });
  }
});

describe("release flow (changesets), dry run", () => {
  it.skipIf(pendingChangesets.length === 0)("changeset version bumps the packages named in pending changesets and writes their changelogs", () => {
    run("git", ["worktree", "add", "--detach", scratch, "HEAD"], root);
    const committed = readdirSync(join(scratch, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md");
    const named = new Set<string>();
    for (const f of committed) {
      const front = readFileSync(join(scratch, ".changeset", f), "utf8").split("---")[1] ?? "";
      for (const m of front.matchAll(/"([^"]+)":\s*(patch|minor|major)/g)) named.add(m[1]!);
    }
    const before = new Map<string, string>();
    const dirOf = new Map<string, string>();
    for (const d of ["packages", "apps"].flatMap((p) => readdirSync(join(scratch, p)).map((n) => join(scratch, p, n))).concat(join(scratch, "conformance"), join(scratch, "golden-vectors"))) {
      if (!existsSync(join(d, "package.json"))) continue;
      const pkg = JSON.parse(readFileSync(join(d, "package.json"), "utf8"));
      before.set(pkg.name, pkg.version);
      dirOf.set(pkg.name, d);
    }
    run(join(root, "node_modules/.bin/changeset"), ["version"], scratch);
    for (const name of named) {
      const d = dirOf.get(name);
      expect(d, `changeset names unknown package ${name}`).toBeDefined();
      const after = JSON.parse(readFileSync(join(d!, "package.json"), "utf8")).version;
      expect(after, name).not.toBe(before.get(name));
      expect(readFileSync(join(d!, "CHANGELOG.md"), "utf8")).toContain(after);
    }
    // the changesets were consumed
    expect(readdirSync(join(scratch, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md")).toEqual([]);
  });

  it("pnpm publish --dry-run accepts every public package", () => {
    const out = run("pnpm", ["-r", "publish", "--dry-run", "--no-git-checks", "--json"], root);
    expect(out).not.toMatch(/ERR_PNPM/);
  }, 180_000);
});
