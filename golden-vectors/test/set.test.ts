import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { STREAM_ERROR_CODES } from "@sgfp4/format";
import { describe, expect, it } from "vitest";
import { REJECT_CODES } from "../src/vectors.js";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));
const dir = join(packageRoot, "vectors");
const read = (name: string) => readFileSync(join(dir, name));
interface Meta {
  id: string;
  profile: string;
  container: string;
  shape: [number, number];
  clauses: string[];
  description: string;
  expect: { decode?: { sha256: string; output?: string }; reject?: string };
}
const index = JSON.parse(read("index.json").toString()) as { format: string; version: number; vectors: string[] };
const metas = index.vectors.map((n) => JSON.parse(read(n).toString()) as Meta);

// DECISIONS.md section 3, copied by hand; checked against the spec file when it is present.
const SECTION_3 = ["SIZE_MISMATCH", "BAD_MAGIC", "BAD_VERSION", "TRUNCATED", "NONZERO_PADDING", "RECORD_COUNT_MISMATCH", "MISALIGNED_OFFSET", "NONMONOTONIC_OFFSET", "OFFSET_OUT_OF_RANGE", "UNKNOWN_LAYOUT", "RESERVED_BITS", "NONFINITE_PARAMETER"];

describe("the committed vector set (VECTORS.md format)", () => {
  it("has an index in format version 1 listing every metadata file once", () => {
    expect(index.format).toBe("sgfp4-golden-vectors");
    expect(index.version).toBe(1);
    expect(new Set(index.vectors).size).toBe(index.vectors.length);
    const jsons = readdirSync(dir).filter((n) => n.endsWith(".json") && n !== "index.json");
    expect(jsons.sort()).toEqual([...index.vectors].sort());
  });

  it("has at least 60 vectors", () => {
    expect(metas.length).toBeGreaterThanOrEqual(60);
  });

  it("gives every vector clauses, a one-sentence description and a container of its profile", () => {
    for (const m of metas) {
      expect(m.id + ".json", m.id).toBe(index.vectors.find((n) => n === m.id + ".json"));
      expect(m.clauses.length, m.id).toBeGreaterThan(0);
      for (const c of m.clauses) expect(c, m.id).toMatch(/^(22(\.\d+)+|D[1-5]|P\d+)$/);
      expect(m.description.length, m.id).toBeGreaterThan(10);
      expect(m.description.trim().endsWith("."), m.id).toBe(true);
      expect(m.container).toBe(`${m.id}.${m.profile === "v1" ? "fp4" : "sgfp4"}`);
      expect(existsSync(join(dir, m.container)), m.container).toBe(true);
      expect(m.shape.every((d) => Number.isInteger(d) && d >= 1)).toBe(true);
    }
  });

  it("matches each .f32 to its sha256 and its shape", () => {
    for (const m of metas.filter((x) => x.expect.decode)) {
      const out = read(m.expect.decode!.output!);
      expect(out.length, m.id).toBe(m.shape[0] * m.shape[1] * 4);
      expect(createHash("sha256").update(out).digest("hex"), m.id).toBe(m.expect.decode!.sha256);
    }
  });

  it("names a DECISIONS.md section 3 code in every reject vector, and uses every code", () => {
    const rejects = metas.filter((m) => m.expect.reject !== undefined);
    for (const m of rejects) expect(SECTION_3, m.id).toContain(m.expect.reject);
    expect(new Set(rejects.map((m) => m.expect.reject))).toEqual(new Set(SECTION_3));
  });

  it("uses the same code list as DECISIONS.md and @sgfp4/format", () => {
    expect([...REJECT_CODES]).toEqual(SECTION_3);
    expect([...STREAM_ERROR_CODES].sort()).toEqual([...SECTION_3].sort());
    const decisions = join(packageRoot, "../../shared/spec/DECISIONS.md");
    if (existsSync(decisions)) {
      const section = readFileSync(decisions, "utf8").split("## 3.")[1]!.split("## 4.")[0]!;
      const codes = [...section.matchAll(/^\| ([A-Z_]+) \|/gm)].map((x) => x[1]);
      expect(codes).toEqual(SECTION_3);
    }
  });

  it("stays under 4 MB", () => {
    const total = readdirSync(dir).reduce((s, n) => s + statSync(join(dir, n)).size, 0);
    expect(total).toBeLessThan(4 * 1024 * 1024);
  });
});
