/** A manifest folder onto the GPU: every tensor bit-exact; a changed container refused by name before any upload. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MANIFEST_FORMAT, MANIFEST_VERSION, decodedSha256, serializeManifest, sha256Hex, type Manifest, type Shape } from "@sgfp4/format";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { WebGpuDecoder } from "../src/decoder.js";
import { decodeModelFolder } from "../src/model-folder.js";
import { device, noGpu } from "./device.js";

const SHAPES: Shape[] = [[130, 70], [64, 256], [3, 200]];
const cases = SHAPES.map((shape, i) => ({ name: `blk.${i}.w`, ...generateValid(new Rng(4200 + i), { profile: i % 2 ? "v1" : "v2", shape }) }));
const folder = mkdtempSync(join(tmpdir(), "sgfp4-webgpu-model-"));
const manifest: Manifest = {
  format: MANIFEST_FORMAT,
  version: MANIFEST_VERSION,
  encoder: { name: "test", version: "0", settings: {} },
  tensors: cases.map((c, i) => ({ name: c.name, file: `t${i}.sgfp4`, profile: c.profile, shape: [...c.shape], dtype: "F32", sha256: { container: sha256Hex(c.bytes), decoded: decodedSha256(c.expected) } })),
};
cases.forEach((c, i) => writeFileSync(join(folder, `t${i}.sgfp4`), c.bytes));
writeFileSync(join(folder, "manifest.json"), serializeManifest(manifest));

describe.skipIf(noGpu)("decodeModelFolder", () => {
  const decoder = new WebGpuDecoder(device!);
  afterAll(() => {
    rmSync(folder, { recursive: true });
    device?.destroy();
  });

  it("decodes every tensor of the folder into one arena, bit-exact", async () => {
    const out = await decodeModelFolder(decoder, folder, { arena: true });
    expect(out.map((t) => t.name)).toEqual(cases.map((c) => c.name));
    for (const [i, t] of out.entries()) expect(firstBitDifference(await decoder.readBack(t.buffer, t.byteLength, t.offset), cases[i]!.expected)).toBe(-1);
    out[0]!.buffer.destroy();
  });

  it("refuses a container that does not match the manifest, naming the tensor", async () => {
    const changed = cases[1]!.bytes.slice();
    changed[changed.length - 1]! ^= 1;
    writeFileSync(join(folder, "t1.sgfp4"), changed);
    await expect(decodeModelFolder(decoder, folder)).rejects.toMatchObject({ code: "INVALID_MANIFEST", message: expect.stringContaining('tensor "blk.1.w"') });
  });
});

if (noGpu) it.skip(`decodeModelFolder: no adapter (${noGpu})`, () => {});
