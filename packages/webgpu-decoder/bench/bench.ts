/**
 * Decode throughput against a plain WGSL copy of the same output size on the same device.
 * Throughput = (container bytes read + float32 bytes written) / time; copy = 2 * output bytes / time.
 * Output stays on the device; GPU time from timestamp queries around one compute pass holding
 * `iters` repetitions (wall time over onSubmittedWorkDone is reported too).
 *
 *   node bench/dist/bench.mjs [--sizes 16,64,256,1024,2048] [--label NAME] [--json out.json]
 *     [--profiles v1,v2] [--format f32|f16|bf16] [--verify-mib 16] [--mix default|U64|U32|U16|U8|MIXED|F4] [--t158 PERCENT]
 * --verify-mib first decodes v1 and v2 containers of that size, reads them back
 * and checks them bit for bit against the plain JavaScript reference decode of the tests.
 * WEBGPU_MODULE=/abs/path/to/webgpu/index.js overrides where the `webgpu` package is loaded from.
 */
import { LAYOUT, UNIFORM_LEAF_SIZE, parse, payloadBytes, writeV1, type Shape } from "@sgfp4/format";
import { firstBitDifference, referenceDecode } from "../test/reference.js";
import { WebGpuDecoder } from "../src/decoder.js";
import type { OutputFormat } from "@sgfp4/format";
import { COPY_SHADER } from "../src/shader.js";

const args = process.argv.slice(2);
const arg = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : def;
};
const sizesMiB = arg("sizes", "16,64,256,1024,2048").split(",").map(Number);
const label = arg("label", "device");
const jsonOut = arg("json", "");
const COLS = 8192;
const maxIters = Number(arg("max-iters", "200"));
const chunkMiB = Number(arg("chunk-mib", "0"));
const format = arg("format", "f32") as OutputFormat;
const profiles = arg("profiles", "v1,v2").split(",") as ("v1" | "v2")[];
const verifyMiB = Number(arg("verify-mib", "0"));
/** v2 layout mixes, weights in percent: "default" the realistic one, the others one layout each. */
const MIXES: Record<string, readonly (readonly [number, number])[]> = {
  default: [[LAYOUT.UNIFORM_64, 15], [LAYOUT.UNIFORM_32, 25], [LAYOUT.UNIFORM_16, 20], [LAYOUT.UNIFORM_8, 10], [LAYOUT.MIXED, 25], [LAYOUT.FULL_4x4, 5]],
  U64: [[LAYOUT.UNIFORM_64, 100]],
  U32: [[LAYOUT.UNIFORM_32, 100]],
  U16: [[LAYOUT.UNIFORM_16, 100]],
  U8: [[LAYOUT.UNIFORM_8, 100]],
  MIXED: [[LAYOUT.MIXED, 100]],
  F4: [[LAYOUT.FULL_4x4, 100]],
};
const mixName = arg("mix", "default");
/** --t158 P: P% of v2 leaves are T158 (default: every third leaf, the runs recorded so far) */
const t158Percent = arg("t158", "");
if (!MIXES[mixName]) throw new Error(`--mix must be one of ${Object.keys(MIXES).join(", ")}`);

// --- deterministic fast random bytes (xorshift32) ---
function fillRandom(out: Uint8Array, seed: number): void {
  let x = seed | 1;
  const words = new Uint32Array(out.buffer, out.byteOffset, out.byteLength >>> 2);
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
}

/** Random finite FP16 in a realistic range (scales ~1e-3, biases ~+-1e-2), v2 bias masked. */
function half(r: number, bias: boolean): number {
  const exp = bias ? 8 + (r % 4) : 5 + (r % 4);
  return ((r & 0x10000 && bias ? 0x8000 : 0) | (exp << 10) | ((r >>> 4) & 0x3ff)) & (bias ? 0xfff0 : 0xffff);
}

