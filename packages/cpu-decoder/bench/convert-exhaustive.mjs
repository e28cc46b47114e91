#!/usr/bin/env node
// Every f32 bit pattern (2^32, in slices of 2^24) through this build's convert_f16 and
// convert_bf16 and through another build's (--before DIR holds its dist): prints the first
// differences and their count (0 expected when a conversion is rewritten; ~15 s on one core).
//   node bench/convert-exhaustive.mjs --before /abs/dist
import * as ours from "../dist/kernel.js";
import { beforeBuild } from "./lib.mjs";

const before = (await beforeBuild(process.argv.slice(2)))?.kernel;
if (!before) throw new Error("--before DIR (with kernel.js) is required");
const SLICE = 1 << 24;
const load = (k) => {
  const memory = new WebAssembly.Memory({ initial: (SLICE * 6) / 65536 + 1 });
  return { memory, exports: k.instantiate(k.kernelModule(), memory) };
};
const a = load(ours), b = load(before);
const inA = new Uint32Array(a.memory.buffer, 0, SLICE), inB = new Uint32Array(b.memory.buffer, 0, SLICE);
const outA = new Uint16Array(a.memory.buffer, SLICE * 4, SLICE), outB = new Uint16Array(b.memory.buffer, SLICE * 4, SLICE);
const t0 = performance.now();
let differences = 0;
for (let top = 0; top < 2 ** 32 / SLICE; top++) {
  const first = top * SLICE;
  for (let i = 0; i < SLICE; i++) inA[i] = first + i;
  inB.set(inA);
  for (const fn of ["convert_f16", "convert_bf16"]) {
    a.exports[fn](0, SLICE * 4, SLICE);
    b.exports[fn](0, SLICE * 4, SLICE);
    if (Buffer.compare(Buffer.from(outA.buffer, outA.byteOffset, outA.byteLength), Buffer.from(outB.buffer, outB.byteOffset, outB.byteLength)) === 0) continue;
    for (let i = 0; i < SLICE; i++) {
      if (outA[i] === outB[i]) continue;
      if (differences++ < 10) console.log(`${fn}: f32 0x${(first + i).toString(16)}: ours 0x${outA[i].toString(16)}, before 0x${outB[i].toString(16)}`);
    }
  }
}
console.log(`${differences} differences over 2^32 inputs (f16 and bf16), ${((performance.now() - t0) / 1000).toFixed(1)} s`);
process.exit(differences ? 1 : 0);
