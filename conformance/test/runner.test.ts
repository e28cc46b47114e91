import { writeFile, readFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { floatToHalf, type OutputFormat } from "@sgfp4/format";
import { unavailableDecoder } from "@sgfp4/decoders";
import {
  formatTable,
  loadVectorSet,
  resolveDecoders,
  runConformance,
  toJSON,
  toJUnit,
  type Decoder,
  type VectorSet,
} from "../src/index.js";
import { buildVectorSet, sha256, type BuiltSet } from "./fixtures.js";

class CodedError extends Error {
  constructor(readonly code: string) {
    super(`${code}: mock refusal`);
    this.name = "Sgfp4Error";
  }
}

/** A decoder that answers from construction, optionally corrupted by `tamper`. */
function mockBackend(name: string, built: BuiltSet, tamper?: (id: string, out: Float32Array) => Float32Array | "decode-anyway" | string): Decoder {
  return {
    name,
    formats: ["f32"],
    available: async () => ({ ok: true, detail: "mock" }),
    async decode(bytes) {
      const a = built.answers.get(sha256(bytes));
      if (!a) throw new Error("mock: unknown container");
      if ("code" in a) {
        const t = tamper?.("reject", new Float32Array(0));
        if (t === "decode-anyway") return new Float32Array(4);
        if (typeof t === "string") throw new CodedError(t);
        throw new CodedError(a.code);
      }
      const out = a.floats.slice();
      const t = tamper?.("decode", out);
      return t instanceof Float32Array ? t : out;
    },
  };
}

let built: BuiltSet;
let set: VectorSet;
beforeAll(async () => {
  built = await buildVectorSet();
  set = await loadVectorSet(built.dir);
});

describe("runConformance", () => {
  it("passes a correct backend on every vector", async () => {
    const r = await runConformance({ vectors: set, backends: [mockBackend("good", built)] });
    expect(r.ok).toBe(true);
    expect(r.totals).toEqual({ passed: 4, failed: 0, skipped: 0 });
    expect(formatTable(r).trimEnd().split("\n").at(-1)).toBe("4 passed, 0 failed, 0 skipped");
  });

  it("reports the first flipped bit with index, row, column, bits, values and the count", async () => {
    // Flip bit 0 of element 23 of the 40x50 vector: row 0, col 23.
    const flip = mockBackend("flip", built, (_, out) => {
      if (out.length !== 40 * 50) return out;
      const w = new Uint32Array(out.buffer);
      w[23] = (w[23]! ^ 1) >>> 0;
      return out;
    });
    const r = await runConformance({ vectors: set, backends: [flip] });
    expect(r.ok).toBe(false);
    expect(r.totals).toEqual({ passed: 3, failed: 1, skipped: 0 });
    const c = r.backends[0]!.cases.find((x) => x.status === "failed")!;
    expect(c.vector).toBe("v2-uniform32-crop");
    const f = c.failure!;
    expect(f.kind).toBe("mismatch");
    if (f.kind !== "mismatch") throw new Error("unreachable");
    // Leaf TL (scale 1, bias 0, FP4), element (0, 23): code = ((23*7 + 0) % 16) - 8 = 1 - 8 = -7.
    expect(f.index).toBe(23);
    expect(f.row).toBe(0);
    expect(f.col).toBe(23);
    expect(f.expectedValue).toBe(-7);
    expect(f.expectedBits).toBe(0xc0e00000);
    expect(f.actualBits).toBe(0xc0e00001);
    expect(f.differing).toBe(1);
    expect(f.total).toBe(2000);
    const table = formatTable(r);
    expect(table).toContain("element 23 (row 0, col 23): expected 0xc0e00000 (-7), got 0xc0e00001");
    expect(table).toContain("1 of 2000 elements differ");
    expect(table.trimEnd().split("\n").at(-1)).toBe("3 passed, 1 failed, 0 skipped");
  });

  it("reports a row and column past the first row", async () => {
    // index 30*50 + 0 = 1500 -> row 30, col 0; also corrupt a second element to count 2.
    const b = mockBackend("two", built, (_, out) => {
      if (out.length !== 2000) return out;
      out[1500] = 1e9;
      out[1999] = 1e9;
      return out;
    });
    const r = await runConformance({ vectors: set, backends: [b] });
    const f = r.backends[0]!.cases.find((x) => x.failure)!.failure!;
    expect(f).toMatchObject({ kind: "mismatch", index: 1500, row: 30, col: 0, differing: 2 });
    // and one in the middle of a row: 7*50 + 33 = 383 -> row 7, col 33
    const c = mockBackend("mid", built, (_, out) => {
      if (out.length === 2000) out[383] = 1e9;
      return out;
    });
    const r2 = await runConformance({ vectors: set, backends: [c] });
    expect(r2.backends[0]!.cases.find((x) => x.failure)!.failure).toMatchObject({ index: 383, row: 7, col: 33, differing: 1 });
  });

  it("reports a wrong length", async () => {
    const b = mockBackend("short", built, (_, out) => (out.length === 15 ? out.subarray(0, 14) : out));
    const r = await runConformance({ vectors: set, backends: [b] });
    const f = r.backends[0]!.cases.find((x) => x.failure)!.failure!;
    expect(f).toMatchObject({ kind: "length", expectedLength: 15, actualLength: 14 });
  });

  it("fails a wrong reject code and shows both codes", async () => {
    const b = mockBackend("wrongcode", built, (kind) => (kind === "reject" ? "TRUNCATED" : undefined as never));
    const r = await runConformance({ vectors: set, backends: [b] });
    const failed = r.backends[0]!.cases.filter((x) => x.status === "failed");
    // BAD_VERSION expected -> TRUNCATED is wrong; the ANY vector accepts TRUNCATED.
    expect(failed.map((c) => c.vector)).toEqual(["v2-bad-version"]);
    expect(failed[0]!.failure).toMatchObject({ kind: "wrong-code", expectedCode: "BAD_VERSION", actualCode: "TRUNCATED" });
    expect(formatTable(r)).toMatch(/expected reject BAD_VERSION, got TRUNCATED/);
  });

  it("ANY accepts only section-3 codes", async () => {
    const b = mockBackend("usage", built, (kind) => (kind === "reject" ? "INVALID_ARGUMENT" : undefined as never));
    const r = await runConformance({ vectors: set, backends: [b] });
    const failed = r.backends[0]!.cases.filter((x) => x.status === "failed").map((c) => c.vector);
    expect(failed.sort()).toEqual(["v1-size-any", "v2-bad-version"]);
  });

  it("fails a backend that decodes a reject vector", async () => {
    const b = mockBackend("lenient", built, (kind) => (kind === "reject" ? "decode-anyway" : undefined as never));
    const r = await runConformance({ vectors: set, backends: [b] });
    expect(r.totals).toEqual({ passed: 2, failed: 2, skipped: 0 });
    expect(r.backends[0]!.cases.find((c) => c.vector === "v2-bad-version")!.failure).toMatchObject({ kind: "decoded-reject", expectedCode: "BAD_VERSION" });
  });

  it("fails a backend that refuses a decode vector or returns a non-Float32Array", async () => {
    const refuse: Decoder = { name: "refuse", formats: ["f32"], available: async () => ({ ok: true }), decode: async () => Promise.reject(new CodedError("TRUNCATED")) };
    const weird: Decoder = { name: "weird", formats: ["f32"], available: async () => ({ ok: true }), decode: async () => [1, 2] as unknown as Float32Array };
    const r = await runConformance({ vectors: set, backends: [refuse, weird] });
    expect(r.backends[0]!.cases[0]!.failure).toMatchObject({ kind: "unexpected-error", code: "TRUNCATED" });
    expect(r.backends[1]!.cases[0]!.failure).toMatchObject({ kind: "bad-result" });
  });

  it("times out a hanging backend", async () => {
    const hang: Decoder = { name: "hang", formats: ["f32"], available: async () => ({ ok: true }), decode: () => new Promise(() => undefined) };
    const r = await runConformance({ vectors: set, backends: [hang], caseTimeoutMs: 20 });
    expect(r.backends[0]!.cases[0]!.failure).toMatchObject({ kind: "timeout" });
  });

  it("lists an unavailable backend as skipped, and fails it with require", async () => {
    const gone = unavailableDecoder("gone", "no device here");
    const r = await runConformance({ vectors: set, backends: [mockBackend("good", built), gone] });
    expect(r.ok).toBe(true);
    expect(r.totals).toEqual({ passed: 4, failed: 0, skipped: 4 });
    expect(r.backends[1]).toMatchObject({ available: false, reason: "no device here", skipped: 4 });
    expect(formatTable(r)).toMatch(/gone\s+f32\s+unavailable\s+0\s+0\s+4\s+no device here/);

    const req = await runConformance({ vectors: set, backends: [mockBackend("good", built), gone], require: ["gone"] });
    expect(req.ok).toBe(false);
    expect(req.totals).toEqual({ passed: 4, failed: 4, skipped: 0 });
    expect(formatTable(req)).toContain("required decoder is unavailable: no device here");
  });

  it("an available() that throws makes the backend unavailable", async () => {
    const bad: Decoder = { name: "bad", formats: ["f32"], available: () => Promise.reject(new Error("boom")), decode: async () => new Float32Array() };
    const r = await runConformance({ vectors: set, backends: [bad] });
    expect(r.backends[0]).toMatchObject({ available: false, reason: "available() threw: boom" });
  });

  it("rejects --require of a backend that is not in the run", async () => {
    await expect(runConformance({ vectors: set, backends: [], require: ["nope"] })).rejects.toThrow(/--require nope/);
  });

  it("calls onProgress per case", async () => {
    const events: string[] = [];
    await runConformance({ vectors: set, backends: [mockBackend("good", built)], onProgress: (e) => events.push(e.type) });
    expect(events).toEqual(["backend-start", "case", "case", "case", "case", "backend-end"]);
  });
});

describe("reports", () => {
  it("JUnit has one testsuite per backend and skipped cases with the reason", async () => {
    const flip = mockBackend("flip<&>", built, (_, out) => {
      out[0] = out[0]! + 1;
      return out;
    });
    const r = await runConformance({ vectors: set, backends: [flip, unavailableDecoder("vulkan", 'no "device" <here>')] });
    const xml = toJUnit(r);
    expect(xml.match(/<testsuite /g)).toHaveLength(2);
    expect(xml).toContain('<testsuite name="flip&lt;&amp;&gt;" tests="4" failures="2" errors="0" skipped="0"');
    expect(xml).toContain('<testsuite name="vulkan" tests="4" failures="0" errors="0" skipped="4"');
    expect(xml).toContain('<skipped message="decoder unavailable: no &quot;device&quot; &lt;here&gt;"/>');
    expect(xml).toContain('<failure type="mismatch"');
    expect(xml).toContain('<testsuites name="sgfp4-conformance" tests="8" failures="2" errors="0" skipped="4"');
  });

  it("JSON carries hex bits and the summary", async () => {
    const flip = mockBackend("flip", built, (_, out) => {
      if (out.length === 15) out[0] = -0; // expected 0.5*code(0) - 1 = 0.5*(-5) - 1 = -3.5
      return out;
    });
    const r = await runConformance({ vectors: set, backends: [flip] });
    const doc = JSON.parse(toJSON(r));
    expect(doc.summary).toBe("3 passed, 1 failed, 0 skipped");
    const f = doc.backends[0].cases[0].failure;
    expect(f).toMatchObject({ kind: "mismatch", index: 0, expectedBits: "0xc0600000", actualBits: "0x80000000", expectedValue: "-3.5", actualValue: "0" });
  });
});

describe("loadVectorSet", () => {
  it("loads the vectors, paths relative to the folder", () => {
    expect(set.vectors.map((v) => v.id)).toEqual(built.ids);
    expect(set.vectors[2]!.expect).toEqual({ kind: "reject", code: "BAD_VERSION" });
    expect(set.vectors[0]!.container).toBe("v1-basic.fp4");
    expect(path.isAbsolute(set.dir)).toBe(true);
  });

  it("checks hash-only vectors by sha256", async () => {
    const { standardEntries } = await import("./fixtures.js");
    const entries = standardEntries().slice(0, 1);
    (entries[0]!.expect as { keepOutput?: boolean }).keepOutput = false;
    const b = await buildVectorSet(entries);
    const s = await loadVectorSet(b.dir);
    const good = await runConformance({ vectors: s, backends: [mockBackend("g", b)] });
    expect(good.ok).toBe(true);
    const bad = await runConformance({ vectors: s, backends: [mockBackend("b", b, (_, o) => ((o[1] = 9), o))] });
    expect(bad.backends[0]!.cases[0]!.failure!.kind).toBe("hash");
  });

  const broken: [string, (dir: string) => Promise<void>, RegExp][] = [
    ["a bad format tag", async (d) => writeFile(path.join(d, "index.json"), JSON.stringify({ format: "x", version: 1, vectors: [] })), /"format" must be "sgfp4-golden-vectors"/],
    ["an unknown version", async (d) => writeFile(path.join(d, "index.json"), JSON.stringify({ format: "sgfp4-golden-vectors", version: 2, vectors: [] })), /"version" 2 is not supported/],
    ["invalid JSON", async (d) => writeFile(path.join(d, "v1-basic.json"), "{"), /v1-basic.json is not valid JSON/],
    ["a bad reject code", async (d) => patch(d, "v2-bad-version.json", (m) => (m.expect = { reject: "NOPE" })), /"expect.reject" must be a DECISIONS.md section 3 code/],
    ["a path outside the folder", async (d) => patch(d, "v1-basic.json", (m) => (m.container = "../x.fp4")), /points outside the vector folder/],
    ["a missing container", async (d) => patch(d, "v1-basic.json", (m) => (m.container = "missing.fp4")), /container .*missing.fp4 is missing/],
    ["a wrong sha256", async (d) => patch(d, "v1-basic.json", (m) => ((m.expect as { decode: { sha256: string } }).decode.sha256 = "0".repeat(64))), /sha256 of .* is [0-9a-f]{64}, the vector says 0{64}/],
    ["an output of the wrong size", async (d) => patch(d, "v1-basic.json", (m) => (m.shape = [3, 6])), /has 60 bytes, shape \[3, 6\] needs 72/],
    ["a bad shape", async (d) => patch(d, "v1-basic.json", (m) => (m.shape = [0, 6])), /"shape" must be \[O, I\]/],
    ["both decode and reject", async (d) => patch(d, "v1-basic.json", (m) => ((m.expect as Record<string, unknown>).reject = "ANY")), /exactly one key/],
  ];
  for (const [what, breakIt, message] of broken) {
    it(`refuses ${what} with a clear error`, async () => {
      const b = await buildVectorSet();
      await breakIt(b.dir);
      await expect(loadVectorSet(b.dir)).rejects.toThrow(message);
    });
  }
  it("refuses a missing folder", async () => {
    await expect(loadVectorSet("/nonexistent/sgfp4")).rejects.toThrow(/cannot read .*index.json/);
  });
});

async function patch(dir: string, file: string, edit: (m: Record<string, unknown>) => void): Promise<void> {
  const p = path.join(dir, file);
  const m = JSON.parse(await readFile(p, "utf8")) as Record<string, unknown>;
  edit(m);
  await writeFile(p, JSON.stringify(m));
}

describe("resolveDecoders", () => {
  it("makes missing built-in packages unavailable, not failing", async () => {
    const [b] = await resolveDecoders(["vulkan"]);
    expect(b!.name).toBe("vulkan");
    const a = await b!.available();
    // Either installed (then it answers for itself) or unavailable with a reason.
    if (!a.ok) expect(a.reason.length).toBeGreaterThan(0);
  });
  it("runs the built-in cpu backend when its package is installed", async () => {
    const [cpu] = await resolveDecoders(["cpu"]);
    const a = await cpu!.available();
    expect(a).toMatchObject({ ok: true });
    const r = await runConformance({ vectors: set, backends: [cpu!] });
    // one row per format the CPU decoder declares, every vector passing in each
    expect(r.backends.map((b) => b.format)).toEqual([...cpu!.formats]);
    expect(r.backends.flatMap((b) => b.cases.filter((c) => c.failure).map((c) => `${b.format} ${c.vector}: ${c.failure!.message}`))).toEqual([]);
    expect(r.totals).toEqual({ passed: 4 * cpu!.formats.length, failed: 0, skipped: 0 });
  });
  it("expands all to the three built-ins", async () => {
    const bs = await resolveDecoders(["all", "cpu"]);
    expect(bs.map((b) => b.name)).toEqual(["cpu", "webgpu", "vulkan"]);
  });
  it("refuses unknown names and missing module paths", async () => {
    await expect(resolveDecoders(["gpu"])).rejects.toThrow(/unknown decoder "gpu"/);
    await expect(resolveDecoders(["./missing-backend.mjs"])).rejects.toThrow(/does not exist/);
  });
  it("loads a module backend (default export or createConformanceBackend)", async () => {
    const b = await buildVectorSet();
    const answers = Object.fromEntries([...b.answers].map(([k, v]) => [k, "code" in v ? { code: v.code } : { floats: [...v.floats] }]));
    const mod = path.join(b.dir, "mock-backend.mjs");
    await writeFile(
      mod,
      `import { createHash } from "node:crypto";
const answers = ${JSON.stringify(answers)};
export function createConformanceBackend() {
  return {
    name: "mock-module",
    available: async () => ({ ok: true }),
    async decode(bytes) {
      const a = answers[createHash("sha256").update(bytes).digest("hex")];
      if (a.code) throw Object.assign(new Error(a.code), { code: a.code });
      return new Float32Array(a.floats);
    },
  };
}
`,
    );
    const mod2 = path.join(b.dir, "default-backend.mjs");
    await writeFile(mod2, `export default { name: "dflt", available: async () => ({ ok: false, reason: "off" }), decode: async () => new Float32Array() };\n`);
    const backends = await resolveDecoders([mod, mod2]);
    expect(backends.map((x) => x.name)).toEqual(["mock-module", "dflt"]);
    const r = await runConformance({ vectors: await loadVectorSet(b.dir), backends });
    expect(r.totals).toEqual({ passed: 4, failed: 0, skipped: 4 });
  });
});

describe("a run that checks nothing fails", () => {
  it("an index with no vectors is refused", async () => {
    const b = await buildVectorSet();
    await writeFile(path.join(b.dir, "index.json"), JSON.stringify({ format: "sgfp4-golden-vectors", version: 1, vectors: [] }));
    await expect(loadVectorSet(b.dir)).rejects.toThrow(/"vectors" is empty/);
  });

  it("a set with zero vectors is not ok, even with every decoder available and required", async () => {
    const empty: VectorSet = { ...set, vectors: [] };
    const r = await runConformance({ vectors: empty, backends: [mockBackend("good", built)], require: ["good"] });
    expect(r.ok).toBe(false);
    expect(r.totals).toEqual({ passed: 0, failed: 0, skipped: 0 });
    expect(r.problems).toEqual(["the vector set has no vectors"]);
    expect(summaryOf(r)).toMatch(/FAIL: the vector set has no vectors/);
    expect(toJUnit(r)).toContain('<error type="run" message="the vector set has no vectors">');
  });

  it("a run where every decoder is unavailable is not ok", async () => {
    const r = await runConformance({ vectors: set, backends: [unavailableDecoder("gone", "no device")] });
    expect(r.totals).toEqual({ passed: 0, failed: 0, skipped: 4 });
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toMatch(/no case ran/);
  });

  it("a run with no decoders is not ok", async () => {
    const r = await runConformance({ vectors: set, backends: [] });
    expect(r.ok).toBe(false);
  });
});

const summaryOf = (r: Awaited<ReturnType<typeof runConformance>>): string => formatTable(r).trimEnd().split("\n").at(-1)!;

/** f16/bf16 bits of the fixture values, with @sgfp4/format's own conversion (not the judge's). */
function halfBits(out: Float32Array, format: OutputFormat): Uint16Array {
  const words = new Uint32Array(out.buffer, out.byteOffset, out.length);
  return Uint16Array.from(out, (x, i) => (format === "f16" ? floatToHalf(x) : words[i]! >>> 16));
}

/** Like mockBackend, but writes all three formats; `bad` corrupts one format's answer. */
function threeFormats(name: string, bad?: { format: OutputFormat; how: "flip" | "f32-array" }): Decoder {
  const inner = mockBackend(name, built);
  return {
    name,
    formats: ["f32", "f16", "bf16"],
    available: inner.available,
    async decode(bytes, req) {
      const out = (await inner.decode(bytes, req)) as Float32Array;
      const format = req.format ?? "f32";
      if (bad?.format === format && bad.how === "f32-array") return out;
      const res = format === "f32" ? out : halfBits(out, format);
      if (bad?.format === format && bad.how === "flip" && res.length === 15) res[0] = res[0]! ^ 1;
      return res;
    },
  };
}

describe("output formats (P10)", () => {
  it("runs one row per decoder and declared format; f32-only decoders get one row", async () => {
    const r = await runConformance({ vectors: set, backends: [threeFormats("tri"), mockBackend("plain", built)] });
    expect(r.backends.map((b) => [b.name, b.format, b.passed, b.failed])).toEqual([
      ["tri", "f32", 4, 0],
      ["tri", "f16", 4, 0],
      ["tri", "bf16", 4, 0],
      ["plain", "f32", 4, 0],
    ]);
    expect(r.ok).toBe(true);
    expect(formatTable(r)).toMatch(/tri\s+bf16\s+ok\s+4\s+0\s+0/);
  });

  it("reports a wrong f16 bit with 16-bit patterns, and a Float32Array answer to an f16 request", async () => {
    const flip = await runConformance({ vectors: set, backends: [threeFormats("t", { format: "f16", how: "flip" })] });
    const row = flip.backends.find((b) => b.format === "f16")!;
    // v1-basic element 0 is -3.5: f16 0xc300; flipped bit 0: 0xc301
    expect(row.cases[0]!.failure).toMatchObject({ kind: "mismatch", index: 0, expectedBits: 0xc300, actualBits: 0xc301 });
    expect(row.cases[0]!.failure!.message).toContain("expected 0xc300 (-3.5), got 0xc301");
    expect(flip.backends.filter((b) => b.format !== "f16").every((b) => b.failed === 0)).toBe(true);
    expect(toJUnit(flip)).toContain('<testsuite name="t f16" tests="4" failures="1"');

    const wrongType = await runConformance({ vectors: set, backends: [threeFormats("t", { format: "bf16", how: "f32-array" })] });
    expect(wrongType.backends.find((b) => b.format === "bf16")!.cases[0]!.failure).toMatchObject({ kind: "bad-result" });
  });

  it("--format narrows the formats; reject vectors must be refused in every format", async () => {
    const r = await runConformance({ vectors: set, backends: [threeFormats("t")], formats: ["bf16"] });
    expect(r.backends.map((b) => b.format)).toEqual(["bf16"]);
    expect(r.backends[0]!.cases.find((c) => c.vector === "v2-bad-version")!.status).toBe("passed");
    const unchecked = await runConformance({ vectors: set, backends: [threeFormats("t"), mockBackend("plain", built)], formats: ["f16"], require: ["plain"] });
    expect(unchecked.ok).toBe(false);
    expect(unchecked.problems).toEqual(["required decoder plain writes none of the requested formats"]);
    const none = await runConformance({ vectors: set, backends: [mockBackend("plain", built)], formats: ["f16"] });
    expect(none.ok).toBe(false);
    expect(none.problems).toEqual(["no decoder in the run writes any of the requested formats"]);
  });

  it("skips half formats of a hash-only vector, with the reason", async () => {
    const { standardEntries } = await import("./fixtures.js");
    const entries = standardEntries().slice(0, 1);
    (entries[0]!.expect as { keepOutput?: boolean }).keepOutput = false;
    const b = await buildVectorSet(entries);
    const inner = threeFormats("t");
    const s = await loadVectorSet(b.dir);
    const answers = mockBackend("m", b);
    const d: Decoder = { ...inner, decode: async (bytes, req) => ((req.format ?? "f32") === "f32" ? answers.decode(bytes, req) : inner.decode(bytes, req)) };
    const r = await runConformance({ vectors: s, backends: [d] });
    expect(r.backends.map((x) => [x.format, x.passed, x.skipped])).toEqual([
      ["f32", 1, 0],
      ["f16", 0, 1],
      ["bf16", 0, 1],
    ]);
    expect(r.backends[1]!.cases[0]!.reason).toMatch(/hash-only vector/);
  });
});
