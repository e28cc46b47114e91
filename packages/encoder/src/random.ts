import { Sgfp4Error } from "@sgfp4/format";
/**
 * Seeded synthetic weights for tests and benchmarks, built from exact operations only
 * (integer mulberry32, +, -, *, /, sqrt), so the same seed gives the same floats everywhere.
 * Normal variates are Irwin-Hall (sum of 12 uniforms - 6): bounded at +-6 but close enough.
 */

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function normal(rand: () => number): number {
  let s = 0;
  for (let i = 0; i < 12; i++) s += rand();
  return s - 6;
}

export type Family = "gaussian" | "laplacian" | "student-t" | "row-scale" | "low-rank" | "sparse";
export const FAMILIES: readonly Family[] = ["gaussian", "laplacian", "student-t", "row-scale", "low-rank", "sparse"];

/**
 * A rows x cols float32 tensor of one family, roughly unit variance:
 * - gaussian; laplacian (z1*z2 + z3*z4, divided by sqrt 2);
 * - student-t: 3 degrees of freedom with 0.1% outliers x20;
 * - row-scale: gaussian with per-row scale 0.1..3 and per-column scale 0.5..1.5;
 * - low-rank: rank-4 smooth product plus 0.3 noise;
 * - sparse: 90% exact zeros, the rest laplacian.
 */
export function synthetic(family: Family, rows: number, cols: number, seed: number): Float32Array {
  const rand = mulberry32(seed);
  const out = new Float32Array(rows * cols);
  const lap = () => (normal(rand) * normal(rand) + normal(rand) * normal(rand)) / Math.SQRT2;
  switch (family) {
    case "gaussian":
      for (let i = 0; i < out.length; i++) out[i] = normal(rand);
      break;
    case "laplacian":
      for (let i = 0; i < out.length; i++) out[i] = lap();
      break;
    case "student-t":
      for (let i = 0; i < out.length; i++) {
        const z = normal(rand);
        const a = normal(rand);
        const b = normal(rand);
        const c = normal(rand);
        let t = z / Math.sqrt((a * a + b * b + c * c) / 3);
        if (rand() < 0.001) t *= 20;
        out[i] = t / 1.7;
      }
      break;
    case "row-scale": {
      const rs = Array.from({ length: rows }, () => 0.1 + 2.9 * rand() * rand());
      const cs = Array.from({ length: cols }, () => 0.5 + rand());
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[r * cols + c] = normal(rand) * rs[r]! * cs[c]!;
      break;
    }
    case "low-rank": {
      const k = 4;
      const u = Array.from({ length: rows * k }, () => normal(rand));
      const v = Array.from({ length: cols * k }, () => normal(rand));
      // smooth factors: running average along the index
      for (let j = 0; j < k; j++) {
        for (let r = 1; r < rows; r++) u[r * k + j] = 0.9 * u[(r - 1) * k + j]! + 0.1 * u[r * k + j]!;
        for (let c = 1; c < cols; c++) v[c * k + j] = 0.9 * v[(c - 1) * k + j]! + 0.1 * v[c * k + j]!;
      }
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          let s = 0;
          for (let j = 0; j < k; j++) s += u[r * k + j]! * v[c * k + j]!;
          out[r * cols + c] = 4 * s + 0.3 * normal(rand);
        }
      }
      break;
    }
    case "sparse":
      for (let i = 0; i < out.length; i++) out[i] = rand() < 0.9 ? 0 : lap();
      break;
    default:
      throw new Sgfp4Error("INVALID_ARGUMENT", `unknown synthetic family "${String(family)}" (one of ${FAMILIES.join(", ")})`);
  }
  return out;
}
