import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { MODE_FP4, MODE_T158 } from "@sgfp4/format";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_FIT_OPTIONS, FitWorkspace, finishLeaf, fitLeafCandidates } from "../src/fit.js";
import { pass } from "../src/fit/codes.js";
import { fitKernels, useFitKernels } from "../src/fit/kernels.js";
import { scaleToHalfBits, biasToHalfBits } from "../src/half.js";
import { synthetic, type Family } from "../src/random.js";
import { encodeTensor } from "../src/tensor.js";
import type { Fitted, LeafFit } from "../src/fit/types.js";
import { T158BoundScratch, t158SseLowerBound } from "../src/fit/t158-bound.js";
import { FIT_TOOLCHAIN } from "../src/fit/wasm-bytes.generated.js";

function installedClang(): string | null {
  try {
    return execFileSync("clang", ["--version"], { encoding: "utf8" }).split("\n")[0]!.trim();
  } catch {
    return null;
  }
}

const o = { ...DEFAULT_FIT_OPTIONS, search: "joint" as const, v2: true };
const FAMILIES: readonly Family[] = ["gaussian", "laplacian", "student-t", "row-scale", "low-rank", "sparse"];

afterEach(() => {
  useFitKernels(true);
});

/** Every size x size leaf of a 64x64 tensor of each family (and a few scaled far up and down). */
function leaves(size: number): Float64Array[] {
  const out: Float64Array[] = [];
  for (const [k, family] of FAMILIES.entries()) {
    for (const scale of [1, 1e-6, 3e4]) {
      const data = synthetic(family, 64, 64, 5 + k);
      for (let y = 0; y < 64; y += size) {
        for (let x = 0; x < 64; x += size) {
          const v = new Float64Array(size * size);
          for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) v[i * size + j] = Math.fround(data[(y + i) * 64 + x + j]! * scale);
          out.push(v);
        }
      }
    }
  }
  return out;
}

const sumOf = (v: Float64Array): number => v.reduce((s, w) => s + w, 0);

/** Both paths' results, kernels off (JavaScript loops) then on. */
function both<T>(f: () => T): [T, T] {
  useFitKernels(false);
  const js = f();
  useFitKernels(true);
  return [js, f()];
}

const fields = (c: Fitted | LeafFit["t158"]) => ({ ...c, codes: Array.from(c.codes) });

describe("WebAssembly SIMD kernels (native/fit.c)", () => {
  it("compile on this engine", () => {
    expect(fitKernels()).not.toBeNull();
  });

  it.skipIf(installedClang() !== FIT_TOOLCHAIN)(`are the committed build of native/fit.c (${FIT_TOOLCHAIN})`, () => {
    // exits 1 (throws) when a rebuild differs from src/fit/wasm-bytes.generated.ts
    const out = execFileSync("node", [join(import.meta.dirname, "..", "scripts/build-wasm.mjs"), "--check"], { encoding: "utf8" });
    expect(out).toContain("matches");
  }, 60_000);

  it("give the JavaScript pass's codes and sums, both modes, with and without an early stop", () => {
    const ws = new FitWorkspace();
    let checked = 0;
    for (const size of [4, 8, 16, 32]) {
      for (const v of leaves(size)) {
        const n = v.length;
        const mean = sumOf(v) / n;
        const spread = Math.max(...v.map((w) => Math.abs(w - mean)));
        for (const mode of [MODE_FP4, MODE_T158] as const) {
          for (const f of [0.05, 0.14, 0.5]) {
            const scaleBits = scaleToHalfBits(spread * f);
            const biasBits = biasToHalfBits(mean, true);
            const full = both(() => {
              const out = new Int8Array(n);
              const r = pass(ws, v, n, mode, scaleBits, biasBits, out, Infinity);
              return { ...r, out: Array.from(out) };
            });
            expect(full[1]).toEqual(full[0]);
            const stopped = both(() => ({ ...pass(ws, v, n, mode, scaleBits, biasBits, new Int8Array(n), full[0].sse * 0.5) }));
            // a stopped pass's error is some partial sum at or above stopAt: both stop, at the same chunk
            expect(stopped[1]).toEqual(stopped[0]);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it("give the same joint-search candidates and polished leaves", () => {
    for (const size of [4, 8, 16, 32, 64]) {
      const ws = new FitWorkspace();
      for (const v of leaves(size)) {
        const sv = sumOf(v);
        const [a, b] = both(() => fitLeafCandidates(v, size, o, sv, ws));
        expect(fields(b.fp4)).toEqual(fields(a.fp4));
        expect(fields(b.t158)).toEqual(fields(a.t158));
        const [pa, pb] = both(() => finishLeaf(ws, v, size * size, { ...a.fp4, codes: a.fp4.codes.slice() } as Fitted, o));
        expect(fields(pb)).toEqual(fields(pa));
        // refit rounds the kernel cannot count as the loop does (a fraction) run in JavaScript
        const odd = { ...o, maxRefitIterations: 1.5 };
        const [ra, rb] = both(() => fitLeafCandidates(v, size, odd, sv, ws).fp4);
        expect(fields(rb)).toEqual(fields(ra));
      }
    }
  });

  it("give t158SseLowerBound's number", () => {
    const scratch = new T158BoundScratch();
    let seed = 3;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    let positive = 0;
    for (let t = 0; t < 3000; t++) {
      const n = [16, 64, 256, 1024, 4096][t % 5]!;
      const spread = 1 + rand() * 8;
      const distinct = 1 + Math.floor(rand() * 16);
      const codes = new Int8Array(n).map(() => Math.max(-8, Math.min(7, Math.round((rand() - 0.5) * spread * 2))) % (distinct + 1) - (t % 3 === 0 ? 0 : 1));
      const scaleBits = scaleToHalfBits(10 ** (rand() * 8 - 4));
      const biasBits = biasToHalfBits((rand() - 0.5) * 10 ** (rand() * 6 - 3), true);
      const sseF = [0, 1e-6, 0.1, 10, 1e4][t % 5]! * n * rand();
      const [a, b] = both(() => t158SseLowerBound(scratch, codes, n, scaleBits, biasBits, sseF));
      expect(Object.is(a, b)).toBe(true);
      if (a > 0) positive++;
    }
    expect(positive).toBeGreaterThan(300);
  });

  it("give the same encodes (bytes, decode and statistics) on every family under several settings", async () => {
    for (const family of FAMILIES) {
      const data = synthetic(family, 130, 200, 21);
      for (const opts of [{}, { lambda: 0.0005 }, { lambda: 0.08 }, { bpw: 3 }, { distortion: "lwe" as const }, { policy: "spec" as const }, { profile: "v1" as const }]) {
        useFitKernels(false);
        const js = await encodeTensor(data, [130, 200], opts);
        useFitKernels(true);
        const k = await encodeTensor(data, [130, 200], opts);
        expect(Buffer.compare(Buffer.from(k.bytes), Buffer.from(js.bytes))).toBe(0);
        expect(Buffer.compare(Buffer.from(k.decoded.buffer), Buffer.from(js.decoded.buffer))).toBe(0);
        // the statistics too (the chosen leaves' LWE: native/leaf_lwe.h leaf_lwe)
        expect(k.stats).toEqual(js.stats);
      }
    }
  });
});
