#!/usr/bin/env node
// Throughput of decode vs Float32Array.prototype.set for the same output size, same process.
//   pnpm --filter @sgfp4/cpu-decoder bench            (sizes 1 4 16 64 256 MiB)
//   node --expose-gc bench/bench.mjs 1 4              (chosen sizes)
// Not a test: it prints numbers. Times are the median of several runs after a warm-up.
import os from "node:os";
import { writeV1, writeV2, parse, LAYOUT } from "@sgfp4/format";
import { decode, decodeInto } from "../dist/index.js";
import { decodeParallel, terminateWorkers } from "../dist/parallel.js";
import { fillInputs, instantiate, kernelModule, pagesFor, planMemory } from "../dist/kernel.js";

const MiB = 1 << 20;
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const SIZES = sizes.length ? sizes : [1, 4, 16, 64, 256];
const COLS = 1024; // 16 macroblocks wide

let seed = 12345;
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const randomBytes = (n) => Uint8Array.from({ length: n }, () => (rnd() * 256) | 0);
// A few shared payloads (content does not change speed); the writer copies them.
const pay = { 64: [0, 1].map((m) => randomBytes(m ? 1024 : 2048)) };
for (const s of [4, 8, 16, 32]) pay[s] = [randomBytes((s * s) / 2), randomBytes((s * s) / 4)];
const half = () => 0x3000 + ((rnd() * 0x800) | 0); // positive normal FP16 scales around 0.125..0.25
const biasV2 = () => (0xa000 + ((rnd() * 0x1000) | 0)) & 0xfff0;

function v1Container(rows, mode) {
  const B = Math.ceil(rows / 64) * (COLS / 64);
  const blocks = Array.from({ length: B }, () => ({ mode, scaleBits: half(), biasBits: 0xb000, payload: pay[64][mode] }));
  return writeV1({ shape: [rows, COLS], blocks });
}

const leaf = (size) => {
  const mode = rnd() < 0.5 ? 0 : 1;
  return { mode, scaleBits: half(), biasBits: biasV2(), payload: pay[size][mode] };
};
const MIXED_TREE = [["leaf", "leaf", "leaf", [["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"]], "leaf", [["leaf", "leaf", "leaf", "leaf"], "leaf", "leaf", "leaf"], "leaf"];
function mixedLeafSizes(tree, size = 64, out = []) {
  if (tree === "leaf") out.push(size);
  else for (const t of tree) mixedLeafSizes(t, size / 2, out);
  return out;
}
const MIXED_SIZES = mixedLeafSizes(MIXED_TREE);
// Layout mix, in record order: 64, 32, 16, 8, MIXED, 4x4.
const LAYOUT_CYCLE = [LAYOUT.UNIFORM_64, LAYOUT.UNIFORM_32, LAYOUT.UNIFORM_16, LAYOUT.UNIFORM_8, LAYOUT.MIXED, LAYOUT.FULL_4x4];
function v2Container(rows) {
  const B = Math.ceil(rows / 64) * (COLS / 64);
  const records = Array.from({ length: B }, (_, b) => {
    const layout = LAYOUT_CYCLE[b % LAYOUT_CYCLE.length];
    if (layout === LAYOUT.MIXED) return { layout, tree: MIXED_TREE, leaves: MIXED_SIZES.map(leaf) };
    const size = { 0: 64, 1: 32, 2: 16, 3: 8, 5: 4 }[layout];
    return { layout, leaves: Array.from({ length: (64 / size) ** 2 }, () => leaf(size)) };
  });
  return writeV2({ shape: [rows, COLS], records });
}

const gc = globalThis.gc ?? (() => {});
function median(fn, runs) {
  const t = [];
  for (let i = 0; i < runs; i++) {
    gc();
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  return t[t.length >> 1];
}
async function medianAsync(fn, runs) {
  const t = [];
  for (let i = 0; i < runs; i++) {
    gc();
    const t0 = performance.now();
    await fn();
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  return t[t.length >> 1];
}

const fmt = (ms) => ms.toFixed(3).padStart(9);
const ratio = (base, t) => (base / t).toFixed(2).padStart(5);
console.log(`node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? "?"}), wasm kernel: ${kernelModule() ? "yes" : "no (JS fallback)"}`);
console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}; ms = median wall time per call; r = baseline time / decode time (>= 0.60 is the target)`);
console.log("set(warm): dst.set(src) into a preallocated array; set(fresh): new Float32Array(n).set(src); parse: @sgfp4/format parse alone (included in every decode)");
console.log(
  "size    container  | set(warm)  set(fresh) |  parse    | decode   r(warm) r(fresh) | decodeInto r(warm) | kernel-only r(warm) | parallel(2) r(fresh)",
);
for (const mib of SIZES) {
  const count = (mib * MiB) / 4;
  const rows = count / COLS;
  const shape = [rows, COLS];
  const runs = mib >= 64 ? 5 : mib >= 16 ? 9 : 21;
  const src = new Float32Array(count).fill(1.5);
  const warm = new Float32Array(count).fill(2);
  const setWarm = median(() => warm.set(src), runs);
  const setFresh = median(() => new Float32Array(count).set(src), runs);
  for (const [name, bytes, profile] of [
    ["v1 FP4", v1Container(rows, 0), "v1"],
    ["v1 T158", v1Container(rows, 1), "v1"],
    ["v2 mix", v2Container(rows), "v2"],
  ]) {
    const opts = { profile, shape };
    decode(bytes, opts); // warm-up
    const tParse = median(() => parse(bytes, opts), runs);
    const tDecode = median(() => decode(bytes, opts), runs);
    const tInto = median(() => decodeInto(bytes, opts, warm), runs);
    // Kernel alone on an already-touched memory: compute speed without page faults or parsing.
    const c = parse(bytes, opts);
    const plan = planMemory(c, count * 4);
    const memory = new WebAssembly.Memory({ initial: pagesFor(plan.totalBytes), maximum: pagesFor(plan.totalBytes) });
    fillInputs(memory.buffer, c, bytes, plan);
    const k = instantiate(kernelModule(), memory);
    k.decode_leaves(plan.tableAt, c.leafCount, 0, rows, COLS, c.tilesX, 0);
    const tKernel = median(() => k.decode_leaves(plan.tableAt, c.leafCount, 0, rows, COLS, c.tilesX, 0), runs);
    await decodeParallel(bytes, { ...opts, threads: 2 });
    const tPar = await medianAsync(() => decodeParallel(bytes, { ...opts, threads: 2 }), runs);
    console.log(
      `${String(mib).padStart(3)} MiB  ${name.padEnd(8)} |${fmt(setWarm)} ${fmt(setFresh)} |${fmt(tParse)}  |${fmt(tDecode)} ${ratio(setWarm, tDecode)}  ${ratio(setFresh, tDecode)}   |${fmt(tInto)}  ${ratio(setWarm, tInto)}  |${fmt(tKernel)}  ${ratio(setWarm, tKernel)}     |${fmt(tPar)}  ${ratio(setFresh, tPar)}`,
    );
  }
  gc();
}
await terminateWorkers();
