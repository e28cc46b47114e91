import { describe, expect, it } from "vitest";
import { decodeFloat32, decoderFormats, requestedFormat, type Decoder } from "../src/index.js";

const req = { profile: "v1", shape: [1, 2] } as const;

describe("Decoder helpers", () => {
  it("an object without formats (pre-Decoder) writes f32 only", () => {
    expect(decoderFormats({})).toEqual(["f32"]);
    expect(decoderFormats({ formats: [] })).toEqual(["f32"]);
    expect(decoderFormats({ formats: ["f32", "bf16"] })).toEqual(["f32", "bf16"]);
  });

  it("requestedFormat defaults to f32 and refuses a format the decoder does not write", () => {
    expect(requestedFormat(req, ["f32"], "x")).toBe("f32");
    expect(requestedFormat({ ...req, format: "f16" }, ["f32", "f16"], "x")).toBe("f16");
    expect(() => requestedFormat({ ...req, format: "bf16" }, ["f32"], "x")).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });

  it("decodeFloat32 asks for f32 and refuses any other answer", async () => {
    const seen: unknown[] = [];
    const good: Decoder = { name: "g", formats: ["f32"], available: async () => ({ ok: true }), decode: async (_b, r) => (seen.push(r.format), new Float32Array(2)) };
    expect(await decodeFloat32(good, new Uint8Array(), req)).toBeInstanceOf(Float32Array);
    expect(seen).toEqual(["f32"]);
    const bad: Decoder = { ...good, decode: async () => new Uint16Array(2) };
    await expect(decodeFloat32(bad, new Uint8Array(), req)).rejects.toMatchObject({ code: "BACKEND_FAILURE" });
  });
});