function v1Container(shape: Shape, seed: number): Uint8Array {
  const B = Math.ceil(shape[0] / 64) * Math.ceil(shape[1] / 64);
  const payload = new Uint8Array(2048);
  fillRandom(payload, seed);
  // one random payload per slot would cost a lot of host time at 2 GiB; 64 distinct ones tiled
  const bytes = writeV1({ shape, blocks: Array.from({ length: B }, (_, b) => ({ mode: b % 3 === 0 ? 1 : 0, scaleBits: half(b * 2654435761, false), biasBits: half(b * 40503 + 7, true), payload: b % 3 === 0 ? payload.subarray(0, 1024) : payload })) });
  const blob = bytes.subarray(8 * B);
  fillRandom(blob.subarray(0, Math.min(blob.length, 64 * 2048)), seed + 1);
  for (let b = 0; b < B; b++) {
    const slot = blob.subarray(b * 2048, b * 2048 + 2048);
    if (b >= 64) slot.set(blob.subarray((b % 64) * 2048, (b % 64) * 2048 + 2048));
    const mode = new DataView(bytes.buffer).getUint32(4 * B + 4 * b, true) & 1;
    if (mode) slot.fill(0, 1024); // T158 upper half must be zero
  }
  return bytes;
}

/** One v2 record's bytes: layout, leaves (random modes, payloads), all padding zero. */
function v2Record(layout: number, seed: number): Uint8Array {
  let leaves: number[];
  let map: number[] | undefined;
  if (layout === LAYOUT.MIXED) {
    // TL 32, TR four 16, BL sixteen 8... a typical split: one quadrant deep, others coarse
    map = [0, 0, 0];
    let bit = 0;
    leaves = [];
    let r = seed;
    const visit = (size: number) => {
      if (size === 4) return leaves.push(4);
      r = (Math.imul(r, 1103515245) + 12345) >>> 0;
      const split = size === 64 || (r >>> 16) % 100 < 45;
      const k = bit++;
      if (split) {
        map![k >>> 5] = (map![k >>> 5]! | (1 << (k & 31))) >>> 0;
        for (let i = 0; i < 4; i++) visit(size / 2);
      } else leaves.push(size);
    };
    visit(64);
  } else {
    const s = UNIFORM_LEAF_SIZE[layout]!;
    leaves = new Array((64 / s) ** 2).fill(s);
  }
  const modes = leaves.map((_, i) => (t158Percent === "" ? (seed + i) % 3 === 0 : (Math.imul(seed * 977 + i, 2654435761) >>> 0) % 100 < Number(t158Percent)) ? 1 : 0);
  const headerBytes = Math.ceil(((map ? 16 : 4) + 4 * leaves.length) / 16) * 16;
  const payloadTotal = leaves.reduce((s, size, i) => s + Math.ceil(payloadBytes(size, modes[i] as 0 | 1) / 16) * 16, 0);
  const out = new Uint8Array(headerBytes + payloadTotal);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, layout, true);
  if (map) map.forEach((w, i) => dv.setUint32(4 + 4 * i, w >>> 0, true));
  const h = map ? 16 : 4;
  let p = headerBytes;
  leaves.forEach((size, i) => {
    dv.setUint32(h + 4 * i, ((half(seed * 31 + i * 7919, false) << 16) | half(seed * 17 + i * 104729, true) | modes[i]!) >>> 0, true);
    const n = payloadBytes(size, modes[i] as 0 | 1);
    fillRandom(out.subarray(p, p + n - (n % 4)), seed * 1000 + i + 1);
    p += Math.ceil(n / 16) * 16;
  });
  return out;
}

/** v2 records of the --mix layouts (default: 15% U64, 25% U32, 20% U16, 10% U8, 25% MIXED, 5% 4x4). */
function v2Container(shape: Shape, seed: number): Uint8Array {
  const B = Math.ceil(shape[0] / 64) * Math.ceil(shape[1] / 64);
  const mix = MIXES[mixName]!;
  const templates: Uint8Array[] = [];
  for (let t = 0; t < 100; t++) {
    let pick = t;
    const layout = mix.find(([, w]) => (pick -= w) < 0)![0];
    templates.push(v2Record(layout, seed + t * 13));
  }
  // shuffle template order per record with a cheap LCG
  const order = new Uint8Array(B);
  let x = seed >>> 0;
  let total = 0;
  for (let b = 0; b < B; b++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    order[b] = (x >>> 8) % 100;
    total += templates[order[b]!]!.length;
  }
  const base = Math.ceil((16 + 4 * B) / 16) * 16;
  const out = new Uint8Array(base + total);
  const dv = new DataView(out.buffer);
  out.set([0x53, 0x47, 0x46, 0x34, 2]);
  dv.setUint32(5, B, true);
  let at = base;
  for (let b = 0; b < B; b++) {
    dv.setUint32(16 + 4 * b, at - base, true);
    const rec = templates[order[b]!]!;
    out.set(rec, at);
    at += rec.length;
  }
  return out;
}

