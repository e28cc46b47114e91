/**
 * decodeAsync / decodeIntoAsync: same bits as the synchronous decode and as construction, safe
 * when called concurrently (the device and its queue are shared), the event loop keeps running
 * during a large decode, and every rejection carries its Sgfp4Error code.
 */
import { GOLDEN_DIR, goldenVectors, thrownCode } from "./golden.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MODE_FP4, isSgfp4Error, writeV1, type Shape } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { createConformanceBackend, decode, decodeAsync, decodeIntoAsync, nativeAddon } from "../src/index.js";
import { Rng, firstBitDifference, generateValid, weightValue } from "@sgfp4/testkit";

const SHAPES: Shape[] = [[1, 1], [3, 200], [65, 63], [130, 70], [64, 64], [200, 129], [1, 257], [128, 1]];

describe("decodeAsync matches construction and the synchronous decode bit for bit", () => {
  for (let seed = 101; seed <= 112; seed++) {
    it(`random containers, seed ${seed}`, async () => {
      const r = new Rng(seed);
      const shape = SHAPES[seed % SHAPES.length]!;
      for (const profile of ["v1", "v2"] as const) {
        const built = generateValid(r, { profile, shape });
        const got = await decodeAsync(built.bytes, { profile, shape });
        expect(firstBitDifference(got, built.expected)).toBe(-1);
        expect(firstBitDifference(got, decode(built.bytes, { profile, shape }))).toBe(-1);
        const out = new Float32Array(shape[0] * shape[1]).fill(NaN);
        expect(await decodeIntoAsync(built.bytes, { profile, shape }, out)).toBe(out);
        expect(firstBitDifference(out, built.expected)).toBe(-1);
      }
    });
  }

  it("the input is copied: overwriting bytes right after the call does not change the result", async () => {
    const built = generateValid(new Rng(5), { profile: "v2", shape: [130, 70] });
    const bytes = built.bytes.slice();
    const pending = decodeAsync(bytes, { profile: "v2", shape: [130, 70] });
    bytes.fill(0xff);
    expect(firstBitDifference((await pending) as Float32Array, built.expected)).toBe(-1);
  });
});

describe("golden vectors through decodeAsync", () => {
  const dir = GOLDEN_DIR;
  const vectors = goldenVectors();
  it("are present", () => expect(vectors.length).toBeGreaterThan(0));
  for (const v of vectors) {
    it(v.id, async () => {
      const bytes = new Uint8Array(readFileSync(join(dir, v.container)));
      if (v.expect.reject) {
        const code = await decodeAsync(bytes, { profile: v.profile, shape: v.shape }).then(
          () => undefined,
          (e: unknown) => (isSgfp4Error(e) ? e.code : `not an Sgfp4Error: ${String(e)}`),
        );
        if (v.expect.reject === "ANY") expect(code).toMatch(/^[A-Z_]+$/);
        else expect(code).toBe(v.expect.reject);
        // Straight into the addon: the native parse refuses it before any worker is queued.
        const nativeCode = thrownCode(() => void nativeAddon().decodeAsync(bytes, v.profile, v.shape[0], v.shape[1], null));
        if (v.expect.reject === "ANY") expect(nativeCode).toBeDefined();
        else expect(nativeCode).toBe(v.expect.reject);
      } else {
        const want = new Uint8Array(readFileSync(join(dir, v.expect.decode!.output!)));
        const out = await decodeAsync(bytes, { profile: v.profile, shape: v.shape });
        expect(Buffer.from(out.buffer, out.byteOffset, out.byteLength).equals(Buffer.from(want))).toBe(true);
      }
    });
  }
});

describe("concurrency", () => {
  it("8 concurrent decodeAsync calls give the same bits as construction and the synchronous decode", async () => {
    const r = new Rng(42);
    const jobs = Array.from({ length: 8 }, (_, k) => {
      const shape = ([[300, 257], [130, 70], [65, 63], [512, 512]] as Shape[])[k % 4]!;
      const profile = k % 2 ? "v2" : "v1";
      return { shape, profile, built: generateValid(r, { profile, shape }) } as const;
    });
    const results = await Promise.all(jobs.map((j) => decodeAsync(j.built.bytes, { profile: j.profile, shape: j.shape })));
    results.forEach((got, k) => {
      const j = jobs[k]!;
      expect(firstBitDifference(got, j.built.expected)).toBe(-1);
      expect(firstBitDifference(got, decode(j.built.bytes, { profile: j.profile, shape: j.shape }))).toBe(-1);
    });
  });

  it("a synchronous decode between queued async ones is unaffected", async () => {
    const r = new Rng(43);
    const a = generateValid(r, { profile: "v2", shape: [256, 256] }), b = generateValid(r, { profile: "v1", shape: [130, 70] });
    const pending = [1, 2, 3, 4].map(() => decodeAsync(a.bytes, { profile: "v2", shape: [256, 256] }));
    expect(firstBitDifference(decode(b.bytes, { profile: "v1", shape: [130, 70] }), b.expected)).toBe(-1);
    for (const got of await Promise.all(pending)) expect(firstBitDifference(got, a.expected)).toBe(-1);
  });
});

