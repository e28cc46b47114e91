import { endianness } from "node:os";
import type { Command } from "commander";
import { detectProfile } from "@sgfp4/format";
import { openBackend } from "../backends.js";
import { npyHeader } from "../npy.js";
import { CliError, EXIT, parseProfile, parseShape, readInput, usage, writeFileAtomic } from "../util.js";

/** Float32 elements as little-endian bytes (a view on LE hosts, a swapped copy otherwise). */
export function littleEndianBytes(f: Float32Array): Uint8Array {
  if (endianness() === "LE") return new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
  const out = new Uint8Array(f.length * 4);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < f.length; i++) dv.setFloat32(4 * i, f[i]!, true);
  return out;
}

export function outputFormat(out: string, format: string | undefined): "f32" | "npy" {
  if (format !== undefined) {
    if (format === "f32" || format === "npy") return format;
    throw usage(`--format must be f32 or npy, got "${format}"`);
  }
  return out.toLowerCase().endsWith(".npy") ? "npy" : "f32";
}

export function registerDecode(program: Command): void {
  program
    .command("decode")
    .description("decode a container to raw little-endian float32 (.f32) or NumPy (.npy)")
    .argument("<file>", "container (.fp4 = v1, .sgfp4 = v2)")
    .requiredOption("--shape <OxI>", "output shape: rows x columns")
    .requiredOption("-o, --output <out>", "output file; .npy writes NumPy, anything else raw float32")
    .option("--profile <profile>", "v1, v2 or auto (magic, then length)", "auto")
    .option("--backend <name>", "cpu, webgpu, vulkan or a module path", "cpu")
    .option("--format <format>", "f32 or npy (default: from the output extension)")
    .action(async (file: string, opts: { shape: string; output: string; profile: string; backend: string; format?: string }) => {
      const shape = parseShape(opts.shape);
      const requested = parseProfile(opts.profile);
      const format = outputFormat(opts.output, opts.format);
      const backend = await openBackend(opts.backend);
      try {
        const bytes = await readInput(file);
        const profile = requested === "auto" ? detectProfile(bytes, shape) : requested;
        const out = await backend.decode(bytes, { profile, shape });
        if (!(out instanceof Float32Array) || out.length !== shape[0] * shape[1]) {
          throw new CliError(`backend ${backend.name} returned ${out instanceof Float32Array ? `${out.length} elements` : "no Float32Array"}, expected ${shape[0] * shape[1]}`, EXIT.FAILURE);
        }
        const data = littleEndianBytes(out);
        await writeFileAtomic(opts.output, format === "npy" ? [npyHeader(shape), data] : [data]);
      } finally {
        await backend.close?.();
      }
    });
}
