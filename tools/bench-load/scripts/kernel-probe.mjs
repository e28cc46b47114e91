#!/usr/bin/env node
// Probe (session 13): why the load benchmark's WebGPU "kernel alone" rows, and its copy-kernel
// floor, run about 2x slower from the second workload on. Times the copy kernel and the decode
// kernel (prepared containers) on 256 MiB of output into buffers allocated at the start, then
// again after the decoder's user paths have run (pools, staging, readback), into the same buffers
// and into fresh ones. GPU timestamps. Run from the bundle: node .bench/load/kernel-probe.mjs
import { WorkerPool, encodeTensor, synthetic } from "@sgfp4/encoder";
import { GpuFloors } from "../dist/webgpu-floors.js";
import { availableParallelism } from "node:os";

// exact timestamps: the flags must be set before the node entry is loaded (session 13's run set
// them after a static import, so its timestamps were quantized to 62.5 us per pass)
process.env.SGFP4_DAWN_FLAGS ??= "enable-dawn-features=allow_unsafe_apis disable-dawn-features=timestamp_quantization";
const { createNodeDevice } = await import("@sgfp4/webgpu-decoder/node");
const { WebGpuDecoder } = await import("@sgfp4/webgpu-decoder");
const U = { COPY_SRC: 4, COPY_DST: 8, STORAGE: 0x80 };
const shape = [Number(process.env.PROBE_ROWS ?? 4096), 8192]; // PROBE_ROWS: a small smoke run
const pool = new WorkerPool(availableParallelism());
const work = [];
for (const [fam, profile] of [["gaussian", "v1"], ["laplacian", "v1"], ["laplacian", "v2"], ["student-t", "v2"]]) {
  const e = await encodeTensor(synthetic(fam, shape[0], shape[1], 7), shape, { profile, pool });
  work.push({ name: `${fam} ${profile}`, bytes: e.bytes, profile });
}
await pool.terminate?.();
const device = await createNodeDevice({ timestamps: true });
const floors = new GpuFloors(device, 5);
const decoder = new WebGpuDecoder(device);
const OUT = shape[0] * shape[1] * 4;
const BIG = 2 * OUT;

function buffers() {
  return { src: device.createBuffer({ size: BIG, usage: U.STORAGE }), dst: device.createBuffer({ size: BIG, usage: U.STORAGE | U.COPY_SRC }) };
}
// the copy floor between the buffers the kernels write (GpuFloors.copyKernelMs' reserved form)
const copyMs = (b) => floors.copyKernelMs(BIG, 4, { out: b.dst, src: b.src, bytes: BIG });
async function kernelMs(b, w) {
  const prepared = decoder.prepare(w.bytes, { profile: w.profile, shape });
  try {
    return await floors.passMs((pass) => { decoder.encode(pass, prepared, b.dst, 0); decoder.encode(pass, prepared, b.dst, OUT); }, 4);
  } finally { prepared.destroy(); }
}
async function report(label, b) {
  const c = await copyMs(b);
  const line = [`${label}: copy ${c.toFixed(3)} ms (${((2 * BIG) / c / 1e6).toFixed(0)} GB/s)`];
  for (const w of work) {
    const k = await kernelMs(b, w);
    const ratio = (c * (2 * (w.bytes.length + OUT))) / (2 * BIG) / k;
    line.push(`${w.name} ${k.toFixed(3)} ms ratio ${ratio.toFixed(2)}`);
  }
  console.log(line.join(" | "));
}
const first = buffers();
await report("fresh device, buffers A", first);
await report("again, buffers A", first);
// the user paths of the load benchmark: one-call decodes into a device buffer, decode to the host
const out = device.createBuffer({ size: OUT, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
for (const w of work) {
  for (let i = 0; i < 5; i++) await decoder.decodeToBuffer(w.bytes, { profile: w.profile, shape }, out);
  for (let i = 0; i < 3; i++) await decoder.decode(w.bytes, { profile: w.profile, shape });
  await report(`after user paths of ${w.name}, buffers A`, first);
}
const second = buffers();
await report("fresh buffers B", second);
console.log("floors.copyKernelMs (fresh buffers each call):", (await floors.copyKernelMs(BIG, 4)).toFixed(3), "ms");
decoder.destroy();
await report("decoder destroyed, buffers A", first);
device.destroy();
process.exit(0); // Dawn keeps the event loop alive
