#!/usr/bin/env node
// pnpm --filter @sgfp4/c-decoder bench [-- --rows 2048 --cols 4096 --reps 15]
// End to end on encoder output: a synthetic gaussian tensor encoded by @sgfp4/encoder (v1 and v2),
// decoded by sgfp4.h (bench.c, built with $CC or cc at each listed optimization level) from bytes
// in memory into the caller's float32 buffer, next to the floor measured in the same process (a
// memcpy of the output size). Bits are checked against @sgfp4/cpu-decoder (the wasm kernel), whose
// fastest single-thread path (decodeInto a createOutput() array) is timed in the same run.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createOutput, decode, decodeInto } from "@sgfp4/cpu-decoder";
import { encodeTensor, synthetic } from "@sgfp4/encoder";

const { values } = parseArgs({ args: process.argv.slice(2).filter((a) => a !== "--"), options: { rows: { type: "string", default: "2048" }, cols: { type: "string", default: "4096" }, reps: { type: "string", default: "15" } } });
const [rows, cols] = [Number(values.rows), Number(values.cols)];
const cc = process.env.CC ?? "cc";
const builds = { "-O2": ["-O2"], "-O3 -march=native": ["-O3", "-march=native"] };
const dir = mkdtempSync(join(tmpdir(), "sgfp4-c-bench-"));
try {
  const exes = Object.fromEntries(Object.entries(builds).map(([name, flags]) => {
    const exe = join(dir, `bench${Object.keys(builds).indexOf(name)}`);
    execFileSync(cc, ["-std=c11", "-Wall", "-Wextra", "-Werror", ...flags, "-o", exe, join(import.meta.dirname, "bench.c")], { stdio: "inherit" });
    return [name, exe];
  }));
  console.log(`sgfp4.h decode, ${rows}x${cols} gaussian (${cpus()[0]?.model ?? "cpu"}, ${cc}), best of ${values.reps}; ratio = floor / decode`);
  console.log("profile  build               container MiB  decode ms  memcpy floor ms  ratio  bits");
  let allOk = true;
  for (const profile of ["v1", "v2"]) {
    const { bytes } = await encodeTensor(synthetic("gaussian", rows, cols, 1), [rows, cols], { profile });
    const reference = await decode(bytes, { profile, shape: [rows, cols] });
    const container = join(dir, `c.${profile}`), ref = join(dir, `r.${profile}`);
    writeFileSync(container, bytes);
    writeFileSync(ref, new Uint8Array(reference.buffer, reference.byteOffset, reference.byteLength));
    const arena = createOutput([rows, cols]);
    let wasmMs = Infinity;
    for (let r = 0; r < Number(values.reps); r++) {
      const t0 = performance.now();
      decodeInto(bytes, { profile, shape: [rows, cols] }, arena);
      wasmMs = Math.min(wasmMs, performance.now() - t0);
    }
    console.log(`${profile.padEnd(9)}${"wasm decodeInto".padEnd(20)}${(bytes.length / 2 ** 20).toFixed(2).padStart(13)}${wasmMs.toFixed(2).padStart(11)}`);
    for (const [name, exe] of Object.entries(exes)) {
      const r = JSON.parse(execFileSync(exe, [container, profile === "v1" ? "1" : "2", String(rows), String(cols), ref, values.reps], { encoding: "utf8" }));
      allOk &&= r.bitsOk;
      console.log(`${profile.padEnd(9)}${name.padEnd(20)}${(bytes.length / 2 ** 20).toFixed(2).padStart(13)}${r.ms.toFixed(2).padStart(11)}${r.floorMs.toFixed(2).padStart(17)}${(r.floorMs / r.ms).toFixed(2).padStart(7)}  ${r.bitsOk ? "ok" : "DIFFER"}`);
    }
  }
  if (!allOk) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
