#!/usr/bin/env node
// Paired A/B of buildLeafTable (validation + leaf table, one thread) on real v2 containers (e.g.
// encoder output written to files): this build against another (--before DIR holds its dist).
// Each of `--rounds` rounds (default 11) times both builds back to back, alternating which goes
// first (median of 5 calls each); prints per file the median and min-max over rounds in ns per leaf,
// and checks that both builds return the same table and blockFirst words.
//   node bench/validate-paired.mjs --before /abs/dist ROWS COLS file.sgfp4 [file.sgfp4 ...]
// Not a test: it prints numbers.
import { readFileSync } from "node:fs";
import { middle, option, roundMs } from "./lib.mjs";
import * as ours from "../dist/validate.js";

const args = process.argv.slice(2);
const dir = option(args, "--before");
const rounds = Number(option(args, "--rounds", "11"));
if (!dir) throw new Error("--before DIR is required");
const before = await import(new URL(dir + "/validate.js", `file://${process.cwd()}/`).href);
const [rows, cols, ...files] = args;
const opts = { profile: "v2", shape: [Number(rows), Number(cols)] };
const median = middle;
const time = (f) => roundMs(f, 5);
const same = (a, b) => a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0;
for (const file of files) {
  const bytes = new Uint8Array(readFileSync(file));
  const a = ours.buildLeafTable(bytes, opts), b = before.buildLeafTable(bytes, opts);
  if (!same(a.leafTable, b.leafTable) || !same(a.blockFirst, b.blockFirst)) throw new Error(`${file}: the two builds' tables differ`);
  const paths = { before: () => before.buildLeafTable(bytes, opts), ours: () => ours.buildLeafTable(bytes, opts) };
  for (const f of Object.values(paths)) for (let t0 = performance.now(); performance.now() - t0 < 300; ) f();
  const runs = { before: [], ours: [] };
  for (let r = 0; r < rounds; r++) {
    const order = r & 1 ? ["ours", "before"] : ["before", "ours"];
    for (const k of order) runs[k].push(time(paths[k]));
  }
  const ns = (ms) => ((ms * 1e6) / a.leafCount).toFixed(2);
  const line = Object.entries(runs).map(([k, t]) => `${k} ${ns(median(t))} (${ns(Math.min(...t))}-${ns(Math.max(...t))})`);
  const ratios = runs.before.map((t, i) => t / runs.ours[i]);
  console.log(`${file.split("/").pop()}: ${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${a.leafCount} leaves; ns/leaf median (min-max of ${rounds} rounds): ${line.join(", ")}; before/ours per round ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`);
}
