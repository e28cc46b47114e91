import { decode } from "@sgfp4/cpu-decoder";
import { floatToHalf, float32Bits } from "@sgfp4/format";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { encodeModel, encodedShape } from "../src/model.js";
import { decodeModel, verifyModel } from "../src/rebuild.js";
import { synthetic } from "../src/random.js";
import { readTensorBytes, readTensorIndex, toFloat32 } from "../src/safetensors.js";
import { f32, safetensors as file } from "./files.js";

const safetensors = (tensors: Parameters<typeof file>[0]) => file(tensors, { format: "pt" });

const f16 = (a: Float32Array) => new Uint8Array(Uint16Array.from(a, (v) => floatToHalf(v)).buffer);
const bf16 = (a: Float32Array) => new Uint8Array(Uint16Array.from(a, (v) => float32Bits(v) >>> 16).buffer); // truncation: exact in BF16 afterwards

let dir: string;
let model: string;
const w1 = synthetic("row-scale", 96, 200, 1);
const w2 = synthetic("student-t", 128, 64, 2);
const w3 = synthetic("gaussian", 64, 96, 3);
const conv = synthetic("laplacian", 16 * 8 * 3 * 3, 1, 4); // [16, 8, 3, 3]
const bias = synthetic("gaussian", 96, 1, 5);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sgfp4-model-"));
  model = join(dir, "model.safetensors");
  await writeFile(
    model,
    safetensors([
      { name: "layer.0.weight", dtype: "F32", shape: [96, 200], data: f32(w1) },
      { name: "layer.1.weight", dtype: "F16", shape: [128, 64], data: f16(w2) },
      { name: "layer.2.weight", dtype: "BF16", shape: [64, 96], data: bf16(w3) },
      { name: "conv.weight", dtype: "F32", shape: [16, 8, 3, 3], data: f32(conv) },
      { name: "layer.0.bias", dtype: "F32", shape: [96], data: f32(bias) },
      { name: "step", dtype: "I64", shape: [1], data: new Uint8Array(8) },
    ]),
  );
});

describe("model round trip: encode -> decode-model -> verify", () => {
  for (const profile of ["v1", "v2"] as const) {
    it(profile, async () => {
      const out = join(dir, `out-${profile}`);
      const r = await encodeModel(model, out, { profile });
      expect(r.encoded).toBe(4);
      expect(r.passthrough).toBe(2);
      const m = JSON.parse(await readFile(join(out, "manifest.json"), "utf8"));
      const convEntry = m.tensors.find((t: { name: string }) => t.name === "conv.weight");
      expect(convEntry.shape).toEqual([16, 72]);
      expect(convEntry.originalShape).toEqual([16, 8, 3, 3]);
      expect(m.passthrough.tensors.sort()).toEqual(["layer.0.bias", "step"]);
      // 96x200 pads to 128x256 (32768 stored weights); two rows joined, 48x400 pads to 64x448 (28672)
      const l0Entry = m.tensors.find((t: { name: string }) => t.name === "layer.0.weight");
      expect(l0Entry.shape).toEqual([48, 400]);
      expect(l0Entry.originalShape).toEqual([96, 200]);
      expect(m.tensors.find((t: { name: string }) => t.name === "layer.1.weight").originalShape).toBeUndefined();

      const report = await verifyModel(out, { decode });
      expect(report.ok).toBe(true);

      const rebuilt = join(dir, `rebuilt-${profile}.safetensors`);
      await decodeModel(out, rebuilt, { decode, dtype: "f32" });
      const idx = await readTensorIndex(rebuilt);
      const byName = new Map(idx.tensors.map((t) => [t.name, t]));
      expect(byName.get("conv.weight")!.shape).toEqual([16, 8, 3, 3]);
      expect(byName.get("layer.0.weight")!.shape).toEqual([96, 200]);
      expect(byName.get("layer.1.weight")!.dtype).toBe("F32");
      // the rebuilt tensor is the decoder's output of the container, bit for bit
      const l0 = toFloat32(await readTensorBytes(rebuilt, byName.get("layer.0.weight")!), "F32");
      const dec = decode(await readFile(join(out, l0Entry.file)), { profile, shape: [48, 400] });
      expect(Buffer.from(l0.buffer).equals(Buffer.from(dec.buffer))).toBe(true);
      // close to the original weights
      let err = 0;
      let sig = 0;
      l0.forEach((v, i) => {
        err += (v - w1[i]!) ** 2;
        sig += w1[i]! ** 2;
      });
      expect(10 * Math.log10(sig / err)).toBeGreaterThan(12);
      // passthrough tensors are byte-identical
      const b = toFloat32(await readTensorBytes(rebuilt, byName.get("layer.0.bias")!), "F32");
      expect(Array.from(b)).toEqual(Array.from(bias));
      expect(byName.get("step")!.dtype).toBe("I64");

      const half = join(dir, `rebuilt-${profile}-bf16.safetensors`);
      await decodeModel(out, half, { decode, dtype: "bf16" });
      expect((await readTensorIndex(half)).tensors.find((t) => t.name === "layer.2.weight")!.dtype).toBe("BF16");
    });
  }

  it("verify fails on a tampered container, decode-model refuses and writes nothing", async () => {
    const out = join(dir, "out-tamper");
    await encodeModel(model, out, {});
    const m = JSON.parse(await readFile(join(out, "manifest.json"), "utf8"));
    const f = join(out, m.tensors[1].file);
    const bytes = await readFile(f);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
    await writeFile(f, bytes);
    const report = await verifyModel(out, { decode });
    expect(report.ok).toBe(false);
    expect(report.tensors.filter((t) => !t.ok).map((t) => t.name)).toEqual(["layer.1.weight"]);
    const target = join(dir, "never.safetensors");
    await expect(decodeModel(out, target, { decode })).rejects.toThrow(/sha256/);
    expect(existsSync(target)).toBe(false);
    expect((await readdir(dir)).some((n) => n.startsWith("never"))).toBe(false);
  });

  it("model-level rate control hits the target over all tensors", async () => {
    const out = join(dir, "out-bpw");
    // (the padded edge blocks of these small tensors put the floor near 3.4 bits per weight)
    const r = await encodeModel(model, out, { bpw: 4.5 });
    expect(r.bitsPerWeight).toBeLessThanOrEqual(4.5);
    expect(r.bitsPerWeight).toBeGreaterThan(4.2);
    expect((await verifyModel(out, { decode })).ok).toBe(true);
  });

  it("include/exclude globs", async () => {
    const out = join(dir, "out-glob");
    const r = await encodeModel(model, out, { include: ["layer.*.weight"], exclude: ["layer.2.*"] });
    expect(r.encoded).toBe(2);
    expect(r.passthrough).toBe(4);
  });

  it("same container bytes with worker threads", async () => {
    const a = join(dir, "out-t1");
    const b = join(dir, "out-t2");
    await encodeModel(model, a, {});
    await encodeModel(model, b, { threads: 2 });
    expect(await readFile(join(b, "manifest.json"), "utf8")).toBe(await readFile(join(a, "manifest.json"), "utf8"));
  });
});

