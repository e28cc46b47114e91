// The manifest names the encoder version that wrote it, read from this package's package.json
// (no constant to forget at release time), from src and from the built dist alike.
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeModel } from "../src/model.js";
import { synthetic } from "../src/random.js";
import { writeSafetensors } from "../src/safetensors.js";

const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as { name: string; version: string };
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe("encoder identity in the manifest", () => {
  it("equals package.json's name and version", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sgfp4-version-"));
    dirs.push(dir);
    const model = join(dir, "m.safetensors");
    const data = new Uint8Array(synthetic("gaussian", 64, 64, 1).buffer);
    await writeSafetensors(model, [{ name: "w", dtype: "F32", shape: [64, 64], byteLength: data.length, bytes: async () => data }]);
    await encodeModel(model, join(dir, "out"), { profile: "v1", threads: 1 });
    const manifest = JSON.parse(await readFile(join(dir, "out", "manifest.json"), "utf8"));
    expect(manifest.encoder).toMatchObject({ name: pkg.name, version: pkg.version });
  });

  it("the built package reads the same (dist/ beside package.json)", async () => {
    const { encoderPackage } = await import("../dist/index.js");
    expect(encoderPackage()).toEqual({ name: pkg.name, version: pkg.version });
  });
});
