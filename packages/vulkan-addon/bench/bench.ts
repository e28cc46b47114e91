/**
 * Benchmark (not a test; bench-only code): decode throughput on the device with the output kept
 * there, against a plain copy of the same output size in the same Vulkan context
 * (vkCmdCopyBuffer and a copy shader), GPU timestamps, medians, through the bench-only addon
 * (scripts/build-bench.mjs). Also end-to-end decode to host memory, and a correctness pass on the
 * device: the golden vectors and constructed random containers, bit for bit.
 *
 * Usage (bundled by scripts/bench.mjs next to the bench-only addon):
 *   node .bench/bench.mjs [--max-mib N] [--min-mib N] [--sizes 256,1024] [--reps N] [--json FILE]
 * --sizes (output MiB, comma-separated) replaces the default 16, 64, 256, 1024, 2048, 4096 series.
 * The addon is .bench/sgfp4_vulkan_bench.node beside the bundle, or SGFP4_VULKAN_BENCH_ADDON.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { halfBitsToFloatBits, parse, type Shape } from "@sgfp4/format";
import { Rng, firstBitDifference, generateValid } from "@sgfp4/testkit";
import { decode, info } from "../src/index.js";

interface KernelResult {
  decodeNs: number[];
  candidates: { name: string; ns: number[]; exact?: boolean }[];
  copyBufferNs: number[];
  copyShaderNs: number[];
  batch: number;
  outputBytes: number;
  streamBytes: number;
  leafTableBytes: number;
  dispatches: number;
}
const here = dirname(fileURLToPath(import.meta.url));
const benchAddonPath = process.env.SGFP4_VULKAN_BENCH_ADDON ?? join(here, "sgfp4_vulkan_bench.node");
process.env.SGFP4_VULKAN_ADDON ??= benchAddonPath; // the public API and the timings share one device
const benchAddon = createRequire(import.meta.url)(benchAddonPath) as {
  kernel(bytes: Uint8Array, profile: string, rows: number, cols: number, o: object): KernelResult;
};

const args = process.argv.slice(2);
const arg = (name: string, dflt: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const maxMiB = arg("--max-mib", 4096);
const minMiB = arg("--min-mib", 16);
const reps = arg("--reps", 10);
// Default series: 16, 64, 256, 1024 + 2048, 4096 within [min, max].
const defaultSizes: number[] = [];
for (let mib = minMiB; mib <= maxMiB; mib *= 4) defaultSizes.push(...(mib === 1024 ? [1024, 2048] : [mib]));
const sizeList = args.includes("--sizes") ? args[args.indexOf("--sizes") + 1]!.split(",").map(Number) : defaultSizes;
const jsonOut = args.includes("--json") ? args[args.indexOf("--json") + 1]! : undefined;
const packageRoot = join(here, "..");

// ---- fast container generators (the writer's per-code arrays would be too slow at 4 GiB) ----

let seed = 0x12345678;
const next = (): number => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
};
/** A finite FP16 of moderate magnitude (scale 2^-8..2^-1 style, bias any sign). */
const half = (): number => ((next() % 0x1c00) + 0x1c00) | (next() & 0x8000);

function fillRandom(words: Uint32Array): void {
  for (let i = 0; i < words.length; i++) words[i] = next();
}

/** v1, rows x cols, ~70% FP4 / 30% T158 blocks, slots in order. */
function makeV1(shape: Shape): Uint8Array {
  const B = Math.ceil(shape[0] / 64) * Math.ceil(shape[1] / 64);
  const bytes = new Uint8Array(2056 * B);
  const dv = new DataView(bytes.buffer);
  fillRandom(new Uint32Array(bytes.buffer, 8 * B, 512 * B));
  for (let b = 0; b < B; b++) {
    const mode = next() % 10 < 3 ? 1 : 0;
    dv.setUint32(4 * b, ((half() & 0x7fff) << 16 | half()) >>> 0, true);
    dv.setUint32(4 * B + 4 * b, b * 2048 + mode, true);
    if (mode) bytes.fill(0, 8 * B + b * 2048 + 1024, 8 * B + b * 2048 + 2048);
  }
  return bytes;
}