/** A safetensors file from header text and a zero data section. */
function rawHeader(json: string, dataBytes: number): Uint8Array {
  const j = Buffer.from(json);
  const l = Buffer.alloc(8);
  l.writeBigUInt64LE(BigInt(j.length));
  return Buffer.concat([l, j, Buffer.alloc(dataBytes)]);
}

describe("encodedShape: the 2-D view a model tensor is encoded as", () => {
  it("keepRows stores [dims[0], rest], and is recorded in the settings", async () => {
    const out = join(dir, "out-keep-rows");
    await encodeModel(model, out, { keepRows: true });
    const m = JSON.parse(await readFile(join(out, "manifest.json"), "utf8"));
    const l0 = m.tensors.find((t: { name: string }) => t.name === "layer.0.weight");
    expect(l0.shape).toEqual([96, 200]);
    expect(l0.originalShape).toBeUndefined();
    expect(m.encoder.settings.keepRows).toBe(true);
    expect((await verifyModel(out, { decode })).ok).toBe(true);
  });

  it("joins rows where that pads less, never splits them, and keeps [dims[0], rest] otherwise", () => {
    expect(encodedShape([240, 25])).toEqual([120, 50]); // 256x64 -> 128x64 stored
    expect(encodedShape([240, 1, 5, 5])).toEqual([120, 50]);
    expect(encodedShape([480, 120])).toEqual([60, 960]); // 512x128 -> 64x960
    expect(encodedShape([128, 195])).toEqual([64, 390]);
    expect(encodedShape([130, 128])).toEqual([130, 128]); // 260x64 would pad less, but splits rows
    expect(encodedShape([60, 2880])).toEqual([60, 2880]);
    expect(encodedShape([4096, 11008])).toEqual([4096, 11008]);
    expect(encodedShape([16, 8, 3, 3])).toEqual([16, 72]);
    expect(encodedShape([7, 3])).toEqual([7, 3]);
  });
});

