import { describe, expect, it } from "vitest";
import { parse, LAYOUT } from "@sgfp4/format";
import { Rng, generateValid, halfValue, randomHalf } from "../src/index.js";

describe("Rng", () => {
  it("reproduces from (seed, stream) and differs across streams", () => {
    const a = new Rng(42, 3);
    const b = new Rng(42, 3);
    const c = new Rng(42, 4);
    const xs = Array.from({ length: 8 }, () => a.u32());
    expect(Array.from({ length: 8 }, () => b.u32())).toEqual(xs);
    expect(Array.from({ length: 8 }, () => c.u32())).not.toEqual(xs);
  });

  it("int stays in range and reaches both ends", () => {
    const r = new Rng(1);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = r.int(-8, 7);
      expect(v).toBeGreaterThanOrEqual(-8);
      expect(v).toBeLessThanOrEqual(7);
      seen.add(v);
    }
    expect(seen.size).toBe(16);
  });
});

describe("halfValue (the generator's oracle for FP16)", () => {
  it("gives the IEEE values of hand-picked patterns", () => {
    expect(halfValue(0x3c00)).toBe(1);
    expect(halfValue(0xc000)).toBe(-2);
    expect(halfValue(0x7bff)).toBe(65504);
    expect(halfValue(0x0001)).toBe(2 ** -24);
    expect(halfValue(0x03ff)).toBe(1023 * 2 ** -24);
    expect(halfValue(0x0400)).toBe(2 ** -14);
    expect(Object.is(halfValue(0x8000), -0)).toBe(true);
    expect(Object.is(halfValue(0x0000), 0)).toBe(true);
  });

  it("randomHalf never produces Inf or NaN", () => {
    const r = new Rng(5);
    for (let i = 0; i < 5000; i++) expect(randomHalf(r) & 0x7c00).not.toBe(0x7c00);
  });
});

describe("generateValid", () => {
  it("is deterministic for a seed", () => {
    const a = generateValid(new Rng(9, 1));
    const b = generateValid(new Rng(9, 1));
    expect(a.bytes).toEqual(b.bytes);
    expect(a.shape).toEqual(b.shape);
  });

  it("every container parses with no warning when gaps, trailing bytes and negative scales are off", () => {
    for (let i = 0; i < 300; i++) {
      const g = generateValid(new Rng(11, i), { gaps: false, trailing: false, negativeScales: false });
      const c = parse(g.bytes, { profile: g.profile, shape: g.shape });
      expect(c.warnings.map((w) => w.kind), `case ${i}`).toEqual([]);
      expect(g.expected.length).toBe(g.shape[0] * g.shape[1]);
    }
  });

  it("negative scales, when allowed, show up only as negative-scale warnings", () => {
    let seen = 0;
    for (let i = 0; i < 300; i++) {
      const g = generateValid(new Rng(15, i), { gaps: false, trailing: false });
      const kinds = new Set(parse(g.bytes, { profile: g.profile, shape: g.shape }).warnings.map((w) => w.kind));
      expect([...kinds].filter((k) => k !== "negative-scale"), `case ${i}`).toEqual([]);
      if (g.features.negativeScale) seen++;
    }
    expect(seen).toBeGreaterThan(5);
  });

  it("record counts cover every residue mod 4", () => {
    const residues = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const g = generateValid(new Rng(16, i), { profile: "v2" });
      residues.add((Math.ceil(g.shape[0] / 64) * Math.ceil(g.shape[1] / 64)) % 4);
    }
    expect([...residues].sort()).toEqual([0, 1, 2, 3]);
  });

  it("gaps and trailing bytes, when asked, show up as exactly those warnings", () => {
    let gaps = 0;
    let trailing = 0;
    for (let i = 0; i < 300; i++) {
      const g = generateValid(new Rng(12, i), { profile: "v2" });
      const kinds = new Set(parse(g.bytes, { profile: "v2", shape: g.shape }).warnings.map((w) => w.kind));
      expect(kinds.has("gap-between-records"), `case ${i}`).toBe(g.features.gaps);
      expect(kinds.has("trailing-bytes"), `case ${i}`).toBe(g.features.trailing);
      if (g.features.gaps) gaps++;
      if (g.features.trailing) trailing++;
    }
    expect(gaps).toBeGreaterThan(10);
    expect(trailing).toBeGreaterThan(10);
  });

  it("covers both profiles, every layout, reserved symbols, cropped shapes, subnormal and signed-zero parameters", () => {
    const layouts = new Set<number>();
    const profiles = new Set<string>();
    let reserved = 0;
    let cropped = 0;
    let subnormal = 0;
    let negZero = 0;
    for (let i = 0; i < 200; i++) {
      const g = generateValid(new Rng(13, i));
      profiles.add(g.profile);
      g.features.layouts.forEach((l) => layouts.add(l));
      if (g.features.reservedSymbol) reserved++;
      if (g.shape[0] % 64 || g.shape[1] % 64) cropped++;
      const c = parse(g.bytes, { profile: g.profile, shape: g.shape });
      for (let l = 0; l < c.leafCount; l++) {
        const hdr = c.leafTable[4 * l + 2]!;
        for (const h of [hdr >>> 16, hdr & 0xffff]) {
          if ((h & 0x7c00) === 0 && (h & 0x3ff) !== 0) subnormal++;
          if (h === 0x8000) negZero++;
        }
      }
    }
    expect([...profiles].sort()).toEqual(["v1", "v2"]);
    expect([...layouts].sort()).toEqual([LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_8, LAYOUT.MIXED, LAYOUT.FULL_4x4]);
    expect(reserved).toBeGreaterThan(10);
    expect(cropped).toBeGreaterThan(50);
    expect(subnormal).toBeGreaterThan(50);
    expect(negZero).toBeGreaterThan(10);
  });

  it("the expected output of a one-block case follows from its codes (checked by hand on a few elements)", () => {
    // Find a v1 FP4 case with codes packed normally and check element 0 and 1 against the nibbles.
    for (let i = 0; i < 100; i++) {
      const g = generateValid(new Rng(14, i), { profile: "v1", maxTiles: 1 });
      const flags = new DataView(g.bytes.buffer).getUint32(4, true) & 0xf;
      if (flags & 1) continue;
      const header = new DataView(g.bytes.buffer).getUint32(0, true);
      const s = halfValue(header >>> 16);
      const bias = halfValue(header & 0xffff);
      const nib = g.bytes[8]!;
      const q0 = (nib & 0xf) >= 8 ? (nib & 0xf) - 16 : nib & 0xf;
      const q1 = nib >> 4 >= 8 ? (nib >> 4) - 16 : nib >> 4;
      expect(g.expected[0]).toBe(Math.fround(s * q0 + bias));
      if (g.shape[1] > 1) expect(g.expected[1]).toBe(Math.fround(s * q1 + bias));
      return;
    }
    throw new Error("no FP4 v1 case found");
  });
});
