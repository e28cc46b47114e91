/**
 * What a new user runs into, each with its fix: no worker left running on an error, no silent
 * surprises (--bpw below the reachable minimum, --include matching nothing, a file that is not
 * safetensors), errors that name the file and tensor, interrupted encodes cleaned up, an empty
 * output folder kept on failure, decode-model keeping __metadata__.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { clippedWarning } from "../src/commands/model.js";
import { withInstallHint } from "../src/util.js";
import { BIN, safetensors, sgfp4, tempDir } from "./helpers.js";

const weights = (n: number, k = 1) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 * k) * (1 + (i % 7)));

let dir: string;
let model: string;
beforeAll(async () => {
  dir = await tempDir();
  model = path.join(dir, "model.safetensors");
  await writeFile(model, safetensors([{ name: "a.weight", shape: [128, 96], data: weights(128 * 96) }, { name: "a.bias", shape: [128], data: weights(128, 2) }], { format: "pt", origin: "test" }));
});

describe("errors leave nothing running and nothing behind", () => {
  it("a non-empty output folder is refused at once, with worker threads too", async () => {
    const full = path.join(dir, "full");
    await mkdir(full);
    await writeFile(path.join(full, "keep.txt"), "x");
    const t0 = Date.now();
    const r = sgfp4(["encode", model, "-o", full, "--threads", "4"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/not an empty folder/);
    expect(Date.now() - t0).toBeLessThan(20_000); // it used to never exit
    expect(await readdir(full)).toEqual(["keep.txt"]);
  });

  it("a failed encode into an existing empty folder keeps the folder", async () => {
    const empty = path.join(dir, "empty");
    await mkdir(empty);
    const bad = path.join(dir, "nan.safetensors");
    const w = weights(64 * 64);
    w[775] = NaN;
    await writeFile(bad, safetensors([{ name: "layer.3.weight", shape: [64, 64], data: w }]));
    const r = sgfp4(["encode", bad, "-o", empty, "--threads", "2"]);
    expect(r.status).toBe(2);
    // the error names the file, the tensor, the index and its row and column
    expect(r.stderr).toContain(`${bad}: tensor layer.3.weight: value 775 (row 12, column 7) is NaN`);
    expect(existsSync(empty)).toBe(true);
    expect(await readdir(empty)).toEqual([]);
    expect((await readdir(dir)).filter((f) => f.includes(".partial-"))).toEqual([]);
  });

  it("SIGTERM during encode removes OUT.partial-PID and exits 143", async () => {
    const big = path.join(dir, "big.safetensors");
    await writeFile(big, safetensors([{ name: "w", shape: [2048, 2048], data: weights(2048 * 2048) }]));
    const out = path.join(dir, "interrupted");
    const child = spawn(process.execPath, [BIN, "encode", big, "-o", out, "--threads", "1"], { stdio: "ignore" });
    const partial = `${out}.partial-${child.pid}`;
    for (let i = 0; i < 400 && !existsSync(partial); i++) await new Promise((r) => setTimeout(r, 25));
    expect(existsSync(partial)).toBe(true);
    const status = await new Promise<number | null>((resolve) => {
      child.on("exit", (code) => resolve(code));
      child.kill("SIGTERM");
    });
    expect(status).toBe(143);
    expect(existsSync(partial)).toBe(false);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});

describe("no silent surprises", () => {
  it("--bpw below the reachable minimum is refused, naming it", () => {
    const r = sgfp4(["encode", model, "-o", path.join(dir, "bpw"), "--bpw", "1", "--threads", "1"]);
    expect(r.status).toBe(2);
    const m = /smallest size these tensors can reach, (\d+\.\d+) bits per weight/.exec(r.stderr);
    expect(m).not.toBeNull();
    // the named minimum is reachable: asking for it succeeds
    const ok = sgfp4(["encode", model, "-o", path.join(dir, "bpw-min"), "--bpw", m![1]!, "--threads", "1"]);
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
  });

  it("--include matching no tensor is an error", () => {
    const r = sgfp4(["encode", model, "-o", path.join(dir, "inc"), "--include", "layers.*", "--threads", "1"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--include layers\.\* matches no tensor/);
    expect(existsSync(path.join(dir, "inc"))).toBe(false);
  });

  it("--keep-rows stores the tensor as [d0, rest] (by default 128x96 is stored as 64x192)", async () => {
    const out = path.join(dir, "keep-rows");
    const r = sgfp4(["encode", model, "-o", out, "--keep-rows", "--threads", "1"]);
    expect(r.status).toBe(0);
    const m = JSON.parse(await readFile(path.join(out, "manifest.json"), "utf8"));
    expect(m.tensors[0].shape).toEqual([128, 96]);
    expect(m.tensors[0].originalShape).toBeUndefined();
  });

  it("an ONNX model or a sharded checkpoint's index given as safetensors: recognised, with what to do", async () => {
    const onnxLike = path.join(dir, "model-onnx.safetensors");
    await writeFile(onnxLike, Buffer.from([0x08, 0x08, 0x12, 0x07, 0x70, 0x79, 0x74, 0x6f, 0x72, 0x63, 0x68, 0x3a, 0x10, 0x00]));
    expect(sgfp4(["encode", onnxLike, "-o", path.join(dir, "o1")]).stderr).toMatch(/looks like an ONNX model: name it \.onnx/);
    const jsonLike = path.join(dir, "index.safetensors");
    await writeFile(jsonLike, JSON.stringify({ metadata: {}, weight_map: { a: "x.safetensors" } }));
    expect(sgfp4(["encode", jsonLike, "-o", path.join(dir, "o2")]).stderr).toMatch(/looks like JSON: for a sharded checkpoint pass its folder or model\.safetensors\.index\.json/);
  });

  it("decode-model keeps the input's __metadata__ and order", async () => {
    const out = path.join(dir, "meta");
    expect(sgfp4(["encode", model, "-o", out, "--threads", "1"]).status).toBe(0);
    const rebuilt = path.join(dir, "meta.safetensors");
    expect(sgfp4(["decode-model", out, "-o", rebuilt]).status).toBe(0);
    const bytes = await readFile(rebuilt);
    const header = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString());
    expect(header.__metadata__).toEqual({ format: "pt", origin: "test" });
    expect(Object.keys(header)).toEqual(["__metadata__", "a.weight", "a.bias"]);
  });

  it("validate --json gives one JSON document with the same exit status", async () => {
    const out = path.join(dir, "meta");
    const m = JSON.parse(await readFile(path.join(out, "manifest.json"), "utf8"));
    const file = path.join(out, m.tensors[0].file);
    // the manifest's decode shape: the 128x96 tensor is stored as 64x192 (two rows joined: 3 macroblocks, not 4)
    expect(m.tensors[0].shape).toEqual([64, 192]);
    expect(m.tensors[0].originalShape).toEqual([128, 96]);
    const v = sgfp4(["validate", file, "--shape", "64x192", "--json"]);
    expect(v.status).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ valid: true, profile: "v2", shape: [64, 192], blocks: 3, warnings: [] });
    const broken = path.join(dir, "broken.sgfp4");
    await writeFile(broken, (await readFile(file)).subarray(0, 20));
    const b = sgfp4(["validate", broken, "--shape", "64x192", "--json"]);
    expect(b.status).toBe(3);
    expect(JSON.parse(b.stdout)).toMatchObject({ valid: false, error: { code: expect.any(String) } });
  });
});

describe("messages", () => {
  it("clipped weights are reported loudly, naming the worst tensor", () => {
    expect(clippedWarning([{ name: "a", stats: { clipped: 0 } }, { name: "b" }])).toBeUndefined();
    expect(clippedWarning([{ name: "a", stats: { clipped: 3 } }, { name: "b", stats: { clipped: 40 } }])).toBe(
      "warning: 43 weights clipped to the code range in 2 tensors (most: b, 40); outliers lose their magnitude: see stats.clipped in manifest.json, or --exclude those tensors",
    );
  });

  it("--help documents the exit statuses and --json", () => {
    const help = sgfp4(["--help"]).stdout;
    expect(help).toMatch(/Exit status: 0 ok, 1 failure .* 2 usage .* 3 invalid container .* 4 validate --strict .* 130\/143 interrupted/);
    expect(help).toMatch(/--json \(encode, verify, validate, inspect, merge-manifests\)/);
  });

  it("a missing Node WebGPU engine says what to install", () => {
    const raw = "backend webgpu is unavailable: could not load the 'webgpu' package (Dawn) for Node: Cannot find package 'webgpu' imported from /x/gpu.js";
    expect(withInstallHint(raw)).toBe(`${raw}\nhint: --backend webgpu in Node needs the optional WebGPU engine: npm install webgpu@0.6.2 (or use --backend cpu or vulkan)`);
    expect(withInstallHint("cannot read x")).toBe("cannot read x");
  });
});
