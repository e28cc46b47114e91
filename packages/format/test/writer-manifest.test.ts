import { describe, expect, it } from "vitest";
import { isSgfp4Error } from "../src/errors.js";
import { decodedSha256, parseManifest, serializeManifest, sha256Hex, verifyManifest, type Manifest } from "../src/manifest.js";
import { assembleV2, encodeTree, packCodes, writeV2, writeV2Record, type V2RecordSpec } from "../src/writer.js";

describe("code packing (spec 22.6)", () => {
  it("FP4: code i in bits 4*(i mod 8) of word i/8, two's complement nibbles", () => {
    const out = new Uint8Array(4);
    packCodes(0, [-8, 7, -1, 0, 1, 2, 3, -2], out);
    // nibbles LSB-first: 8,7,f,0,1,2,3,e -> word 0xe3210f78
    expect(new DataView(out.buffer).getUint32(0, true)).toBe(0xe3210f78);
  });
  it("T158: 2-bit symbols 0 -> 00, +1 -> 01, -1 -> 10", () => {
    const out = new Uint8Array(4);
    packCodes(1, [0, 1, -1, 1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1], out);
    expect(new DataView(out.buffer).getUint32(0, true)).toBe(((0b10 << 30) | 0b10_01_10_01_00) >>> 0);
  });
  it("refuses codes out of range instead of wrapping them", () => {
    expect(() => packCodes(0, [8], new Uint8Array(1))).toThrow(/outside/);
    expect(() => packCodes(1, [2], new Uint8Array(1))).toThrow(/T158/);
  });
});

describe("records written apart (the encoder's worker threads)", () => {
  const leaf = (size: number, mode: 0 | 1, seed: number) => ({ mode, scaleBits: 0x3c00 + seed, biasBits: 0x0010 * seed, codes: Array.from({ length: size * size }, (_, i) => (mode === 0 ? ((i * 5 + seed) % 16) - 8 : ((i + seed) % 3) - 1)) });
  const records: V2RecordSpec[] = [
    { layout: 0, leaves: [leaf(64, 0, 1)] },
    { layout: 4, tree: [["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"], leaves: [leaf(16, 1, 2), leaf(16, 0, 3), leaf(16, 0, 4), leaf(16, 1, 5), leaf(32, 0, 6), leaf(32, 1, 7), leaf(32, 0, 8)] },
  ];
  it("assembleV2 of writeV2Record outputs is writeV2's stream, byte for byte", () => {
    const parts = records.map((r, i) => writeV2Record(r, i));
    for (const p of parts) expect(p.length % 16).toBe(0);
    expect(Buffer.from(assembleV2([64, 128], parts)).equals(Buffer.from(writeV2({ shape: [64, 128], records })))).toBe(true);
  });
  it("assembleV2 refuses a wrong record count or a record that is not a multiple of 16 bytes", () => {
    const parts = records.map((r, i) => writeV2Record(r, i));
    expect(() => assembleV2([64, 192], parts)).toThrow(/needs 3 records/);
    expect(() => assembleV2([64, 128], [parts[0]!, parts[1]!.subarray(0, 40)])).toThrow(/multiple of 16/);
  });
});

describe("split maps (spec 22.8.2)", () => {
  it("the deepest tree uses all 85 bits", () => {
    const t8 = ["leaf", "leaf", "leaf", "leaf"] as const;
    const t16 = [t8, t8, t8, t8] as const;
    const t32 = [t16, t16, t16, t16] as const;
    const { map, leaves } = encodeTree([t32, t32, t32, t32]);
    expect(leaves.length).toBe(256);
    expect(map).toEqual([0xffffffff, 0xffffffff, 0x1fffff]);
  });
  it("the v2 writer refuses a bias that the 0xFFF0 mask would change", () => {
    expect(() => writeV2({ shape: [1, 1], records: [{ layout: 0, leaves: [{ mode: 0, scaleBits: 0, biasBits: 0x0001, codes: new Array(4096).fill(0) }] }] })).toThrow(/mask/);
  });
});

const manifest = (): Manifest => ({
  format: "sgfp4-manifest",
  version: 1,
  encoder: { name: "test", version: "0", settings: {} },
  tensors: [{ name: "w", file: "w.sgfp4", profile: "v2", shape: [1, 2], dtype: "F32", sha256: { container: sha256Hex(new Uint8Array([1])), decoded: decodedSha256(new Float32Array([1, 2])) } }],
});

describe("manifest", () => {
  it("sha256 of known input", () => {
    expect(sha256Hex(new TextEncoder().encode("abc"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
  it("round-trips through JSON and rejects malformed ones with INVALID_MANIFEST", () => {
    const m = manifest();
    expect(parseManifest(serializeManifest(m))).toEqual(m);
    // another view of the same values (the encoder joins rows to pad less)
    const viewed = { ...m, tensors: [{ ...m.tensors[0]!, originalShape: [2, 1] }] };
    expect(parseManifest(serializeManifest(viewed))).toEqual(viewed);
    for (const broken of [{ ...m, version: 2 }, { ...m, tensors: [{ ...m.tensors[0], file: "../x" }] }, { ...m, tensors: [{ ...m.tensors[0], shape: [0, 1] }] }, { ...m, tensors: [{ ...m.tensors[0], originalShape: [3, 1] }] }, "{"]) {
      try {
        parseManifest(typeof broken === "string" ? broken : JSON.stringify(broken));
        expect.unreachable();
      } catch (e) {
        expect(isSgfp4Error(e) && e.code).toBe("INVALID_MANIFEST");
      }
    }
  });
  it("verify reports container and decoded hash mismatches", async () => {
    const m = manifest();
    const ok = await verifyManifest(m, () => new Uint8Array([1]), () => new Float32Array([1, 2]));
    expect(ok.ok).toBe(true);
    const badOut = await verifyManifest(m, () => new Uint8Array([1]), () => new Float32Array([1, 2.0000002]));
    expect(badOut.tensors[0]!.problem).toMatch(/decoded sha256/);
    const badIn = await verifyManifest(m, () => new Uint8Array([2]), () => new Float32Array([1, 2]));
    expect(badIn.tensors[0]!.problem).toMatch(/container sha256/);
  });
});
