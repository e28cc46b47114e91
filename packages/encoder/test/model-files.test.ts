/**
 * Model sources other than one safetensors file (sharded checkpoints, ONNX), the encode across
 * shards and its merge, and decode-model's checks of the unquantized files. Inputs are built by
 * hand here (a protobuf writer of a few lines for ONNX), never by the code under test.
 */
import { decode } from "@sgfp4/cpu-decoder";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { encodeModel } from "../src/model.js";
import { mergeParts } from "../src/merge.js";
import { onnxInitializers, spliceOnnx } from "../src/onnx.js";
import { decodeModel, verifyModel } from "../src/rebuild.js";
import { synthetic } from "../src/random.js";
import { readTensorBytes, readTensorIndex } from "../src/safetensors.js";
import { assignShards, parseShard } from "../src/shards.js";
import { f32, safetensors } from "./files.js";


let dir: string;
let sharded: string;
const w = [synthetic("gaussian", 96, 130, 11), synthetic("student-t", 64, 200, 12), synthetic("laplacian", 128, 64, 13), synthetic("row-scale", 70, 70, 14)];
const bias = synthetic("gaussian", 96, 1, 15);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sgfp4-files-"));
  sharded = join(dir, "ckpt");
  await mkdir(sharded);
  await writeFile(join(sharded, "model-00001-of-00002.safetensors"), safetensors([{ name: "b.weight", shape: [64, 200], data: f32(w[1]!) }, { name: "a.weight", shape: [96, 130], data: f32(w[0]!) }, { name: "a.bias", shape: [96], data: f32(bias) }], { format: "pt", note: "shard one" }));
  await writeFile(join(sharded, "model-00002-of-00002.safetensors"), safetensors([{ name: "c.weight", shape: [128, 64], data: f32(w[2]!) }, { name: "d.weight", shape: [70, 70], data: f32(w[3]!) }]));
  const weightMap = { "a.bias": "model-00001-of-00002.safetensors", "a.weight": "model-00001-of-00002.safetensors", "b.weight": "model-00001-of-00002.safetensors", "c.weight": "model-00002-of-00002.safetensors", "d.weight": "model-00002-of-00002.safetensors" };
  await writeFile(join(sharded, "model.safetensors.index.json"), JSON.stringify({ metadata: { total_size: 4 * (96 * 130 + 64 * 200 + 96 + 128 * 64 + 70 * 70) }, weight_map: weightMap }));
});

describe("sharded safetensors checkpoints", () => {
  it("round-trip to the same shard layout, names, shapes, dtypes and metadata", async () => {
    const out = join(dir, "enc-sharded");
    const r = await encodeModel(sharded, out, {});
    expect(r.encoded).toBe(4);
    expect((await verifyModel(out, { decode })).ok).toBe(true);
    const rebuilt = join(dir, "rebuilt-sharded");
    await decodeModel(out, rebuilt, { decode });
    expect((await readdir(rebuilt)).sort()).toEqual(["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json"]);
    const one = await readTensorIndex(join(rebuilt, "model-00001-of-00002.safetensors"));
    expect(one.tensors.map((t) => [t.name, t.dtype, t.shape])).toEqual([["b.weight", "F32", [64, 200]], ["a.weight", "F32", [96, 130]], ["a.bias", "F32", [96]]]);
    expect(one.metadata).toEqual({ format: "pt", note: "shard one" });
    const two = await readTensorIndex(join(rebuilt, "model-00002-of-00002.safetensors"));
    expect(two.tensors.map((t) => t.name)).toEqual(["c.weight", "d.weight"]);
    expect(two.metadata).toBeUndefined();
    const index = JSON.parse(await readFile(join(rebuilt, "model.safetensors.index.json"), "utf8"));
    expect(index).toEqual(JSON.parse(await readFile(join(sharded, "model.safetensors.index.json"), "utf8")));
    await expect(decodeModel(out, join(dir, "one-file.safetensors"), { decode })).rejects.toThrow(/the model is sharded \(2 files and an index\): give -o a folder/);
    // the passthrough bias is byte for byte the source's
    expect(Buffer.from(await readTensorBytes(one.path, one.tensors[2]!)).equals(Buffer.from(f32(bias)))).toBe(true);
  });

  it("the index file names the same model as its folder; one shard alone is refused with what to do", async () => {
    const a = join(dir, "enc-by-index");
    await encodeModel(join(sharded, "model.safetensors.index.json"), a, {});
    expect(await readFile(join(a, "manifest.json"), "utf8")).toBe(await readFile(join(dir, "enc-sharded", "manifest.json"), "utf8"));
    await expect(encodeModel(join(sharded, "model-00002-of-00002.safetensors"), join(dir, "never"), {})).rejects.toThrow(/one shard of a sharded checkpoint: pass its folder or .*model\.safetensors\.index\.json/);
  });
});

