/**
 * Model commands: `sgfp4 encode`, `sgfp4 decode-model`, `sgfp4 verify` (from @sgfp4/encoder).
 * @sgfp4/encoder is loaded on first use, so the rest of the CLI works without it.
 */
import { availableParallelism } from "node:os";
import type { Command } from "commander";
import { decodeFloat32 } from "@sgfp4/format";
import { openBackend } from "../backends.js";
import { CliError, EXIT, collectList, usage } from "../util.js";

type DecodeFn = (bytes: Uint8Array, opts: { profile: "v1" | "v2"; shape: readonly [number, number] }) => Promise<Float32Array>;
type Progress = (done: number, total: number, name: string) => void;
interface EncoderModule {
  encodeModel(input: string, outDir: string, opts: Record<string, unknown>): Promise<{ encoded: number; passthrough: number; bitsPerWeight: number; manifest: { tensors: { name: string; stats?: Record<string, unknown> }[] } }>;
  decodeModel(dir: string, out: string, opts: { dtype: string; decode: DecodeFn; onProgress?: Progress }): Promise<{ tensors: number }>;
  verifyModel(dir: string, opts: { decode: DecodeFn; onProgress?: Progress }): Promise<{ ok: boolean; tensors: { name: string; ok: boolean; problem?: string }[] }>;
}

// A variable specifier keeps the compiler from requiring the package at build time.
const ENCODER_PACKAGE = "@sgfp4/encoder";
async function loadEncoder(): Promise<EncoderModule> {
  try {
    return (await import(ENCODER_PACKAGE)) as EncoderModule;
  } catch (e) {
    throw new CliError(`cannot load ${ENCODER_PACKAGE} (is it a dependency of @sgfp4/cli and built?): ${(e as Error).message}`, EXIT.FAILURE);
  }
}

/** A progress bar on stderr, drawn only on a terminal and only once the work has run 1 s. */
export function progressBar(label: string): { update: Progress; done: () => void } {
  const start = Date.now();
  let drawn = false;
  let last = 0;
  const tty = process.stderr.isTTY === true;
  return {
    update(done, total, name) {
      const now = Date.now();
      if (!tty || now - start < 1000 || now - last < 100 || total <= 0) return;
      last = now;
      drawn = true;
      const frac = Math.min(1, done / total);
      const width = 30;
      const filled = Math.round(frac * width);
      const secs = (now - start) / 1000;
      const eta = frac > 0 ? Math.max(0, secs / frac - secs) : 0;
      const line = `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${(frac * 100).toFixed(0).padStart(3)}% ${secs.toFixed(0)}s eta ${eta.toFixed(0)}s ${name}`;
      process.stderr.write(`\r${line.slice(0, (process.stderr.columns ?? 100) - 1).padEnd(Math.min(99, (process.stderr.columns ?? 100) - 1))}`);
    },
    done() {
      if (drawn) process.stderr.write("\n");
    },
  };
}

function numberOption(name: string, text: string | undefined, check: (n: number) => boolean, what: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || !check(n)) throw usage(`${name} must be ${what}, got "${text}"`);
  return n;
}

async function backendDecode(name: string): Promise<{ decode: DecodeFn; close: () => Promise<void> }> {
  const backend = await openBackend(name);
  return {
    decode: (bytes, opts) => decodeFloat32(backend, bytes, opts),
    close: async () => {
      await backend.close?.();
    },
  };
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
}

