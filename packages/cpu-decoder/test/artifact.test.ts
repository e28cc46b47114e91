import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KERNEL_SHARED_WASM_BASE64, KERNEL_TOOLCHAIN, KERNEL_WASM_BASE64 } from "../src/wasm-bytes.generated.js";

const root = join(import.meta.dirname, "..");

function installedClang(): string | null {
  try {
    return execFileSync("clang", ["--version"], { encoding: "utf8" }).split("\n")[0]!.trim();
  } catch {
    return null;
  }
}

describe("committed wasm artifact", () => {
  it("the embedded base64 equals the committed .wasm files", () => {
    expect(Buffer.from(KERNEL_WASM_BASE64, "base64").equals(readFileSync(join(root, "wasm/decode.wasm")))).toBe(true);
    expect(Buffer.from(KERNEL_SHARED_WASM_BASE64, "base64").equals(readFileSync(join(root, "wasm/decode-shared.wasm")))).toBe(true);
  });

  const clang = installedClang();
  it.skipIf(clang !== KERNEL_TOOLCHAIN)(`matches a rebuild from native/kernel.c (${KERNEL_TOOLCHAIN})`, () => {
    // Throws (exit 1) when a rebuild differs from what is committed.
    const out = execFileSync("node", [join(root, "scripts/build-wasm.mjs"), "--check"], { encoding: "utf8" });
    expect(out).toContain("matches");
  }, 120_000); // three clang runs, on a shared machine

  it("the main entry is browser-safe: no node: imports outside src/parallel.ts", () => {
    const src = join(root, "src");
    for (const f of readdirSync(src).filter((n) => n.endsWith(".ts") && n !== "parallel.ts")) {
      expect(readFileSync(join(src, f), "utf8"), f).not.toMatch(/from\s+["']node:|require\(/);
    }
  });
});
