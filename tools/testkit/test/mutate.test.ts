import { describe, expect, it } from "vitest";
import { parse, Sgfp4Error } from "@sgfp4/format";
import { MUTATION_KINDS, Rng, generateValid, mutate, mutateOnce, type Mutated } from "../src/index.js";

const fresh = (seed: number, profile: "v1" | "v2"): Mutated => {
  const g = generateValid(new Rng(seed), { profile, gaps: false, trailing: false });
  return { profile, shape: [...g.shape], bytes: g.bytes.slice(), ops: [] };
};

function changed(a: Uint8Array, b: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

describe("mutate", () => {
  it("is deterministic for a seed", () => {
    const g = generateValid(new Rng(3));
    const a = mutate(new Rng(3, 99), g);
    const b = mutate(new Rng(3, 99), g);
    expect(a.bytes).toEqual(b.bytes);
    expect(a.ops).toEqual(b.ops);
  });

  it("never alters its input", () => {
    const g = generateValid(new Rng(4));
    const copy = g.bytes.slice();
    for (let i = 0; i < 50; i++) mutate(new Rng(4, i), g);
    expect(g.bytes).toEqual(copy);
  });

  it("every kind changes the bytes or the shape, on both profiles", () => {
    for (const profile of ["v1", "v2"] as const) {
      for (const kind of MUTATION_KINDS) {
        let effective = 0;
        for (let i = 0; i < 20; i++) {
          const m = fresh(20 + i, profile);
          const before = { bytes: m.bytes.slice(), shape: [...m.shape] };
          const c = parse(m.bytes, { profile, shape: m.shape });
          mutateOnce(new Rng(i, 7), m, kind, c);
          if (m.bytes.length !== before.bytes.length || changed(m.bytes, before.bytes).length || m.shape.join() !== before.shape.join()) effective++;
        }
        expect(effective, `${profile} ${kind}`).toBeGreaterThanOrEqual(15);
      }
    }
  });

  it("truncate shortens, extend keeps the prefix", () => {
    for (let i = 0; i < 20; i++) {
      const m = fresh(30 + i, "v2");
      const orig = m.bytes.slice();
      mutateOnce(new Rng(i), m, "truncate", undefined);
      expect(m.bytes.length).toBeLessThan(orig.length);
      expect(m.bytes).toEqual(orig.subarray(0, m.bytes.length));
      const e = fresh(30 + i, "v2");
      mutateOnce(new Rng(i), e, "extend", undefined);
      expect(e.bytes.length).toBeGreaterThan(orig.length);
      expect(e.bytes.subarray(0, orig.length)).toEqual(orig);
    }
  });

  it("structure-aware kinds touch only their field", () => {
    for (let i = 0; i < 30; i++) {
      const m = fresh(40 + i, "v2");
      const c = parse(m.bytes, { profile: "v2", shape: m.shape });
      const orig = m.bytes.slice();
      mutateOnce(new Rng(i, 1), m, "record-offset", c);
      for (const at of changed(orig, m.bytes)) expect(at >= 16 && at < 16 + 4 * c.blockCount, `offset table byte ${at}`).toBe(true);

      const h = fresh(40 + i, "v2");
      mutateOnce(new Rng(i, 2), h, "header-field", c);
      for (const at of changed(orig, h.bytes)) expect(at).toBeLessThan(16);

      const s = fresh(40 + i, "v2");
      mutateOnce(new Rng(i, 3), s, "sb-header", c);
      const starts = c.blocks.map((b) => b.offset);
      const diff = changed(orig, s.bytes);
      if (diff.length) expect(starts.some((st) => diff.every((at) => at >= st && at < st + 4))).toBe(true);
    }
  });

  it("an sb_header set to layout 6 or 7 is what UNKNOWN_LAYOUT means", () => {
    let hits = 0;
    for (let i = 0; i < 60 && hits < 5; i++) {
      const m = fresh(50 + i, "v2");
      const c = parse(m.bytes, { profile: "v2", shape: m.shape });
      const op = mutateOnce(new Rng(i, 5), m, "sb-header", c);
      const v = Number(op.split("=")[1]);
      if (v !== 6 && v !== 7) continue;
      hits++;
      let code: string | undefined;
      try {
        parse(m.bytes, { profile: "v2", shape: m.shape });
      } catch (e) {
        code = (e as Sgfp4Error).code;
      }
      expect(code).toBe("UNKNOWN_LAYOUT");
    }
    expect(hits).toBeGreaterThan(0);
  });
});
