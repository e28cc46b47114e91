/**
 * Failure paths that need a fresh process (the Vulkan instance is per process): a missing
 * loader, no device, device selection; and hostile calls straight into the native addon.
 */
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeV1, writeV2 } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { nativeAddon } from "../src/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Each child creates a Vulkan instance: about 0.4 s alone, several seconds on a loaded machine. */
const CHILD_TESTS = { timeout: 60_000 };

/** Runs info() in a child with extra environment; returns what it printed (JSON). */
function childInfo(env: Record<string, string>): { ok: boolean; code?: string; reason?: string; message?: string; name?: string; selectedBy?: string } {
  const script = `
    const addon = require("node-gyp-build")(${JSON.stringify(root)});
    try { const i = addon.info(); console.log(JSON.stringify({ ok: true, name: i.name, selectedBy: i.selectedBy })); }
    catch (e) { console.log(JSON.stringify({ ok: false, code: e.code, reason: e.reason, message: e.message })); }`;
  const out = execFileSync(process.execPath, ["-e", script], { cwd: root, env: { ...process.env, ...env }, encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop()!);
}

describe("missing pieces give one clear error", CHILD_TESTS, () => {
  it("no Vulkan loader: says what is missing and how to install it", () => {
    const r = childInfo({ SGFP4_VULKAN_LOADER: "/nonexistent/libvulkan.so.1" });
    expect(r).toMatchObject({ ok: false, code: "BACKEND_FAILURE", reason: "no-loader" });
    expect(r.message).toContain("/nonexistent/libvulkan.so.1");
    expect(r.message).toContain("apt-get install libvulkan1 mesa-vulkan-drivers");
  });

  it("no device (no driver manifests)", () => {
    const r = childInfo({ VK_DRIVER_FILES: "/nonexistent/icd.json", VK_ICD_FILENAMES: "/nonexistent/icd.json" });
    expect(r).toMatchObject({ ok: false, code: "BACKEND_FAILURE", reason: "no-device" });
    expect(r.message).toContain("mesa-vulkan-drivers");
  });

  it("the wrapper's availability() reports the reason instead of throwing", () => {
    const script = `import(${JSON.stringify(join(root, "dist", "index.js"))}).then(async (m) => {
      const a = await m.createConformanceBackend().available(); console.log(JSON.stringify(a)); })`;
    const out = execFileSync(process.execPath, ["-e", script], { cwd: root, env: { ...process.env, SGFP4_VULKAN_LOADER: "/nonexistent/libvulkan.so.1" }, encoding: "utf8" });
    const a = JSON.parse(out.trim()) as { ok: boolean; reason: string };
    expect(a.ok).toBe(false);
    expect(a.reason).toContain("apt-get install libvulkan1");
  });
});

describe("device selection", CHILD_TESTS, () => {
  it("SGFP4_VULKAN_DEVICE picks by index or name substring, and names the choices when nothing matches", () => {
    const byIndex = childInfo({ SGFP4_VULKAN_DEVICE: "0" });
    expect(byIndex).toMatchObject({ ok: true, selectedBy: "SGFP4_VULKAN_DEVICE" });
    const byName = childInfo({ SGFP4_VULKAN_DEVICE: byIndex.name!.slice(0, 4).toUpperCase() });
    expect(byName).toMatchObject({ ok: true, name: byIndex.name });
    const none = childInfo({ SGFP4_VULKAN_DEVICE: "no-such-device-xyz" });
    expect(none).toMatchObject({ ok: false, code: "BACKEND_FAILURE", reason: "no-device" });
    expect(none.message).toContain(byIndex.name);
  });

  it("an option overrides the environment", () => {
    const name = nativeAddon().info({}).name;
    expect(nativeAddon().info({ device: name.slice(0, 3) }).name).toBe(name);
    expect(() => nativeAddon().info({ device: "99" })).toThrow(/no Vulkan device matches/);
  });
});

describe("hostile calls into the native addon (wrapper bypassed)", () => {
  const addon = () => nativeAddon();
  const codeOf = (f: () => unknown) => {
    try {
      f();
      return "OK";
    } catch (e) {
      return (e as { code?: string }).code;
    }
  };
  const v1 = writeV1({ shape: [1, 1], blocks: [{ mode: 0, scaleBits: 0x3c00, biasBits: 0, codes: new Array(4096).fill(1) }] });

  it("re-checks arguments", () => {
    expect(codeOf(() => addon().decodeInto(v1, "v1", 1, 1, new Float32Array(2)))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => addon().decodeInto(v1, "v3" as "v1", 1, 1, new Float32Array(1)))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => addon().decodeInto(v1, "v1", -1, 1, new Float32Array(1)))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => addon().decodeInto(v1, "v1", NaN, 1, new Float32Array(1)))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => addon().decodeInto(v1, "v1", 1e6, 1e6, new Float32Array(1)))).toBe("LIMIT_EXCEEDED");
    expect(codeOf(() => (addon().decodeInto as (...a: unknown[]) => void)([1, 2], "v1", 1, 1, new Float32Array(1)))).toBe("INVALID_ARGUMENT");
    expect(codeOf(() => addon().decodeInto(v1, "v1", 1, 1, new Float64Array(1) as unknown as Float32Array))).toBe("INVALID_ARGUMENT");
  });

  it("re-checks the stream itself", () => {
    const bad = v1.slice();
    bad[4] = 0x04; // v1 offset flag bit 2
    expect(codeOf(() => addon().decodeInto(bad, "v1", 1, 1, new Float32Array(1)))).toBe("RESERVED_BITS");
    const v2 = writeV2({ shape: [1, 1], records: [{ layout: 0, leaves: [{ mode: 0, scaleBits: 0x3c00, biasBits: 0, codes: new Array(4096).fill(1) }] }] });
    const huge = v2.slice();
    new DataView(huge.buffer).setUint32(16, 0x7ffffff0, true); // record offset far past the end
    expect(codeOf(() => addon().decodeInto(huge, "v2", 1, 1, new Float32Array(1)))).toBe("OFFSET_OUT_OF_RANGE");
    expect(codeOf(() => addon().decodeInto(v2.subarray(0, v2.length - 1), "v2", 1, 1, new Float32Array(1)))).toBe("TRUNCATED");
    const out = new Float32Array(1);
    addon().decodeInto(v2, "v2", 1, 1, out);
    expect(out[0]).toBe(1);
  });
});
