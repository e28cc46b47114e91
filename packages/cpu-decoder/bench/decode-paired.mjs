#!/usr/bin/env node
// Paired A/B on real containers (e.g. encoder output written to files): this build against
// another (--before DIR holds its dist), with Float32Array.set of the same output as the floor.
// Rows: decodeInto a createOutput() array, decodeInto a plain Float32Array and, for v2, the kernel
// alone (validate_decode_v2_window over each macroblock row into a 64-row window, the stream
// already in wasm memory). Each of `--rounds` rounds (default 15) times every row twice, alternating
// which build goes first; prints min ms, ns per weight, ratio to `set` and the median paired
// speed-up. Checks that both builds decode the same bits first.
//   node --expose-gc bench/decode-paired.mjs --before /abs/dist ROWS COLS file.sgfp4 [file.sgfp4 ...]
// (the profile is read from the file's version byte). Not a test: it prints numbers.
import { readFileSync } from "node:fs";
import * as ours from "../dist/index.js";
import * as oursKernel from "../dist/kernel.js";
import { beforeBuild, option } from "./lib.mjs";

const args = process.argv.slice(2);
const rounds = Number(option(args, "--rounds", "15"));
const other = await beforeBuild(args);
if (!other?.kernel) throw new Error("--before DIR (a build's dist, with kernel.js) is required");
const before = other.index, beforeKernel = other.kernel;
const [rowsArg, colsArg, ...files] = args;
const shape = [Number(rowsArg), Number(colsArg)], n = shape[0] * shape[1];

/** validate_decode_v2_window over each macroblock row into one 64-row window: the kernel alone. */
function kernelAlone(K, bytes) {
  const cols = shape[1], tilesX = Math.ceil(cols / 64), tilesY = Math.ceil(shape[0] / 64), blocks = tilesX * tilesY;
  const windowBytes = 64 * cols * 4, scratchAt = windowBytes, streamAt = scratchAt + 4096;
  const pages = Math.ceil((streamAt + bytes.length + 64) / 65536);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  new Uint8Array(memory.buffer, streamAt, bytes.length).set(bytes);
  const k = K.instantiate(K.kernelModule(), memory);
  return () => {
    for (let by = 0; by < tilesY; by++) {
      const status = k.validate_decode_v2_window(streamAt, bytes.length, blocks, by * tilesX, (by + 1) * tilesX, scratchAt, 0, cols, shape[0], cols, tilesX, by * 64, 0);
      if (status !== 0) throw new Error("the kernel rejected the stream");
    }
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const file of files) {
  const bytes = new Uint8Array(readFileSync(file));
  const profile = bytes[4] === 2 ? "v2" : "v1", o = { profile, shape };
  const kmemOurs = ours.createOutput(shape), kmemBefore = before.createOutput(shape);
  const plainOurs = new Float32Array(n), plainBefore = new Float32Array(n);
  ours.decodeInto(bytes, o, kmemOurs);
  before.decodeInto(bytes, o, kmemBefore);
  const a = new Uint32Array(kmemOurs.buffer, kmemOurs.byteOffset, n), b = new Uint32Array(kmemBefore.buffer, kmemBefore.byteOffset, n);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) throw new Error(`${file}: the builds differ at element ${i}`);
  const src = new Float32Array(n).fill(1.5), dst = new Float32Array(n);
  const rows = {
    "decodeInto createOutput": [() => ours.decodeInto(bytes, o, kmemOurs), () => before.decodeInto(bytes, o, kmemBefore)],
    "decodeInto Float32Array": [() => ours.decodeInto(bytes, o, plainOurs), () => before.decodeInto(bytes, o, plainBefore)],
  };
  if (profile === "v2") rows["kernel alone"] = [kernelAlone(oursKernel, bytes), kernelAlone(beforeKernel, bytes)];
  const time = (f) => {
    const t0 = performance.now();
    f();
    f();
    return (performance.now() - t0) / 2;
  };
  let setMs = Infinity;
  const best = {}, speedups = {};
  for (const [name, [f, g]] of Object.entries(rows)) {
    f(), g();
    best[name] = [Infinity, Infinity];
    speedups[name] = [];
  }
  for (let r = 0; r < rounds; r++) {
    setMs = Math.min(setMs, time(() => dst.set(src)));
    for (const [name, [f, g]] of Object.entries(rows)) {
      let tf, tg;
      if (r & 1) (tf = time(f)), (tg = time(g));
      else (tg = time(g)), (tf = time(f));
      best[name] = [Math.min(best[name][0], tf), Math.min(best[name][1], tg)];
      speedups[name].push(tg / tf);
    }
  }
  console.log(`${file.split("/").pop()} (${profile}): set ${setMs.toFixed(2)} ms`);
  for (const [name, [tf, tg]] of Object.entries(best)) {
    const ns = (ms) => ((ms * 1e6) / n).toFixed(3);
    console.log(`  ${name.padEnd(24)} ours ${tf.toFixed(2)} ms (${ns(tf)} ns/w, ${(setMs / tf).toFixed(2)}) | before ${tg.toFixed(2)} ms (${ns(tg)} ns/w, ${(setMs / tg).toFixed(2)}) | paired speed-up median ${median(speedups[name]).toFixed(2)}`);
  }
}
