/**
 * The Node validator pool (worker threads): the same leaf tables and errors as the calling
 * thread's validator, decodeMany through it bit-exact, and a pool whose workers cannot start
 * falling back to the calling thread. Expected outputs: generateValid's, from construction.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Sgfp4Error, type Shape } from "@sgfp4/format";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { WebGpuDecoder } from "../src/decoder.js";
import { wasmValidator } from "../src/job.js";
import { WorkerValidatorPool } from "../src/worker-pool.js";
import { device, noGpu } from "./device.js";

const SHAPES: Shape[] = [[130, 70], [65, 63], [64, 256], [129, 257], [1, 1], [200, 3]];
const tensors = SHAPES.map((shape, i) => {
  const profile = i % 2 ? "v1" : "v2";
  const built = generateValid(new Rng(1700 + i), { profile, shape });
  return { name: `t${i}`, bytes: built.bytes, profile, shape, expected: built.expected } as const;
});
const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as Sgfp4Error).code;
  }
  return "accepted";
};

describe("WorkerValidatorPool", () => {
  const pool = new WorkerValidatorPool(2);
  const broken = new WorkerValidatorPool(1, new URL("./no-such-worker.js", import.meta.url));
  afterAll(() => Promise.all([pool.terminate(), broken.terminate()]));

  it("gives the calling thread's leaf tables and error codes, also for a view into a larger buffer", async () => {
    for (const p of [pool, broken]) {
      for (const t of tensors) {
        const padded = new Uint8Array(t.bytes.length + 10);
        padded.set(t.bytes, 5);
        const got = await p.validate(padded.subarray(5, 5 + t.bytes.length), t);
        expect(got.profile).toBe(t.profile);
        expect(Array.from(got.leafTable)).toEqual(Array.from(wasmValidator(t.bytes, t).leafTable));
        const cut = t.bytes.subarray(0, t.bytes.length - 1);
        const err = await p.validate(cut, t).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(Sgfp4Error);
        expect((err as Sgfp4Error).code).toBe(codeOf(() => wasmValidator(cut, t)));
      }
    }
    // streams already in a SharedArrayBuffer go as they are; many in flight at once reuse the pool's buffers
    const inShared = tensors.map((t) => {
      const b = new Uint8Array(new SharedArrayBuffer(t.bytes.length));
      b.set(t.bytes);
      return b;
    });
    const many = await Promise.all([...tensors, ...tensors, ...tensors].map((t, i) => pool.validate(i < tensors.length ? inShared[i]! : t.bytes, t)));
    many.forEach((got, i) => expect(Array.from(got.leafTable)).toEqual(Array.from(wasmValidator(tensors[i % tensors.length]!.bytes, tensors[i % tensors.length]!).leafTable)));
    expect(pool.liveWorkers).toBe(2); // the answers came from workers
    expect(broken.liveWorkers).toBe(0); // and these from the calling thread
  });

  it.skipIf(noGpu)("decodeMany through it: every tensor bit-exact; a rejected one named", async () => {
    const d = new WebGpuDecoder(device!, { validatorPool: pool });
    const out = await d.decodeMany(tensors, { arena: true });
    for (const [i, o] of out.entries()) {
      const got = (await d.readBack(o.buffer, o.offset + o.byteLength)).subarray(o.offset / 4);
      expect(firstBitDifference(got, tensors[i]!.expected)).toBe(-1);
    }
    out[0]!.buffer.destroy();
    const bad = tensors.map((t, i) => (i === 2 ? { ...t, bytes: t.bytes.subarray(0, 30) } : t));
    await expect(d.decodeMany(bad)).rejects.toMatchObject({ message: expect.stringContaining('tensor "t2"') });
    d.destroy();
    device!.destroy();
  });
});
