/**
 * The model commands end to end: encode a safetensors file (written by hand here, not by the
 * encoder), verify the attestation, rebuild a safetensors file, and refuse a tampered container.
 */
import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decode } from "@sgfp4/cpu-decoder";
import { parseManifest } from "@sgfp4/format";
import { readSafetensors, safetensors, sgfp4, tempDir } from "./helpers.js";

describe("sgfp4 encode / verify / decode-model", () => {
  it("round-trips a model and refuses a tampered container", async () => {
    const dir = await tempDir();
    const weight = Float32Array.from({ length: 130 * 70 }, (_, i) => Math.sin(i * 0.37) * (1 + (i % 7)));
    const bias = Float32Array.from({ length: 130 }, (_, i) => i / 8);
    const model = path.join(dir, "model.safetensors");
    await writeFile(model, safetensors([{ name: "layer.weight", shape: [130, 70], data: weight }, { name: "layer.bias", shape: [130], data: bias }]));
    const out = path.join(dir, "out");

    const enc = sgfp4(["encode", model, "-o", out, "--profile", "v2"]);
    expect(enc.status, enc.stderr).toBe(0);
    const manifest = parseManifest(await readFile(path.join(out, "manifest.json"), "utf8"));
    expect(manifest.tensors.map((t) => [t.name, t.shape])).toEqual([["layer.weight", [130, 70]]]);
    expect(manifest.passthrough?.tensors).toEqual(["layer.bias"]);

    expect(sgfp4(["verify", out]).status).toBe(0);

    const rebuilt = path.join(dir, "rebuilt.safetensors");
    const dec = sgfp4(["decode-model", out, "-o", rebuilt, "--dtype", "f32"]);
    expect(dec.status, dec.stderr).toBe(0);
    const tensors = readSafetensors(await readFile(rebuilt));
    expect(tensors.get("layer.bias")!.data).toEqual(new Uint8Array(bias.buffer));
    const container = await readFile(path.join(out, manifest.tensors[0]!.file));
    const w = decode(container, { profile: "v2", shape: [130, 70] });
    expect(tensors.get("layer.weight")!.shape).toEqual([130, 70]);
    expect(tensors.get("layer.weight")!.data).toEqual(new Uint8Array(w.buffer));

    // flip one payload bit (the last byte of a valid container is payload or its padding)
    const tampered = Uint8Array.from(container);
    tampered[tampered.length - 20] = tampered[tampered.length - 20]! ^ 0x10;
    await writeFile(path.join(out, manifest.tensors[0]!.file), tampered);
    const bad = sgfp4(["verify", out]);
    expect(bad.status).toBe(1);
    expect(bad.stdout + bad.stderr).toMatch(/layer\.weight/);
    const again = path.join(dir, "again.safetensors");
    expect(sgfp4(["decode-model", out, "-o", again]).status).not.toBe(0);
    expect((await readdir(dir)).includes("again.safetensors")).toBe(false);
  }, 120_000);
});
