/**
 * Real model folders through the CLI: a sharded checkpoint round-trips (encode, verify,
 * decode-model) to shards that an independent reader loads with the original names, shapes and
 * dtypes; N `encode --shard i/N` processes merge to the bytes of one process; --json summaries.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { BIN, readSafetensors, safetensors, sgfp4, tempDir } from "./helpers.js";

const wave = (n: number, k: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 * k) * (1 + ((i * k) % 7)) * 0.01);
const f16Bytes = (n: number) => new Uint8Array(Uint16Array.from({ length: n }, (_, i) => 0x3c00 + (i % 512)).buffer); // 1.0 .. 1.5, exact F16
const bf16Bytes = (n: number) => new Uint8Array(Uint16Array.from({ length: n }, (_, i) => 0x3f80 + (i % 100)).buffer); // 1.0 .. 1.8, exact BF16

/** Expected layout: file -> [name, dtype, shape] in data order. */
const LAYOUT: Record<string, [string, string, number[]][]> = {
  "model-00001-of-00003.safetensors": [["embed.weight", "BF16", [200, 64]], ["layers.0.attn.weight", "F32", [128, 96]], ["layers.0.norm", "F32", [96]]],
  "model-00002-of-00003.safetensors": [["layers.1.attn.weight", "F16", [96, 128]], ["layers.1.conv", "F32", [32, 4, 3, 3]]],
  "model-00003-of-00003.safetensors": [["lm_head.weight", "F32", [64, 200]], ["step", "I64", [1]]],
};

function tensorData(dtype: string, shape: number[], k: number): Uint8Array {
  const n = shape.reduce((a, b) => a * b, 1);
  if (dtype === "F16") return f16Bytes(n);
  if (dtype === "BF16") return bf16Bytes(n);
  if (dtype === "I64") return new Uint8Array(8 * n).fill(7);
  const f = wave(n, k);
  return new Uint8Array(f.buffer);
}

let dir: string;
let ckpt: string;
beforeAll(async () => {
  dir = await tempDir();
  ckpt = path.join(dir, "ckpt");
  await mkdir(ckpt);
  const weightMap: Record<string, string> = {};
  let k = 1;
  for (const [file, tensors] of Object.entries(LAYOUT)) {
    await writeFile(path.join(ckpt, file), safetensors(tensors.map(([name, dtype, shape]) => ({ name, dtype, shape, data: tensorData(dtype, shape, k++) })), { format: "pt" }));
    for (const [name] of tensors) weightMap[name] = file;
  }
  await writeFile(path.join(ckpt, "model.safetensors.index.json"), JSON.stringify({ metadata: { total_size: 123 }, weight_map: weightMap }, null, 2));
});

const hasNumpy = spawnSync("python3", ["-c", "import numpy"]).status === 0;

/** numpy (not our code) reads each shard: name -> [dtype, shape] (BF16 read as raw uint16). */
const NUMPY_READER = `
import json, sys, numpy as np
out = {}
for path in sys.argv[1:]:
    raw = open(path, "rb").read()
    n = int(np.frombuffer(raw[:8], "<u8")[0])
    header = json.loads(raw[8:8 + n])
    for name, v in header.items():
        if name == "__metadata__": continue
        dt = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8"}[v["dtype"]]
        b, e = v["data_offsets"]
        a = np.frombuffer(raw[8 + n + b:8 + n + e], dt).reshape(v["shape"])
        out[name] = [path.rsplit("/", 1)[-1], v["dtype"], list(a.shape)]
print(json.dumps(out))
`;

