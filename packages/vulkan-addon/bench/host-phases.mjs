// Host phases of the readback paths (issue 15, session 15): runs decode (f32, f16), decodeInto and
// decodeAsync on builds of the addon with SGFP4_VULKAN_TRACE=1, each build in its own child process,
// the builds alternating round by round, and prints per build and call the median (and range) of
// every phase the trace reports (CallTrace marks, the stage trace's setup and fill totals) and of
// the call's wall time. CPU-side only: on lavapipe (no GPU) the "GPU" work runs on the same cores,
// so waits and wall times say nothing about a GPU; parse, plan, setup and fill are host work.
//
//   SGFP4_VULKAN_FORCE_STAGING=1 node bench/host-phases.mjs /tmp/old.node build/Release/sgfp4_vulkan.node \
//     --file /tmp/st-v2.sgfp4 --shape 4096x8192 --profile v2 [--rounds 4] [--reps 3] [--calls "decode f32,decodeInto f32"]
//
// FORCE_STAGING makes lavapipe take the discrete-GPU routes (the default direct one); without it,
// lavapipe's unified memory takes another path.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);

if (args[0] === "--child") {
  const addon = createRequire(import.meta.url)(resolve(args[1]));
  const bytes = new Uint8Array(readFileSync(opt("--file")));
  const [rows, cols] = opt("--shape", "4096x8192").split("x").map(Number);
  const profile = opt("--profile", "v2"), reps = Number(opt("--reps", 3));
  const out = new Float32Array(rows * cols);
  const calls = {
    "decode f32": () => addon.decode(bytes, profile, rows, cols, {}),
    "decode f16": () => addon.decode(bytes, profile, rows, cols, { format: "f16" }),
    "decodeInto f32": () => addon.decodeInto(bytes, profile, rows, cols, out, {}),
    "decodeAsync f32": () => addon.decodeAsync(bytes, profile, rows, cols, null, {}),
  };
  const times = {};
  const only = opt("--calls", "");  // e.g. "decodeInto f32,decode f16"
  for (const [name, f] of Object.entries(calls)) {
    if (only && !only.split(",").includes(name)) continue;
    process.stderr.write("host-phases-warm\n");
    await f();  // warm (pool buffers, pipelines)
    process.stderr.write(`host-phases-call ${name}\n`);
    times[name] = [];
    for (let r = 0; r < reps; r++) {
      const t = performance.now();
      await f();
      times[name].push((performance.now() - t) * 1000);
    }
  }
  process.stdout.write(JSON.stringify(times) + "\n");
  process.exit(0);
}

const builds = args.filter((a, i) => !a.startsWith("--") && !(i > 0 && args[i - 1].startsWith("--")));
const rounds = Number(opt("--rounds", 4));
const passOn = ["--file", "--shape", "--profile", "--reps", "--calls"].flatMap((k) => (args.includes(k) ? [k, opt(k)] : []));
const samples = builds.map(() => new Map());  // "call / phase" -> [us]
const add = (m, key, v) => m.set(key, [...(m.get(key) ?? []), v]);
for (let r = 0; r < rounds; r++) {
  const order = builds.map((_, i) => i);
  if (r % 2) order.reverse();
  for (const i of order) {
    const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--child", builds[i], ...passOn], {
      env: { ...process.env, SGFP4_VULKAN_TRACE: "1" },
      encoding: "utf8",
      maxBuffer: 1 << 26,
    });
    if (child.status !== 0) throw new Error(`${builds[i]}: exit ${child.status}\n${child.stderr}`);
    let call = null;
    for (const line of child.stderr.split("\n")) {
      if (line === "host-phases-warm") call = null;
      if (line.startsWith("host-phases-call ")) call = line.slice(17);
      if (!call) continue;
      if (line.startsWith("sgfp4-vulkan-call ")) {
        const o = JSON.parse(line.slice(18));
        for (const [k, v] of Object.entries(o)) if (k !== "call") add(samples[i], `${call} / ${k}`, v);
      } else if (line.startsWith("sgfp4-vulkan-trace ")) {
        const o = JSON.parse(line.slice(19));
        if (o.planUs !== undefined) add(samples[i], `${call} / stages: plan`, o.planUs);
        add(samples[i], `${call} / stages: setup`, o.setupUs);
        add(samples[i], `${call} / stages: fill (sum)`, o.stages.reduce((s, x) => s + x.fill, 0));
        add(samples[i], `${call} / stages: submit (sum)`, o.stages.reduce((s, x) => s + x.submit, 0));
        add(samples[i], `${call} / stages: copy (sum)`, o.stages.reduce((s, x) => s + x.copy, 0));
        add(samples[i], `${call} / stages: device kernel (sum)`, o.stages.reduce((s, x) => s + x.gpuKernel, 0));
      }
    }
    for (const [name, ts] of Object.entries(JSON.parse(child.stdout))) for (const t of ts) add(samples[i], `${name} / wall`, t);
  }
}
const stat = (v) => {
  const s = v.slice().sort((a, b) => a - b);
  return `${s[s.length >> 1].toFixed(0).padStart(7)} (${s[0].toFixed(0)}-${s[s.length - 1].toFixed(0)})`;
};
const keys = [...new Set(samples.flatMap((m) => [...m.keys()]))];
console.log(`median (min-max) us, ${rounds} rounds; builds: ${builds.map((b, i) => `[${i}] ${b}`).join(", ")}`);
for (const k of keys) console.log(`${k.padEnd(44)} ${samples.map((m) => (m.has(k) ? stat(m.get(k)) : "-".padStart(7)).padEnd(22)).join(" ")}`);