describe("encode --shard i/N and the merge", () => {
  it("balances weights deterministically", () => {
    // largest first to the lightest shard: 40 -> 0, 30 -> 1, 20 -> 1 (30 < 40), 10 -> 0 (40 < 50)
    expect(assignShards([10, 40, 30, 20], 2)).toEqual([0, 0, 1, 1]);
    expect(assignShards([5, 5, 5], 1)).toEqual([0, 0, 0]);
    expect(parseShard("2/3")).toEqual([2, 3]);
    expect(() => parseShard("3/3")).toThrow(/0 <= i < N/);
  });

  it("N shards merged give the one-process folder byte for byte; missing or foreign shards are refused", async () => {
    const single = join(dir, "one");
    await encodeModel(sharded, single, { profile: "v2" });
    const parts = [0, 1, 2].map((i) => join(dir, `part-${i}`));
    for (const [i, p] of parts.entries()) await encodeModel(sharded, p, { profile: "v2", shard: [i, 3] });
    expect(existsSync(join(parts[1]!, "manifest.json"))).toBe(false);
    const merged = join(dir, "merged");
    await mergeParts([parts[2]!, parts[0]!, parts[1]!], merged);
    const files = async (d: string) => [...(await readdir(d)), ...(await readdir(join(d, "tensors"))).map((f) => `tensors/${f}`)].sort();
    expect(await files(merged)).toEqual(await files(single));
    for (const f of await files(single)) if (f !== "tensors") expect(Buffer.compare(await readFile(join(merged, f)), await readFile(join(single, f))), f).toBe(0);
    await expect(mergeParts([parts[0]!, parts[1]!], join(dir, "m2"))).rejects.toThrow(/missing shard\(s\) 2\/3/);
    const other = join(dir, "part-other");
    await encodeModel(sharded, other, { profile: "v1", shard: [2, 3] });
    await expect(mergeParts([parts[0]!, parts[1]!, other], join(dir, "m3"))).rejects.toThrow(/another encode/);
  });
});

describe("decode-model refuses exactly when verify does, and takes only the listed passthrough tensors", () => {
  it("a changed passthrough file", async () => {
    const out = join(dir, "enc-pt");
    await encodeModel(sharded, out, {});
    const pt = join(out, "passthrough.safetensors");
    const bytes = await readFile(pt);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x40;
    await writeFile(pt, bytes);
    const report = await verifyModel(out, { decode });
    expect(report.ok).toBe(false);
    expect(report.tensors.find((t) => !t.ok)!.name).toBe("passthrough.safetensors");
    await expect(decodeModel(out, join(dir, "never-pt"), { decode })).rejects.toThrow(/passthrough\.safetensors: sha256/);
    expect(existsSync(join(dir, "never-pt"))).toBe(false);
  });

  it("an injected tensor (manifest hash updated to match) is not copied", async () => {
    const out = join(dir, "enc-inject");
    await encodeModel(sharded, out, {});
    const pt = join(out, "passthrough.safetensors");
    await writeFile(pt, safetensors([{ name: "a.bias", shape: [96], data: f32(bias) }, { name: "evil", shape: [2], data: new Uint8Array(8) }]));
    const m = JSON.parse(await readFile(join(out, "manifest.json"), "utf8"));
    const { createHash } = await import("node:crypto");
    m.stats.passthroughSha256 = createHash("sha256").update(await readFile(pt)).digest("hex");
    await writeFile(join(out, "manifest.json"), JSON.stringify(m));
    expect((await verifyModel(out, { decode })).ok).toBe(true);
    const rebuilt = join(dir, "rebuilt-inject");
    await decodeModel(out, rebuilt, { decode });
    const names = (await Promise.all((await readdir(rebuilt)).filter((f) => f.endsWith(".safetensors")).map((f) => readTensorIndex(join(rebuilt, f))))).flatMap((f) => f.tensors.map((t) => t.name));
    expect(names.sort()).toEqual(["a.bias", "a.weight", "b.weight", "c.weight", "d.weight"]);
  });
});

// --- ONNX: a model written with a minimal protobuf encoder ---
const varint = (n: number): number[] => {
  const out: number[] = [];
  do {
    out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n = Math.floor(n / 128);
  } while (n);
  return out;
};
const field = (f: number, bytes: Uint8Array | number[]): number[] => [...varint((f << 3) | 2), ...varint(bytes.length), ...bytes];
const num = (f: number, v: number): number[] => [...varint(f << 3), ...varint(v)];
const text = (s: string) => [...Buffer.from(s)];
const tensorProto = (name: string, dims: number[], raw: Uint8Array) => [...dims.flatMap((d) => num(1, d)), ...num(2, 1), ...field(8, text(name)), ...field(9, raw)];

