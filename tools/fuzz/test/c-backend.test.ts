/** Backend "c" (the C decoder of @sgfp4/c-decoder): without a working compiler it is reported unavailable, with the reason. */
import { afterEach, describe, expect, it } from "vitest";
import { loadBackends } from "../src/index.js";

const savedCC = process.env.CC;
afterEach(() => {
  if (savedCC === undefined) delete process.env.CC;
  else process.env.CC = savedCC;
});

describe("fuzz backend c", () => {
  it("is unavailable, naming the compiler and why, when $CC cannot build it", async () => {
    process.env.CC = "/nonexistent/cc";
    const loaded = await loadBackends(["c"]);
    expect(loaded.ready).toEqual([]);
    expect(loaded.unavailable).toHaveLength(1);
    expect(loaded.unavailable[0]!.name).toBe("c");
    expect(loaded.unavailable[0]!.reason).toMatch(/cannot compile .*sgfp4-decode\.c with \/nonexistent\/cc: .*ENOENT/);
  });
});
