import { afterAll, describe, expect, it, vi } from "vitest";
import { LAYOUT, Sgfp4Error, writeV1, writeV2, type Sgfp4ErrorCode } from "@sgfp4/format";
import { createConformanceBackend, decode, decodeInto, decodeReference } from "../src/index.js";
import { decodeParallel, terminateWorkers } from "../src/parallel.js";

afterAll(() => terminateWorkers());

const zeros = (n: number) => new Array(n).fill(0);
const v1Block = { mode: 0 as const, scaleBits: 0x3c00, biasBits: 0, codes: zeros(4096) };
const validV1 = () => writeV1({ shape: [64, 128], blocks: [v1Block, v1Block] }); // B = 2
const v2Record = { layout: LAYOUT.UNIFORM_64, leaves: [{ mode: 0 as const, scaleBits: 0x3c00, biasBits: 0, codes: zeros(4096) }] };
const validV2 = () => writeV2({ shape: [64, 128], records: [v2Record, v2Record] }); // B = 2, record base 32
const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

type Case = { code: Sgfp4ErrorCode; profile: "v1" | "v2"; shape?: readonly [number, number]; bytes: () => Uint8Array };
const cases: Case[] = [
  { code: "SIZE_MISMATCH", profile: "v1", bytes: () => new Uint8Array([...validV1(), 0]) },
  { code: "BAD_MAGIC", profile: "v2", bytes: () => { const b = validV2(); b[0] = 0x58; return b; } },
  { code: "BAD_VERSION", profile: "v2", bytes: () => { const b = validV2(); b[4] = 3; return b; } },
  { code: "TRUNCATED", profile: "v2", bytes: () => validV2().subarray(0, -16) },
  { code: "NONZERO_PADDING", profile: "v2", bytes: () => { const b = validV2(); b[9] = 1; return b; } },
  { code: "RECORD_COUNT_MISMATCH", profile: "v2", shape: [64, 192], bytes: validV2 },
  { code: "MISALIGNED_OFFSET", profile: "v2", bytes: () => { const b = validV2(); dv(b).setUint32(20, dv(b).getUint32(20, true) + 8, true); return b; } },
  { code: "NONMONOTONIC_OFFSET", profile: "v2", bytes: () => { const b = validV2(); dv(b).setUint32(20, 0, true); return b; } },
  { code: "OFFSET_OUT_OF_RANGE", profile: "v1", bytes: () => { const b = validV1(); dv(b).setUint32(8, 4096, true); return b; } },
  { code: "UNKNOWN_LAYOUT", profile: "v2", bytes: () => { const b = validV2(); b[32] = 6; return b; } },
  { code: "RESERVED_BITS", profile: "v1", bytes: () => { const b = validV1(); b[8] = b[8]! | 0x4; return b; } },
  { code: "NONFINITE_PARAMETER", profile: "v1", bytes: () => { const b = validV1(); dv(b).setUint32(0, 0x7c000000, true); return b; } },
];

async function codeOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (e) {
    expect(e).toBeInstanceOf(Sgfp4Error);
    return (e as Sgfp4Error).code;
  }
  return "no error";
}

describe("every reject code reaches the caller as Sgfp4Error", () => {
  const backend = createConformanceBackend();
  for (const c of cases) {
    it(c.code, async () => {
      const shape = c.shape ?? ([64, 128] as const);
      const opts = { profile: c.profile, shape };
      const bytes = c.bytes();
      expect(await codeOf(() => decode(bytes, opts))).toBe(c.code);
      expect(await codeOf(() => decodeReference(bytes, opts))).toBe(c.code);
      expect(await codeOf(() => decodeInto(bytes, opts, new Float32Array(shape[0] * shape[1])))).toBe(c.code);
      expect(await codeOf(() => decodeParallel(bytes, { ...opts, threads: 2 }))).toBe(c.code);
      expect(await codeOf(() => backend.decode(bytes, opts))).toBe(c.code);
    });
  }

  it("the valid streams the faults start from decode", async () => {
    expect(await codeOf(() => decode(validV1(), { profile: "v1", shape: [64, 128] }))).toBe("no error");
    expect(await codeOf(() => decode(validV2(), { profile: "v2", shape: [64, 128] }))).toBe("no error");
  });

  it("INVALID_ARGUMENT: bad shape, bad profile, out of the wrong length or type, bad thread count", async () => {
    const bytes = validV1();
    expect(await codeOf(() => decode(bytes, { profile: "v1", shape: [0, 128] }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(() => decode(bytes, { profile: "v3" as "v1", shape: [64, 128] }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(() => decode("x" as unknown as Uint8Array, { profile: "v1", shape: [64, 128] }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(() => decodeInto(bytes, { profile: "v1", shape: [64, 128] }, new Float32Array(64 * 128 - 1)))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(() => decodeInto(bytes, { profile: "v1", shape: [64, 128] }, new Float64Array(64 * 128) as unknown as Float32Array))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(() => decodeParallel(bytes, { profile: "v1", shape: [64, 128], threads: 0 }))).toBe("INVALID_ARGUMENT");
    expect(await codeOf(() => decodeParallel(bytes, { profile: "v1", shape: [64, 128], threads: 1.5 }))).toBe("INVALID_ARGUMENT");
  });
});

describe("limits are checked before allocation", () => {
  it("an over-limit output is rejected with LIMIT_EXCEEDED and no memory is made", async () => {
    const memorySpy = vi.spyOn(WebAssembly, "Memory");
    try {
      const tiny = validV1();
      // 100000 x 100000 float32 = 40 GB: allocating first would throw RangeError or exhaust memory.
      const huge = { profile: "v1" as const, shape: [100_000, 100_000] as const };
      expect(await codeOf(() => decode(tiny, huge))).toBe("LIMIT_EXCEEDED");
      expect(await codeOf(() => decodeReference(tiny, huge))).toBe("LIMIT_EXCEEDED");
      expect(await codeOf(() => decodeParallel(tiny, huge))).toBe("LIMIT_EXCEEDED");
      expect(await codeOf(() => decodeInto(tiny, huge, new Float32Array(1)))).toBe("LIMIT_EXCEEDED");
      // A caller limit one byte under the output size.
      const limited = { profile: "v1" as const, shape: [64, 128] as const, limits: { maxOutputBytes: 64 * 128 * 4 - 1 } };
      expect(await codeOf(() => decode(tiny, limited))).toBe("LIMIT_EXCEEDED");
      expect(await codeOf(() => decodeParallel(tiny, limited))).toBe("LIMIT_EXCEEDED");
      expect(memorySpy).not.toHaveBeenCalled();
    } finally {
      memorySpy.mockRestore();
    }
    const exact = { profile: "v1" as const, shape: [64, 128] as const, limits: { maxOutputBytes: 64 * 128 * 4 } };
    expect(decode(validV1(), exact).length).toBe(64 * 128);
  });
});
