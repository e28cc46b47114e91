#!/usr/bin/env node
// Paired A/B on real containers (e.g. encoder output written to files): this build against another
// (--before DIR holds its dist), for buildLeafTable, decodeInto a plain Float32Array and a
// createOutput array, with Float32Array.set of the same output as the floor. Each of 11 rounds
// times every path back to back (median of 3 calls each), so ratios are little affected by load
// changes on a shared box; the median round is printed per path.
//   node bench/paired-load.mjs --before /abs/dist ROWS COLS file.sgfp4 [file.sgfp4 ...]   (v2 containers)
// Not a test: it prints numbers.
import { readFileSync } from "node:fs";
import * as ours from "../dist/index.js";
import * as oursValidate from "../dist/validate.js";
import { beforeBuild, middle, roundMs } from "./lib.mjs";

const args = process.argv.slice(2);
const dir = args.includes("--before") ? args[args.indexOf("--before") + 1] : null;
const before = (await beforeBuild(args))?.index;
if (!before) throw new Error("--before DIR is required");
const beforeValidate = await import(new URL(dir + "/validate.js", `file://${process.cwd()}/`).href);
const [rows, cols, ...files] = args;
const shape = [Number(rows), Number(cols)];
const opts = { profile: "v2", shape };
const median = middle;
const time = (f) => roundMs(f, 3);
for (const file of files) {
  const bytes = new Uint8Array(readFileSync(file));
  const n = shape[0] * shape[1];
  const src = ours.decode(bytes, opts), dst = new Float32Array(n);
  const plain = { ours: new Float32Array(n), before: new Float32Array(n) };
  const kout = { ours: ours.createOutput(shape), before: before.createOutput(shape) };
  const leaves = oursValidate.buildLeafTable(bytes, opts).leafCount;
  const paths = {
    set: () => dst.set(src),
    "buildLeafTable ours": () => oursValidate.buildLeafTable(bytes, opts),
    "buildLeafTable before": () => beforeValidate.buildLeafTable(bytes, opts),
    "decodeInto plain ours": () => ours.decodeInto(bytes, opts, plain.ours),
    "decodeInto plain before": () => before.decodeInto(bytes, opts, plain.before),
    "decodeInto createOutput ours": () => ours.decodeInto(bytes, opts, kout.ours),
    "decodeInto createOutput before": () => before.decodeInto(bytes, opts, kout.before),
  };
  for (const f of Object.values(paths)) for (let t0 = performance.now(); performance.now() - t0 < 300; ) f();
  const runs = Object.fromEntries(Object.keys(paths).map((k) => [k, []]));
  for (let r = 0; r < 11; r++) for (const [k, f] of Object.entries(paths)) runs[k].push(time(f));
  for (const [name, out] of [...Object.entries(plain), ...Object.entries(kout)]) {
    if (Buffer.compare(Buffer.from(out.buffer, out.byteOffset, out.byteLength), Buffer.from(src.buffer)) !== 0) throw new Error(`${name}: bits differ from decode()`);
  }
  const set = median(runs.set);
  console.log(`${file}: ${shape.join("x")}, ${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${leaves} leaves; Float32Array.set ${set.toFixed(2)} ms`);
  for (const [k, t] of Object.entries(runs)) {
    if (k === "set") continue;
    const ms = median(t);
    const extra = k.startsWith("build")
      ? `${((ms * 1e6) / leaves).toFixed(1)} ns/leaf, ${(bytes.length / ms / 1e6).toFixed(2)} GB/s`
      : `${(set / ms).toFixed(2)} of set`;
    console.log(`  ${k.padEnd(31)} ${ms.toFixed(2).padStart(8)} ms  ${extra}`);
  }
}
