import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { BIN, REF_BACKEND, badVersion, leBytes, mockModule, sgfp4, tempDir, v1Case, v2Case, vectorFolder } from "./helpers.js";

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
});

describe("sgfp4 launcher", () => {
  it("bin/sgfp4.js (the package bin) runs the built CLI", () => {
    const r = spawnSync(process.execPath, [path.resolve(path.dirname(BIN), "../bin/sgfp4.js"), "--version"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe("sgfp4 decode", () => {
  it("writes raw little-endian float32 equal to the construction", async () => {
    const { bytes, floats } = v1Case([5, 9]);
    const input = path.join(dir, "a.fp4");
    const out = path.join(dir, "a.f32");
    await writeFile(input, bytes);
    const r = sgfp4(["decode", input, "--shape", "5x9", "--backend", REF_BACKEND, "-o", out]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(new Uint8Array(await readFile(out))).toEqual(leBytes(floats));
  });

  it("writes .npy with a NumPy 1.0 header", async () => {
    const { bytes, floats } = v2Case([33, 47]);
    const input = path.join(dir, "b.sgfp4");
    const out = path.join(dir, "b.npy");
    await writeFile(input, bytes);
    const r = sgfp4(["decode", input, "--shape", "33x47", "--profile", "v2", "--backend", REF_BACKEND, "-o", out]);
    expect(r.status).toBe(0);
    const npy = new Uint8Array(await readFile(out));
    expect([...npy.subarray(0, 8)]).toEqual([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
    const headerLen = npy[8]! | (npy[9]! << 8);
    const header = new TextDecoder().decode(npy.subarray(10, 10 + headerLen));
    expect((10 + headerLen) % 64).toBe(0);
    expect(header).toMatch(/^\{'descr': '<f4', 'fortran_order': False, 'shape': \(33, 47\), \} *\n$/);
    expect(npy.subarray(10 + headerLen)).toEqual(leBytes(floats));
  });

  it("exits 3 with error: CODE: detail on an invalid container and writes nothing", async () => {
    const input = path.join(dir, "bad.sgfp4");
    const out = path.join(dir, "bad.f32");
    await writeFile(input, badVersion());
    const r = sgfp4(["decode", input, "--shape", "2x2", "--backend", REF_BACKEND, "-o", out]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/^error: BAD_VERSION: \S.*\n$/);
    expect(existsSync(out)).toBe(false);
    expect((await readdir(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("decodes with the default cpu backend, bit for bit (v1 and v2)", async () => {
    for (const [name, made, shape] of [
      ["c1.fp4", v1Case([5, 9]), "5x9"],
      ["c2.sgfp4", v2Case([33, 47]), "33x47"],
    ] as const) {
      const input = path.join(dir, name);
      const out = path.join(dir, `${name}.f32`);
      await writeFile(input, made.bytes);
      const r = sgfp4(["decode", input, "--shape", shape, "-o", out]);
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(new Uint8Array(await readFile(out))).toEqual(leBytes(made.floats));
    }
    const bad = path.join(dir, "c3.sgfp4");
    await writeFile(bad, badVersion());
    const r = sgfp4(["decode", bad, "--shape", "2x2", "-o", path.join(dir, "c3.f32")]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/^error: BAD_VERSION: /);
  });

  it("exits 2 on usage errors", () => {
    expect(sgfp4(["decode", "x.fp4", "--shape", "5by9", "-o", "y.f32"])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--shape must be OxI/) });
    expect(sgfp4(["decode", "x.fp4", "-o", "y.f32"])).toMatchObject({ status: 2, stderr: expect.stringMatching(/required option '--shape/) });
    expect(sgfp4(["decode", "x.fp4", "--shape", "1x1", "--backend", "gpu", "-o", "y.f32"]).stderr).toMatch(/unknown decoder "gpu"/);
    expect(sgfp4(["frobnicate"]).status).toBe(2);
  });

  it("exits 1 when the input cannot be read", () => {
    const r = sgfp4(["decode", path.join(dir, "missing.fp4"), "--shape", "1x1", "--backend", REF_BACKEND, "-o", path.join(dir, "m.f32")]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^error: cannot read .*missing.fp4/);
  });
});

describe("sgfp4 validate", () => {
  it("accepts a valid container", async () => {
    const input = path.join(dir, "v.sgfp4");
    await writeFile(input, v2Case([33, 47]).bytes);
    const r = sgfp4(["validate", input, "--shape", "33x47"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^valid: .*v\.sgfp4: v2, shape 33x47, 1 record, 4 leaves, \d+ bytes$/m);
  });

  it("with --strict lists warnings (trailing bytes) and exits 4", async () => {
    const input = path.join(dir, "t.sgfp4");
    await writeFile(input, v2Case([33, 47], new Uint8Array(16)).bytes);
    expect(sgfp4(["validate", input, "--shape", "33x47"]).status).toBe(0);
    const r = sgfp4(["validate", input, "--shape", "33x47", "--strict"]);
    expect(r.status).toBe(4);
    expect(r.stdout).toMatch(/^warning: trailing-bytes: /m);
    expect(r.stdout).toMatch(/^1 warning$/m);
  });

  it("exits 3 on an invalid container", async () => {
    const input = path.join(dir, "bad2.sgfp4");
    await writeFile(input, badVersion());
    const r = sgfp4(["validate", input, "--shape", "2x2"]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/^error: BAD_VERSION: /);
  });
});

describe("sgfp4 inspect", () => {
  it("reports layouts, modes, leaf sizes, bits per weight and FP16 ranges (JSON)", async () => {
    const { bytes } = v2Case([33, 47]);
    const input = path.join(dir, "i.sgfp4");
    await writeFile(input, bytes);
    const r = sgfp4(["inspect", input, "--shape", "33x47", "--json"]);
    expect(r.status).toBe(0);
    const info = JSON.parse(r.stdout);
    expect(info).toMatchObject({
      profile: "v2",
      shape: [33, 47],
      blocks: 1,
      leaves: 4,
      bytes: bytes.length,
      layouts: { UNIFORM_32: 1 },
      modes: { FP4_AFFINE: { leaves: 3, weights: 3072 }, T158_AFFINE: { leaves: 1, weights: 1024 } },
      leafSizes: { "32": 4 },
      scale: { min: 1, max: 8, minBits: "0x3c00", maxBits: "0x4800" },
      bias: { min: 0, max: 1, minBits: "0x0000", maxBits: "0x3c00" },
    });
    expect(info.bitsPerWeight).toBeCloseTo((bytes.length * 8) / (33 * 47), 12);
    expect(info.bitsPerPaddedWeight).toBeCloseTo((bytes.length * 8) / 4096, 12);
  });

  it("prints a readable summary", async () => {
    const input = path.join(dir, "i1.fp4");
    await writeFile(input, v1Case([5, 9]).bytes);
    const r = sgfp4(["inspect", input, "--shape", "5x9"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^profile\s+v1$/m);
    expect(r.stdout).toMatch(/^layouts\s+V1_BLOCK_64 1 \(100\.0%\)$/m);
    expect(r.stdout).toMatch(/^scale \(FP16\)\s+\[0\.25, 0\.25\]/m);
    expect(r.stdout).toMatch(/^bits\/weight\s+\d+\.\d{4} \(per padded weight 4\.0156\)$/m); // (8 + 2048) * 8 / 4096
  });
});

describe("sgfp4 conformance", () => {
  it("passes a correct module backend and writes JSON and JUnit reports", async () => {
    const { dir: vdir, answers } = await vectorFolder();
    const mod = await mockModule(vdir, answers, { name: "mock" });
    const json = path.join(vdir, "r.json");
    const junit = path.join(vdir, "r.xml");
    const r = sgfp4(["conformance", "--vectors", vdir, "--backend", mod, "--report", `json=${json},junit=${junit}`]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("3 passed, 0 failed, 0 skipped");
    expect(JSON.parse(await readFile(json, "utf8")).totals).toEqual({ passed: 3, failed: 0, skipped: 0 });
    expect(await readFile(junit, "utf8")).toContain('<testsuite name="mock" tests="3" failures="0"');
  });

  it("exits 1 and shows the first differing element for a wrong backend", async () => {
    const { dir: vdir, answers } = await vectorFolder();
    const mod = await mockModule(vdir, answers, { name: "flip", flip: true });
    const r = sgfp4(["conformance", "--vectors", vdir, "--backend", mod]);
    expect(r.status).toBe(1);
    // v1-small element 0: 0.25 * (((0*5 + 1) % 16) - 8) + 2 = 0.25 * -7 + 2 = 0.25 (0x3e800000)
    expect(r.stdout).toContain("v1-small [decode]: element 0 (row 0, col 0): expected 0x3e800000 (0.25), got 0x3e800001");
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("1 passed, 2 failed, 0 skipped");
  });

  it("skips an unavailable backend, and fails it with --require", async () => {
    const { dir: vdir, answers } = await vectorFolder();
    const mod = await mockModule(vdir, answers, { name: "off", unavailable: "no device" });
    const r = sgfp4(["conformance", "--vectors", vdir, "--backend", mod]);
    // nothing ran, so nothing was checked: that fails
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/off\s+f32\s+unavailable\s+0\s+0\s+3\s+no device/);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("0 passed, 0 failed, 3 skipped; FAIL: no case ran: every case was skipped (see the reasons above)");
    expect(r.stderr).toMatch(/^conformance: no case ran/);
    const good = await mockModule(vdir, answers, { name: "good" });
    expect(sgfp4(["conformance", "--vectors", vdir, "--backend", `${good},${mod}`]).status).toBe(0);
    const req = sgfp4(["conformance", "--vectors", vdir, "--backend", mod, "--require", "off"]);
    expect(req.status).toBe(1);
    expect(req.stdout.trimEnd().split("\n").at(-1)).toBe("0 passed, 3 failed, 0 skipped");
  });

  it("runs the CLI's own decode as a --backend-cmd decoder", async () => {
    const { dir: vdir } = await vectorFolder();
    const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} decode {container} --shape {rows}x{cols} --profile {profile} --backend ${JSON.stringify(REF_BACKEND)} -o {output}`;
    const r = sgfp4(["conformance", "--vectors", vdir, "--backend-cmd", cmd]);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("3 passed, 0 failed, 0 skipped");
    expect(r.status).toBe(0);
  });

  it("--filter keeps the matching vectors", async () => {
    const { dir: vdir, answers } = await vectorFolder();
    const mod = await mockModule(vdir, answers, { name: "mock" });
    const r = sgfp4(["conformance", "--vectors", vdir, "--backend", mod, "--filter", "v2-"]);
    expect(r.stdout).toMatch(/^SGFP4 conformance: 2 vectors/);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("2 passed, 0 failed, 0 skipped");
    expect(sgfp4(["conformance", "--vectors", vdir, "--backend", mod, "--filter", "nothing"]).status).toBe(2);
  });

  it("--json prints the verdict, a row per decoder and format, and the failures", async () => {
    const { dir: vdir, answers } = await vectorFolder();
    const mod = await mockModule(vdir, answers, { name: "flip", flip: true });
    const r = sgfp4(["conformance", "--vectors", vdir, "--backend", mod, "--json"]);
    expect(r.status).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ format: "sgfp4-conformance-summary", ok: false, exitCode: 1, vectors: { count: 3 }, totals: { passed: 1, failed: 2, skipped: 0 }, problems: [] });
    expect(doc.rows).toHaveLength(1);
    expect(doc.rows[0]).toMatchObject({ backend: "flip", format: "f32", status: "fail", failed: 2 });
    expect(doc.rows[0].failures[0]).toMatchObject({ vector: "v1-small", kind: "mismatch" });
  });

  it("fails a vector set with no vectors (--require never passes on nothing)", async () => {
    const { dir: vdir, answers } = await vectorFolder();
    const mod = await mockModule(vdir, answers, { name: "mock" });
    await writeFile(path.join(vdir, "index.json"), JSON.stringify({ format: "sgfp4-golden-vectors", version: 1, vectors: [] }));
    const r = sgfp4(["conformance", "--vectors", vdir, "--backend", mod, "--require", "mock"]);
    expect(r).toMatchObject({ status: 1, stderr: expect.stringMatching(/"vectors" is empty/) });
  });

  it("runs the published golden vectors by default, outside the repository", async () => {
    const outside = await tempDir();
    const r = sgfp4(["conformance", "--backend", "cpu", "--filter", "v1-half-format-rounding", "--json"], outside);
    expect(r.stderr).toBe("");
    const doc = JSON.parse(r.stdout);
    expect(doc.vectors.package).toMatch(/^@sgfp4\/golden-vectors@\d+\.\d+\.\d+/);
    expect(doc.vectors.dir).toMatch(/golden-vectors[\\/]vectors$/);
    expect(doc.totals.passed).toBeGreaterThanOrEqual(1);
    expect(r.status).toBe(0);
  });

  it("documents its exit codes in --help", () => {
    const r = sgfp4(["conformance", "--help"]);
    expect(r.stdout).toMatch(/Exit status:\n\s+0\s+every case that ran passed, and at least one ran\n\s+1\s+a case failed/);
  });

  it("reports a broken vector folder and bad options clearly", async () => {
    const empty = await tempDir();
    expect(sgfp4(["conformance", "--vectors", empty, "--backend", REF_BACKEND])).toMatchObject({ status: 1, stderr: expect.stringMatching(/^error: invalid vector set: cannot read .*index\.json/) });
    const { dir: vdir } = await vectorFolder();
    expect(sgfp4(["conformance", "--vectors", vdir, "--report", "xml=a"]).status).toBe(2);
    expect(sgfp4(["conformance", "--vectors", vdir, "--backend-cmd", "dec {container}"]).stderr).toMatch(/must use \{output\}/);
  });
});
