#!/usr/bin/env node
// decodeInto a plain array in f32, f16 and bf16 side by side (this build), on real v2 containers:
// 11 rounds, the formats' order rotating, median of 5 calls each, next to Float32Array.set and
// Uint16Array.set of the same outputs; prints median ms and the per-round range of half / f32.
//   node bench/formats-side-by-side.mjs ROWS COLS file.sgfp4 [...]
import { readFileSync } from "node:fs";
import { middle, roundMs } from "./lib.mjs";
import { decodeInto } from "../dist/index.js";

const [rows, cols, ...files] = process.argv.slice(2);
const shape = [Number(rows), Number(cols)];
const median = middle;
const time = (f) => roundMs(f, 5);
const range = (xs) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;
for (const file of files) {
  const bytes = new Uint8Array(readFileSync(file));
  const n = shape[0] * shape[1];
  const out = { f32: new Float32Array(n), f16: new Uint16Array(n), bf16: new Uint16Array(n) };
  const copy = { f32: new Float32Array(n), half: new Uint16Array(n) };
  const paths = {
    f32: () => decodeInto(bytes, { profile: "v2", shape, format: "f32" }, out.f32),
    f16: () => decodeInto(bytes, { profile: "v2", shape, format: "f16" }, out.f16),
    bf16: () => decodeInto(bytes, { profile: "v2", shape, format: "bf16" }, out.bf16),
    "Float32Array.set": () => copy.f32.set(out.f32),
    "Uint16Array.set": () => copy.half.set(out.f16),
  };
  const names = Object.keys(paths);
  for (const f of Object.values(paths)) for (let i = 0; i < 5; i++) f();
  const runs = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = 0; r < 11; r++) for (let j = 0; j < names.length; j++) { const k = names[(j + r) % names.length]; runs[k].push(time(paths[k])); }
  const per = (k) => runs[k].map((t, i) => t / runs.f32[i]);
  console.log(
    `${file.split("/").pop()}: ${names.map((k) => `${k} ${median(runs[k]).toFixed(2)} ms`).join(", ")}; ` +
      `f16 / f32 per round ${range(per("f16"))}, bf16 / f32 ${range(per("bf16"))}`,
  );
}
