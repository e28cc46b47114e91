/**
 * The benchmark workload builders on inputs made here: an ONNX file written field by field
 * (raw_data, packed float_data, a Constant node, an If subgraph, a non-float tensor), a WAV file,
 * and the npm file cache (a cached file is read without the registry; wrong bytes are refused).
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { npmFile, onnxFloatTensors, onnxWeightTensors, readWav, replaceOnnxTensors, resample } from "../src/workloads/index.js";

// protobuf wire format, enough to write the ONNX messages the reader understands
const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  return [...out, n];
};
const bytesField = (field: number, body: number[]) => [...varint((field << 3) | 2), ...varint(body.length), ...body];
const intField = (field: number, n: number) => [...varint(field << 3), ...varint(n)];
const str = (s: string) => [...new TextEncoder().encode(s)];
const f32le = (xs: number[]) => [...new Uint8Array(Float32Array.from(xs).buffer)];

/** TensorProto: dims (packed), data_type, name, and the values as raw_data or packed float_data. */
const tensorProto = (name: string, dims: number[], values: number[], as: "raw" | "packed" | "int64") => [
  ...bytesField(1, dims.flatMap(varint)),
  ...intField(2, as === "int64" ? 7 : 1),
  ...(as === "packed" ? bytesField(4, f32le(values)) : []),
  ...bytesField(8, str(name)),
  ...(as === "raw" ? bytesField(9, f32le(values)) : as === "int64" ? bytesField(9, new Array(8 * values.length).fill(0)) : []),
];

function model(): Uint8Array {
  const big = Array.from({ length: 64 * 64 }, (_, i) => i / 7);
  const sub = bytesField(5, tensorProto("w", [2, 3], [1, 2, 3, 4, 5, 6], "raw")); // subgraph initializer
  const ifNode = [...bytesField(3, str("If_0")), ...bytesField(5, [...bytesField(1, str("then_branch")), ...bytesField(6, sub)])];
  const constNode = [...bytesField(3, str("c")), ...bytesField(5, [...bytesField(1, str("value")), ...bytesField(5, tensorProto("", [64, 8, 8], big, "packed"))])];
  const graph = [
    ...bytesField(1, ifNode),
    ...bytesField(1, constNode),
    ...bytesField(5, tensorProto("big", [64, 64], big, "raw")),
    ...bytesField(5, tensorProto("ids", [4], [0, 0, 0, 0], "int64")),
  ];
  return Uint8Array.from([...intField(1, 8), ...bytesField(7, graph)]);
}

describe("ONNX", () => {
  it("reads float tensors of the graph, Constant nodes and subgraphs, and skips other types", () => {
    const ts = onnxFloatTensors(model());
    expect(ts.map((t) => [t.name, t.dims])).toEqual([["If_0.then_branch/w", [2, 3]], ["c.value", [64, 8, 8]], ["big", [64, 64]]]);
    expect(Array.from(ts[0]!.data)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(ts[1]!.data[7]).toBe(Math.fround(1));
  });
  it("weight matrices: rank >= 2 and >= 4096 values, as [dims[0], rest]", () => {
    expect(onnxWeightTensors(model()).map((t) => [t.name, t.shape])).toEqual([["c.value", [64, 64]], ["big", [64, 64]]]);
  });
  it("replaces values in place and leaves every other byte alone", () => {
    const file = model();
    const [w, c] = onnxFloatTensors(file);
    const out = replaceOnnxTensors(file, [{ tensor: w!, data: Float32Array.from([6, 5, 4, 3, 2, 1]) }, { tensor: c!, data: new Float32Array(4096).fill(-1) }]);
    const again = onnxFloatTensors(out);
    expect(Array.from(again[0]!.data)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(again[1]!.data.every((v) => v === -1)).toBe(true);
    expect(Array.from(again[2]!.data)).toEqual(Array.from(onnxFloatTensors(file)[2]!.data));
    expect(out.length).toBe(file.length);
    expect(() => replaceOnnxTensors(file, [{ tensor: w!, data: new Float32Array(5) }])).toThrow(/6 values/);
  });
});

function wav(channels: number, rate: number, frames: number[][]): Uint8Array {
  const data = frames.flatMap((f) => f.flatMap((s) => [s & 0xff, (s >> 8) & 0xff]));
  const u32 = (n: number) => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >>> 24) & 0xff];
  const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff];
  const fmt = [...u16(1), ...u16(channels), ...u32(rate), ...u32(rate * 2 * channels), ...u16(2 * channels), ...u16(16)];
  const chunks = [...str("LIST"), ...u32(3), 1, 2, 3, 0, ...str("fmt "), ...u32(fmt.length), ...fmt, ...str("data"), ...u32(data.length), ...data];
  return Uint8Array.from([...str("RIFF"), ...u32(4 + chunks.length), ...str("WAVE"), ...chunks]);
}

describe("WAV", () => {
  it("reads 16-bit PCM past an odd-sized chunk, averaging channels", () => {
    const a = readWav(wav(2, 8000, [[16384, 0], [-32768, -32768], [100, 300]]));
    expect(a.sampleRate).toBe(8000);
    expect(Array.from(a.samples)).toEqual([0.25, -1, 200 / 32768].map(Math.fround));
    expect(() => readWav(Uint8Array.from(str("RIFF....WAVX")))).toThrow(/RIFF/);
  });
  it("resamples a constant to the same constant and a ramp to a ramp", () => {
    const flat = resample({ sampleRate: 48000, samples: new Float32Array(480).fill(0.5) }, 16000);
    expect(flat.samples.length).toBe(160);
    expect(flat.samples.every((v) => Math.abs(v - 0.5) < 1e-6)).toBe(true);
    const ramp = resample({ sampleRate: 48000, samples: Float32Array.from({ length: 480 }, (_, i) => i) }, 16000);
    expect(ramp.samples[10]).toBeCloseTo(30, 4); // the 3-sample average centred on input sample 30
  });
});

describe("npmFile", () => {
  it("reads a cached file without the registry and refuses wrong bytes", () => {
    const cache = mkdtempSync(join(tmpdir(), "sgfp4-npm-cache-test-"));
    const body = new TextEncoder().encode("weights");
    mkdirSync(join(cache, "@x+y@1.0.0", "dist"), { recursive: true });
    writeFileSync(join(cache, "@x+y@1.0.0", "dist", "m.onnx"), body);
    const sha256 = createHash("sha256").update(body).digest("hex");
    expect(npmFile({ pkg: "@x/y", version: "1.0.0", path: "dist/m.onnx", sha256 }, cache)).toEqual(body);
    expect(() => npmFile({ pkg: "@x/y", version: "1.0.0", path: "dist/m.onnx", sha256: "0".repeat(64) }, cache)).toThrow(/sha256/);
  });
});