describe("bad model files give clear errors and write nothing", () => {
  const cases: [string, Uint8Array, RegExp][] = [
    ["short", new Uint8Array(3), /no 8-byte header length/],
    ["huge header", (() => { const b = Buffer.alloc(16); b.writeBigUInt64LE(1n << 40n); return b; })(), /header length/],
    ["not json", (() => { const j = Buffer.from("{nope"); const l = Buffer.alloc(8); l.writeBigUInt64LE(BigInt(j.length)); return Buffer.concat([l, j]); })(), /not JSON/],
    ["shape mismatch", safetensors([{ name: "w", dtype: "F32", shape: [64, 64], data: new Uint8Array(100) }]), /shape mismatch/],
    ["unknown dtype", safetensors([{ name: "w", dtype: "Q4", shape: [1], data: new Uint8Array(1) }]), /unknown dtype/],
    ["unsupported dtype for a weight", safetensors([{ name: "w", dtype: "I32", shape: [64, 64], data: new Uint8Array(64 * 64 * 4) }]), /unsupported dtype I32/],
    ["duplicate names", rawHeader('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', 8), /names "w" twice/],
    ["overlapping offsets", rawHeader('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}', 12), /tensors a and b overlap/],
    ["invalid UTF-8 name", Buffer.concat([Buffer.from([12, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{"'), Buffer.from([0xff, 0xfe]), Buffer.from('":{}}     '.slice(0, 8))]), /not valid UTF-8/],
    ["empty tensor name", rawHeader('{"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4), /empty name ""/],
    ["ONNX bytes named .safetensors", Buffer.from([0x08, 0x08, 0x12, 0x07, 0x70, 0x79, 0x74, 0x6f, 0x72, 0x63, 0x68, 0x3a, 0x10]), /looks like an ONNX model: name it \.onnx/],
    ["offsets past the end", (() => { const j = Buffer.from(JSON.stringify({ w: { dtype: "F32", shape: [2], data_offsets: [0, 8] } })); const l = Buffer.alloc(8); l.writeBigUInt64LE(BigInt(j.length)); return Buffer.concat([l, j]); })(), /past the/],
  ];
  for (const [label, bytes, re] of cases) {
    it(label, async () => {
      const p = join(dir, `bad-${label.replace(/ /g, "_")}.safetensors`);
      await writeFile(p, bytes);
      const out = join(dir, `bad-out-${label.replace(/ /g, "_")}`);
      await expect(encodeModel(p, out, {})).rejects.toThrow(re);
      expect(existsSync(out)).toBe(false);
      expect((await readdir(dir)).some((n) => n.startsWith(`bad-out-${label.replace(/ /g, "_")}`))).toBe(false);
    });
  }
});

describe(".npy", () => {
  function npy(descr: string, shape: number[], data: Uint8Array, fortran = false): Uint8Array {
    let h = `{'descr': '${descr}', 'fortran_order': ${fortran ? "True" : "False"}, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
    h += " ".repeat(63 - ((10 + h.length) % 64)) + "\n";
    const pre = Buffer.from([0x93, ...Buffer.from("NUMPY"), 1, 0, h.length & 0xff, h.length >> 8]);
    return Buffer.concat([pre, Buffer.from(h, "latin1"), Buffer.from(data)]);
  }
  it("encodes a float32 .npy and round-trips", async () => {
    const p = join(dir, "w.npy");
    await writeFile(p, npy("<f4", [64, 96], f32(w3)));
    const out = join(dir, "out-npy");
    const r = await encodeModel(p, out, {});
    expect(r.manifest.tensors[0]!.name).toBe("w");
    expect((await verifyModel(out, { decode })).ok).toBe(true);
  });
  it("reads float16, rejects other dtypes and Fortran order", async () => {
    const p = join(dir, "h.npy");
    await writeFile(p, npy("<f2", [2, 2], f16(Float32Array.of(1, 2, 3, 4))));
    const idx = await readTensorIndex(p);
    expect(Array.from(toFloat32(await readTensorBytes(p, idx.tensors[0]!), "F16"))).toEqual([1, 2, 3, 4]);
    await writeFile(p, npy("<i8", [2], new Uint8Array(16)));
    await expect(readTensorIndex(p)).rejects.toThrow(/dtype <i8/);
    await writeFile(p, npy("<f4", [2], new Uint8Array(8), true));
    await expect(readTensorIndex(p)).rejects.toThrow(/Fortran/);
    await writeFile(p, npy("<f4", [4, 4], new Uint8Array(8)));
    await expect(readTensorIndex(p)).rejects.toThrow(/shape mismatch/);
  });
});

describe("writeSafetensors", () => {
  it("refuses two tensors with one name instead of silently keeping one", async () => {
    const { writeSafetensors: write } = await import("../src/safetensors.js");
    const { mkdtemp } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join: joinPath } = await import("node:path");
    const file = joinPath(await mkdtemp(joinPath(tmpdir(), "sgfp4-st-")), "dup.safetensors");
    const t = { name: "w", dtype: "F32", shape: [1], byteLength: 4, bytes: async () => new Uint8Array(4) };
    await expect(write(file, [t, t])).rejects.toThrow(/two tensors are named "w"/);
  });
});
