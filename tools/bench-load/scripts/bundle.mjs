#!/usr/bin/env node
// Packs the load benchmark for a machine with only Node.js (the GPU machine) into <repo>/.bench/load/:
//   bench-load.mjs            the benchmark, every workspace import bundled (webgpu stays external)
//   kernel-probe.mjs          a probe of the WebGPU kernel timings (scripts/kernel-probe.mjs)
//   worker.js                 the encoder's worker (WorkerPool loads ./worker.js next to the bundle)
//   validate-worker.js        the WebGPU decoder's validator worker (WorkerValidatorPool loads it from next to the bundle)
//   silero_vad_v5.onnx        the real weights (the GPU machine reaches no registry)
// and, for the other backends' native parts, next to it under <repo>/.bench/:
//   prebuilds/linux-x64/node.napi.node   the Vulkan addon (its loader looks in ../ of the bundle)
//   node_modules/webgpu/{index.js,package.json} + dawn.node.xz   (unpacked by the README command)
// Run `pnpm exec turbo run build` first (the bundle is made from dist/).
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { sileroOnnx } from "../dist/workloads.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const out = join(repo, ".bench");
const load = join(out, "load");
mkdirSync(load, { recursive: true });

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["webgpu"],
  // node-gyp-build (Vulkan addon) and the encoder's workers use require(): give the ESM bundle one
  banner: { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' },
  logLevel: "warning",
};
await build({ ...common, entryPoints: [join(here, "..", "dist", "main.js")], outfile: join(load, "bench-load.mjs") });
// the session-13 probe of the WebGPU kernel rows' slowdown after the first workload (kernel-probe.mjs)
await build({ ...common, entryPoints: [join(here, "kernel-probe.mjs")], outfile: join(load, "kernel-probe.mjs") });
const encoderDist = join(repo, "packages", "encoder", "dist");
await build({ ...common, entryPoints: [join(encoderDist, "worker.js")], outfile: join(load, "worker.js") });
const webgpuDist = join(repo, "packages", "webgpu-decoder", "dist");
await build({ ...common, entryPoints: [join(webgpuDist, "validate-worker.js")], outfile: join(load, "validate-worker.js") });

if (!existsSync(join(load, "silero_vad_v5.onnx"))) writeFileSync(join(load, "silero_vad_v5.onnx"), sileroOnnx());

const addon = join(repo, "packages", "vulkan-addon");
const built = join(addon, "build", "Release");
const node = existsSync(built) ? readdirSync(built).find((f) => f.endsWith(".node")) : undefined;
mkdirSync(join(out, "prebuilds", "linux-x64"), { recursive: true });
copyFileSync(node ? join(built, node) : join(addon, "prebuilds", "linux-x64", "node.napi.node"), join(out, "prebuilds", "linux-x64", "node.napi.node"));
// The Vulkan rows use the bench-only addon (the shipped API plus kernel and transfer timings): src/vulkan.ts finds it in ../vulkan/.
const { buildBenchAddon } = await import(join(addon, "scripts", "build-bench.mjs"));
mkdirSync(join(out, "vulkan"), { recursive: true });
copyFileSync(buildBenchAddon(), join(out, "vulkan", "sgfp4_vulkan_bench.node"));

const webgpu = dirname(createRequire(join(repo, "packages", "webgpu-decoder", "package.json")).resolve("webgpu/package.json"));
const target = join(out, "node_modules", "webgpu");
mkdirSync(join(target, "dist", "linux-x64"), { recursive: true });
for (const f of ["index.js", "package.json"]) copyFileSync(join(webgpu, f), join(target, f));
execFileSync("sh", ["-c", `xz -T0 -6 -c "${join(webgpu, "dist", "linux-x64", "dawn.node")}" > "${join(out, "dawn.node.xz")}"`]);
console.log(`wrote ${out}: load/bench-load.mjs, load/worker.js, load/validate-worker.js, load/silero_vad_v5.onnx, prebuilds/, vulkan/, node_modules/webgpu/, dawn.node.xz`);
