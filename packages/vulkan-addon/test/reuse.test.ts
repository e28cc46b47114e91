/**
 * Buffers kept between calls (the device's pool: staging, readback, device buffers), freed by
 * close(); one validation per call (the native parser), with @sgfp4/format's detailed error when
 * it rejects; the decoder keeps working after a rejection.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Sgfp4Error, parse } from "@sgfp4/format";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { describe, expect, it } from "vitest";
import { createDecoder, decode, decodeAsync, decodeInto, nativeAddon } from "../src/index.js";
import { GOLDEN_DIR, goldenVectors } from "./golden.js";

const pooled = () => nativeAddon().stats().idleBuffers;

describe("buffers are reused across calls and freed by close()", () => {
  it("repeated decodes of one shape take the same buffers; close() frees them", async () => {
    const d = createDecoder();
    await d.close!();
    expect(pooled()).toBe(0);
    const built = generateValid(new Rng(21), { profile: "v2", shape: [200, 300] });
    const opts = { profile: "v2" as const, shape: [200, 300] as [number, number] };
    expect(firstBitDifference(decode(built.bytes, opts), built.expected)).toBe(-1);
    const afterOne = pooled();
    expect(afterOne).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) expect(firstBitDifference((await d.decode(built.bytes, opts)) as Float32Array, built.expected)).toBe(-1);
    expect(pooled()).toBe(afterOne);
    await d.close!();
    expect(pooled()).toBe(0);
    expect(firstBitDifference(decode(built.bytes, opts), built.expected)).toBe(-1); // usable after close
  });

  it("concurrent decodes take distinct buffers and all give them back", async () => {
    const cases = Array.from({ length: 6 }, (_, k) => generateValid(new Rng(40 + k), { profile: "v1", shape: [100, 130] }));
    const outs = await Promise.all(cases.map((c) => decodeAsync(c.bytes, { profile: "v1", shape: [100, 130] })));
    outs.forEach((o, k) => expect(firstBitDifference(o, cases[k]!.expected)).toBe(-1));
    expect(pooled()).toBeLessThanOrEqual(3 * 8); // at most 8 idle per kind
  });
});

describe("large outputs", () => {
  it("decode, decodeInto and decodeAsync of 4 MiB and 2 MiB (f16) outputs; the GPU reads and writes the caller's pages where it can import them", async () => {
    const { hostImports } = nativeAddon().stats();
    const built = generateValid(new Rng(77), { profile: "v2", shape: [1024, 1030] });
    const opts = { profile: "v2" as const, shape: [1024, 1030] as [number, number] };
    expect(firstBitDifference(decode(built.bytes, opts), built.expected)).toBe(-1);
    const into = new Float32Array(1024 * 1030).fill(7);
    expect(firstBitDifference(decodeInto(built.bytes, opts, into), built.expected)).toBe(-1);
    expect(firstBitDifference(await decodeAsync(built.bytes, opts), built.expected)).toBe(-1);
    const half = decode(built.bytes, { ...opts, format: "f16" });
    expect(half.length).toBe(1024 * 1030);
    const imported = nativeAddon().stats().hostImports - hostImports;
    // SGFP4_VULKAN_FORCE_STAGING runs the discrete path; lavapipe has VK_EXT_external_memory_host;
    // the import is opt-in (SGFP4_VULKAN_HOST_IMPORT=1), used by decodeInto only (decode and
    // decodeAsync hand over pooled readback memory instead)
    if (process.env.SGFP4_VULKAN_HOST_IMPORT === "1" && process.env.SGFP4_VULKAN_FORCE_STAGING) expect(imported).toBeGreaterThanOrEqual(1);
    else expect(imported).toBe(0);
  });
});

describe("a rejected stream: @sgfp4/format's detailed error, then the decoder goes on", () => {
  const rejects = goldenVectors().filter((v) => v.expect.reject);
  it("reject vectors are present", () => expect(rejects.length).toBeGreaterThan(10));
  for (const v of rejects) {
    it(v.id, async () => {
      const bytes = new Uint8Array(readFileSync(join(GOLDEN_DIR, v.container)));
      const opts = { profile: v.profile, shape: v.shape };
      let reference: unknown;
      try {
        parse(bytes, opts);
      } catch (e) {
        reference = e;
      }
      expect(reference).toBeInstanceOf(Sgfp4Error);
      const { code, message } = reference as Sgfp4Error;
      if (v.expect.reject !== "ANY") expect(code).toBe(v.expect.reject);
      expect(() => decode(bytes, opts)).toThrow(expect.objectContaining({ code, message }));
      await expect(decodeAsync(bytes, opts)).rejects.toMatchObject({ code, message });
      const ok = generateValid(new Rng(7), { profile: "v1", shape: [5, 9] });
      expect(firstBitDifference(decode(ok.bytes, { profile: "v1", shape: [5, 9] }), ok.expected)).toBe(-1);
    });
  }
});
