/** The registry decoder `webgpu`: reports availability honestly, decodes every format, closes. */
import { describe, expect, it } from "vitest";
import { writeV1 } from "@sgfp4/format";
import { createConformanceBackend, createDecoder } from "../src/backend.js";

describe("createDecoder", () => {
  it("is named webgpu, writes f32/f16/bf16, and says whether it can run (with a reason when not)", async () => {
    const backend = createDecoder();
    expect(backend.name).toBe("webgpu");
    expect(backend.formats).toEqual(["f32", "f16", "bf16"]);
    expect(createConformanceBackend().name).toBe("webgpu");
    const a = await backend.available();
    if (!a.ok) {
      expect(a.reason.length).toBeGreaterThan(10);
      await expect(backend.decode(new Uint8Array(0), { profile: "v1", shape: [1, 1] })).rejects.toMatchObject({ code: "BACKEND_FAILURE" });
      return;
    }
    const bytes = writeV1({ shape: [2, 2], blocks: [{ mode: 0, scaleBits: 0x4000, biasBits: 0x3c00, codes: Array.from({ length: 4096 }, (_, i) => (i % 16) - 8) }] });
    const req = { profile: "v1", shape: [2, 2] } as const;
    // element (1, 0) is code index 64: (64 % 16) - 8 = -8 -> 2 * -8 + 1 = -15
    expect(Array.from(await backend.decode(bytes, req))).toEqual([-15, -13, -15, -13]);
    // -15 = -1.875 * 2^3, -13 = -1.625 * 2^3
    expect(Array.from(await backend.decode(bytes, { ...req, format: "f16" }))).toEqual([0xcb80, 0xca80, 0xcb80, 0xca80]);
    expect(Array.from(await backend.decode(bytes, { ...req, format: "bf16" }))).toEqual([0xc170, 0xc150, 0xc170, 0xc150]);
    await expect(backend.decode(bytes, { ...req, format: "f64" as "f32" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(backend.decode(bytes.subarray(1), req)).rejects.toMatchObject({ code: "SIZE_MISMATCH" });
    await backend.close?.();
  });
});