describe("a sharded checkpoint through the CLI", () => {
  it("encode, verify, decode-model: the same shards, names, shapes and dtypes", async () => {
    const out = path.join(dir, "enc");
    const enc = sgfp4(["encode", ckpt, "-o", out, "--threads", "1", "--json"]);
    expect(enc.stderr).toBe("");
    expect(enc.status).toBe(0);
    const summary = JSON.parse(enc.stdout);
    expect(summary).toMatchObject({ output: out, encoded: 5, passthrough: 2, clipped: 0 });
    expect(summary.tensors.map((t: { name: string }) => t.name)).toEqual(["embed.weight", "layers.0.attn.weight", "layers.1.attn.weight", "layers.1.conv", "lm_head.weight"]);

    const ver = sgfp4(["verify", out, "--json"]);
    expect(ver.status).toBe(0);
    expect(JSON.parse(ver.stdout)).toMatchObject({ ok: true });
    expect(JSON.parse(ver.stdout).tensors).toHaveLength(6); // 5 containers + the passthrough file

    const rebuilt = path.join(dir, "rebuilt");
    const dec = sgfp4(["decode-model", out, "-o", rebuilt]);
    expect(dec.stderr).toBe("");
    expect(dec.status).toBe(0);
    expect((await readdir(rebuilt)).sort()).toEqual([...Object.keys(LAYOUT), "model.safetensors.index.json"].sort());
    for (const [file, tensors] of Object.entries(LAYOUT)) {
      const got = readSafetensors(await readFile(path.join(rebuilt, file)));
      expect([...got.entries()].map(([name, t]) => [name, t.dtype, t.shape])).toEqual(tensors);
      const header = JSON.parse((await readFile(path.join(rebuilt, file))).subarray(8, 8 + Number((await readFile(path.join(rebuilt, file))).readBigUInt64LE(0))).toString());
      expect(header.__metadata__).toEqual({ format: "pt" });
    }
    const index = JSON.parse(await readFile(path.join(rebuilt, "model.safetensors.index.json"), "utf8"));
    expect(Object.entries(index.weight_map).sort()).toEqual(Object.entries(LAYOUT).flatMap(([file, ts]) => ts.map(([name]) => [name, file])).sort());
    // total_size is the rebuilt shards' tensor bytes (the source's 123 was not)
    const bytesOf = (dtype: string, shape: number[]) => shape.reduce((a, b) => a * b, 1) * ({ F32: 4, F16: 2, BF16: 2, I64: 8 } as Record<string, number>)[dtype]!;
    expect(index.metadata.total_size).toBe(Object.values(LAYOUT).flat().reduce((s, [, d, sh]) => s + bytesOf(d, sh), 0));
    // the passthrough tensors come back byte for byte; F16/BF16 weights come back in their dtype
    const third = readSafetensors(await readFile(path.join(rebuilt, "model-00003-of-00003.safetensors")));
    expect(third.get("step")!.data).toEqual(new Uint8Array(8).fill(7));
  }, 120_000);

  it.skipIf(!hasNumpy)(`numpy loads the rebuilt shards with the original names, shapes and dtypes${hasNumpy ? "" : " (skipped: python3 has no numpy here)"}`, () => {
    const rebuilt = path.join(dir, "rebuilt");
    const r = spawnSync("python3", ["-c", NUMPY_READER, ...Object.keys(LAYOUT).map((f) => path.join(rebuilt, f))], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    const got = JSON.parse(r.stdout);
    const want = Object.fromEntries(Object.entries(LAYOUT).flatMap(([file, ts]) => ts.map(([name, dtype, shape]) => [name, [file, dtype, shape]])));
    expect(got).toEqual(want);
  });
});

/** Run the CLI as a child process without blocking (shards run side by side). */
function run(args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (status) => resolve({ status, stderr }));
  });
}

describe("encode --shard i/N in N processes, then merge-manifests", () => {
  it("gives the folder of a one-process encode, byte for byte", async () => {
    const one = path.join(dir, "one");
    expect(sgfp4(["encode", ckpt, "-o", one, "--threads", "1"]).status).toBe(0);
    const parts = [0, 1, 2].map((i) => path.join(dir, `part-${i}`));
    const results = await Promise.all(parts.map((p, i) => run(["encode", ckpt, "-o", p, "--threads", "1", "--shard", `${i}/3`])));
    expect(results.map((r) => r.status)).toEqual([0, 0, 0]);
    const merged = path.join(dir, "merged");
    const m = sgfp4(["merge-manifests", ...parts, "-o", merged]);
    expect(m.stderr).toBe("");
    expect(m.status).toBe(0);
    const list = async (d: string) => [...(await readdir(d)), ...(await readdir(path.join(d, "tensors"))).map((f) => `tensors/${f}`)].filter((f) => f !== "tensors").sort();
    expect(await list(merged)).toEqual(await list(one));
    for (const f of await list(one)) expect((await readFile(path.join(merged, f))).equals(await readFile(path.join(one, f))), f).toBe(true);
    expect(sgfp4(["verify", merged]).status).toBe(0);
    // a missing shard is named; --bpw cannot be sharded
    expect(sgfp4(["merge-manifests", parts[0]!, parts[2]!, "-o", path.join(dir, "m2")])).toMatchObject({ status: 2, stderr: expect.stringMatching(/missing shard\(s\) 1\/3/) });
    expect(sgfp4(["encode", ckpt, "-o", path.join(dir, "x"), "--shard", "0/2", "--bpw", "3"])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--bpw needs every tensor in one process/) });
    expect(sgfp4(["encode", ckpt, "-o", path.join(dir, "x"), "--shard", "2/2"])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--shard: shard must be i\/N/) });
  }, 120_000);
});
