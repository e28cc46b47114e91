// Paired timing of two builds of the native parser (issue 15): the bench-only addon's parseTime
// (validation and leaf table, nothing copied to JavaScript), the two binaries alternating round
// by round on the same bytes, on one thread (ranges 1) and with the shipped default (ranges 0:
// v2 streams from 1 MiB split over the work pool). Prints min and median per binary.
//
//   cp .bench/sgfp4_vulkan_bench.node /tmp/old.node      (before the change)
//   node scripts/build-bench.mjs                           (after it)
//   node bench/parse-paired.mjs /tmp/old.node .bench/sgfp4_vulkan_bench.node [FILE.sgfp4:ROWSxCOLS ...] [--rounds 8] [--reps 9]
//
// FILE is a v2 container (e.g. encoder output); without files, a 2048x2048 FULL_4x4 container
// from @sgfp4/format's writer (262,144 leaves of 4x4: the most per-leaf work).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { writeV2 } from "@sgfp4/format";

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const rounds = opt("--rounds", 8), reps = opt("--reps", 9);
const positional = args.filter((a, i) => !a.startsWith("--") && !(i > 0 && args[i - 1].startsWith("--")));
const [oldPath, newPath, ...files] = positional;
if (!oldPath || !newPath) throw new Error("usage: node bench/parse-paired.mjs OLD.node NEW.node [FILE.sgfp4:ROWSxCOLS ...] [--rounds N] [--reps N]");
const require = createRequire(import.meta.url);
const builds = [["old", require(resolve(oldPath))], ["new", require(resolve(newPath))]];

const workloads = files.map((f) => {
  const [file, shape] = f.split(":");
  const [rows, cols] = (shape ?? "4096x8192").split("x").map(Number);
  return { name: file.split("/").pop(), bytes: new Uint8Array(readFileSync(file)), rows, cols };
});
if (workloads.length === 0) {
  const leaf = (k) => ({ mode: k & 1, scaleBits: 0x3000 + (k & 0xff), biasBits: 0x1230, codes: new Array(16).fill((k % 3) - 1) });
  const records = Array.from({ length: 32 * 32 }, (_, b) => ({ layout: 5, leaves: Array.from({ length: 256 }, (_, i) => leaf(b + i)) }));
  workloads.push({ name: "FULL_4x4 2048x2048", bytes: writeV2({ shape: [2048, 2048], records }), rows: 2048, cols: 2048 });
}

for (const w of workloads) {
  const ns = new Map();
  let leaves = -1;
  for (let r = 0; r < rounds; r++)
    for (const [name, addon] of r % 2 ? builds.slice().reverse() : builds)
      for (const ranges of [1, 0]) {
        const o = addon.parseTime(w.bytes, "v2", w.rows, w.cols, { reps, ranges });
        if (leaves >= 0 && o.leafCount !== leaves) throw new Error(`${w.name}: ${name} counts ${o.leafCount} leaves, the other ${leaves}`);
        leaves = o.leafCount;
        const key = `${name} ranges=${ranges}`;
        ns.set(key, [...(ns.get(key) ?? []), ...o.ns]);
      }
  console.log(`${w.name}: ${(w.bytes.length / 2 ** 20).toFixed(1)} MiB, ${leaves} leaves, ${rounds} rounds x ${reps}`);
  const fmt = (t) => `${(t / 1e6).toFixed(2)} ms, ${(t / leaves).toFixed(1)} ns/leaf, ${(w.bytes.length / t).toFixed(2)} GB/s`;
  for (const [key, v] of [...ns].sort()) {
    const s = v.slice().sort((a, b) => a - b);
    console.log(`  ${key.padEnd(14)} min ${fmt(s[0])} | median ${fmt(s[s.length >> 1])}`);
  }
}
