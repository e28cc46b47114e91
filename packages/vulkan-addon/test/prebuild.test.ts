/**
 * The committed linux-x64 prebuild: built from the sources beside it (the source hash it reports
 * equals the hash of native/src, native/shaders and binding.gyp; after a native change, run
 * `pnpm run build:prebuild` in this package and commit the binary), and the glibc floor the README
 * and the load error state.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PREBUILT_GLIBC } from "../src/native.js";
// @ts-expect-error: a plain .mjs script without declarations
import { prebuilt, sourceHash } from "../scripts/native-sources.mjs";

describe("the committed prebuild", () => {
  it("exists", () => expect(existsSync(prebuilt as string)).toBe(true));

  it("was built from the current native sources", () => {
    const reported = execFileSync(process.execPath, ["-p", `require(${JSON.stringify(prebuilt)}).sourceHash`], { encoding: "utf8" }).trim();
    expect(reported, "stale prebuild: run `pnpm run build:prebuild` in packages/vulkan-addon and commit it").toBe((sourceHash as () => string)());
  });

  it(`needs glibc ${PREBUILT_GLIBC} at most (the documented floor)`, () => {
    const symbols = execFileSync("objdump", ["-T", prebuilt as string], { encoding: "utf8" });
    const versions = [...symbols.matchAll(/GLIBC_(\d+)\.(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    expect(versions.length).toBeGreaterThan(0);
    const newest = versions.reduce((a, b) => (b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]) ? b : a));
    expect(newest.join(".")).toBe(PREBUILT_GLIBC);
  });
});
