/**
 * A Decoder for decoders in any language: the runner writes the container to a temp file,
 * fills a command template and runs it through the shell. The protocol (also in README.md):
 *
 *   placeholders  {container} {profile} {rows} {cols} {output}  (substituted shell-quoted)
 *   exit 0        decoded: {output} holds rows*cols little-endian float32, row-major
 *   exit 3        rejected: a line `error: CODE` or `error: CODE: detail` on stderr (stdout
 *                 is searched too), CODE from DECISIONS.md section 3
 *   anything else (other status, signal, timeout) is a backend failure, never a pass
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { requestedFormat, type Decoder, type DecodeRequest } from "@sgfp4/format";

export const COMMAND_PLACEHOLDERS = ["container", "profile", "rows", "cols", "output"] as const;
export const REJECT_EXIT_STATUS = 3;
/** `error: CODE` or `error: CODE: detail`, one line. */
export const ERROR_LINE = /^error: ([A-Z][A-Z0-9_]*)(?::[ \t]*(.*))?$/m;

export interface CommandDecoderOptions {
  /** name in reports and for --require; default "cmd" */
  name?: string;
  /** per-decode limit, default 60 s; the process group is killed after it */
  timeoutMs?: number;
}

/** A decoder refusal reported through the protocol; carries `.code` like Sgfp4Error. */
export class CommandRejection extends Error {
  readonly code: string;
  constructor(code: string, detail: string) {
    super(`${code}: ${detail}`);
    this.name = "CommandRejection";
    this.code = code;
  }
}

const CAPTURE_LIMIT = 64 * 1024;
const MAX_OUTPUT_FILE = 2 ** 31;

export function shellQuote(s: string): string {
  if (process.platform === "win32") return `"${s.replace(/"/g, '""')}"`;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Check the template once, so a typo fails before any vector runs. */
export function checkTemplate(template: string): void {
  const used = new Set<string>();
  for (const m of template.matchAll(/\{([^{}]*)\}/g)) {
    if (!(COMMAND_PLACEHOLDERS as readonly string[]).includes(m[1]!)) {
      throw new Error(`--backend-cmd: unknown placeholder {${m[1]}} (known: ${COMMAND_PLACEHOLDERS.map((p) => `{${p}}`).join(" ")})`);
    }
    used.add(m[1]!);
  }
  for (const need of ["container", "output"]) {
    if (!used.has(need)) throw new Error(`--backend-cmd: the template must use {${need}}`);
  }
}

export function fillTemplate(template: string, values: Record<(typeof COMMAND_PLACEHOLDERS)[number], string>): string {
  return template.replace(/\{(container|profile|rows|cols|output)\}/g, (_, k: keyof typeof values) => shellQuote(values[k]));
}

interface Exit {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

function runShell(command: string, timeoutMs: number): Promise<Exit> {
  return new Promise((resolve, reject) => {
    // detached: own process group, so a timeout kills the decoder and not only the shell
    const child = spawn(command, { shell: true, stdio: ["ignore", "pipe", "pipe"], detached: process.platform !== "win32" });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < CAPTURE_LIMIT) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < CAPTURE_LIMIT) stderr += d;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, timedOut });
    });
  });
}

const tail = (s: string): string => {
  const t = s.trim();
  return t.length > 500 ? "..." + t.slice(-500) : t;
};

const commandDecoders = new WeakSet<Decoder>();
/** True for decoders made by createCommandDecoder (each case is a process: worth running several at once). */
export function isCommandDecoder(d: Decoder): boolean {
  return commandDecoders.has(d);
}

/** The protocol writes float32 only, so a command decoder's formats are ["f32"]. */
export function createCommandDecoder(template: string, opts: CommandDecoderOptions = {}): Decoder {
  checkTemplate(template);
  const decoder = makeCommandDecoder(template, opts);
  commandDecoders.add(decoder);
  return decoder;
}

function makeCommandDecoder(template: string, opts: CommandDecoderOptions): Decoder {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  let workDir: string | undefined;
  let counter = 0;
  return {
    name: opts.name ?? "cmd",
    formats: ["f32"],
    available: async () => ({ ok: true, detail: template }),
    async decode(bytes: Uint8Array, req: DecodeRequest): Promise<Float32Array> {
      requestedFormat(req, ["f32"], opts.name ?? "cmd");
      workDir ??= await mkdtemp(path.join(tmpdir(), "sgfp4-conformance-"));
      const n = counter++;
      const container = path.join(workDir, `case-${n}.${req.profile === "v1" ? "fp4" : "sgfp4"}`);
      const output = path.join(workDir, `case-${n}.f32`);
      await writeFile(container, bytes);
      try {
        const [rows, cols] = req.shape;
        const command = fillTemplate(template, { container, profile: req.profile, rows: String(rows), cols: String(cols), output });
        const exit = await runShell(command, timeoutMs);
        if (exit.timedOut) throw new Error(`command did not finish within ${timeoutMs} ms: ${command}`);
        if (exit.status === REJECT_EXIT_STATUS) {
          const m = ERROR_LINE.exec(exit.stderr) ?? ERROR_LINE.exec(exit.stdout);
          if (!m) throw new Error(`command exited with status 3 (rejected) but printed no "error: CODE" line; stderr: ${tail(exit.stderr)}`);
          throw new CommandRejection(m[1]!, m[2] ?? "");
        }
        if (exit.status !== 0) {
          const how = exit.signal ? `was killed by ${exit.signal}` : `exited with status ${exit.status}`;
          const hint = ERROR_LINE.test(exit.stderr) ? " (it printed an error line: a rejection must exit with status 3)" : "";
          throw new Error(`command ${how}${hint}; stderr: ${tail(exit.stderr)}`);
        }
        let size: number;
        try {
          size = (await stat(output)).size;
        } catch {
          throw new Error(`command exited 0 but wrote no output file ${output}`);
        }
        if (size % 4 !== 0) throw new Error(`output file has ${size} bytes, not a whole number of float32`);
        if (size > MAX_OUTPUT_FILE) throw new Error(`output file has ${size} bytes, over the 2^31-byte bound`);
        const raw = await readFile(output);
        const out = new Float32Array(size / 4);
        const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
        const words = new Uint32Array(out.buffer);
        for (let i = 0; i < words.length; i++) words[i] = dv.getUint32(4 * i, true);
        return out;
      } finally {
        await rm(container, { force: true });
        await rm(output, { force: true });
      }
    },
    async close() {
      if (workDir) await rm(workDir, { recursive: true, force: true });
      workDir = undefined;
    },
  };
}