export function registerModelCommands(program: Command): void {
  program
    .command("encode")
    .description("encode a model (.safetensors with F32/F16/BF16 tensors, or .npy) into a folder of containers plus manifest.json")
    .argument("<model>", "model file: .safetensors or .npy")
    .requiredOption("-o, --output <dir>", "output folder (must not exist, or be empty)")
    .option("--profile <profile>", "v1 (64x64 blocks, .fp4) or v2 (quadtree, .sgfp4)", "v2")
    .option("--bpw <x>", "v2 rate control: target bits per weight over all encoded tensors (reachable: about 2.05 and up)")
    .option("--include <globs>", "encode only tensors whose names match (* and ?; repeatable or comma-separated)", collectList)
    .option("--exclude <globs>", "keep matching tensors unquantized in passthrough.safetensors", collectList)
    .option("--threads <n>", "worker threads (same bytes for any count; default: one per CPU)", String(availableParallelism()))
    .option("--delta <d>", "prefer T158 when its error is within (1 + d) of FP4's", "0.1")
    .option("--thresholds <kind>", "v2 split thresholds: relative (to each leaf's signal power) or absolute (the reference's MSE limits)", "relative")
    .option("--threshold-scale <x>", "multiply every v2 split threshold (larger: fewer splits, fewer bits)", "1")
    .option("--no-refit", "the plain 22.7 fit, without the least-squares refit of scale and bias")
    .option("--min-elements <n>", "tensors smaller than this (or 1-D) stay unquantized", "1024")
    .action(async (model: string, o: EncodeFlags) => {
      if (o.profile !== "v1" && o.profile !== "v2") throw usage(`--profile must be v1 or v2, got "${o.profile}"`);
      if (o.thresholds !== "relative" && o.thresholds !== "absolute") throw usage(`--thresholds must be relative or absolute, got "${o.thresholds}"`);
      const bpw = numberOption("--bpw", o.bpw, (n) => n > 0, "a positive number");
      if (bpw !== undefined && o.profile !== "v2") throw usage("--bpw needs --profile v2");
      const threads = numberOption("--threads", o.threads, (n) => Number.isInteger(n) && n >= 1 && n <= 256, "an integer from 1 to 256")!;
      const delta = numberOption("--delta", o.delta, (n) => n >= 0, "a number >= 0")!;
      const thresholdScale = numberOption("--threshold-scale", o.thresholdScale, (n) => n > 0, "a positive number")!;
      const minElements = numberOption("--min-elements", o.minElements, (n) => Number.isInteger(n) && n >= 0, "an integer >= 0")!;
      const enc = await loadEncoder();
      const bar = progressBar("encode");
      try {
        const r = await enc.encodeModel(model, o.output, {
          profile: o.profile,
          ...(bpw !== undefined ? { bpw } : {}),
          ...(o.include ? { include: o.include } : {}),
          ...(o.exclude ? { exclude: o.exclude } : {}),
          threads,
          minElements,
          fit: { delta, refit: o.refit },
          quadtree: { thresholdMode: o.thresholds, thresholdScale },
          onProgress: bar.update,
        });
        bar.done();
        process.stdout.write(`${o.output}: ${r.encoded} tensors encoded (${r.bitsPerWeight} bits per weight), ${r.passthrough} kept unquantized\n`);
      } catch (e) {
        bar.done();
        throw e;
      }
    });

  program
    .command("decode-model")
    .description("rebuild a .safetensors model from an encoded folder, checking every decoded tensor against the manifest")
    .argument("<dir>", "folder written by sgfp4 encode")
    .requiredOption("-o, --output <file>", "output .safetensors file")
    .option("--dtype <dtype>", "f32, f16 or bf16 for the decoded tensors", "f32")
    .option("--backend <name>", "cpu, webgpu, vulkan or a module path", "cpu")
    .action(async (dir: string, o: { output: string; dtype: string; backend: string }) => {
      if (!["f32", "f16", "bf16"].includes(o.dtype)) throw usage(`--dtype must be f32, f16 or bf16, got "${o.dtype}"`);
      const enc = await loadEncoder();
      const b = await backendDecode(o.backend);
      const bar = progressBar("decode");
      try {
        const r = await enc.decodeModel(dir, o.output, { dtype: o.dtype, decode: b.decode, onProgress: bar.update });
        bar.done();
        process.stdout.write(`${o.output}: ${r.tensors} tensors\n`);
      } finally {
        await b.close();
      }
    });

  program
    .command("verify")
    .description("check every container hash and decoded-output hash of an encoded folder (exit 1 on any mismatch)")
    .argument("<dir>", "folder written by sgfp4 encode")
    .option("--backend <name>", "cpu, webgpu, vulkan or a module path", "cpu")
    .action(async (dir: string, o: { backend: string }) => {
      const enc = await loadEncoder();
      const b = await backendDecode(o.backend);
      const bar = progressBar("verify");
      try {
        const report = await enc.verifyModel(dir, { decode: b.decode, onProgress: bar.update });
        bar.done();
        for (const t of report.tensors) process.stdout.write(t.ok ? `ok   ${t.name}\n` : `FAIL ${t.name}: ${t.problem}\n`);
        const bad = report.tensors.filter((t) => !t.ok).length;
        process.stdout.write(bad ? `${bad} of ${report.tensors.length} failed\n` : `all ${report.tensors.length} verified\n`);
        if (bad) throw new CliError(`${bad} tensor(s) failed verification`, EXIT.FAILURE);
      } finally {
        await b.close();
      }
    });
}