describe("the event loop stays responsive", () => {
  it("a 1 ms interval keeps firing while a 64 MiB decode runs", async () => {
    // 4096 x 4096 float32 = 64 MiB; 4096 FP4 blocks with codes -8..7 and per-block scale/bias.
    const shape: Shape = [4096, 4096];
    const codes = Array.from({ length: 4096 }, (_, i) => (i % 16) - 8);
    const scaleOf = (b: number) => 0x3c00 + (b & 0x3ff);
    const biasOf = (b: number) => 0x8000 | (b & 0x3ff);
    const bytes = writeV1({ shape, blocks: Array.from({ length: 4096 }, (_, b) => ({ mode: MODE_FP4, scaleBits: scaleOf(b), biasBits: biasOf(b), codes })) });

    let ticks = 0;
    const pending = decodeAsync(bytes, { profile: "v1", shape });
    const timer = setInterval(() => ticks++, 1);
    let ticksWhenDone = -1;
    const got = await pending.finally(() => {
      ticksWhenDone = ticks;
      clearInterval(timer);
    });
    // A blocking decode (the old Promise around the synchronous call) gives 0 here.
    expect(ticksWhenDone).toBeGreaterThanOrEqual(2);

    // Every 64th row and column checked against construction (the whole 16 M would dominate the test).
    let bad = 0;
    for (let y = 0; y < 4096; y += 61) {
      for (let x = 0; x < 4096; x += 7) {
        const b = (y >> 6) * 64 + (x >> 6);
        if (got[y * 4096 + x] !== weightValue(scaleOf(b), biasOf(b), codes[(y & 63) * 64 + (x & 63)]!)) bad++;
      }
    }
    expect(bad).toBe(0);
    expect(got.length).toBe(4096 * 4096);
  }, 60_000);
});

describe("rejections carry their codes", () => {
  const built = generateValid(new Rng(9), { profile: "v1", shape: [3, 200] });
  const opts = { profile: "v1" as const, shape: [3, 200] as Shape };
  const codeOf = (p: Promise<unknown>) =>
    p.then(
      () => "resolved",
      (e: unknown) => (isSgfp4Error(e) ? e.code : `not an Sgfp4Error: ${String(e)}`),
    );

  it("stream faults, wrong shape, wrong out, limits", async () => {
    expect(await codeOf(decodeAsync(built.bytes.subarray(1), opts))).toBe("SIZE_MISMATCH");
    expect(await codeOf(decodeAsync(built.bytes, { ...opts, shape: [0, 200] }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(decodeAsync(built.bytes, { ...opts, limits: { maxOutputBytes: 16 } }))).toBe("LIMIT_EXCEEDED");
    expect(await codeOf(decodeIntoAsync(built.bytes, opts, new Float32Array(3)))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(decodeIntoAsync(built.bytes, opts, new Float64Array(600) as unknown as Float32Array))).toBe("INVALID_ARGUMENT");
  });

  it("never throws synchronously: errors arrive as rejections", () => {
    expect(() => void decodeAsync(new Uint8Array(3), opts).catch(() => {})).not.toThrow();
  });

  it("an unknown device rejects with BACKEND_FAILURE, reason no-device", async () => {
    await expect(decodeAsync(built.bytes, { ...opts, device: "no-such-device-xyz" })).rejects.toMatchObject({ name: "Sgfp4Error", code: "BACKEND_FAILURE", reason: "no-device" });
  });

  it("out detached while the decode runs: rejects INVALID_ARGUMENT, no crash", async () => {
    const out = new Float32Array(600);
    const pending = decodeIntoAsync(built.bytes, opts, out);
    structuredClone(out.buffer, { transfer: [out.buffer] });
    expect(out.length).toBe(0);
    expect(await codeOf(pending)).toBe("INVALID_ARGUMENT");
  });

  it("hostile direct calls into the addon throw with a code, never queue", () => {
    const a = nativeAddon();
    const call = (f: () => unknown) => {
      try {
        f();
        return "returned";
      } catch (e) {
        return (e as { code?: string }).code;
      }
    };
    expect(call(() => a.decodeAsync(built.bytes, "v1", 3, 200, new Float32Array(5)))).toBe("INVALID_ARGUMENT");
    expect(call(() => a.decodeAsync(built.bytes, "v3" as "v1", 3, 200, null))).toBe("INVALID_ARGUMENT");
    expect(call(() => a.decodeAsync(built.bytes, "v1", 3, -1, null))).toBe("INVALID_ARGUMENT");
    expect(call(() => a.decodeAsync(new Uint16Array(4) as unknown as Uint8Array, "v1", 3, 200, null))).toBe("INVALID_ARGUMENT");
  });

  it("the conformance backend decodes through decodeAsync and rejects with codes", async () => {
    const b = createConformanceBackend();
    const pending = b.decode(built.bytes, opts);
    expect(pending).toBeInstanceOf(Promise);
    expect(firstBitDifference((await pending) as Float32Array, built.expected)).toBe(-1);
    expect(await codeOf(b.decode(built.bytes.subarray(1), opts))).toBe("SIZE_MISMATCH");
  });
});