/** Leaf log2 sizes in storage order for a layout; MIXED uses a few fixed realistic trees. */
const TREES: number[][] = [];
function treeSizes(splitBits: number[]): number[] {
  // splitBits consumed in pre-order; returns leaf log2 sizes
  let k = 0;
  const out: number[] = [];
  const visit = (log2: number): void => {
    if (log2 > 2 && splitBits[k++]) for (let q = 0; q < 4; q++) visit(log2 - 1);
    else out.push(log2);
  };
  visit(6);
  return out;
}
function splitMapOf(sizes: number[]): [number, number, number] {
  // rebuild the map from leaf sizes (pre-order): a node splits when the next leaf is smaller
  const map: [number, number, number] = [0, 0, 0];
  let bit = 0;
  let i = 0;
  const visit = (log2: number): void => {
    if (log2 > 2) {
      const k = bit++;
      if (sizes[i]! < log2) {
        map[k >>> 5] = (map[k >>> 5]! | (1 << (k & 31))) >>> 0;
        for (let q = 0; q < 4; q++) visit(log2 - 1);
        return;
      }
    }
    i++;
  };
  visit(6);
  return map;
}
{
  // root split; quadrants: leaf 32, split into 16s, mixed 16/8, split with some 4x4
  TREES.push(treeSizes([1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0]));
  TREES.push(treeSizes([1, 0, 0, 1, 0, 0, 0, 0, 0]));
  TREES.push(treeSizes([1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]));
}
const LAYOUT_MIX: [layout: number, weight: number][] = [[0, 20], [1, 30], [2, 20], [3, 4], [4, 25], [5, 1]];
const UNIFORM_LOG2: Record<number, number> = { 0: 6, 1: 5, 2: 4, 3: 3, 5: 2 };

function pickLayout(r: number): number {
  let acc = 0;
  for (const [l, w] of LAYOUT_MIX) if (r < (acc += w)) return l;
  return 0;
}

/** v2 with a realistic layout mix (percentages above), ~70% FP4 leaves. */
function makeV2(shape: Shape): Uint8Array {
  const B = Math.ceil(shape[0] / 64) * Math.ceil(shape[1] / 64);
  const layoutOf = new Uint8Array(B);
  const treeOf = new Uint8Array(B);
  const base = Math.ceil((16 + 4 * B) / 16) * 16;
  // pass 1: layouts and modes decided by a seeded stream, sizes summed
  let total = base;
  const modes: Uint8Array[] = [];
  for (let b = 0; b < B; b++) {
    const layout = pickLayout(next() % 100);
    const tree = next() % TREES.length;
    layoutOf[b] = layout;
    treeOf[b] = tree;
    const sizes = layout === 4 ? TREES[tree]! : new Array((1 << (6 - UNIFORM_LOG2[layout]!)) ** 2).fill(UNIFORM_LOG2[layout]!);
    const m = new Uint8Array(sizes.length);
    let bytes = Math.ceil(((layout === 4 ? 16 : 4) + 4 * sizes.length) / 16) * 16;
    for (let i = 0; i < sizes.length; i++) {
      m[i] = next() % 10 < 3 ? 1 : 0;
      const n = 1 << (2 * sizes[i]!);
      bytes += Math.ceil((m[i] ? n / 4 : n / 2) / 16) * 16;
    }
    modes.push(m);
    total += bytes;
  }
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  out.set([0x53, 0x47, 0x46, 0x34, 2]);
  dv.setUint32(5, B, true);
  // random payload bytes everywhere first (words), then headers overwrite their regions
  fillRandom(new Uint32Array(out.buffer, base, (total - base) >>> 2));
  let at = base;
  for (let b = 0; b < B; b++) {
    const layout = layoutOf[b]!;
    const sizes = layout === 4 ? TREES[treeOf[b]!]! : new Array((1 << (6 - UNIFORM_LOG2[layout]!)) ** 2).fill(UNIFORM_LOG2[layout]!);
    const m = modes[b]!;
    dv.setUint32(16 + 4 * b, at - base, true);
    dv.setUint32(at, layout, true);
    let h = at + 4;
    if (layout === 4) {
      const map = splitMapOf(sizes);
      for (let k = 0; k < 3; k++) dv.setUint32(at + 4 + 4 * k, map[k]!, true);
      h += 12;
    }
    for (let i = 0; i < sizes.length; i++) dv.setUint32(h + 4 * i, (((half() & 0x7fff) << 16) | (half() & 0xfff0) | m[i]!) >>> 0, true);
    const hEnd = h + 4 * sizes.length;
    let p = Math.ceil(hEnd / 16) * 16;
    out.fill(0, hEnd, p);
    for (let i = 0; i < sizes.length; i++) {
      const n = 1 << (2 * sizes[i]!);
      const used = m[i] ? n / 4 : n / 2;
      const padded = Math.ceil(used / 16) * 16;
      out.fill(0, p + used, p + padded);
      p += padded;
    }
    at = p;
  }
  return out;
}

