import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Sgfp4Error } from "@sgfp4/format";
import { loadVectorSet } from "@sgfp4/conformance";
import type { Decoder } from "@sgfp4/format";
import { candidateExpectation, decodeOutcome, judge, shrink, writeCandidate, type Outcome } from "../src/index.js";

const dec = (...w: number[]): Outcome => ({ kind: "decoded", bits: Uint32Array.from(w) });
const rej = (code: string): Outcome => ({ kind: "rejected", code, message: code });

describe("judge", () => {
  it("valid inputs must decode to the constructed bits on every backend", () => {
    const want = new Float32Array([1, -0]);
    const bits = new Uint32Array(want.buffer);
    expect(judge({ a: dec(...bits), b: dec(...bits) }, want)).toBeNull();
    expect(judge({ a: dec(...bits), b: dec(bits[0]!, 0) }, want)).toMatch(/b differs from the constructed output at element 1/);
    expect(judge({ a: dec(...bits), b: rej("TRUNCATED") }, want)).toMatch(/b rejected TRUNCATED on a valid stream/);
  });

  it("mutated inputs: all rejected (any codes) or all identical", () => {
    expect(judge({ a: rej("TRUNCATED"), b: rej("NONZERO_PADDING") })).toBeNull();
    expect(judge({ a: dec(1, 2), b: dec(1, 2) })).toBeNull();
    expect(judge({ a: dec(1, 2), b: dec(1, 3) })).toMatch(/decode differently/);
    expect(judge({ a: dec(1, 2), b: rej("TRUNCATED") })).toMatch(/a decoded but b rejected TRUNCATED/);
  });

  it("errors without a section-3 code and timeouts are always findings", () => {
    expect(judge({ a: rej("TRUNCATED"), b: { kind: "error", message: "RangeError: offset is out of bounds" } })).toMatch(/RangeError/);
    expect(judge({ a: rej("TRUNCATED"), b: { kind: "timeout", ms: 10 } })).toMatch(/timeout/);
  });
});

function fake(name: string, decode: (bytes: Uint8Array) => Float32Array | Promise<Float32Array>): Decoder {
  return { name, formats: ["f32"], available: async () => ({ ok: true }), decode: async (bytes) => decode(bytes) };
}

describe("decodeOutcome", () => {
  it("classifies decodes, section-3 rejections, other errors and hangs", async () => {
    const input = { profile: "v2" as const, shape: [1, 1] as [number, number], bytes: new Uint8Array(4) };
    expect((await decodeOutcome(fake("d", () => new Float32Array([2])), input, 1000)).kind).toBe("decoded");
    const r = await decodeOutcome(fake("r", () => { throw new Sgfp4Error("BAD_MAGIC", "x"); }), input, 1000);
    expect(r).toMatchObject({ kind: "rejected", code: "BAD_MAGIC" });
    const u = await decodeOutcome(fake("u", () => { throw new Sgfp4Error("LIMIT_EXCEEDED", "x"); }), input, 1000);
    expect(u).toMatchObject({ kind: "error", code: "LIMIT_EXCEEDED" });
    const t = await decodeOutcome(fake("t", () => new Promise<Float32Array>(() => undefined)), input, 50);
    expect(t).toMatchObject({ kind: "timeout" });
  });
});

describe("shrink", () => {
  it("reduces a disagreement to the byte that causes it", async () => {
    // "a" decodes whenever the stream contains 0xAB, "b" always rejects: a disagreement that
    // persists exactly while 0xAB is present.
    const a = fake("a", (bytes) => {
      if (bytes.includes(0xab)) return new Float32Array([1]);
      throw new Sgfp4Error("TRUNCATED", "no");
    });
    const b = fake("b", () => {
      throw new Sgfp4Error("TRUNCATED", "no");
    });
    const bytes = new Uint8Array(200).map((_, i) => (i * 7 + 1) & 0xff);
    bytes[137] = 0xab;
    const s = await shrink([a, b], { profile: "v2", shape: [1, 1], bytes }, { maxRounds: 1000 });
    expect(Array.from(s.input.bytes)).toEqual([0xab]);
  });
});

describe("writeCandidate", () => {
  it("writes a folder the conformance runner loads (decode and reject vectors)", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "fuzz-cand-"));
    try {
      const input = { profile: "v1" as const, shape: [1, 2] as [number, number], bytes: new Uint8Array(2056) };
      await writeCandidate(dir, "c1", input, { decode: new Uint32Array([0x3f800000, 0x80000000]) }, "d");
      await writeCandidate(dir, "c2", { ...input, profile: "v2" }, { reject: "ANY" }, "r");
      const set = await loadVectorSet(dir);
      expect(set.vectors.map((v) => [v.id, v.profile, v.expect.kind])).toEqual([
        ["c1", "v1", "decode"],
        ["c2", "v2", "reject"],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("candidate expectation: the constructed output wins, else the majority", () => {
    const cons = new Float32Array([3]);
    expect(candidateExpectation({ a: rej("TRUNCATED") }, cons)).toMatchObject({ confirmed: true });
    const m = candidateExpectation({ a: dec(5), b: dec(5), c: rej("TRUNCATED") });
    expect(m.confirmed).toBe(false);
    expect(m.expect).toEqual({ decode: Uint32Array.from([5]) });
    expect(candidateExpectation({ a: dec(5), b: rej("X"), c: rej("Y") }).expect).toEqual({ reject: "ANY" });
  });
});
