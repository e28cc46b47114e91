#!/usr/bin/env node
/**
 * pnpm bench:load [--quick] [--backend cpu|webgpu|vulkan]... [--only NAME]... [--json FILE] [--reps N] [--weights FILE.onnx] [--threads N]
 * (--only: the workloads whose name starts with NAME, for a quick look; a table for the record runs them all)
 * Encodes the workloads, runs each requested backend's module (src/<backend>.ts), prints the
 * table of ratios and writes JSON. Exit 1 when bits differ or a requested backend ran no row,
 * 2 for a bad command line.
 */
import { writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { failure, machine, table } from "./report.js";
import { skippedRow } from "./timing.js";
import type { Backend, LoadContext, LoadRow, Measure } from "./types.js";
import { buildWorkloads } from "./workloads.js";

const BACKENDS: readonly Backend[] = ["cpu", "webgpu", "vulkan"];

const USAGE = `usage: pnpm bench:load [options]
  --backend cpu|webgpu|vulkan  a backend to measure (repeatable; default: all three)
  --only NAME                  only the workloads whose name starts with NAME (repeatable)
  --quick                      1024x1024 workloads, no model set, 5 repetitions
  --reps N                     timed repetitions per row (default 9, --quick 5)
  --threads N                  threads for the encoder and for decodeParallel (default: every core; decodeParallel at most 16)
  --weights FILE.onnx          the real-weights workload's source (default: the bundled Silero VAD)
  --json FILE                  also write the rows and the machine as JSON
  --help                       this text
Exit 1 when any path's bits differ from the reference decode or a requested backend ran no row;
exit 2 for a bad command line.`;

/** A bad command line: the reason and the usage on stderr, exit status 2 (1 means bits differed). */
function usageError(reason: string): never {
  console.error(`${reason}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      help: { type: "boolean", default: false },
      quick: { type: "boolean", default: false },
      backend: { type: "string", multiple: true },
      only: { type: "string", multiple: true },
      json: { type: "string" },
      reps: { type: "string" },
      weights: { type: "string" },
      threads: { type: "string" },
    },
  });
} catch (e) {
  usageError((e as Error).message);
}
const { values } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const backends = (values.backend ?? [...BACKENDS]) as Backend[];
for (const b of backends) if (!BACKENDS.includes(b)) usageError(`--backend must be one of ${BACKENDS.join(", ")}, got ${b}`);
const quick = values.quick ?? false;
const reps = values.reps ? Number(values.reps) : quick ? 5 : 9;
if (!(Number.isInteger(reps) && reps > 0)) usageError(`--reps must be a positive integer, got ${values.reps}`);
const threads = values.threads ? Number(values.threads) : availableParallelism();
if (!(Number.isInteger(threads) && threads > 0)) usageError(`--threads must be a positive integer, got ${values.threads}`);
const log = (msg: string) => console.error(`[bench-load] ${msg}`);

/**
 * A backend's module, or the reason it cannot run. The specifier is a template so that a module
 * not written yet is a skipped backend, not a build error; esbuild bundles every ./*.js here.
 */
async function backendModule(name: Backend): Promise<Measure | string> {
  try {
    const mod = (await import(`./${name}.js`)) as { measure?: Measure };
    return mod.measure ?? `src/${name}.ts exports no measure()`;
  } catch (e) {
    return `src/${name}.ts could not be loaded: ${(e as Error).message.split("\n")[0]}`;
  }
}

log(`encoding workloads (${quick ? "quick: 1024x1024, no model set" : "4096x8192 and the model set"}) on ${threads} threads`);
const built = await buildWorkloads({ quick, threads, log, ...(values.weights ? { weights: values.weights } : {}) });
const measured = (rows: readonly LoadRow[]) => rows.forEach((r) => log(`row ${JSON.stringify(r)}`));
const only = values.only ?? [];
const workloads = only.length ? built.workloads.filter((w) => only.some((o) => w.name.startsWith(o))) : built.workloads;
if (!workloads.length) usageError(`--only ${only.join(", ")} matches no workload (${built.workloads.map((w) => w.name).join(", ")})`);
const ctx: LoadContext = { workloads, model: built.model, reps, quick, log, measured, ...(values.threads ? { threads } : {}) };
const rows: LoadRow[] = [];
for (const backend of backends) {
  for (const m of built.missing) rows.push(skippedRow(backend, "(all paths)", m.name, m.reason));
  const measure = await backendModule(backend);
  if (typeof measure === "string") {
    rows.push(skippedRow(backend, "(all paths)", "(all workloads)", measure));
    continue;
  }
  try {
    rows.push(...(await measure(ctx)));
  } catch (e) {
    rows.push(skippedRow(backend, "(all paths)", "(all workloads)", `measure() threw: ${(e as Error).stack ?? String(e)}`));
  }
}

console.log(table(rows));
if (values.json) {
  writeFileSync(values.json, JSON.stringify({ machine: machine(), args: { quick, backends, reps, threads }, rows }, null, 1));
  log(`wrote ${values.json}`);
}
const why = failure(rows, backends);
if (why) {
  console.error(`[bench-load] FAILED: ${why}`);
  process.exitCode = 1;
}
