/** The conformance backend `webgpu`: reports availability honestly, decodes, closes. */
import { describe, expect, it } from "vitest";
import { writeV1 } from "@sgfp4/format";
import { createConformanceBackend } from "../src/backend.js";

describe("conformance backend", () => {
  it("is named webgpu and says whether it can run (with a reason when not)", async () => {
    const backend = createConformanceBackend();
    expect(backend.name).toBe("webgpu");
    const a = await backend.available();
    if (!a.ok) {
      expect(a.reason.length).toBeGreaterThan(10);
      await expect(backend.decode(new Uint8Array(0), { profile: "v1", shape: [1, 1] })).rejects.toMatchObject({ code: "BACKEND_FAILURE" });
      return;
    }
    const bytes = writeV1({ shape: [2, 2], blocks: [{ mode: 0, scaleBits: 0x4000, biasBits: 0x3c00, codes: Array.from({ length: 4096 }, (_, i) => (i % 16) - 8) }] });
    // element (1, 0) is code index 64: (64 % 16) - 8 = -8 -> 2 * -8 + 1 = -15
    expect(Array.from(await backend.decode(bytes, { profile: "v1", shape: [2, 2] }))).toEqual([-15, -13, -15, -13]);
    await expect(backend.decode(bytes.subarray(1), { profile: "v1", shape: [2, 2] })).rejects.toMatchObject({ code: "SIZE_MISMATCH" });
    await backend.close?.();
  });
});
