import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { readmeWithTable, writeVectorSet } from "../src/build.js";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));
const committed = join(packageRoot, "vectors");
const fresh = mkdtempSync(join(tmpdir(), "sgfp4-vectors-"));
afterAll(() => rmSync(fresh, { recursive: true, force: true }));

describe("the builder reproduces the committed set", () => {
  writeVectorSet(fresh);
  const names = readdirSync(fresh).sort();

  it("writes the same file names", () => {
    expect(readdirSync(committed).sort()).toEqual(names);
  });

  it("writes every file byte for byte", () => {
    const differing = names.filter((n) => !readFileSync(join(fresh, n)).equals(readFileSync(join(committed, n))));
    expect(differing, "run `pnpm --filter @sgfp4/golden-vectors build-vectors` and review the diff").toEqual([]);
  });

  it("keeps the README's vector table current", () => {
    const readme = readFileSync(join(packageRoot, "README.md"), "utf8");
    expect(readmeWithTable(readme) === readme, "README table is stale: run build-vectors").toBe(true);
  });
});
