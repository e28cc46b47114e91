// The cpu-decoder bench harness: synthetic containers (content does not change speed; layouts do),
// timing, another build to compare with, and the kernel run alone. Used by bench.mjs, paired.mjs
// and kernel-layouts.mjs. Encoder-made workloads and the issue 15 floors are in tools/bench-load.
import { LAYOUT, parse, writeV1, writeV2 } from "@sgfp4/format";
import { instantiate, kernelModule, pagesFor } from "../dist/kernel.js";
import { fillInputs, planMemory } from "../dist/layouts.js";

let seed = 12345;
export const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const randomBytes = (n) => Uint8Array.from({ length: n }, () => (rnd() * 256) | 0);
// A few shared payloads per leaf size and mode (FP4, T158); the writer copies them.
const pay = { 64: [0, 1].map((m) => randomBytes(m ? 1024 : 2048)) };
for (const s of [4, 8, 16, 32]) pay[s] = [randomBytes((s * s) / 2), randomBytes((s * s) / 4)];
const half = () => 0x3000 + ((rnd() * 0x800) | 0); // positive normal FP16 scales around 0.125..0.25
const biasV2 = () => (0xa000 + ((rnd() * 0x1000) | 0)) & 0xfff0;
const leaf = (size) => {
  const mode = rnd() < 0.5 ? 0 : 1;
  return { mode, scaleBits: half(), biasBits: biasV2(), payload: pay[size][mode] };
};
const SIZE_OF = { [LAYOUT.UNIFORM_64]: 64, [LAYOUT.UNIFORM_32]: 32, [LAYOUT.UNIFORM_16]: 16, [LAYOUT.UNIFORM_8]: 8, [LAYOUT.FULL_4x4]: 4 };
const MIXED_TREE = [["leaf", "leaf", "leaf", [["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"]], "leaf", [["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"], "leaf"];
function leafSizes(tree, size = 64, out = []) {
  if (tree === "leaf") out.push(size);
  else for (const t of tree) leafSizes(t, size / 2, out);
  return out;
}
/** Random quadtree, each node below the root split with probability 0.6: ~70 leaves, mostly 4x4 and 8x8 (encoder-like at tight thresholds). */
function randomTree(size, depth) {
  if (size === 4 || (depth > 0 && rnd() >= 0.6)) return "leaf";
  return [0, 1, 2, 3].map(() => randomTree(size / 2, depth + 1));
}
const mixedRecord = (tree) => ({ layout: LAYOUT.MIXED, tree, leaves: leafSizes(tree).map(leaf) });
const uniformRecord = (layout) => ({ layout, leaves: Array.from({ length: (64 / SIZE_OF[layout]) ** 2 }, () => leaf(SIZE_OF[layout])) });
const blocksOf = (rows, cols) => Math.ceil(rows / 64) * Math.ceil(cols / 64);

/** v1, every block FP4 (mode 0) or T158 (mode 1). */
export const v1Container = (rows, cols, mode = 0) =>
  writeV1({ shape: [rows, cols], blocks: Array.from({ length: blocksOf(rows, cols) }, () => ({ mode, scaleBits: half(), biasBits: 0xb000, payload: pay[64][mode] })) });
/** v2 layout mix, in record order: 64, 32, 16, 8, MIXED (a fixed tree), 4x4. */
const MIX = [LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_8, LAYOUT.MIXED, LAYOUT.FULL_4x4];
export const v2MixContainer = (rows, cols) =>
  writeV2({ shape: [rows, cols], records: Array.from({ length: blocksOf(rows, cols) }, (_, b) => (MIX[b % 6] === LAYOUT.MIXED ? mixedRecord(MIXED_TREE) : uniformRecord(MIX[b % 6]))) });
/** v2, every record MIXED with a random quadtree. */
export const v2RandomMixedContainer = (rows, cols) => writeV2({ shape: [rows, cols], records: Array.from({ length: blocksOf(rows, cols) }, () => mixedRecord(randomTree(64, 0))) });
/** v2, every record one uniform layout. */
export const v2UniformContainer = (rows, cols, layout) => writeV2({ shape: [rows, cols], records: Array.from({ length: blocksOf(rows, cols) }, () => uniformRecord(layout)) });

const gc = globalThis.gc ?? (() => {});
/**
 * Mean time per call over a batch of back-to-back calls (the garbage collection a call causes is
 * paid inside the batch, as in a real decode loop), median of 3 batches, after a warm-up of at
 * least 150 ms (V8 runs new wasm on its baseline compiler until the optimised code is ready).
 */
export function median(fn, runs) {
  gc();
  for (let t0 = performance.now(), k = 0; k < 3 || performance.now() - t0 < 150; k++) fn();
  const batches = [];
  for (let b = 0; b < 3; b++) {
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) fn();
    batches.push((performance.now() - t0) / runs);
  }
  return batches.sort((a, b) => a - b)[1];
}

/** The middle value of `xs` (the upper one of an even count). */
export const middle = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Median ms of `calls` back-to-back single calls of `f` (the paired scripts time one round with it). */
export function roundMs(f, calls = 5) {
  const t = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    f();
    t.push(performance.now() - t0);
  }
  return middle(t);
}

/** Best mean ms per call of 5 batches of `reps` calls. */
export function best(fn, reps) {
  let b = Infinity;
  for (let k = 0; k < 5; k++) {
    const s = performance.now();
    for (let i = 0; i < reps; i++) fn();
    b = Math.min(b, (performance.now() - s) / reps);
  }
  return b;
}

/** `flag VALUE` (removed from args), or the fallback. */
export function option(args, flag, fallback) {
  const at = args.indexOf(flag);
  return at < 0 ? fallback : args.splice(at, 2)[1];
}

/** `--before DIR` (removed from args): another build's dist (index.js, kernel.js) to time in the same run. */
export async function beforeBuild(args) {
  const at = args.indexOf("--before");
  if (at < 0) return null;
  const dir = new URL(args.splice(at, 2)[1] + "/", `file://${process.cwd()}/`).href;
  return { index: await import(dir + "index.js"), kernel: await import(dir + "kernel.js").catch(() => null) };
}

/**
 * The kernel alone over a parsed container's leaf table, straight into an already-touched output
 * (no page faults, no parsing): returns run(kernelModuleExports?) timing closures' inputs.
 */
export function kernelAlone(bytes, opts, kernel = { instantiate, kernelModule }) {
  const c = parse(bytes, opts);
  const plan = planMemory(c, c.shape[0] * c.shape[1] * 4);
  const pages = pagesFor(plan.totalBytes);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  fillInputs(memory.buffer, c, bytes, plan);
  const on = (k) => {
    const exports = k.instantiate(k.kernelModule(), memory);
    return () => exports.decode_leaves(plan.tableAt, c.leafCount, 0, c.shape[0], c.shape[1], c.tilesX, 0);
  };
  return { leafCount: c.leafCount, ours: on(kernel), other: (k) => on(k) };
}