// ---- plain reference over @sgfp4/format's leaf table, to check big decodes ----

function referenceDecode(bytes: Uint8Array, profile: "v1" | "v2", shape: Shape): Float32Array {
  const c = parse(bytes, { profile, shape, limits: { maxOutputBytes: 2 ** 34 } });
  const [rows, cols] = shape;
  const out = new Float32Array(rows * cols);
  const f = new Float32Array(2);
  const u = new Uint32Array(f.buffer);
  const t = c.leafTable;
  for (let l = 0; l < c.leafCount; l++) {
    const b = t[4 * l]!, g = t[4 * l + 1]!, h = t[4 * l + 2]!, off = t[4 * l + 3]!;
    const y = g & 63, x = (g >>> 6) & 63, size = 1 << ((g >>> 12) & 7), mode = (g >>> 15) & 1;
    u[0] = halfBitsToFloatBits(h >>> 16);
    u[1] = halfBitsToFloatBits(h & 0xffff);
    const S = f[0]!, Bias = f[1]!;
    const r0 = Math.floor(b / c.tilesX) * 64 + y, c0 = (b % c.tilesX) * 64 + x;
    for (let i = 0; i < size; i++) {
      const r = r0 + i;
      if (r >= rows) break;
      for (let j = 0; j < size; j++) {
        const col = c0 + j;
        if (col >= cols) break;
        const k = i * size + j;
        let q: number;
        if (mode === 0) {
          const nib = (bytes[off + (k >> 1)]! >> ((k & 1) * 4)) & 15;
          q = nib >= 8 ? nib - 16 : nib;
        } else {
          const sym = (bytes[off + (k >> 2)]! >> ((k & 3) * 2)) & 3;
          q = sym === 1 ? 1 : sym === 2 ? -1 : 0;
        }
        out[r * cols + col] = Math.fround(Math.fround(S * q) + Bias);
      }
    }
  }
  return out;
}

// ---- correctness on this device ----

function goldenVectors(): { passed: number; failed: string[] } {
  const dir = join(packageRoot, "..", "..", "golden-vectors", "vectors");
  const failed: string[] = [];
  let passed = 0;
  if (!existsSync(join(dir, "index.json"))) return { passed, failed: ["golden-vectors/vectors not found"] };
  for (const file of (JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { vectors: string[] }).vectors) {
    const v = JSON.parse(readFileSync(join(dir, file), "utf8"));
    const bytes = new Uint8Array(readFileSync(join(dir, v.container)));
    try {
      const out = decode(bytes, { profile: v.profile, shape: v.shape });
      if (v.expect.reject) failed.push(`${v.id}: decoded, expected ${v.expect.reject}`);
      else {
        const want = new Float32Array(new Uint8Array(readFileSync(join(dir, v.expect.decode.output))).buffer);
        if (firstBitDifference(out, want) === -1) passed++;
        else failed.push(`${v.id}: bits differ`);
      }
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (v.expect.reject && (v.expect.reject === "ANY" || v.expect.reject === code)) passed++;
      else failed.push(`${v.id}: ${String(e)}`);
    }
  }
  return { passed, failed };
}

function constructed(): { passed: number; failed: number } {
  let passed = 0, failed = 0;
  const shapes: Shape[] = [[1, 1], [3, 200], [65, 63], [130, 70], [200, 129]];
  for (let s = 1; s <= 20; s++) {
    const r = new Rng(1000 + s);
    const shape = shapes[s % shapes.length]!;
    for (const profile of ["v1", "v2"] as const) {
      const built = generateValid(r, { profile, shape });
      if (firstBitDifference(decode(built.bytes, { profile, shape }), built.expected) === -1) passed++;
      else failed++;
    }
  }
  return { passed, failed };
}

