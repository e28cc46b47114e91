#!/usr/bin/env node
// Throughput of decode vs Float32Array.prototype.set for the same output size, same process.
//   pnpm --filter @sgfp4/cpu-decoder bench            (sizes 1 4 16 64 256 MiB)
//   node --expose-gc bench/bench.mjs 1 4              (chosen sizes)
//   node --expose-gc bench/bench.mjs --before DIR 16   (also times decode / decodeInto of another
//                                                       build, DIR/index.js, in the same run)
// Not a test: it prints numbers. Times: mean per call over a batch after a warm-up (>= 150 ms), median of 3 batches.
import os from "node:os";
import { writeV1, writeV2, parse, LAYOUT } from "@sgfp4/format";
import { createOutput, decode, decodeInto } from "../dist/index.js";
import { fillInputs, instantiate, kernelModule, pagesFor, planMemory } from "../dist/kernel.js";

const MiB = 1 << 20;
const args = process.argv.slice(2);
const beforeAt = args.indexOf("--before");
const beforeDir = beforeAt >= 0 ? new URL(args.splice(beforeAt, 2)[1] + "/", `file://${process.cwd()}/`).href : null;
const before = beforeDir ? await import(beforeDir + "index.js") : null;
// its kernel alone too (same memory and table as ours), when that build has kernel.js
const beforeKernel = beforeDir ? await import(beforeDir + "kernel.js").catch(() => null) : null;
const sizes = args.map(Number).filter((n) => n > 0);
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
// Mean time per call over a batch of back-to-back calls (so the garbage collection a call causes is
// paid inside the batch, as in a real decode loop), median of 3 batches. No forced gc() between
// calls: a full collection before every call made allocating paths (parse) ~2.5x slower than in a
// loop, which the first version of this bench did.
function median(fn, runs) {
  gc();
  // Warm-up of at least 150 ms: V8 runs new wasm code on its baseline compiler (Liftoff) until the
  // optimised (TurboFan) code is ready, which took ~2x longer per call in the first batches at 1 MiB.
  for (let t0 = performance.now(), k = 0; k < 3 || performance.now() - t0 < 150; k++) fn();
  const batches = [];
  for (let b = 0; b < 3; b++) {
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) fn();
    batches.push((performance.now() - t0) / runs);
  }
  batches.sort((a, b) => a - b);
  return batches[1];
}

const fmt = (ms) => ms.toFixed(3).padStart(9);
const ratio = (base, t) => (base / t).toFixed(2).padStart(5);
console.log(`node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? "?"}), wasm kernel: ${kernelModule() ? "yes" : "no (JS fallback)"}`);
console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}; ms = mean wall time per call in a batch of back-to-back calls, median of 3 batches; r = baseline time / decode time (>= 0.60 is the target)`);
console.log("set(warm): dst.set(src) into a preallocated array; set(fresh): new Float32Array(n).set(src); parse: @sgfp4/format parse alone (included in every decode)");
console.log("into(plain): decodeInto a preallocated Float32Array; into(kmem): decodeInto an array from createOutput (kernel writes in place); kernel: wasm kernel alone");
console.log(
  "size    container  | set(warm)  set(fresh) |  parse    | decode   r(warm) r(fresh) | into(plain) r(warm) | into(kmem) r(warm) | kernel   r(warm)",
);
for (const mib of SIZES) {
  const count = (mib * MiB) / 4;
  const rows = count / COLS;
  const shape = [rows, COLS];
  const runs = mib >= 256 ? 3 : mib >= 64 ? 5 : mib >= 16 ? 9 : 21;
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
    const kmem = createOutput(shape);
    decodeInto(bytes, opts, kmem); // first touch of the new memory's pages, once
    const tKmem = median(() => decodeInto(bytes, opts, kmem), runs);
    // Kernel alone on an already-touched memory: compute speed without page faults or parsing.
    const c = parse(bytes, opts);
    const plan = planMemory(c, count * 4);
    const memory = new WebAssembly.Memory({ initial: pagesFor(plan.totalBytes), maximum: pagesFor(plan.totalBytes) });
    fillInputs(memory.buffer, c, bytes, plan);
    const k = instantiate(kernelModule(), memory);
    k.decode_leaves(plan.tableAt, c.leafCount, 0, rows, COLS, c.tilesX, 0);
    const tKernel = median(() => k.decode_leaves(plan.tableAt, c.leafCount, 0, rows, COLS, c.tilesX, 0), runs);
    let beforeCols = "";
    if (before) {
      const bDecode = median(() => before.decode(bytes, opts), runs);
      const bInto = median(() => before.decodeInto(bytes, opts, warm), runs);
      const bOut = before.createOutput(shape);
      before.decodeInto(bytes, opts, bOut);
      const bKmem = median(() => before.decodeInto(bytes, opts, bOut), runs);
      beforeCols = ` || before: decode${fmt(bDecode)} into(plain)${fmt(bInto)} ${ratio(setWarm, bInto)} into(kmem)${fmt(bKmem)} ${ratio(setWarm, bKmem)}`;
      if (beforeKernel) {
        const bk = beforeKernel.instantiate(beforeKernel.kernelModule(), memory);
        bk.decode_leaves(plan.tableAt, c.leafCount, 0, rows, COLS, c.tilesX, 0);
        const bKernel = median(() => bk.decode_leaves(plan.tableAt, c.leafCount, 0, rows, COLS, c.tilesX, 0), runs);
        // ours again right after, so both kernel times come from the same minute of a shared box
        const tKernel2 = median(() => k.decode_leaves(plan.tableAt, c.leafCount, 0, rows, COLS, c.tilesX, 0), runs);
        beforeCols += ` kernel${fmt(bKernel)} ${ratio(setWarm, bKernel)} (ours again${fmt(tKernel2)})`;
      }
    }
    console.log(
      `${String(mib).padStart(3)} MiB  ${name.padEnd(8)} |${fmt(setWarm)} ${fmt(setFresh)} |${fmt(tParse)}  |${fmt(tDecode)} ${ratio(setWarm, tDecode)}  ${ratio(setFresh, tDecode)}   |${fmt(tInto)}    ${ratio(setWarm, tInto)} |${fmt(tKmem)}   ${ratio(setWarm, tKmem)} |${fmt(tKernel)} ${ratio(setWarm, tKernel)}${beforeCols}`,
    );
  }
  gc();
}
console.log(`load average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
