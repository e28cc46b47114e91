/**
 * The fuzzer must be able to fail: two backends with a planted bug (built on the real CPU
 * backend) are each caught within a bounded run, and the finding shrinks into a candidate
 * vector the conformance runner loads.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createDecoder } from "@sgfp4/cpu-decoder";
import { loadVectorSet } from "@sgfp4/conformance";
import type { Decoder } from "@sgfp4/format";
import { runFuzz, saveFinding } from "../src/index.js";

const cpu = (): Decoder => createDecoder();

/**
 * Flushes results below the FP16 normal range (|w| < 2^-14) to zero, as a kernel that works in
 * half precision with denormals off would. (A float32 output is never subnormal here: every
 * result is a multiple of 2^-24, so the FP16 range is where flushing shows.)
 */
function flushing(): Decoder {
  const inner = cpu();
  return {
    name: "flush-fp16-subnormals",
    formats: ["f32"],
    available: () => inner.available(),
    decode: async (bytes, opts) => {
      const out = await inner.decode(bytes, opts);
      const w = new Uint32Array(out.buffer, out.byteOffset, out.length);
      for (let i = 0; i < w.length; i++) if (((w[i]! >>> 23) & 0xff) < 113) w[i]! &= 0x80000000;
      return out;
    },
  };
}

/** Ignores nonzero padding: decodes streams a strict decoder must refuse. */
function lenientPadding(): Decoder {
  const inner = cpu();
  return {
    name: "lenient-padding",
    formats: ["f32"],
    available: () => inner.available(),
    decode: async (bytes, opts) => {
      try {
        return await inner.decode(bytes, opts);
      } catch (e) {
        if ((e as { code?: string }).code === "NONZERO_PADDING") return new Float32Array(opts.shape[0] * opts.shape[1]);
        throw e;
      }
    },
  };
}

describe("planted bugs are found", () => {
  it("flushing FP16 subnormals differs from the constructed output", async () => {
    const stats = await runFuzz([cpu(), flushing()], { seed: 5, cases: 200, mutateRatio: 0 });
    expect(stats.findings.length).toBeGreaterThan(0);
    expect(stats.findings[0]!.reason).toMatch(/flush-fp16-subnormals differs from the constructed output/);
  });

  it("accepting nonzero padding is a disagreement, shrunk into a loadable candidate", async () => {
    const backends = [cpu(), lenientPadding()];
    const stats = await runFuzz(backends, { seed: 6, cases: 300 });
    const f = stats.findings.find((x) => /lenient-padding decoded but cpu rejected NONZERO_PADDING/.test(x.reason));
    expect(f, stats.findings.map((x) => x.reason).join("\n")).toBeDefined();
    const dir = await mkdtemp(path.join(tmpdir(), "fuzz-planted-"));
    try {
      await saveFinding(dir, backends, f!, { maxRounds: 400 });
      const set = await loadVectorSet(dir);
      expect(set.vectors).toHaveLength(1);
      const v = set.vectors[0]!;
      expect(v.description).toMatch(/Shrunk from \d+ to \d+ bytes/);
      const [from, to] = /Shrunk from (\d+) to (\d+)/.exec(v.description)!.slice(1).map(Number);
      expect(to!).toBeLessThan(from!);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
