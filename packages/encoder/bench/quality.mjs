// Quality at equal bits (issue 16): per input and per bits-per-weight point, the encoder's SNR
// and actual bpw next to baselines computed in the same run (bench/baselines.mjs), plus a
// task-level check on Silero VAD in onnxruntime-node. Run after the build (`pnpm bench:quality`
// at the root builds first).
//
// Usage: node bench/quality.mjs [--quick] [--input NAME[,NAME]] [--size N] [--policy P] [--options JSON] [--out DIR]
//   --quick    synthetic tensors 256x256 instead of 1024x1024, and no pp-ocrv4-rec unless named
//              (CI smoke: the same rows, under 2 minutes on 2 cores)
//   --input    only these inputs (synthetic families, silero-vad, pp-ocrv4-rec); default all
//   --size     synthetic tensors N x N
//   --policy   passed to encodeTensor / encodeModel as `policy` (when the encoder has that option)
//   --options  more encoder options as JSON, merged in (e.g. '{"fit":{"search":"joint"}}')
//   --out      folder for quality.{json,md} and bpw_snr.svg; default bench/results for a full run
//              (no --quick, --input or --size), else none (print only). A run into bench/results also refreshes the marked
//              blocks (<!-- bench:quality NAME -->) of packages/encoder/BENCHMARKS.md and the root
//              BENCHMARKS.md; the prose around them is not rewritten.
// Exits 1 when a row was skipped (an input could not be loaded), a container failed
// `validate --strict`, or a CPU decode differed from the encoder's reconstruction.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { BASELINES } from "./baselines.mjs";
import { INPUT_NAMES, QUICK_INPUTS, loadInputs } from "./quality/inputs.mjs";
import { SETTINGS, measureBaseline, measureEncoder } from "./quality/measure.mjs";
import { svg } from "./quality/plot.mjs";
import { markdown, splice } from "./quality/report.mjs";
import { vadTask } from "./quality/vad-task.mjs";

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    input: { type: "string", multiple: true, default: [] },
    size: { type: "string" },
    policy: { type: "string" },
    options: { type: "string" },
    out: { type: "string" },
  },
});
const size = Number(args.size ?? (args.quick ? 256 : 1024));
const names = args.input.flatMap((s) => s.split(",")).filter(Boolean);
const resultsDir = new URL("./results/", import.meta.url).pathname;
const fullRun = !args.quick && !names.length && args.size === undefined;
const outDir = args.out ?? (fullRun ? resultsDir : undefined);
const DOCS = ["../BENCHMARKS.md", "../../../BENCHMARKS.md"].map((f) => new URL(f, import.meta.url).pathname);
const variant = {
  label: `${args.policy ? ` --policy ${args.policy}` : ""}${args.options ? ` ${args.options}` : ""}`,
  options: { ...(args.options ? JSON.parse(args.options) : {}), ...(args.policy ? { policy: args.policy } : {}) },
};
const t0 = performance.now();
const log = (msg) => console.error(`[${((performance.now() - t0) / 1000).toFixed(0)} s] ${msg}`);

/** The checkout's commit (with "+changes" when the work tree differs from it), or "unknown". */
function gitCommit() {
  try {
    const git = (...a) => execFileSync("git", a, { cwd: new URL(".", import.meta.url), encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain") ? "+changes" : ""}`;
  } catch {
    return "unknown";
  }
}

const result = {
  meta: {
    command: `pnpm bench:quality${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(" ")}` : ""}`,
    date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC",
    machine: `${cpus()[0]?.model ?? "unknown CPU"} (${cpus().length} threads)`,
    node: process.versions.node,
    encoderVersion: JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version,
    commit: gitCommit(),
    encoderOptions: variant.options,
    syntheticSize: size,
  },
  inputs: [],
  rows: [],
  vad: null,
};

for (const name of names.length ? names : args.quick ? QUICK_INPUTS : INPUT_NAMES) {
  let input;
  try {
    [input] = loadInputs([name], size);
  } catch (e) {
    const reason = e.message.split("\n")[0];
    log(`${name}: skipped (${reason})`);
    result.inputs.push({ name, skipped: reason });
    result.rows.push({ input: name, method: "all", name: "all", setting: "all", skipped: reason });
    continue;
  }
  result.inputs.push({ name: input.name, description: input.description });
  const task = input.name === "silero-vad" ? await vadTask(input.model) : null;
  if (task) result.vad = { description: task.description, recordings: task.recordings };
  for (const setting of SETTINGS) {
    const { row, decoded } = await measureEncoder(input, setting, variant);
    if (task) row.task = await task.compare(decoded);
    result.rows.push(row);
    log(`${input.name} ${row.name}: ${row.bpw.toFixed(3)} bpw, ${row.snrDb.toFixed(2)} dB`);
  }
  for (const baseline of BASELINES) {
    const { row, decoded } = measureBaseline(input, baseline);
    if (task) row.task = await task.compare(decoded);
    result.rows.push(row);
  }
  log(`${input.name}: baselines done`);
}

const md = markdown(result);
console.log(md);
if (outDir) {
  mkdirSync(outDir, { recursive: true });
  writeFileSync(resolve(outDir, "quality.json"), `${JSON.stringify(result, null, 1)}\n`);
  writeFileSync(resolve(outDir, "quality.md"), md);
  writeFileSync(resolve(outDir, "bpw_snr.svg"), svg(result));
  log(`wrote ${outDir}: quality.json, quality.md, bpw_snr.svg`);
  if (fullRun && resolve(outDir) === resolve(resultsDir)) {
    for (const doc of DOCS) writeFileSync(doc, splice(readFileSync(doc, "utf8"), result));
    log(`refreshed the bench:quality blocks of ${DOCS.join(", ")}`);
  }
}
const failures = result.rows.filter((r) => r.skipped || r.invalid || r.mismatched || !Number.isFinite(r.snrDb));
if (failures.length) {
  console.error(`FAILED: ${failures.length} row(s) skipped, invalid or not bit-exact: ${failures.map((r) => `${r.input} ${r.name}`).join("; ")}`);
  process.exit(1);
}
log("done");
