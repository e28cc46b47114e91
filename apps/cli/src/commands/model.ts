/**
 * Model commands: `sgfp4 encode`, `sgfp4 merge-manifests`, `sgfp4 decode-model`, `sgfp4 verify`
 * (from @sgfp4/encoder). @sgfp4/encoder is loaded on first use, so the rest of the CLI works
 * without it.
 */
import { rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Command } from "commander";
import type * as Encoder from "@sgfp4/encoder";
import { decodeFloat32 } from "@sgfp4/format";
import { openBackend } from "../backends.js";
import { progressBar } from "../progress.js";
import { CliError, EXIT, collectList, usage } from "../util.js";

// A variable specifier keeps the compiler from requiring the package at build time.
const ENCODER_PACKAGE = "@sgfp4/encoder";
async function loadEncoder(): Promise<typeof Encoder> {
  try {
    return (await import(ENCODER_PACKAGE)) as typeof Encoder;
  } catch (e) {
    throw new CliError(`cannot load ${ENCODER_PACKAGE} (is it a dependency of @sgfp4/cli and built?): ${(e as Error).message}`, EXIT.FAILURE);
  }
}

function numberOption(name: string, text: string | undefined, check: (n: number) => boolean, what: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || !check(n)) throw usage(`${name} must be ${what}, got "${text}"`);
  return n;
}

async function backendDecode(name: string): Promise<{ decode: Encoder.DecodeFn; close: () => Promise<void> }> {
  const backend = await openBackend(name);
  return {
    decode: (bytes, opts) => decodeFloat32(backend, bytes, opts),
    close: async () => {
      await backend.close?.();
    },
  };
}

