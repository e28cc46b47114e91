#!/usr/bin/env node
// Paired A/B of decodeInto a plain array in one output format (f32: Float32Array, f16 / bf16:
// Uint16Array) on real containers (e.g. encoder output written to files): this build against
// another (--before DIR holds its dist), next to TypedArray.set of the same output. 11 rounds,
// the order of the two builds alternating, median of 5 calls each; both outputs are compared with
// each other and with a first decode. Prints median ms and the per-round range of ratios.
//   node bench/format-paired.mjs --before /abs/dist [--format f16] ROWS COLS file.sgfp4 [...]   (v2 containers)
import { readFileSync } from "node:fs";
import * as ours from "../dist/index.js";
import { beforeBuild, middle, roundMs } from "./lib.mjs";

const args = process.argv.slice(2);
const before = (await beforeBuild(args))?.index;
if (!before) throw new Error("--before DIR is required");
const at = args.indexOf("--format");
const format = at < 0 ? "f32" : args.splice(at, 2)[1];
const [rows, cols, ...files] = args;
const opts = { profile: process.env.PROFILE ?? "v2", shape: [Number(rows), Number(cols)], format };
const median = middle;
const time = (f) => roundMs(f, 5);
const range = (xs) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;
for (const file of files) {
  const bytes = new Uint8Array(readFileSync(file));
  const n = opts.shape[0] * opts.shape[1];
  const make = () => (format === "f32" ? new Float32Array(n) : new Uint16Array(n));
  const mine = make(), theirs = make(), src = make(), dst = make();
  ours.decodeInto(bytes, opts, src);
  const paths = { set: () => dst.set(src), ours: () => ours.decodeInto(bytes, opts, mine), before: () => before.decodeInto(bytes, opts, theirs) };
  for (const f of Object.values(paths)) for (let i = 0; i < 5; i++) f();
  const same = (x, y) => Buffer.compare(Buffer.from(x.buffer), Buffer.from(y.buffer)) === 0;
  if (!same(mine, theirs) || !same(mine, src)) throw new Error(`${file}: the outputs differ`);
  const runs = { set: [], ours: [], before: [] };
  for (let r = 0; r < 11; r++) for (const k of r & 1 ? ["set", "ours", "before"] : ["set", "before", "ours"]) runs[k].push(time(paths[k]));
  const of = (k) => runs.set.map((s, i) => s / runs[k][i]);
  console.log(
    `${file.split("/").pop()} ${format}: set ${median(runs.set).toFixed(2)} ms; before ${median(runs.before).toFixed(2)} ms (of set ${range(of("before"))}), ` +
      `ours ${median(runs.ours).toFixed(2)} ms (of set ${range(of("ours"))}); before/ours per round ${range(runs.before.map((t, i) => t / runs.ours[i]))}`,
  );
}
