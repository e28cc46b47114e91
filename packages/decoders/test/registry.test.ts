import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { DecoderLoadError, browserDecoders, factoryEntry, packageEntry } from "../src/index.js";
import { loadModuleDecoder, nodeDecoders, openDecoders } from "../src/node.js";

const here = path.dirname(fileURLToPath(import.meta.url));

describe("decoder registry", () => {
  it("lists the browser decoders, and vulkan only in the Node registry", () => {
    expect(browserDecoders.names).toEqual(["cpu", "webgpu"]);
    expect(nodeDecoders.names).toEqual(["cpu", "webgpu", "vulkan"]);
  });

  it("opens cpu from its package, under the registry name, with its formats", async () => {
    const cpu = await nodeDecoders.open("cpu");
    expect(cpu.name).toBe("cpu");
    expect(cpu.formats).toContain("f32");
    expect((await cpu.available()).ok).toBe(true);
    await expect(cpu.decode(new Uint8Array(3), { profile: "v1", shape: [1, 1] })).rejects.toMatchObject({ code: "SIZE_MISMATCH" });
  });

  it("a backend package that is not installed is unavailable, with the reason", async () => {
    const specifier = "@sgfp4/no-such-backend";
    const entry = packageEntry("ghost", specifier, () => import(/* @vite-ignore */ specifier));
    const d = await entry.open();
    const a = await d.available();
    expect(a).toEqual({ ok: false, reason: expect.stringContaining(`package ${specifier} is not installed`) });
    await expect(d.decode(new Uint8Array(), { profile: "v1", shape: [1, 1] })).rejects.toThrow(/unavailable/);
  });

  it("an unknown name throws; extra entries join through with()", async () => {
    await expect(nodeDecoders.open("nope")).rejects.toBeInstanceOf(DecoderLoadError);
    const reg = nodeDecoders.with(factoryEntry("zero", "test", () => ({ name: "whatever", formats: ["f32"], available: async () => ({ ok: true }), decode: async () => new Float32Array(1) })));
    expect(reg.names).toEqual(["cpu", "webgpu", "vulkan", "zero"]);
    expect((await reg.open("zero")).name).toBe("zero");
    const broken = await nodeDecoders.with(factoryEntry("broken", "test", () => ({}) as never)).open("broken");
    expect(await broken.available()).toMatchObject({ ok: false, reason: expect.stringContaining('no string "name"') });
  });

  it("openDecoders expands all, keeps order, loads module paths and refuses unknown names", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "sgfp4-decoders-"));
    try {
      // an old-style module: createConformanceBackend and no formats (read as f32 only)
      await writeFile(path.join(dir, "old.mjs"), `export function createConformanceBackend() { return { name: "old", available: async () => ({ ok: true }), decode: async () => new Float32Array(0) }; }`);
      await writeFile(path.join(dir, "bad.mjs"), `export default { name: "bad" };`);
      const ds = await openDecoders(["cpu", "all", "./old.mjs"], { cwd: dir });
      expect(ds.map((d) => d.name)).toEqual(["cpu", "webgpu", "vulkan", "old"]);
      expect(ds[3]!.formats).toEqual(["f32"]);
      await expect(loadModuleDecoder("./bad.mjs", dir)).rejects.toThrow(/available\(\)/);
      await expect(loadModuleDecoder("./none.mjs", dir)).rejects.toBeInstanceOf(DecoderLoadError);
      await expect(openDecoders(["cpu2"])).rejects.toThrow(/unknown decoder "cpu2"/);
      for (const d of ds) await d.close?.();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the main entry bundles for the browser (no node: imports)", async () => {
    const r = await build({ entryPoints: [path.join(here, "../src/index.ts")], bundle: true, platform: "browser", format: "esm", write: false, logLevel: "silent" });
    expect(r.errors).toEqual([]);
    expect(r.outputFiles[0]!.text).not.toMatch(/["']node:/);
  });
});
