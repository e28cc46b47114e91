/**
 * The Node validator pool (worker threads): the same leaf tables and errors as the calling
 * thread's validator, decodeMany through it bit-exact, and a pool whose workers cannot start
 * falling back to the calling thread. Expected outputs: generateValid's, from construction.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

describe("an idle WorkerValidatorPool never keeps the process alive", () => {
  // a child process running a module file (a script given with -e exits even when the pool holds
  // the event loop), so a pool that keeps the process alive shows as a child that does not exit
  const dir = mkdtempSync(join(tmpdir(), "sgfp4-pool-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const t = generateValid(new Rng(5), { profile: "v2", shape: [64, 64] });
  writeFileSync(join(dir, "t.bin"), t.bytes);
  const script = (use: boolean) => `
    import { readFileSync } from "node:fs";
    import { WorkerValidatorPool } from ${JSON.stringify(new URL("../dist/worker-pool.js", import.meta.url).href)};
    const pool = new WorkerValidatorPool(2);
    if (${use}) {
      const got = await pool.validate(readFileSync(new URL("./t.bin", import.meta.url)), { profile: "v2", shape: [64, 64] });
      console.log("validated", got.leafTable.length);
    }
    console.log("done");`;
  for (const use of [false, true]) {
    it(use ? "after validating a stream" : "fresh", () => {
      const file = join(dir, `${use}.mjs`);
      writeFileSync(file, script(use));
      const r = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 20_000 });
      expect(r.error, "the child did not exit within 20 s").toBeUndefined();
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain("done");
      if (use) expect(r.stdout).toContain(`validated ${wasmValidator(t.bytes, { profile: "v2", shape: [64, 64] }).leafTable.length}`);
    }, 30_000);
  }
});
