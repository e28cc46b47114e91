/** Shared CLI helpers: exit codes, argument parsing, atomic writes, error printing. */
import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { isSgfp4Error, STREAM_ERROR_CODES } from "@sgfp4/format";

/** Exit statuses of every sgfp4 command (README.md "Exit status"). */
export const EXIT = {
  OK: 0,
  /** any failure that is not the stream's or the caller's: I/O, backend, failing conformance */
  FAILURE: 1,
  /** bad command line or argument */
  USAGE: 2,
  /** invalid container: `error: CODE: detail` on stderr (also the --backend-cmd reject status) */
  INVALID_CONTAINER: 3,
  /** validate --strict found warnings */
  WARNINGS: 4,
} as const;

/** Thrown by commands to end with a message and status. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export const usage = (message: string): CliError => new CliError(message, EXIT.USAGE);

/** "OxI" (also "O,I") -> [O, I], integers >= 1. */
export function parseShape(text: string): [number, number] {
  const m = /^\s*(\d+)\s*[x,X×]\s*(\d+)\s*$/.exec(text);
  if (!m) throw usage(`--shape must be OxI (rows x columns, e.g. 4096x11008), got "${text}"`);
  const shape: [number, number] = [Number(m[1]), Number(m[2])];
  if (!shape.every((d) => Number.isSafeInteger(d) && d >= 1)) throw usage(`--shape dimensions must be integers >= 1, got "${text}"`);
  return shape;
}

export function parseProfile(text: string): "v1" | "v2" | "auto" {
  if (text === "v1" || text === "v2" || text === "auto") return text;
  throw usage(`--profile must be v1, v2 or auto, got "${text}"`);
}

export async function readInput(file: string): Promise<Uint8Array> {
  try {
    const b = await readFile(file);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`, EXIT.FAILURE);
  }
}

/** Write through a temp file in the same folder and rename, so OUT is never left partial. */
export async function writeFileAtomic(file: string, chunks: readonly Uint8Array[] | string): Promise<void> {
  const tmp = path.join(path.dirname(path.resolve(file)), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    if (typeof chunks === "string") await writeFile(tmp, chunks);
    else await writeFile(tmp, chunks);
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw new CliError(`cannot write ${file}: ${(e as Error).message}`, EXIT.FAILURE);
  }
}

/** Collects a repeatable option; "a,b" counts as two values. */
export function collectList(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(",").map((s) => s.trim()).filter(Boolean)];
}
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * The Node WebGPU engine (the `webgpu` package, Dawn, ~130 MB for five platforms) is an optional
 * peer of @sgfp4/webgpu-decoder: where it is not installed, say how to get it.
 */
export function withInstallHint(message: string): string {
  if (/Cannot find (package|module) '?webgpu'?/.test(message) || /ERR_MODULE_NOT_FOUND.*\bwebgpu\b/.test(message)) {
    return `${message}\nhint: --backend webgpu in Node needs the optional WebGPU engine: npm install webgpu@0.6.2 (or use --backend cpu or vulkan)`;
  }
  return message;
}

/** Message and exit status for anything a command throws. */
export function describeError(e: unknown): { line: string; exitCode: number } {
  if (e instanceof CliError) return { line: `error: ${withInstallHint(e.message)}`, exitCode: e.exitCode };
  if (isSgfp4Error(e)) {
    const body = e.message.startsWith(`${e.code}:`) ? e.message : `${e.code}: ${e.message}`;
    const isStream = (STREAM_ERROR_CODES as readonly string[]).includes(e.code);
    return { line: `error: ${body}`, exitCode: isStream ? EXIT.INVALID_CONTAINER : e.code === "INVALID_ARGUMENT" ? EXIT.USAGE : EXIT.FAILURE };
  }
  return { line: `error: ${e instanceof Error ? e.message : String(e)}`, exitCode: EXIT.FAILURE };
}