// ---- main ----

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const dev = info();
console.log(`device: ${dev.name} (${dev.type}), driver ${dev.driverName} ${dev.driverInfo}, Vulkan ${dev.apiVersion}`);
console.log(`limits: ${JSON.stringify(dev.limits)}`);
const g = goldenVectors();
console.log(`golden vectors on this device: ${g.passed} passed, ${g.failed.length} failed${g.failed.length ? ": " + g.failed.slice(0, 5).join("; ") : ""}`);
const pc = constructed();
console.log(`constructed random containers on this device: ${pc.passed} passed, ${pc.failed} failed`);

interface Row {
  profile: string;
  outMiB: number;
  streamMiB: number;
  leafTableMiB: number;
  dispatches: number;
  decodeMs: number;
  baselineMs: number;
  baselineRatio: number;
  batch: number;
  copyBufferMs: number;
  copyShaderMs: number;
  decodeGBps: number;
  copyGBps: number;
  ratio: number;
  e2eMs?: number;
  e2eGBps?: number;
  verified?: string;
}
const rows: Row[] = [];
const cols = 4096;
{
  for (const m of sizeList) {
    const shape: Shape = [(m * 1024 * 1024) / 4 / cols, cols];
    for (const profile of ["v1", "v2"] as const) {
      const t0 = performance.now();
      const bytes = profile === "v1" ? makeV1(shape) : makeV2(shape);
      const genMs = performance.now() - t0;
      const limits = { maxOutputBytes: 2 ** 34 };
      const r = benchAddon.kernel(bytes, profile, shape[0], shape[1], { maxOutputBytes: limits.maxOutputBytes, reps, warmup: 2 });
      const decodeMedianNs = median(r.decodeNs);
      const copyMedianNs = Math.min(median(r.copyBufferNs), median(r.copyShaderNs));
      const copyGBps = (2 * r.outputBytes) / copyMedianNs;
      const decodeGBps = (r.streamBytes + r.outputBytes) / decodeMedianNs;
      const row: Row = {
        profile,
        outMiB: m,
        streamMiB: bytes.length / 2 ** 20,
        leafTableMiB: r.leafTableBytes / 2 ** 20,
        dispatches: r.dispatches,
        decodeMs: decodeMedianNs / 1e6,
        baselineMs: median(r.candidates[0]!.ns) / 1e6,
        baselineRatio: (bytes.length + r.outputBytes) / median(r.candidates[0]!.ns) / copyGBps,
        batch: r.batch,
        copyBufferMs: median(r.copyBufferNs) / 1e6,
        copyShaderMs: median(r.copyShaderNs) / 1e6,
        decodeGBps,
        copyGBps,
        ratio: decodeGBps / copyGBps,
      };
      // End-to-end to host memory (native validation, upload, decode, download into a new array).
      if (m <= 1024) {
        const times: number[] = [];
        let out: Float32Array | undefined;
        for (let k = 0; k < (m <= 256 ? 3 : 1); k++) {
          const s = performance.now();
          out = decode(bytes, { profile, shape, limits });
          times.push(performance.now() - s);
        }
        row.e2eMs = median(times);
        row.e2eGBps = (bytes.length + m * 2 ** 20) / (row.e2eMs * 1e6);
        if (m <= 256) {
          const ref = referenceDecode(bytes, profile, shape);
          row.verified = firstBitDifference(out!, ref) === -1 ? "bit-exact" : "MISMATCH";
        }
      }
      rows.push(row);
      console.log(`${profile} ${m} MiB (generated in ${genMs.toFixed(0)} ms): ${JSON.stringify(row)}`);
    }
  }
}
const fmt = (x: number | undefined, d = 2) => (x === undefined ? "-" : x.toFixed(d));
console.log("\n| profile | output MiB | stream MiB | decode ms | copyBuffer ms | copy shader ms | decode GB/s | copy GB/s | ratio | first candidate pipeline (gen-shaders.mjs CANDIDATES) ratio | e2e ms (host) | e2e GB/s | check |");
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(`| ${r.profile} | ${r.outMiB} | ${fmt(r.streamMiB, 1)} | ${fmt(r.decodeMs, 3)} | ${fmt(r.copyBufferMs, 3)} | ${fmt(r.copyShaderMs, 3)} | ${fmt(r.decodeGBps, 1)} | ${fmt(r.copyGBps, 1)} | ${fmt(r.ratio * 100, 1)}% | ${fmt(r.baselineRatio * 100, 1)}% | ${fmt(r.e2eMs, 1)} | ${fmt(r.e2eGBps, 2)} | ${r.verified ?? "-"} |`);
}
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ device: dev, golden: g, constructed: pc, rows }, null, 2));