describe("ONNX", () => {
  const a = synthetic("gaussian", 64, 96, 21);
  const small = Float32Array.of(1, 2, 3);
  // ModelProto { ir_version 8, producer "t", graph { node Constant(value = tensor), initializer W, initializer b } }
  const constant = field(5, [...field(1, text("value")), ...field(5, tensorProto("", [2, 2], f32(Float32Array.of(1, 2, 3, 4)))), ...num(20, 4)]);
  const graph = [...field(1, [...field(2, text("k")), ...field(3, text("const0")), ...field(4, text("Constant")), ...constant]), ...field(2, text("g")), ...field(5, tensorProto("W", [64, 96], f32(a))), ...field(5, tensorProto("b", [3], f32(small)))];
  const model = Uint8Array.from([...num(1, 8), ...field(2, text("t")), ...field(7, graph)]);

  it("lists initializers and Constant tensors with their raw_data ranges", () => {
    const inits = onnxInitializers(model);
    expect(inits.map((t) => [t.name, t.dims])).toEqual([["const0.value", [2, 2]], ["W", [64, 96]], ["b", [3]]]);
    const W = inits[1]!;
    expect(Buffer.from(model.subarray(W.rawStart, W.rawEnd)).equals(Buffer.from(f32(a)))).toBe(true);
  });

  it("splices raw_data, every other byte unchanged", () => {
    const inits = onnxInitializers(model);
    expect(Buffer.concat(spliceOnnx(model, new Map())).equals(Buffer.from(model))).toBe(true);
    const W = inits[1]!;
    const shorter = spliceOnnx(model, new Map([[W.rawStart!, new Uint8Array(0)]]));
    const back = Buffer.concat(shorter);
    const again = onnxInitializers(back);
    expect(again.map((t) => t.name)).toEqual(["const0.value", "W", "b"]);
    expect(again[1]!.rawEnd! - again[1]!.rawStart!).toBe(0);
    const restored = Buffer.concat(spliceOnnx(back, new Map([[again[1]!.rawStart!, f32(a)]])));
    expect(restored.equals(Buffer.from(model))).toBe(true);
  });

  it("encode -> verify -> decode-model: the same file except the encoded raw_data", async () => {
    const file = join(dir, "m.onnx");
    await writeFile(file, model);
    const out = join(dir, "enc-onnx");
    const r = await encodeModel(file, out, {});
    expect(r.manifest.tensors.map((t) => t.name)).toEqual(["W"]);
    expect((await verifyModel(out, { decode })).ok).toBe(true);
    const rebuilt = join(dir, "rebuilt.onnx");
    await decodeModel(out, rebuilt, { decode });
    const bytes = new Uint8Array(await readFile(rebuilt));
    expect(bytes.length).toBe(model.length);
    const W = onnxInitializers(model)[1]!;
    expect(Buffer.from(bytes.subarray(0, W.rawStart)).equals(Buffer.from(model.subarray(0, W.rawStart)))).toBe(true);
    expect(Buffer.from(bytes.subarray(W.rawEnd)).equals(Buffer.from(model.subarray(W.rawEnd)))).toBe(true);
    const container = await readFile(join(out, r.manifest.tensors[0]!.file));
    const expected = decode(container, { profile: "v2", shape: [64, 96] });
    expect(Buffer.from(bytes.subarray(W.rawStart, W.rawEnd)).equals(Buffer.from(expected.buffer))).toBe(true);
    await expect(decodeModel(out, join(dir, "x.onnx"), { decode, dtype: "bf16" })).rejects.toThrow(/float32 initializers/);
  });

  it("sharded: two parts merge to the one-process folder (skeleton from shard 0)", async () => {
    const file = join(dir, "m2.onnx");
    await writeFile(file, model);
    const one = join(dir, "onnx-one");
    await encodeModel(file, one, {});
    for (const i of [0, 1]) await encodeModel(file, join(dir, `onnx-part-${i}`), { shard: [i, 2] });
    const merged = join(dir, "onnx-merged");
    await mergeParts([join(dir, "onnx-part-1"), join(dir, "onnx-part-0")], merged);
    for (const f of ["manifest.json", "skeleton.onnx"]) expect(Buffer.compare(await readFile(join(merged, f)), await readFile(join(one, f))), f).toBe(0);
  });

  it("external data is refused with what to do", async () => {
    const ext = [...field(8, text("E")), ...num(2, 1), ...num(1, 4), ...field(13, [...field(1, text("location")), ...field(2, text("e.bin"))]), ...num(14, 1)];
    const file = join(dir, "ext.onnx");
    await writeFile(file, Uint8Array.from([...num(1, 8), ...field(7, field(5, ext))]));
    await expect(encodeModel(file, join(dir, "never-ext"), {})).rejects.toThrow(/tensor E keeps its data in an external file; ONNX external data is not supported/);
  });
});
