/**
 * End-to-end: the built page in Debian's Chromium (headless, SwiftShader WebGPU). Containers
 * come from the writer with every leaf position and decoded value known from construction,
 * and from the golden-vector folder when it exists.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { CHROMIUM, haveChromium, launch } from "./support/browser";
import { serveStatic } from "./support/server";
import { appRoot } from "./support/build-once";
import { encodeTensor } from "@sgfp4/encoder";
import { decodedSha256, f32Bytes, heroTensor, makeLarge, makeMixedV2, makeV1, npy, sha256Hex, withFaultInRecord, withReservedBit, type Made } from "./support/containers";

// Each run's screenshots go to reports/ (ignored; CI keeps them as artefacts). The committed ones
// in screenshots/ (the README's) are refreshed only on request: SGFP4_UPDATE_SCREENSHOTS=1.
const SHOTS = process.env.SGFP4_UPDATE_SCREENSHOTS ? resolve(appRoot, "screenshots") : resolve(appRoot, "../../reports/inspector-screenshots");
const VECTORS = resolve(appRoot, "../../golden-vectors/vectors");

type InspectorState = ReturnType<Window["__inspector"]["state"]>;

if (!haveChromium) {
  const why = `Chromium not found at ${CHROMIUM}: install Debian's package (apt-get install chromium) or set SGFP4_CHROMIUM`;
  if (process.env.CI) it("needs Chromium for the end-to-end tests", () => expect.fail(why));
  else it.skip(`skipped: ${why}`, () => {});
}

describe.skipIf(!haveChromium)("inspector in Chromium", () => {
  let server: Awaited<ReturnType<typeof serveStatic>>;
  let browser: Awaited<ReturnType<typeof launch>>;
  let context: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await serveStatic(resolve(appRoot, "dist"));
    browser = await launch();
    context = browser.context;
    page = await context.newPage();
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    await page.goto(server.url);
    await page.waitForFunction(() => !!window.__inspector);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const state = (p: Page = page): Promise<InspectorState> => p.evaluate(() => window.__inspector.state());

  async function openFile(m: { name: string; bytes: Uint8Array }, p: Page = page): Promise<InspectorState> {
    const before = (await state(p)).generation;
    await p.setInputFiles("#file-input", { name: m.name, mimeType: "application/octet-stream", buffer: Buffer.from(m.bytes) });
    await p.waitForFunction(
      ([name, gen]) => window.__inspector.state().generation > (gen as number) && window.__inspector.state().file === name && window.__inspector.state().status === "done",
      [m.name, before] as const,
      { timeout: 180_000 },
    );
    return state(p);
  }

  function expectedBits(m: Made): number[] {
    return Array.from(new Uint32Array(m.expected.buffer));
  }

  it("has a WebGPU adapter from SwiftShader and the WebGPU decoder wired in", async () => {
    const a = await page.evaluate(() => window.__inspector.availability());
    expect(a.CPU?.ok).toBe(true);
    expect(a.WebGPU, JSON.stringify(a.WebGPU)).toMatchObject({ ok: true });
  });

  it("draws a v2 container's structure to scale: every leaf where the writer put it", async () => {
    const m = makeMixedV2();
    const s = await openFile(m);
    expect(s.parseError).toBeUndefined();
    expect(s.model).toMatchObject({ profile: "v2", shape: [100, 150], blockCount: 6, leafCount: m.leaves.length });
    const leaves = await page.evaluate(() => window.__inspector.leaves());
    expect(leaves).toEqual(m.leaves.flatMap((l) => [l.row, l.col, l.size, l.mode]));
    // Histograms count what was written: one record of each layout.
    expect(s.model!.histograms.layouts.map((h) => h.count)).toEqual([1, 1, 1, 1, 1, 1]);
    const bySize = (size: number) => m.leaves.filter((l) => l.size === size).length;
    expect(s.model!.histograms.leafSizes.map((h) => h.count)).toEqual([4, 8, 16, 32, 64].map(bySize));
    expect(s.model!.histograms.modes.map((h) => h.count)).toEqual([0, 1].map((mode) => m.leaves.filter((l) => l.mode === mode).length));
    expect(s.model!.bitsPerWeight).toBeCloseTo((m.bytes.length * 8) / (100 * 150), 10);

    // Hover over the 8x8 leaf at rows 32..39, cols 32..39 of macroblock 0 (the tree's BR quadrant, first child's first leaf).
    const target = m.leaves.findIndex((l) => l.row === 32 && l.col === 32 && l.size === 8);
    expect(target).toBeGreaterThanOrEqual(0);
    const box = (await page.locator("#structure-canvas").boundingBox())!;
    const view = await page.evaluate(() => ({ s: window.__inspector.structureView.scale, r: window.__inspector.structureView.originRow, c: window.__inspector.structureView.originCol }));
    // centre of element (35, 36) in canvas pixels (the canvas is drawn 1:1, inside a 1px border)
    const px = (36.5 - view.c) * view.s;
    const py = (35.5 - view.r) * view.s;
    const border = await page.evaluate(() => document.getElementById("structure-canvas")!.clientLeft);
    expect(await page.evaluate(([x, y]) => window.__inspector.leafAtCanvasPixel(x!, y!), [px, py])).toBe(target);
    await page.mouse.move(box.x + border + px, box.y + border + py);
    const tip = await page.locator("#tooltip").innerText();
    expect(tip).toContain("element (35, 36)");
    expect(tip).toContain("size      8x8");
    expect(tip).toContain("rows 32..39, cols 32..39");
    expect(tip).toContain(m.leaves[target]!.mode ? "T158_AFFINE" : "FP4_AFFINE");
    await page.locator("#structure-panel").screenshot({ path: join(SHOTS, "structure-hover.png") });
  });

  it("decodes with the CPU worker and WebGPU to the values the writer encoded, bit for bit", async () => {
    const m = makeMixedV2();
    const s = await openFile(m);
    expect(s.decodes.CPU).toMatchObject({ status: "ok", length: m.expected.length });
    expect(s.decodes.WebGPU).toMatchObject({ status: "ok", length: m.expected.length });
    const want = expectedBits(m);
    expect(await page.evaluate(() => window.__inspector.decodedBits("CPU"))).toEqual(want);
    expect(await page.evaluate(() => window.__inspector.decodedBits("WebGPU"))).toEqual(want);
    expect(s.agreement).toEqual({ equal: true });
    await expect.poll(() => page.locator("#agreement").innerText()).toContain("agree bit for bit on all 15000 values");
  });

  it("decodes a v1 container with permuted payload slots", async () => {
    const m = makeV1();
    const s = await openFile(m);
    expect(s.model).toMatchObject({ profile: "v1", blockCount: 3, leafCount: 3 });
    expect(await page.evaluate(() => window.__inspector.leaves())).toEqual(m.leaves.flatMap((l) => [l.row, l.col, l.size, l.mode]));
    expect(await page.evaluate(() => window.__inspector.decodedBits("CPU"))).toEqual(expectedBits(m));
    expect(await page.evaluate(() => window.__inspector.decodedBits("WebGPU"))).toEqual(expectedBits(m));
    expect(s.agreement).toEqual({ equal: true });
  });

  it("compares with an original .npy: SNR from the known error", async () => {
    const m = makeMixedV2();
    await openFile(m);
    // original = decoded + 1/8 everywhere, so the noise power is n/64.
    const orig = m.expected.map((v) => v + 0.125);
    let signal = 0;
    for (const v of orig) signal += v * v;
    const snr = 10 * Math.log10(signal / (orig.length / 64));
    await page.setInputFiles("#original-input", { name: "original.npy", mimeType: "application/octet-stream", buffer: Buffer.from(npy(orig, [100, 150])) });
    await page.waitForFunction(() => window.__inspector.state().snrDb !== undefined);
    const s = await state();
    expect(s.snrDb).toBeCloseTo(snr, 6);
    expect(await page.locator("#snr").innerText()).toContain(`SNR ${snr.toFixed(2)} dB`);
    expect(await page.locator("#values-select").inputValue()).toBe("error");
    await page.locator("#values-panel").screenshot({ path: join(SHOTS, "error-map.png") });
  });

  it("shows an encoder-made container: leaf statistics and SNR match the encoder's own report", async () => {
    const { data, shape } = heroTensor();
    const enc = await encodeTensor(data, shape, { profile: "v2", bpw: 4.25 });
    const s = await openFile({ name: `blk.0.ffn.${shape[0]}x${shape[1]}.sgfp4`, bytes: enc.bytes });
    expect(s.decodes.CPU?.status).toBe("ok");
    expect(s.agreement).toEqual({ equal: true });
    expect(await page.evaluate(() => window.__inspector.decodedBits("WebGPU"))).toEqual(Array.from(new Uint32Array(enc.decoded.buffer)));
    const sizes = s.model!.histograms.leafSizes.map((h) => h.count);
    expect(sizes).toEqual([4, 8, 16, 32, 64].map((n) => enc.stats.leafSizes[String(n)] ?? 0));
    // Leaves tile the padded grid exactly: areas add up and no element is claimed twice.
    const leaves = await page.evaluate(() => window.__inspector.leaves());
    const owner = new Int32Array(shape[0] * shape[1]).fill(-1);
    let area = 0;
    for (let i = 0; i < leaves.length / 4; i++) {
      const [r0, c0, size] = [leaves[4 * i]!, leaves[4 * i + 1]!, leaves[4 * i + 2]!];
      area += size * size;
      for (let r = r0; r < Math.min(r0 + size, shape[0]); r++) for (let c = c0; c < Math.min(c0 + size, shape[1]); c++) {
        expect(owner[r * shape[1] + c]).toBe(-1);
        owner[r * shape[1] + c] = i;
      }
    }
    expect(area).toBe(shape[0] * shape[1]);
    await page.setInputFiles("#original-input", { name: "blk.0.ffn.npy", mimeType: "application/octet-stream", buffer: Buffer.from(npy(data, shape)) });
    await page.waitForFunction(() => window.__inspector.state().snrDb !== undefined);
    expect((await state()).snrDb).toBeCloseTo(enc.stats.snrDb, 3);
    await page.selectOption("#values-select", "decoded:WebGPU");

    // The picture for the README: structure with a hover, decoded values beside it.
    await page.setViewportSize({ width: 1400, height: 960 });
    await page.evaluate(() => window.scrollTo(0, 0));
    const box = (await page.locator("#structure-canvas").boundingBox())!;
    const view = await page.evaluate(() => ({ s: window.__inspector.structureView.scale, r: window.__inspector.structureView.originRow, c: window.__inspector.structureView.originCol }));
    await page.mouse.move(box.x + 1 + (300 - view.c) * view.s, box.y + 1 + (163 - view.r) * view.s);
    await expect.poll(() => page.locator("#tooltip").isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, "inspector.png") });
    await page.mouse.move(0, 0);
    await page.setViewportSize({ width: 1400, height: 1000 });
  });

  it("shows the decoder's error code and message for a bad container, never a blank page", async () => {
    const m = makeMixedV2();
    const s = await openFile({ name: "reserved.100x150.sgfp4", bytes: withReservedBit(m) });
    expect(s.parseError?.code).toBe("RESERVED_BITS");
    expect(s.decodes.CPU).toMatchObject({ status: "failed", code: "RESERVED_BITS" });
    expect(s.decodes.WebGPU).toMatchObject({ status: "failed", code: "RESERVED_BITS" });
    await expect.poll(() => page.locator("#message").innerText()).toContain("RESERVED_BITS");
    expect(await page.locator('#decoders tr[data-backend="CPU"]').innerText()).toContain("error RESERVED_BITS");
    expect(await page.locator("#agreement").innerText()).toContain("both decoders refused the stream with RESERVED_BITS");

    const bad = await openFile({ name: "magic.100x150.sgfp4", bytes: new Uint8Array([0x53, 0x47, 0x46, 0x35, 2, 0, 0, 0]) });
    expect(bad.parseError?.code).toBe("BAD_MAGIC");
    expect(bad.decodes.CPU).toMatchObject({ status: "failed", code: "BAD_MAGIC" });
    await page.screenshot({ path: join(SHOTS, "error.png") });
  });

  it("a refused stream shows its structure up to the fault and the bytes around the failing offset", async () => {
    const m = makeMixedV2();
    const { bytes, offset } = withFaultInRecord(m, 3);
    const s = await openFile({ name: "fault3.100x150.sgfp4", bytes });
    expect(s.parseError).toMatchObject({ code: "RESERVED_BITS", record: 3, offset });
    // records 0..2 were parsed: their leaves, where the writer put them
    expect(s.model).toMatchObject({ blockCount: 6, blocksParsed: 3 });
    const before = m.leaves.filter((l) => Math.floor(l.row / 64) * 3 + Math.floor(l.col / 64) < 3);
    expect(await page.evaluate(() => window.__inspector.leaves())).toEqual(before.flatMap((l) => [l.row, l.col, l.size, l.mode]));
    expect(await page.locator("#structure-caption").innerText()).toContain("3 of 6 macroblocks before the fault");
    expect(await page.locator("#fault h3").innerText()).toBe(`Refused: RESERVED_BITS at record 3, byte offset ${offset}`);
    const hex = (n: number, w: number) => n.toString(16).padStart(w, "0");
    const dump = await page.locator("#fault-bytes").innerText();
    expect(dump).toContain(hex(offset - (offset % 16), 8));
    expect(await page.locator("#fault-bytes mark").innerText()).toBe(hex(bytes[offset]!, 2));
    await page.locator("#structure-panel").screenshot({ path: join(SHOTS, "refused-structure.png") });

    // a valid file afterwards: no fault view
    await openFile(m);
    expect(await page.locator("#fault").isHidden()).toBe(true);
  });

  it("opening another file drops the previous file's original tensor and tooltip", async () => {
    const m = makeMixedV2();
    await openFile(m);
    await page.setInputFiles("#original-input", { name: "original.npy", mimeType: "application/octet-stream", buffer: Buffer.from(npy(m.expected, [100, 150])) });
    await page.waitForFunction(() => window.__inspector.state().snrDb !== undefined);
    const box = (await page.locator("#structure-canvas").boundingBox())!;
    const view = await page.evaluate(() => ({ s: window.__inspector.structureView.scale, r: window.__inspector.structureView.originRow, c: window.__inspector.structureView.originCol }));
    await page.mouse.move(box.x + 1 + (36.5 - view.c) * view.s, box.y + 1 + (35.5 - view.r) * view.s); // over element (35, 36)
    await expect.poll(() => page.locator("#tooltip").isVisible()).toBe(true);

    const s = await openFile(makeV1());
    expect(s.original).toBeUndefined();
    expect(s.snrDb).toBeUndefined();
    expect(await page.locator("#tooltip").isVisible()).toBe(false);
    expect(await page.locator("#snr").innerText()).toBe("");
    const options = await page.locator("#values-select option").evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(options).toEqual(["decoded:CPU", "decoded:WebGPU"]);
    await page.mouse.move(0, 0);
  });

  it("opens a manifest folder, picks a tensor and checks its attestation hashes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "inspector-manifest-"));
    try {
      const a = makeMixedV2();
      const b = makeV1();
      const model = join(dir, "model");
      mkdirSync(model);
      writeFileSync(join(model, "a.sgfp4"), a.bytes);
      writeFileSync(join(model, "b.fp4"), b.bytes);
      const entry = (name: string, file: string, x: Made) => ({ name, file, profile: x.profile, shape: x.shape, dtype: "F32", sha256: { container: sha256Hex(x.bytes), decoded: decodedSha256(x.expected) } });
      const manifest = { format: "sgfp4-manifest", version: 1, encoder: { name: "test", version: "0", settings: {} }, tensors: [entry("layers.0.w", "a.sgfp4", a), entry("layers.1.w", "b.fp4", b)] };
      writeFileSync(join(model, "manifest.json"), JSON.stringify(manifest));
      await page.setInputFiles("#manifest-input", model);
      await page.waitForSelector("#tensor-select:not([hidden])");
      await page.selectOption("#tensor-select", "1");
      await page.waitForFunction(() => window.__inspector.state().file?.startsWith("layers.1.w") && window.__inspector.state().status === "done");
      const s = await state();
      expect(s.model).toMatchObject({ profile: "v1", shape: [64, 130], leafCount: 3 });
      await expect.poll(() => page.locator("#attestation").innerText()).toBe("manifest container sha256: matches; manifest decoded sha256: matches");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs a vector folder in the page: passes, rejects and catches a wrong expected output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "inspector-vectors-"));
    try {
      const set = join(dir, "set");
      mkdirSync(set);
      const a = makeMixedV2();
      const b = makeV1();
      const wrong = b.expected.slice();
      new Uint32Array(wrong.buffer)[5]! ^= 1; // last mantissa bit of element 5
      const vec = (id: string, x: Made, bytes: Uint8Array, expect: object) => {
        const container = `${id}.${x.profile === "v1" ? "fp4" : "sgfp4"}`;
        writeFileSync(join(set, container), bytes);
        writeFileSync(join(set, `${id}.json`), JSON.stringify({ id, profile: x.profile, container, shape: x.shape, clauses: [], description: "", expect }));
      };
      writeFileSync(join(set, "mixed.f32"), f32Bytes(a.expected));
      vec("mixed", a, a.bytes, { decode: { sha256: decodedSha256(a.expected), output: "mixed.f32" } });
      vec("reserved", a, withReservedBit(a), { reject: "RESERVED_BITS" });
      writeFileSync(join(set, "wrong.f32"), f32Bytes(wrong));
      vec("wrong", b, b.bytes, { decode: { sha256: decodedSha256(wrong), output: "wrong.f32" } });
      vec("hash-only", b, b.bytes, { decode: { sha256: decodedSha256(b.expected) } });
      writeFileSync(join(set, "index.json"), JSON.stringify({ format: "sgfp4-golden-vectors", version: 1, vectors: ["mixed.json", "reserved.json", "wrong.json", "hash-only.json"] }));
      await page.setInputFiles("#vectors-input", set);
      await page.waitForFunction(() => window.__inspector.state().conformanceDone && window.__inspector.state().conformance.length === 4);
      const rows = (await state()).conformance;
      for (const backend of ["CPU", "WebGPU"]) {
        const r = (id: string) => rows.find((x) => x.id === id)!.results[backend] as { pass: boolean; detail: string };
        expect(r("mixed")).toEqual({ pass: true, detail: "bit-exact" });
        expect(r("reserved")).toEqual({ pass: true, detail: "rejected RESERVED_BITS" });
        expect(r("wrong").pass).toBe(false);
        expect(r("wrong").detail).toMatch(/^element 5 \(row 0, col 5\)/);
        expect(r("hash-only")).toEqual({ pass: true, detail: "sha256 matches" });
      }
      expect(await page.locator("#conformance-status").innerText()).toContain("CPU 3/4 pass, WebGPU 3/4 pass");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!existsSync(join(VECTORS, "index.json")))("runs the bundled golden vectors in the page on CPU and WebGPU: all pass", async () => {
    await page.click("#conformance-button");
    await page.waitForFunction(() => window.__inspector.state().conformanceDone && window.__inspector.state().conformance.length > 0, undefined, { timeout: 200_000 });
    const rows = (await state()).conformance;
    const failures = rows.flatMap((r) => Object.entries(r.results).filter(([, o]) => !("pass" in o) || !o.pass).map(([b, o]) => `${r.id} ${b}: ${JSON.stringify(o)}`));
    expect(failures).toEqual([]);
    expect(Object.keys(rows[0]!.results).sort()).toEqual(["CPU", "WebGPU"]);
    await page.locator("#conformance-panel").screenshot({ path: join(SHOTS, "conformance.png") });
  });

  it("opens and draws a 4096 x 4096 container; CPU and WebGPU agree", async () => {
    const big = makeLarge();
    const t0 = Date.now();
    const s = await openFile({ name: "large.4096x4096.sgfp4", bytes: big.bytes });
    const openMs = Date.now() - t0;
    expect(s.model).toMatchObject({ blockCount: big.blockCount, leafCount: big.leafCount });
    expect(s.decodes.CPU).toMatchObject({ status: "ok", length: 4096 * 4096 });
    expect(s.decodes.WebGPU).toMatchObject({ status: "ok", length: 4096 * 4096 });
    expect(s.agreement).toEqual({ equal: true });
    // The page stays responsive: a zoom redraw of both canvases is one frame's work.
    const redrawMs = await page.evaluate(() => {
      const t = performance.now();
      window.__inspector.structureView.draw();
      window.__inspector.valuesView.draw();
      return performance.now() - t;
    });
    console.log(`4096x4096 (${big.bytes.length} bytes, ${big.leafCount} leaves): open to done ${openMs} ms; CPU ${s.decodes.CPU!.ms?.toFixed(0)} ms, WebGPU ${s.decodes.WebGPU!.ms?.toFixed(0)} ms; redraw ${redrawMs.toFixed(1)} ms`);
    await page.mouse.move(0, 0);
    await page.screenshot({ path: join(SHOTS, "large-4096.png") });
  });

  it("raised no page errors", () => {
    expect(consoleErrors).toEqual([]);
  });

  it("works without WebGPU: CPU only, and says why the GPU column is missing", async () => {
    const p = await context.newPage();
    try {
      await p.addInitScript(() => Object.defineProperty(Navigator.prototype, "gpu", { get: () => undefined }));
      await p.goto(server.url);
      await p.waitForFunction(() => !!window.__inspector);
      const m = makeMixedV2();
      const s = await openFile(m, p);
      expect(s.decodes.CPU).toMatchObject({ status: "ok" });
      expect(s.decodes.WebGPU?.status).toBe("unavailable");
      expect(s.decodes.WebGPU?.message).toContain("navigator.gpu is missing");
      expect(await p.evaluate(() => window.__inspector.decodedBits("CPU"))).toEqual(expectedBits(m));
      expect(await p.locator("#gpu-note").innerText()).toContain("No WebGPU column");
      expect(await p.locator("#agreement").innerText()).toContain("no WebGPU comparison");
      await p.screenshot({ path: join(SHOTS, "no-webgpu.png") });
    } finally {
      await p.close();
    }
  });
});
