/// <reference types="@webgpu/types" />
/**
 * DECISIONS.md section 5 on every backend: shapes whose output is over the configured limit (or
 * the default 2^31 bytes) and streams whose declared structure is huge are rejected before any
 * large allocation. Every JS-side allocation (typed arrays, ArrayBuffer, WebAssembly.Memory) and,
 * for WebGPU, every device buffer is recorded while the call runs; the largest must stay small.
 * The Vulkan native parser (wrapper bypassed) allocates in C++, where the process's RSS is
 * watched instead. A backend that cannot run here is skipped with the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sgfp4Error, writeV1, writeV2 } from "@sgfp4/format";
import * as cpu from "@sgfp4/cpu-decoder";
import { decodeParallel, terminateWorkers } from "@sgfp4/cpu-decoder/parallel";
import { WebGpuDecoder } from "@sgfp4/webgpu-decoder";
import { createNodeDevice } from "@sgfp4/webgpu-decoder/node";
import * as vulkan from "@sgfp4/vulkan-addon";

type Shape = readonly [number, number];
interface Call {
  profile: "v1" | "v2";
  shape: Shape;
  limits?: { maxOutputBytes?: number };
}

/** The largest single allocation (bytes) made in JS while `work` runs, and its outcome. */
async function largestAllocation(work: () => Promise<unknown>): Promise<{ largest: number; error: unknown; value: unknown }> {
  let largest = 0;
  const note = (bytes: number) => {
    if (Number.isFinite(bytes) && bytes > largest) largest = bytes;
  };
  const g = globalThis as Record<string, unknown>;
  const wasm = WebAssembly as unknown as Record<string, unknown>;
  const saved: [Record<string, unknown>, string, unknown][] = [];
  const wrap = (owner: Record<string, unknown>, name: string, size: (args: unknown[]) => number) => {
    const original = owner[name] as new (...a: unknown[]) => object;
    saved.push([owner, name, original]);
    owner[name] = new Proxy(original, {
      construct(target, args, newTarget) {
        note(size(args));
        return Reflect.construct(target, args, newTarget === owner[name] ? target : newTarget) as object;
      },
    });
  };
  for (const name of ["Float32Array", "Float64Array", "Uint32Array", "Int32Array", "Uint8Array", "Uint16Array"]) {
    const per = (g[name] as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
    wrap(g, name, (a) => (typeof a[0] === "number" ? a[0] * per : 0)); // views of an existing buffer allocate nothing
  }
  wrap(g, "ArrayBuffer", (a) => (typeof a[0] === "number" ? a[0] : 0));
  wrap(g, "SharedArrayBuffer", (a) => (typeof a[0] === "number" ? a[0] : 0));
  wrap(wasm, "Memory", (a) => ((a[0] as { initial?: number } | undefined)?.initial ?? 0) * 65536);
  const arrayBuffersBefore = process.memoryUsage().arrayBuffers;
  let error: unknown;
  let value: unknown;
  try {
    value = await work();
  } catch (e) {
    error = e;
  } finally {
    for (const [owner, name, original] of saved.reverse()) owner[name] = original;
  }
  // also catches allocations the wrappers cannot see (a buffer made inside a native call)
  note(process.memoryUsage().arrayBuffers - arrayBuffersBefore);
  return { largest, error, value };
}

/** Below this, an allocation is bookkeeping; every case here would need 2 GiB or more. */
const SMALL = 64 * 1024 * 1024;

const codeOf = (e: unknown) => (e instanceof Sgfp4Error ? e.code : `not an Sgfp4Error: ${String(e)}`);

/** 64x128, two v1 blocks, every code 1 with scale 1.0 and bias 0: every output value is 1. */
const ones64x128 = writeV1({
  shape: [64, 128],
  blocks: [0, 1].map(() => ({ mode: 0 as const, scaleBits: 0x3c00, biasBits: 0, codes: new Array(4096).fill(1) })),
});

/** A v2 fixed header (16 bytes) declaring `records` records, then `extra` zero bytes. */
function v2Header(records: number, extra = 0): Uint8Array {
  const b = new Uint8Array(16 + extra);
  b.set([0x53, 0x47, 0x46, 0x34, 0x02]);
  new DataView(b.buffer).setUint32(5, records >>> 0, true);
  return b;
}

/** One rejection case: the stream, the call, and the section-3/5 code every backend must give. */
interface LimitCase {
  name: string;
  bytes: Uint8Array;
  call: Call;
  code: string;
}

const GiB = 2 ** 30;
const CASES: LimitCase[] = [
  {
    name: "configured limit one byte below a valid 64x128 output",
    bytes: ones64x128,
    call: { profile: "v1", shape: [64, 128], limits: { maxOutputBytes: 64 * 128 * 4 - 1 } },
    code: "LIMIT_EXCEEDED",
  },
  {
    name: "default limit: [65536, 65536] needs 16 GiB",
    bytes: writeV2({ shape: [1, 1], records: [{ layout: 0, leaves: [{ mode: 0, scaleBits: 0x3c00, biasBits: 0, codes: new Array(4096).fill(1) }] }] }),
    call: { profile: "v2", shape: [65536, 65536] },
    code: "LIMIT_EXCEEDED",
  },
  {
    name: "default limit: [32768, 16385] is one column over 2^31 bytes",
    bytes: v2Header(512 * 257),
    call: { profile: "v2", shape: [32768, 16385] },
    code: "LIMIT_EXCEEDED",
  },
  {
    name: "v2 header declaring B = 2^32-1 records in a 16-byte stream (shape [64, 64])",
    bytes: v2Header(0xffffffff),
    call: { profile: "v2", shape: [64, 64] },
    code: "RECORD_COUNT_MISMATCH",
  },
  {
    name: "v2 B = 2^32-1 with the shape that needs it (65535x65537 tiles), limit raised to 2^40",
    bytes: v2Header(0xffffffff),
    call: { profile: "v2", shape: [64 * 65535, 64 * 65537], limits: { maxOutputBytes: 2 ** 40 } },
    code: "LIMIT_EXCEEDED",
  },
  {
    name: "v2 B = 2^26 matching [2^19, 2^19] (1 TiB output allowed by a 2^40 limit), 16-byte stream",
    bytes: v2Header(2 ** 26),
    call: { profile: "v2", shape: [2 ** 19, 2 ** 19], limits: { maxOutputBytes: 2 ** 40 } },
    code: "TRUNCATED",
  },
  {
    name: "v1 for [32768, 16384] (exactly 2^31 bytes, allowed) truncated to one block",
    bytes: ones64x128.subarray(0, 2056),
    call: { profile: "v1", shape: [32768, 16384] },
    code: "SIZE_MISMATCH",
  },
  {
    name: "v1 for [65536, 65536] (16 GiB, limit raised to 2^35) truncated to two blocks",
    bytes: ones64x128,
    call: { profile: "v1", shape: [65536, 65536], limits: { maxOutputBytes: 32 * GiB } },
    code: "SIZE_MISMATCH",
  },
];

function checkRejected(r: { largest: number; error: unknown }, code: string): void {
  expect(codeOf(r.error)).toBe(code);
  expect(r.largest).toBeLessThan(SMALL);
}

function checkOnes(out: unknown): void {
  expect(out).toBeInstanceOf(Float32Array);
  const a = out as Float32Array;
  expect(a.length).toBe(64 * 128);
  expect(a.every((v) => v === 1)).toBe(true);
}

const atTheLimit: Call = { profile: "v1", shape: [64, 128], limits: { maxOutputBytes: 64 * 128 * 4 } };

describe("the allocation recorder", () => {
  it("sees the output a decoder allocates (so a small figure means no large allocation was made)", async () => {
    const r = await largestAllocation(async () => cpu.decode(ones64x128, atTheLimit));
    expect(r.error).toBeUndefined();
    checkOnes(r.value);
    expect(r.largest).toBeGreaterThanOrEqual(64 * 128 * 4);
    expect((await largestAllocation(async () => new WebAssembly.Memory({ initial: 2 }))).largest).toBe(2 * 65536);
  });
});

describe("cpu (@sgfp4/cpu-decoder)", () => {
  afterAll(() => terminateWorkers());

  for (const c of CASES) {
    it(`decode: ${c.name} -> ${c.code}`, async () => {
      checkRejected(await largestAllocation(async () => cpu.decode(c.bytes, c.call)), c.code);
    });
  }

  it("decode at exactly the configured limit succeeds (the limit is not off by one)", () => {
    checkOnes(cpu.decode(ones64x128, atTheLimit));
  });

  it("decodeInto checks the limit before looking at the caller's array", async () => {
    const c = CASES[1]!;
    checkRejected(await largestAllocation(async () => cpu.decodeInto(c.bytes, c.call, new Float32Array(1))), "LIMIT_EXCEEDED");
  });

  it("createOutput([65536, 65536]) is refused before creating a 16 GiB WebAssembly.Memory", async () => {
    checkRejected(await largestAllocation(async () => cpu.createOutput([65536, 65536])), "LIMIT_EXCEEDED");
    checkRejected(await largestAllocation(async () => cpu.createOutput([64, 128], { limits: { maxOutputBytes: 1024 } })), "LIMIT_EXCEEDED");
  });

  it("decodeParallel (worker threads) rejects the 16 GiB shape and the truncated 1 TiB v2 stream on the calling thread", async () => {
    for (const c of [CASES[1]!, CASES[5]!]) checkRejected(await largestAllocation(() => decodeParallel(c.bytes, c.call)), c.code);
  });
});

describe("webgpu (@sgfp4/webgpu-decoder, Dawn)", () => {
  let device: GPUDevice | undefined;
  let decoder: WebGpuDecoder | undefined;
  let unavailable = "";
  const buffersCreated: number[] = [];

  beforeAll(async () => {
    try {
      device = await createNodeDevice();
    } catch (e) {
      unavailable = e instanceof Error ? e.message : String(e);
      return;
    }
    // record every device buffer the decoder asks for
    const create = device.createBuffer.bind(device);
    device.createBuffer = (d: GPUBufferDescriptor) => {
      buffersCreated.push(d.size);
      return create(d);
    };
    decoder = new WebGpuDecoder(device);
  });
  afterAll(() => device?.destroy());

  for (const c of CASES) {
    it(`decode: ${c.name} -> ${c.code}`, async (ctx) => {
      if (!decoder) return ctx.skip(`WebGPU unavailable here: ${unavailable}`);
      buffersCreated.length = 0;
      const r = await largestAllocation(() => decoder!.decode(c.bytes, c.call));
      checkRejected(r, c.code);
      expect(buffersCreated).toEqual([]);
    });
  }

  it("decodeToBuffer rejects the 16 GiB shape before creating a device buffer", async (ctx) => {
    if (!decoder) return ctx.skip(`WebGPU unavailable here: ${unavailable}`);
    buffersCreated.length = 0;
    const c = CASES[1]!;
    checkRejected(await largestAllocation(() => decoder!.decodeToBuffer(c.bytes, c.call)), "LIMIT_EXCEEDED");
    expect(buffersCreated).toEqual([]);
  });

  it("decode at exactly the configured limit succeeds", async (ctx) => {
    if (!decoder) return ctx.skip(`WebGPU unavailable here: ${unavailable}`);
    checkOnes(await decoder.decode(ones64x128, atTheLimit));
  });
});

describe("vulkan (@sgfp4/vulkan-addon)", () => {
  const availability = vulkan.availability();
  const skipReason = availability.ok ? "" : `Vulkan unavailable here: ${availability.reason}`;

  for (const c of CASES) {
    it(`decode: ${c.name} -> ${c.code}`, async (ctx) => {
      if (!availability.ok) return ctx.skip(skipReason);
      checkRejected(await largestAllocation(async () => vulkan.decode(c.bytes, c.call)), c.code);
    });
  }

  it("decode at exactly the configured limit succeeds", (ctx) => {
    if (!availability.ok) return ctx.skip(skipReason);
    checkOnes(vulkan.decode(ones64x128, atTheLimit));
  });

  // The native parser checks again on its own (it must be safe when called directly); its
  // allocations are C++ vectors, so the resident set size is what is watched.
  for (const c of CASES) {
    it(`native parser, wrapper bypassed: ${c.name} -> ${c.code}`, (ctx) => {
      let addon: ReturnType<typeof vulkan.nativeAddon>;
      try {
        addon = vulkan.nativeAddon();
      } catch (e) {
        return ctx.skip(`the Vulkan addon is not built here: ${(e as Error).message}`);
      }
      const [rows, cols] = c.call.shape;
      const rssBefore = process.memoryUsage().rss;
      let error: unknown;
      try {
        addon.parse(c.bytes, c.call.profile, rows, cols, c.call.limits ?? {});
      } catch (e) {
        error = vulkan.toSgfp4Error(e);
      }
      expect(codeOf(error)).toBe(c.code);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(4 * SMALL);
    });
  }
});