async function main() {
  const modPath = process.env.WEBGPU_MODULE ?? "webgpu";
  const { create, globals } = (await import(modPath)) as { create: (f: string[]) => GPU; globals: Record<string, unknown> };
  Object.assign(globalThis, globals);
  const gpu = create(["enable-dawn-features=allow_unsafe_apis", "disable-dawn-features=timestamp_quantization"]);
  (globalThis as Record<string, unknown>).__sgfp4BenchGpu = gpu; // keep Dawn's root object alive
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new Error("no WebGPU adapter");
  const hasTs = adapter.features.has("timestamp-query");
  const device = await adapter.requestDevice({
    requiredFeatures: hasTs ? ["timestamp-query"] : [],
    requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize, maxBufferSize: adapter.limits.maxBufferSize },
  });
  device.addEventListener("uncapturederror", (e) => console.error("uncaptured:", (e as GPUUncapturedErrorEvent).error.message));
  const info = adapter.info;
  console.log(`adapter: ${info.vendor} ${info.architecture} ${info.device} ${info.description} | maxStorageBufferBindingSize ${device.limits.maxStorageBufferBindingSize} maxBufferSize ${device.limits.maxBufferSize} | timestamps ${hasTs}`);
  const decoder = new WebGpuDecoder(device, chunkMiB ? { maxChunkBytes: chunkMiB * 2 ** 20 } : {});

  // bit-exactness on this device: every kernel against the reference decode
  if (verifyMiB) {
    const shape: Shape = [(verifyMiB * 2 ** 20) / 4 / COLS, COLS];
    for (const profile of profiles) {
      const bytes = profile === "v1" ? v1Container(shape, 4242) : v2Container(shape, 4343);
      const expected = referenceDecode(bytes, parse(bytes, { profile, shape }));
      const at = firstBitDifference(await decoder.decode(bytes, { profile, shape }), expected);
      console.log(`verify ${profile} ${verifyMiB} MiB: ${at < 0 ? "bit-identical to the reference" : `MISMATCH at element ${at}`}`);
      if (at >= 0) process.exitCode = 2;
    }
  }
  const copyModule = device.createShaderModule({ code: COPY_SHADER });
  const copyPipeline = device.createComputePipeline({ layout: "auto", compute: { module: copyModule, entryPoint: "main" } });
  const querySet = hasTs ? device.createQuerySet({ type: "timestamp", count: 2 }) : undefined;
  const resolve = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readTs = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });

  /** Median over 5 runs of (gpu seconds, wall seconds) per iteration of `record`. */
  async function time(iters: number, record: (pass: GPUComputePassEncoder) => void): Promise<{ gpu: number; wall: number }> {
    const runs: { gpu: number; wall: number }[] = [];
    for (let run = 0; run < 6; run++) {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass(querySet ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {});
      for (let i = 0; i < iters; i++) record(pass);
      pass.end();
      if (querySet) {
        enc.resolveQuerySet(querySet, 0, 2, resolve, 0);
        enc.copyBufferToBuffer(resolve, 0, readTs, 0, 16);
      }
      const t0 = performance.now();
      device.queue.submit([enc.finish()]);
      await device.queue.onSubmittedWorkDone();
      const wall = (performance.now() - t0) / 1000 / iters;
      let g = NaN;
      if (querySet) {
        await readTs.mapAsync(GPUMapMode.READ);
        const t = new BigUint64Array(readTs.getMappedRange().slice(0));
        readTs.unmap();
        g = Number(t[1]! - t[0]!) / 1e9 / iters;
      }
      if (run > 0) runs.push({ gpu: g, wall }); // first run is warm-up
    }
    const med = (k: "gpu" | "wall") => runs.map((r) => r[k]).sort((a, b) => a - b)[runs.length >> 1]!;
    return { gpu: med("gpu"), wall: med("wall") };
  }

  const results: Record<string, unknown>[] = [];
  const maxBind = device.limits.maxStorageBufferBindingSize;
  for (const mib of sizesMiB) {
    // --sizes counts f32 output; f16/bf16 outputs of the same shape are half that, and so is their copy
    const shape: Shape = [(mib * 1024 * 1024) / 4 / COLS, COLS];
    const outBytes = shape[0] * COLS * (format === "f32" ? 4 : 2);
    const iters = Math.max(3, Math.min(maxIters, Math.ceil((4 * 1024 ** 3) / outBytes)));
    // copy yardstick: src and dst of the output's size, bound in windows if over one binding
    const src = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const dst = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    const windowBytes = Math.min(outBytes, Math.floor(maxBind / 16384) * 16384);
    const copyGroups: { bg: GPUBindGroup; x: number; y: number }[] = [];
    for (let at = 0; at < outBytes; at += windowBytes) {
      const n = Math.min(windowBytes, outBytes - at);
      const groups = Math.ceil(n / 16 / 1024);
      const x = Math.min(groups, 65535);
      const y = Math.ceil(groups / x);
      const u = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(u, 0, new Uint32Array([n / 16, x, 0, 0]));
      copyGroups.push({ bg: device.createBindGroup({ layout: copyPipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: src, offset: at, size: n } }, { binding: 1, resource: { buffer: dst, offset: at, size: n } }, { binding: 2, resource: { buffer: u } }] }), x, y });
    }
    const copy = await time(iters, (pass) => {
      pass.setPipeline(copyPipeline);
      for (const g of copyGroups) {
        pass.setBindGroup(0, g.bg);
        pass.dispatchWorkgroups(g.x, g.y);
      }
    });
    const copyBw = (2 * outBytes) / (hasTs ? copy.gpu : copy.wall);
    src.destroy();
    dst.destroy();
    const out = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    for (const profile of profiles) {
      const t0 = performance.now();
      const bytes = profile === "v1" ? v1Container(shape, 12345 + mib) : v2Container(shape, 777 + mib);
      const t1 = performance.now();
      {
      const t2 = performance.now();
      const prepared = decoder.prepare(bytes, { profile, shape, format });
      await device.queue.onSubmittedWorkDone();
      const t3 = performance.now();
      const dec = await time(iters, (pass) => decoder.encode(pass, prepared, out));
      const moved = bytes.length + prepared.outputBytes;
      const decBw = moved / (hasTs ? dec.gpu : dec.wall);
      const row = {
        label, mix: profile === "v2" ? `${mixName}${t158Percent === "" ? "" : `/t${t158Percent}`}` : "-", format, variant: prepared.variant, profile, outputMiB: mib, shape: `${shape[0]}x${shape[1]}`, containerMiB: +(bytes.length / 2 ** 20).toFixed(1), leaves: prepared.job.leafCount, windows: prepared.job.windows.length, iters,
        decodeGpuMs: +(dec.gpu * 1e3).toFixed(4), decodeWallMs: +(dec.wall * 1e3).toFixed(4), copyGpuMs: +(copy.gpu * 1e3).toFixed(4), copyWallMs: +(copy.wall * 1e3).toFixed(4),
        decodeGBs: +(decBw / 1e9).toFixed(1), copyGBs: +(copyBw / 1e9).toFixed(1), ratio: +(decBw / copyBw).toFixed(3),
        hostBuildMs: Math.round(t1 - t0), hostPrepareMs: Math.round(t3 - t2),
      };
      results.push(row);
      console.log(JSON.stringify(row));
      prepared.destroy();
      }
    }
    out.destroy();
  }
  console.log(`\n${label}: decode vs WGSL copy (${hasTs ? "GPU timestamps" : "wall time"})`);
  console.log("format   profile  mix     outMiB  contMiB  decode GB/s  copy GB/s  ratio  decode ms");
  for (const r of results) console.log(`${String(r.format).padEnd(8)} ${String(r.profile).padEnd(8)} ${String(r.mix).padEnd(7)} ${String(r.outputMiB).padStart(6)} ${String(r.containerMiB).padStart(8)} ${String(r.decodeGBs).padStart(12)} ${String(r.copyGBs).padStart(10)} ${String(r.ratio).padStart(6)} ${String(r.decodeGpuMs ?? r.decodeWallMs).padStart(10)}`);
  if (jsonOut) (await import("node:fs")).writeFileSync(jsonOut, JSON.stringify({ adapter: info, results }, null, 1));
  device.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
