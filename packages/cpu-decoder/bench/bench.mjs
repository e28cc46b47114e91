#!/usr/bin/env node
// Throughput of decode vs Float32Array.prototype.set for the same output size, same process.
//   pnpm --filter @sgfp4/cpu-decoder bench            (sizes 1 4 16 64 256 MiB)
//   node --expose-gc bench/bench.mjs 1 4              (chosen sizes)
//   node --expose-gc bench/bench.mjs --before DIR 16  (also times decode / decodeInto of another
//                                                      build, DIR/index.js, in the same run)
// Not a test: it prints numbers. Times: lib.mjs median() (mean per call in a batch, median of 3).
import os from "node:os";
import { parse } from "@sgfp4/format";
import { createOutput, decode, decodeInto } from "../dist/index.js";
import { kernelModule } from "../dist/kernel.js";
import { beforeBuild, kernelAlone, median, v1Container, v2MixContainer } from "./lib.mjs";

const args = process.argv.slice(2);
const before = await beforeBuild(args);
const sizes = args.map(Number).filter((n) => n > 0);
const COLS = 1024; // 16 macroblocks wide

const fmt = (ms) => ms.toFixed(3).padStart(9);
const ratio = (base, t) => (base / t).toFixed(2).padStart(5);
console.log(`node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? "?"}), wasm kernel: ${kernelModule() ? "yes" : "no (JS fallback)"}`);
console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}; r = baseline time / decode time (>= 0.60 is the target)`);
console.log("set(warm): dst.set(src) into a preallocated array; set(fresh): new Float32Array(n).set(src); parse: @sgfp4/format parse alone (not on the decode routes)");
console.log("into(plain): decodeInto a preallocated Float32Array; into(kmem): decodeInto an array from createOutput (kernel writes in place); kernel: wasm kernel alone");
console.log("size    container  | set(warm)  set(fresh) |  parse    | decode   r(warm) r(fresh) | into(plain) r(warm) | into(kmem) r(warm) | kernel   r(warm)");
for (const mib of sizes.length ? sizes : [1, 4, 16, 64, 256]) {
  const count = (mib * 2 ** 20) / 4;
  const rows = count / COLS;
  const shape = [rows, COLS];
  const runs = mib >= 256 ? 3 : mib >= 64 ? 5 : mib >= 16 ? 9 : 21;
  const src = new Float32Array(count).fill(1.5);
  const warm = new Float32Array(count).fill(2);
  const setWarm = median(() => warm.set(src), runs);
  const setFresh = median(() => new Float32Array(count).set(src), runs);
  for (const [name, bytes, profile] of [["v1 FP4", v1Container(rows, COLS, 0), "v1"], ["v1 T158", v1Container(rows, COLS, 1), "v1"], ["v2 mix", v2MixContainer(rows, COLS), "v2"]]) {
    const opts = { profile, shape };
    const tParse = median(() => parse(bytes, opts), runs);
    const tDecode = median(() => decode(bytes, opts), runs);
    const tInto = median(() => decodeInto(bytes, opts, warm), runs);
    const kmem = createOutput(shape);
    decodeInto(bytes, opts, kmem); // first touch of the new memory's pages, once
    const tKmem = median(() => decodeInto(bytes, opts, kmem), runs);
    const alone = kernelAlone(bytes, opts);
    alone.ours();
    const tKernel = median(alone.ours, runs);
    let beforeCols = "";
    if (before) {
      const b = before.index;
      const bDecode = median(() => b.decode(bytes, opts), runs);
      const bInto = median(() => b.decodeInto(bytes, opts, warm), runs);
      const bOut = b.createOutput(shape);
      b.decodeInto(bytes, opts, bOut);
      const bKmem = median(() => b.decodeInto(bytes, opts, bOut), runs);
      beforeCols = ` || before: decode${fmt(bDecode)} into(plain)${fmt(bInto)} ${ratio(setWarm, bInto)} into(kmem)${fmt(bKmem)} ${ratio(setWarm, bKmem)}`;
      if (before.kernel) {
        const theirs = alone.other(before.kernel);
        theirs();
        // ours again right after, so both kernel times come from the same minute of a shared box
        beforeCols += ` kernel${fmt(median(theirs, runs))} (ours again${fmt(median(alone.ours, runs))})`;
      }
    }
    console.log(
      `${String(mib).padStart(3)} MiB  ${name.padEnd(8)} |${fmt(setWarm)} ${fmt(setFresh)} |${fmt(tParse)}  |${fmt(tDecode)} ${ratio(setWarm, tDecode)}  ${ratio(setFresh, tDecode)}   |${fmt(tInto)}    ${ratio(setWarm, tInto)} |${fmt(tKmem)}   ${ratio(setWarm, tKmem)} |${fmt(tKernel)} ${ratio(setWarm, tKernel)}${beforeCols}`,
    );
  }
}
console.log(`load average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
