import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex, type Shape } from "@sgfp4/format";
import { afterAll, describe, expect, it } from "vitest";
import { WorkerPool } from "../src/parallel.js";
import { ExponentCounts, PowerSum, tensorPower } from "../src/power.js";
import { useFitKernels } from "../src/fit/kernels.js";
import { synthetic } from "../src/random.js";
import { encodeTensor, encodeTensorBands, joinPieces, type EncodeOptions } from "../src/tensor.js";

/** A row source over `data` that hands out fresh copies and records what it was asked for. */
function rowSource(data: Float32Array, cols: number) {
  const asked: [number, number][] = [];
  const read = async (r0: number, n: number): Promise<Float32Array> => {
    asked.push([r0, n]);
    return data.slice(r0 * cols, (r0 + n) * cols);
  };
  return { read, asked };
}

const concat = (parts: { row0: number; values: Float32Array }[], length: number, cols: number): Float32Array => {
  const out = new Float32Array(length).fill(Number.NaN);
  let next = 0;
  for (const { row0, values } of parts) {
    expect(row0).toBe(next); // in row order, each row once
    out.set(values, row0 * cols);
    next = row0 + values.length / cols;
  }
  return out;
};

describe("banded encode (encodeTensorBands)", () => {
  const pool2 = new WorkerPool(2);
  afterAll(async () => {
    await pool2.close();
  });
  // ragged: 4 x 5 macroblocks, the last row and column partial; student-t gives MIXED records
  const shape: Shape = [250, 301];
  const data = synthetic("student-t", 250, 301, 5);
  const settings: [string, EncodeOptions][] = [
    ["rd (default)", {}],
    ["rd, lwe", { distortion: "lwe" }],
    ["spec", { policy: "spec" }],
    ["v1", { profile: "v1" }],
    ["rd, bpw 3", { bpw: 3 }],
    ["spec, bpw 4.5", { policy: "spec", bpw: 4.5 }],
  ];
  for (const [label, opts] of settings) {
    for (const threads of [1, 2]) {
      it(`${label}, ${threads} thread(s): the bytes, statistics and decode of encodeTensor on the whole array`, async () => {
        const pool = threads > 1 ? pool2 : undefined;
        const whole = await encodeTensor(data, shape, { ...opts, ...(pool ? { pool } : {}) });
        const src = rowSource(data, shape[1]);
        const decoded: { row0: number; values: Float32Array }[] = [];
        const banded = await encodeTensorBands(src.read, shape, { ...opts, ...(pool ? { pool } : {}), bandRows: 64, onDecodedRows: (row0, values) => decoded.push({ row0, values: values.slice() }) });
        expect(sha256Hex(joinPieces(banded.container))).toBe(sha256Hex(whole.bytes));
        expect(banded.stats).toEqual(whole.stats);
        expect(Buffer.from(concat(decoded, data.length, shape[1]).buffer).equals(Buffer.from(whole.decoded.buffer))).toBe(true);
        // it read bands only, every pass in row order from row 0
        expect(Math.max(...src.asked.map(([, n]) => n))).toBe(64);
        const passes = src.asked.filter(([r0]) => r0 === 0).length;
        const expected = (opts.policy === "spec" ? 1 : 2) + (opts.bpw !== undefined ? 1 : 0) + 1; // power (+ capped power), analysis, encode
        expect(passes).toBe(expected);
      }, 30_000);
    }
  }
  it("bpw with the statistics spilled to a file (spillDir): the same bytes, and the file is removed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sgfp4-spill-"));
    try {
      for (const opts of [{ bpw: 3 }, { policy: "spec" as const, bpw: 4.5 }]) {
        const whole = await encodeTensor(data, shape, opts);
        let seen: string[] = [];
        const src = rowSource(data, shape[1]);
        const spilled = await encodeTensorBands(
          async (r0, n) => {
            if (r0 === 0) seen = [...seen, ...readdirSync(dir)];
            return src.read(r0, n);
          },
          shape,
          { ...opts, spillDir: dir, bandRows: 128 },
        );
        expect(sha256Hex(joinPieces(spilled.container))).toBe(sha256Hex(whole.bytes));
        expect(spilled.stats).toEqual(whole.stats);
        expect(seen.length).toBeGreaterThan(0); // the encode pass found the statistics file there
        expect(readdirSync(dir)).toEqual([]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("refuses a source that gives the wrong number of values, and non-finite values with their index", async () => {
    await expect(encodeTensorBands(async (_r0, n) => new Float32Array(n * 10 - 1), [64, 10])).rejects.toThrow(/readRows\(0, 64\) gave 639 values/);
    const bad = synthetic("gaussian", 130, 10, 1);
    bad[1000] = Number.NaN;
    await expect(encodeTensorBands(rowSource(bad, 10).read, [130, 10], { bandRows: 64 })).rejects.toThrow(/tensor value 1000 is NaN/);
    await expect(encodeTensorBands(rowSource(bad, 10).read, [130, 10], { bandRows: 65 })).rejects.toThrow(/multiple of 64/);
  });
});

describe("PowerSum", () => {
  it("gives tensorPower's bits for the values added in pieces of any length", () => {
    // 2^27 at index 0 and 8 then ones (see tensor.test.ts): the result depends on which partial
    // each value is in, so a piece that restarted the partials at its own index 0 would differ
    const data = new Float32Array(203).map((_, i) => (i % 8 === 0 && i < 16 ? 2 ** 27 : 1 + (i % 5) * 0.1));
    const whole = tensorPower(data);
    for (const cuts of [[1], [3, 7, 100], [5, 6, 13, 202], [8, 16, 64]]) {
      const s = new PowerSum();
      let at = 0;
      for (const c of [...cuts, data.length]) {
        s.add(data.subarray(at, c));
        at = c;
      }
      expect(s.mean()).toBe(whole);
    }
    // partials by the index within each piece would not: the test can tell
    const p = new Float64Array(8);
    let at = 0;
    for (const c of [3, 7, 100, data.length]) {
      for (let j = at; j < c; j++) p[(j - at) & 7] = p[(j - at) & 7]! + data[j]! * data[j]!;
      at = c;
    }
    expect((p[0]! + p[1]! + (p[2]! + p[3]!) + (p[4]! + p[5]! + (p[6]! + p[7]!))) / data.length).not.toBe(whole);
  });

  it("gives the same sums and exponent counts with the kernel (pieces of its buffer and a tail) as without", () => {
    const data = new Float32Array(3 * 16384 + 13).map((_, i) => Math.sin(i * 0.37) * 2 ** ((i % 23) - 11));
    const run = (): [number, number, number] => {
      const ex = new ExponentCounts();
      const plain = new PowerSum().add(data.subarray(0, 5), ex).add(data.subarray(5), ex).sum();
      const cap2 = ex.cap2();
      return [plain, cap2, new PowerSum(cap2).add(data.subarray(0, 16387)).add(data.subarray(16387)).sum()];
    };
    useFitKernels(false);
    const js = run();
    useFitKernels(true);
    expect(run()).toEqual(js);
  });

  it("adds each square as min(w^2, cap) would, a NaN as the cap (Infinity without one), in the fast loop too", () => {
    const data = new Float32Array(100).map((_, i) => (i % 3) - 1.5 + i * 1e-3);
    // the reference: each partial in index order, a square at or above the cap (or NaN) as the cap
    const reference = (values: Float32Array, cap2: number): number => {
      const p = new Float64Array(8);
      values.forEach((w, i) => (p[i & 7] = p[i & 7]! + (w * w < cap2 ? w * w : cap2)));
      return p[0]! + p[1]! + (p[2]! + p[3]!) + (p[4]! + p[5]! + (p[6]! + p[7]!));
    };
    for (const bad of [undefined, Number.NaN, Infinity, -Infinity]) {
      const values = data.slice();
      if (bad !== undefined) values[42] = bad;
      for (const cap2 of [Infinity, 1]) expect(Object.is(new PowerSum(cap2).add(values.subarray(0, 33)).add(values.subarray(33)).sum(), reference(values, cap2))).toBe(true);
    }
  });
});