/** Exit status on a signal: 128 + its number, as shells report it. */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * While `work` runs, Ctrl-C or SIGTERM removes `partialDir` (the encode's unfinished output) and
 * exits; worker threads end with the process.
 */
async function removedOnSignals<T>(partialDir: string, work: () => Promise<T>): Promise<T> {
  const onSignal = (signal: keyof typeof SIGNAL_EXIT) => {
    rmSync(partialDir, { recursive: true, force: true });
    process.stderr.write(`\n${signal}: removed ${partialDir}\n`);
    process.exit(SIGNAL_EXIT[signal]);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await work();
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** The loud line for weights the encoder clipped (manifest stats.clipped per tensor), or undefined. */
export function clippedWarning(tensors: readonly { name: string; stats?: Record<string, number | string> }[]): string | undefined {
  const hit = tensors.map((t) => ({ name: t.name, n: Number(t.stats?.clipped ?? 0) })).filter((t) => t.n > 0);
  if (!hit.length) return undefined;
  const total = hit.reduce((s, t) => s + t.n, 0);
  const worst = hit.reduce((a, b) => (b.n > a.n ? b : a));
  return `warning: ${total} weight${total === 1 ? "" : "s"} clipped to the code range in ${hit.length} tensor${hit.length === 1 ? "" : "s"} (most: ${worst.name}, ${worst.n}); outliers lose their magnitude: see stats.clipped in manifest.json, or --exclude those tensors`;
}

interface EncodeFlags {
  output: string;
  profile: string;
  bpw?: string;
  include?: string[];
  exclude?: string[];
  threads?: string;
  delta?: string;
  thresholds?: string;
  thresholdScale?: string;
  refit: boolean;
  minElements?: string;
  keepRows?: boolean;
  shard?: string;
  json?: boolean;
}

function encodeOptions(o: EncodeFlags, enc: typeof Encoder): Encoder.ModelEncodeOptions {
  if (o.profile !== "v1" && o.profile !== "v2") throw usage(`--profile must be v1 or v2, got "${o.profile}"`);
  if (o.thresholds !== "relative" && o.thresholds !== "absolute") throw usage(`--thresholds must be relative or absolute, got "${o.thresholds}"`);
  const bpw = numberOption("--bpw", o.bpw, (n) => n > 0, "a positive number");
  if (bpw !== undefined && o.profile !== "v2") throw usage("--bpw needs --profile v2");
  let shard: [number, number] | undefined;
  try {
    shard = o.shard === undefined ? undefined : enc.parseShard(o.shard);
  } catch (e) {
    throw usage(`--shard: ${(e as Error).message.replace(/^INVALID_ARGUMENT: /, "")}`);
  }
  if (bpw !== undefined && shard && shard[1] > 1) throw usage("--bpw needs every tensor in one process (its rate control spans the model); with --shard use --threshold-scale");
  return {
    profile: o.profile,
    ...(bpw !== undefined ? { bpw } : {}),
    ...(o.include ? { include: o.include } : {}),
    ...(o.exclude ? { exclude: o.exclude } : {}),
    ...(shard ? { shard } : {}),
    ...(o.keepRows ? { keepRows: true } : {}),
    threads: numberOption("--threads", o.threads, (n) => Number.isInteger(n) && n >= 1 && n <= 256, "an integer from 1 to 256")!,
    minElements: numberOption("--min-elements", o.minElements, (n) => Number.isInteger(n) && n >= 0, "an integer >= 0")!,
    fit: { delta: numberOption("--delta", o.delta, (n) => n >= 0, "a number >= 0")!, refit: o.refit },
    quadtree: { thresholdMode: o.thresholds, thresholdScale: numberOption("--threshold-scale", o.thresholdScale, (n) => n > 0, "a positive number")! },
  };
}

function registerEncode(program: Command): void {
  program
    .command("encode")
    .description("encode a model into a folder of containers plus manifest.json (exit 0 ok, 1 failure, 2 usage, 130/143 interrupted)")
    .argument("<model>", "a .safetensors file, a sharded checkpoint (its folder or model.safetensors.index.json), an .onnx model, or an .npy file")
    .requiredOption("-o, --output <dir>", "output folder (must not exist, or be empty)")
    .option("--profile <profile>", "v1 (64x64 blocks, .fp4) or v2 (quadtree, .sgfp4)", "v2")
    .option("--bpw <x>", "v2 rate control: target bits per weight over all encoded tensors (below the tensors' reachable minimum: refused, naming it)")
    .option("--include <globs>", "encode only tensors whose names match (* and ?; repeatable or comma-separated; a glob matching nothing is an error)", collectList)
    .option("--exclude <globs>", "keep matching tensors unquantized in passthrough.safetensors", collectList)
    .option("--shard <i/N>", "encode only shard i of N (weight-balanced) and write manifest.part.json; join the N folders with sgfp4 merge-manifests")
    .option("--threads <n>", "worker threads (same bytes for any count; default: one per CPU)", String(availableParallelism()))
    .option("--delta <d>", "prefer T158 when its error is within (1 + d) of FP4's", "0.1")
    .option("--thresholds <kind>", "v2 split thresholds: relative (to each leaf's signal power) or absolute (the reference's MSE limits)", "relative")
    .option("--threshold-scale <x>", "multiply every v2 split threshold (larger: fewer splits, fewer bits)", "1")
    .option("--no-refit", "the plain 22.7 fit, without the least-squares refit of scale and bias")
    .option("--min-elements <n>", "tensors smaller than this (or 1-D) stay unquantized", "1024")
    .option("--keep-rows", "store every tensor as [dims[0], rest]; by default rows are joined where that pads less (manifest originalShape keeps the source shape)")
    .option("--json", "print a JSON summary instead of text")
    .action(async (model: string, o: EncodeFlags) => {
      const enc = await loadEncoder();
      const opts = encodeOptions(o, enc);
      const bar = progressBar("encode");
      let r: Encoder.ModelEncodeResult;
      try {
        r = await removedOnSignals(enc.partialDirOf(o.output), () => enc.encodeModel(model, o.output, { ...opts, onProgress: bar.update }));
      } finally {
        bar.done();
      }
      const warning = clippedWarning(r.manifest.tensors);
      if (warning) process.stderr.write(warning + "\n");
      const shard = r.part ? `${r.part.shard.index}/${r.part.shard.count}` : undefined;
      if (o.json) {
        const tensors = r.manifest.tensors.map((t) => ({ name: t.name, file: t.file, shape: t.shape, bitsPerWeight: t.stats?.bitsPerWeight, snrDb: t.stats?.snrDb, clipped: t.stats?.clipped ?? 0 }));
        const clipped = tensors.reduce((s, t) => s + Number(t.clipped), 0);
        process.stdout.write(JSON.stringify({ output: o.output, ...(shard ? { shard } : {}), encoded: r.encoded, passthrough: r.passthrough, bitsPerWeight: r.bitsPerWeight, clipped, tensors }, null, 2) + "\n");
      } else {
        const what = shard ? `shard ${shard}: ${r.encoded} tensors encoded (${r.bitsPerWeight} bits per weight); manifest.part.json written, join the shards with sgfp4 merge-manifests` : `${r.encoded} tensors encoded (${r.bitsPerWeight} bits per weight), ${r.passthrough} kept unquantized`;
        process.stdout.write(`${o.output}: ${what}\n`);
      }
    });

  program
    .command("merge-manifests")
    .description("join the folders of encode --shard 0/N .. N-1/N into one encoded folder (the same bytes as a one-process encode)")
    .argument("<dirs...>", "the N shard folders, in any order")
    .requiredOption("-o, --output <dir>", "output folder (must not exist, or be empty); files are hard-linked where possible")
    .option("--json", "print a JSON summary instead of text")
    .action(async (dirs: string[], o: { output: string; json?: boolean }) => {
      const enc = await loadEncoder();
      const r = await removedOnSignals(enc.partialDirOf(o.output), () => enc.mergeParts(dirs, o.output));
      const summary = { output: o.output, shards: dirs.length, tensors: r.manifest.tensors.length, bitsPerWeight: r.manifest.stats?.bitsPerWeight };
      process.stdout.write(o.json ? JSON.stringify(summary, null, 2) + "\n" : `${o.output}: ${summary.tensors} tensors from ${dirs.length} shards (${summary.bitsPerWeight} bits per weight)\n`);
    });
}

function registerRebuild(program: Command): void {
  program
    .command("decode-model")
    .description("rebuild the model from an encoded folder, in its source layout (one .safetensors, the shards and their index, or .onnx); every tensor checked as verify does (exit 1 where verify fails)")
    .argument("<dir>", "folder written by sgfp4 encode")
    .requiredOption("-o, --output <out>", "output: a .safetensors file, a folder (sharded sources) or an .onnx file (ONNX sources)")
    .option("--dtype <dtype>", "source (each tensor's dtype in the source model), f32, f16 or bf16", "source")
    .option("--backend <name>", "cpu, webgpu, vulkan or a module path", "cpu")
    .action(async (dir: string, o: { output: string; dtype: string; backend: string }) => {
      if (!["source", "f32", "f16", "bf16"].includes(o.dtype)) throw usage(`--dtype must be source, f32, f16 or bf16, got "${o.dtype}"`);
      const enc = await loadEncoder();
      const b = await backendDecode(o.backend);
      const bar = progressBar("decode");
      try {
        const r = await enc.decodeModel(dir, o.output, { dtype: o.dtype as "source", decode: b.decode, onProgress: bar.update });
        bar.done();
        process.stdout.write(`${o.output}: ${r.tensors} tensors in ${r.files.length} file${r.files.length === 1 ? "" : "s"}\n`);
      } finally {
        bar.done();
        await b.close();
      }
    });

  program
    .command("verify")
    .description("check every container hash, decoded-output hash and unquantized file of an encoded folder (exit 1 on any mismatch)")
    .argument("<dir>", "folder written by sgfp4 encode")
    .option("--backend <name>", "cpu, webgpu, vulkan or a module path", "cpu")
    .option("--json", "print the report as JSON ({ ok, tensors: [{ name, ok, problem? }] })")
    .action(async (dir: string, o: { backend: string; json?: boolean }) => {
      const enc = await loadEncoder();
      const b = await backendDecode(o.backend);
      const bar = progressBar("verify");
      try {
        const report = await enc.verifyModel(dir, { decode: b.decode, onProgress: bar.update });
        bar.done();
        const bad = report.tensors.filter((t) => !t.ok).length;
        if (o.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
        else {
          for (const t of report.tensors) process.stdout.write(t.ok ? `ok   ${t.name}\n` : `FAIL ${t.name}: ${t.problem}\n`);
          process.stdout.write(bad ? `${bad} of ${report.tensors.length} failed\n` : `all ${report.tensors.length} verified\n`);
        }
        if (bad) throw new CliError(`${bad} tensor(s) failed verification`, EXIT.FAILURE);
      } finally {
        bar.done();
        await b.close();
      }
    });
}

export function registerModelCommands(program: Command): void {
  registerEncode(program);
  registerRebuild(program);
}
