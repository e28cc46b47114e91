import { afterAll, describe, expect, it } from "vitest";
import { decode } from "../src/index.js";
import { decodeParallel, terminateWorkers } from "../src/parallel.js";
import { Rng, firstBitDifference, generateValid, mutate } from "@sgfp4/testkit";
import { parse } from "@sgfp4/format";
import { SHAPES } from "./helpers.js";

afterAll(() => terminateWorkers());

describe("decodeParallel equals decode bit for bit", () => {
  for (const threads of [1, 2, 3, 5]) {
    it(`${threads} thread(s), v1 and v2, all test shapes`, async () => {
      const rnd = new Rng(1000 + threads);
      for (const shape of SHAPES) {
        for (const profile of ["v1", "v2"] as const) {
          const bytes = generateValid(rnd, { profile, shape }).bytes;
          const got = await decodeParallel(bytes, { profile, shape, threads });
          expect(got.length).toBe(shape[0] * shape[1]);
          expect(firstBitDifference(got, decode(bytes, { profile, shape }))).toBe(-1);
        }
      }
    });
  }

  it("concurrent calls do not mix their outputs", async () => {
    const rnd = new Rng(4242);
    const shape = [130, 70] as const;
    const streams = Array.from({ length: 6 }, () => generateValid(rnd, { profile: "v2", shape }).bytes);
    const results = await Promise.all(streams.map((b) => decodeParallel(b, { profile: "v2", shape, threads: 2 })));
    results.forEach((r, i) => expect(firstBitDifference(r, decode(streams[i]!, { profile: "v2", shape }))).toBe(-1));
  });
});

describe("decodeParallel on worker threads (outputs large enough to be split)", () => {
  const shape = [64 * 40 - 5, 1000] as const; // 10 MiB of f32, cropped: several workers, many bands

  it("v1 and v2: bits equal decode(), f32 and f16", async () => {
    const rnd = new Rng(77);
    for (const profile of ["v1", "v2"] as const) {
      const bytes = generateValid(rnd, { profile, shape }).bytes;
      const got = await decodeParallel(bytes, { profile, shape, threads: 3 });
      expect(got.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(firstBitDifference(got, decode(bytes, { profile, shape }))).toBe(-1);
      const half = await decodeParallel(bytes, { profile, shape, threads: 3, format: "f16" });
      expect(Buffer.from(half.buffer).equals(Buffer.from(decode(bytes, { profile, shape, format: "f16" }).buffer))).toBe(true);
    }
  }, 60_000);

  // whole macroblock rows per band up to 16384 columns (4 MiB), runs of macroblocks beyond: both
  // band shapes, cropped at the right and bottom edges, against the one-thread decode (6.3 and
  // 8.6 MB of f32: split over 2 and 3 threads)
  it("wide tensors: whole-row bands and, beyond 16384 columns, runs of macroblocks", async () => {
    const rnd = new Rng(79);
    for (const wide of [[5 * 64 - 7, 5000], [2 * 64 + 3, 16384 + 70]] as const) {
      for (const profile of ["v1", "v2"] as const) {
        const bytes = generateValid(rnd, { profile, shape: wide }).bytes;
        const got = await decodeParallel(bytes, { profile, shape: wide, threads: 3 });
        expect(firstBitDifference(got, decode(bytes, { profile, shape: wide })), `${profile} ${wide.join("x")}`).toBe(-1);
        const bf = await decodeParallel(bytes, { profile, shape: wide, threads: 3, format: "bf16" });
        expect(Buffer.from(bf.buffer).equals(Buffer.from(decode(bytes, { profile, shape: wide, format: "bf16" }).buffer))).toBe(true);
      }
    }
  }, 60_000);

  it("a fault in a record of a middle band gives parse()'s code; the pool decodes the next stream correctly", async () => {
    const rnd = new Rng(78);
    const c = generateValid(rnd, { profile: "v2", shape, gaps: false });
    const bad = c.bytes.slice();
    const view = new DataView(bad.buffer);
    const blocks = view.getUint32(5, true);
    const middle = Math.floor(blocks / 2);
    view.setUint32(16 + 4 * middle, view.getUint32(16 + 4 * (middle - 1), true), true); // offset not above the previous one
    await expect(decodeParallel(bad, { profile: "v2", shape, threads: 3 })).rejects.toMatchObject({ code: "NONMONOTONIC_OFFSET" });
    const ok = await decodeParallel(c.bytes, { profile: "v2", shape, threads: 3 });
    expect(firstBitDifference(ok, c.expected)).toBe(-1);
  }, 60_000);
});

describe("decodeParallel on mutated streams large enough for several workers", () => {
  const codeOf = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (e) {
      return (e as { code?: string }).code ?? `not an Sgfp4Error: ${String(e)}`;
    }
    return "decoded";
  };

  it("each mutation: parse()'s code, or decode()'s bits (f32 and bf16)", async () => {
    const rnd = new Rng(79);
    let rejected = 0;
    for (let i = 0; i < 24; i++) {
      const profile = i % 3 === 0 ? "v1" : "v2";
      const c = generateValid(rnd, { profile, shape: [64 * rnd.int(20, 34) - rnd.int(0, 63), 1024 + rnd.int(0, 100)] });
      const m = mutate(rnd, c);
      const opts = { profile: m.profile, shape: m.shape, threads: 3 } as const;
      let want = "decoded";
      try {
        parse(m.bytes, opts);
      } catch (e) {
        want = (e as { code: string }).code;
      }
      expect(await codeOf(() => decodeParallel(m.bytes, opts)), `case ${i} ${m.ops.join(",")}`).toBe(want);
      if (want !== "decoded") {
        rejected++;
        continue;
      }
      expect(firstBitDifference(await decodeParallel(m.bytes, opts), decode(m.bytes, opts)), `case ${i}`).toBe(-1);
      const half = await decodeParallel(m.bytes, { ...opts, format: "bf16" });
      expect(Buffer.from(half.buffer).equals(Buffer.from(decode(m.bytes, { ...opts, format: "bf16" }).buffer)), `case ${i} bf16`).toBe(true);
    }
    expect(rejected).toBeGreaterThan(8);
  }, 120_000);
});

describe("decodeParallel when the pool is terminated during a call", () => {
  it("settles: the right bits, or BACKEND_FAILURE; the next call works", async () => {
    const shape = [64 * 64, 1024] as const; // 16 MiB: several threads
    const c = generateValid(new Rng(80), { profile: "v2", shape });
    // its outcome handled before anything is awaited: the call may reject while the pool is
    // still being terminated, and a rejection with no handler yet is reported as unhandled
    const outcome = decodeParallel(c.bytes, { profile: "v2", shape, threads: 3 }).then(
      (out) => (firstBitDifference(out, c.expected) === -1 ? "bits ok" : "bits differ"),
      (e: { code?: string }) => e.code,
    );
    await terminateWorkers();
    const settled = await Promise.race([outcome, new Promise((resolve) => setTimeout(() => resolve("hung"), 20_000))]);
    expect(["bits ok", "BACKEND_FAILURE"]).toContain(settled);
    expect(firstBitDifference(await decodeParallel(c.bytes, { profile: "v2", shape, threads: 3 }), c.expected)).toBe(-1);
  }, 60_000);
});
