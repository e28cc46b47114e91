/**
 * Many tensors in one call (decodeMany), buffer reuse across calls, and a decoder's life after a
 * rejected stream. Expected outputs: the reference decode, itself checked against construction.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Sgfp4Error, parse, type Shape } from "@sgfp4/format";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { WebGpuDecoder, type TensorInput } from "../src/decoder.js";
import { wasmValidator, type StreamValidator } from "../src/job.js";
import type { ValidatorPool } from "../src/validation.js";
import { device, noGpu } from "./device.js";
import { referenceDecode } from "./reference.js";

const SHAPES: Shape[] = [[130, 70], [65, 63], [64, 256], [3, 200], [129, 257], [1, 1]];
const tensors: (TensorInput & { expected: Float32Array })[] = SHAPES.map((shape, i) => {
  const profile = i % 2 ? "v1" : "v2";
  const built = generateValid(new Rng(900 + i), { profile, shape });
  return { name: `layer${i}.weight`, bytes: built.bytes, profile, shape, expected: built.expected };
});

const f32 = (t: TensorInput) => ({ profile: t.profile, shape: t.shape });

/** A device whose createBuffer calls are counted. */
function counting(real: GPUDevice): { device: GPUDevice; created: () => number } {
  let n = 0;
  const proxy = new Proxy(real, {
    get: (t, k) => {
      if (k === "createBuffer") return (d: GPUBufferDescriptor) => (n++, t.createBuffer(d));
      const v = Reflect.get(t, k) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
  return { device: proxy, created: () => n };
}

describe.skipIf(noGpu)("decodeMany, pools, reuse", () => {
  const decoder = new WebGpuDecoder(device!);
  // 4 KiB of inputs per submission: several submissions, both staging buffers in turn
  const smallSubmits = new WebGpuDecoder(device!, { submitBytes: 4096, maxChunkBytes: 64 * 4 * 100 });
  afterAll(() => device?.destroy());

  const readTensor = async (d: WebGpuDecoder, buffer: GPUBuffer, offset: number, byteLength: number) =>
    (await d.readBack(buffer, offset + byteLength)).subarray(offset / 4);

  for (const [label, d, arena] of [["one buffer per tensor", () => decoder, false], ["one arena", () => decoder, true], ["small submissions", () => smallSubmits, true]] as const) {
    it(`${label}: every tensor bit-exact at its place`, async () => {
      for (const t of tensors) expect(firstBitDifference(referenceDecode(t.bytes, parse(t.bytes, t)), t.expected)).toBe(-1);
      const out = await d().decodeMany(tensors, { arena });
      expect(out.map((o) => o.name)).toEqual(tensors.map((t) => t.name));
      for (const [i, o] of out.entries()) {
        expect(o.offset % 256).toBe(0);
        expect(o.byteLength).toBe(tensors[i]!.shape[0] * tensors[i]!.shape[1] * 4);
        expect(firstBitDifference(await readTensor(d(), o.buffer, o.offset, o.byteLength), tensors[i]!.expected)).toBe(-1);
      }
      if (arena) expect(new Set(out.map((o) => o.buffer)).size).toBe(1);
      for (const b of new Set(out.map((o) => o.buffer))) b.destroy();
    });
  }

  /** A pool that validates on the next macrotask, later tensors first (out of order), counting calls. */
  const shuffledPool = () => {
    let calls = 0;
    const pool: ValidatorPool = {
      concurrency: 3,
      validate: (bytes, opts) => (calls++, new Promise((resolve, reject) => setTimeout(() => {
        try {
          resolve(wasmValidator(bytes, opts));
        } catch (e) {
          reject(e);
        }
      }, 20 - 3 * calls))),
    };
    return { pool, calls: () => calls };
  };

  for (const [label, make] of [["inline validation", () => new WebGpuDecoder(device!)], ["a validator pool", () => new WebGpuDecoder(device!, { validatorPool: shuffledPool().pool, validation: "host" })]] as const) {
    it(`a rejected stream in the middle (${label}): its code, the tensor named; the tensors before it written, none after; the decoder works after`, async () => {
      const d = make();
      const bad = tensors.map((t) => ({ ...t }));
      bad[3] = { ...bad[3]!, bytes: bad[3]!.bytes.subarray(0, 40) };
      let at = 0;
      const offsets = tensors.map((t) => ((at = Math.ceil(at / 256) * 256), (at += t.shape[0] * t.shape[1] * 4), at - t.shape[0] * t.shape[1] * 4));
      const arena = device!.createBuffer({ size: at, usage: 0x80 | 0x4 | 0x8 });
      const sentinel = new Uint32Array(at / 4).fill(0x7fc0dead);
      device!.queue.writeBuffer(arena, 0, sentinel);
      const err = await d.decodeMany(bad, { arena }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Sgfp4Error);
      expect((err as Sgfp4Error).code).toBe(parseCode(bad[3]!));
      expect((err as Sgfp4Error).message).toContain('tensor "layer3.weight"');
      const got = new Uint32Array((await d.readBack(arena, at)).buffer);
      for (const [i, t] of tensors.entries()) {
        const part = got.subarray(offsets[i]! / 4, offsets[i]! / 4 + t.expected.length);
        if (i < 3) expect(firstBitDifference(new Float32Array(part.buffer, part.byteOffset, part.length), t.expected)).toBe(-1);
        else expect(part.every((w) => w === 0x7fc0dead)).toBe(true);
      }
      const out = await d.decodeMany(tensors);
      for (const [i, o] of out.entries()) expect(firstBitDifference(await readTensor(d, o.buffer, 0, o.byteLength), tensors[i]!.expected)).toBe(-1);
      for (const o of out) o.buffer.destroy();
      arena.destroy();
      d.destroy();
    });
  }

  for (const [label, d] of [["one submission", () => decoder], ["small submissions", () => smallSubmits]] as const) {
    it(`a stream the GPU refuses in the middle (${label}): its code, the tensor named; the tensors before it written, none after, v1 ones included`, async () => {
      // a leaf-level fault (flag bit 1 of tensor 2's first leaf header): only the device half of validation sees it
      const bad = tensors.map((t) => ({ ...t }));
      const bytes = tensors[2]!.bytes.slice();
      const first = parse(bytes, tensors[2]!).blocks[0]!;
      bytes[first.offset + (first.layout === 4 ? 16 : 4)]! |= 0x2;
      bad[2] = { ...bad[2]!, bytes };
      expect(parseCode(bad[2]!)).toBe("RESERVED_BITS");
      let at = 0;
      const offsets = tensors.map((t) => ((at = Math.ceil(at / 256) * 256), (at += t.shape[0] * t.shape[1] * 4), at - t.shape[0] * t.shape[1] * 4));
      const arena = device!.createBuffer({ size: at, usage: 0x80 | 0x4 | 0x8 });
      device!.queue.writeBuffer(arena, 0, new Uint32Array(at / 4).fill(0x7fc0dead));
      const err = await d().decodeMany(bad, { arena }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "RESERVED_BITS", message: expect.stringContaining('tensor "layer2.weight"') });
      const got = new Uint32Array((await d().readBack(arena, at)).buffer);
      for (const [i, t] of tensors.entries()) {
        const part = got.subarray(offsets[i]! / 4, offsets[i]! / 4 + t.expected.length);
        if (i < 2) expect(firstBitDifference(new Float32Array(part.buffer, part.byteOffset, part.length), t.expected)).toBe(-1);
        else expect(part.every((w) => w === 0x7fc0dead)).toBe(true);
      }
      const out = await d().decodeMany(tensors);
      for (const [i, o] of out.entries()) expect(firstBitDifference(await readTensor(d(), o.buffer, 0, o.byteLength), tensors[i]!.expected)).toBe(-1);
      for (const o of out) o.buffer.destroy();
      arena.destroy();
    });
  }

  it("a bad request (format, shape) is refused before any stream is validated, naming the tensor", async () => {
    const { pool, calls } = shuffledPool();
    const d = new WebGpuDecoder(device!, { validatorPool: pool });
    const bad = tensors.map((t, i) => (i === 4 ? { ...t, shape: [0, 5] as Shape } : t));
    await expect(d.decodeMany(bad)).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining('tensor "layer4.weight"') });
    await expect(d.decodeMany(tensors.map((t, i) => (i === 1 ? { ...t, format: "f64" as "f32" } : t)))).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(calls()).toBe(0);
    d.destroy();
  });

  it("a validator pool (out of order, ahead of use): every tensor bit-exact, each stream validated once", async () => {
    const { pool, calls } = shuffledPool();
    const d = new WebGpuDecoder(device!, { validatorPool: pool, submitBytes: 4096, validation: "host" });
    for (const arena of [false, true]) {
      const out = await d.decodeMany(tensors, { arena });
      for (const [i, o] of out.entries()) expect(firstBitDifference(await readTensor(d, o.buffer, o.offset, o.byteLength), tensors[i]!.expected)).toBe(-1);
      for (const b of new Set(out.map((o) => o.buffer))) b.destroy();
    }
    expect(calls()).toBe(2 * tensors.length);
    d.destroy();
  });

  it("decode after a rejection, and repeated decodes reuse the pooled buffers (no new buffer)", async () => {
    const { device: counted, created } = counting(device!);
    const d = new WebGpuDecoder(counted);
    const t = tensors[0]!;
    await expect(d.decode(t.bytes.subarray(1), t)).rejects.toBeInstanceOf(Sgfp4Error);
    expect(firstBitDifference(await d.decode(t.bytes, f32(t)), t.expected)).toBe(-1);
    const afterFirst = created();
    for (const u of [t, tensors[1]!, t]) expect(firstBitDifference(await d.decode(u.bytes, f32(u)), u.expected)).toBe(-1);
    expect(created()).toBe(afterFirst); // the largest came first: staging, inputs, tables, output, readback all reused
    d.destroy(); // frees the pool: a later call allocates again, and decodes the same bits
    expect(firstBitDifference(await d.decode(t.bytes, f32(t)), t.expected)).toBe(-1);
    expect(created()).toBeGreaterThan(afterFirst);
    d.destroy();
  });

  it("validates each stream once on success (decode, decodeToBuffer, decodeMany)", async () => {
    let calls = 0;
    const counted: StreamValidator = (bytes, opts) => (calls++, wasmValidator(bytes, opts));
    const d = new WebGpuDecoder(device!, { validator: counted });
    const t = tensors[0]!;
    await d.decode(t.bytes, f32(t));
    (await d.decodeToBuffer(t.bytes, f32(t))).destroy();
    expect(calls).toBe(2);
    for (const o of await d.decodeMany(tensors)) o.buffer.destroy();
    expect(calls).toBe(2 + tensors.length);
    d.destroy();
  });

  it("concurrent calls on one decoder are serialised over the pool", async () => {
    const got = await Promise.all(tensors.map((t) => decoder.decode(t.bytes, f32(t))));
    got.forEach((g, i) => expect(firstBitDifference(g, tensors[i]!.expected)).toBe(-1));
  });
});

function parseCode(t: TensorInput): string {
  try {
    parse(t.bytes, { profile: t.profile, shape: t.shape });
  } catch (e) {
    return (e as Sgfp4Error).code;
  }
  throw new Error("stream unexpectedly valid");
}

if (noGpu) it.skip(`decodeMany, pools, reuse: no adapter (${noGpu})`, () => {});
