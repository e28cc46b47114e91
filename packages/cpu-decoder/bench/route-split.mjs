#!/usr/bin/env node
// Where the time of decodeInto a plain Float32Array goes on v2 (routes.ts windowedBands, f32): the same calls,
// timed part by part: the window copy (JS set of each band's records into wasm memory), the kernel
// (validate_decode_v2_stream_window) and the copy-out (JS set of each band into the output), min ms of 9 runs each.
// Shape fixed at 4096x8192 (the session 18 inputs).  node bench/route-split.mjs a.sgfp4 [b.sgfp4 ...]
import { readFileSync } from "node:fs";
import * as K from "../dist/kernel.js";
import * as L from "../dist/layouts.js";
import * as B from "../dist/bands.js";

const [rows, cols] = [4096, 8192], tilesX = cols / 64, tilesY = rows / 64, blocks = tilesX * tilesY;
for (const file of process.argv.slice(2)) {
  const bytes = new Uint8Array(readFileSync(file)), len = bytes.length, base = L.v2RecordBase(blocks);
  const target = B.bandTargetFor(rows, cols, "f32"), outBytes = B.bandBytes(tilesY, tilesX, cols, target);
  const bands = B.bandsOf(tilesY, tilesX, rows, cols, target), view = new DataView(bytes.buffer, bytes.byteOffset, len);
  let most = 0; for (const b of bands) { const { lo, hi } = L.bandWindow(view, base, len, b.b0, b.b1); most = Math.max(most, hi - lo); }
  const scratchAt = outBytes, headAt = scratchAt + 4096, windowAt = headAt + ((base + 15) & ~15);
  const pages = Math.ceil((windowAt + most + 64) / 65536), memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const k = K.instantiate(K.kernelModule(), memory);
  new Uint8Array(memory.buffer, headAt, base).set(bytes.subarray(0, base));
  const window = new Uint8Array(memory.buffer, windowAt, most), band = new Float32Array(memory.buffer, 0, outBytes / 4);
  const out = new Float32Array(rows * cols), src = new Float32Array(rows * cols).fill(1), dst = new Float32Array(rows * cols);
  const once = () => { let w = 0, kk = 0, c = 0;
    for (const b of bands) {
      let t0 = performance.now(); const { lo, hi } = L.bandWindow(view, base, len, b.b0, b.b1); window.set(bytes.subarray(lo, hi)); let t1 = performance.now(); w += t1 - t0;
      if (k.validate_decode_v2_stream_window(headAt, windowAt, lo, hi, len, blocks, b.b0, b.b1, scratchAt, 0, b.stride, rows, cols, tilesX, b.rowBase, b.colBase) !== 0) throw new Error("rejected");
      t0 = performance.now(); kk += t0 - t1; out.set(band, b.rowBase * cols); c += performance.now() - t0;
    } return [w, kk, c]; };
  once(); const best = [Infinity, Infinity, Infinity, Infinity]; let setMs = Infinity;
  for (let r = 0; r < 9; r++) { let t0 = performance.now(); dst.set(src); setMs = Math.min(setMs, performance.now() - t0); t0 = performance.now(); const p = once(); const tot = performance.now() - t0; p.push(tot); p.forEach((x, i) => best[i] = Math.min(best[i], x)); }
  console.log(`${file.split("/").pop()}: set ${setMs.toFixed(2)} | window copy ${best[0].toFixed(2)} | kernel ${best[1].toFixed(2)} | band copy-out ${best[2].toFixed(2)} | total ${best[3].toFixed(2)} ms (min of 9 each)`);
}
