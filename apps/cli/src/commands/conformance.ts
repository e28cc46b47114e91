import { availableParallelism } from "node:os";
import type { Command } from "commander";
import {
  ALL_BUILTINS,
  BackendLoadError,
  VectorSetError,
  defaultVectorsDir,
  formatTable,
  isCommandBackend,
  loadVectorSet,
  resolveBackends,
  runConformance,
  toJSON,
  toJUnit,
  type ProgressEvent,
} from "@sgfp4/conformance";
import { CliError, EXIT, collect, collectList, usage, writeFileAtomic } from "../util.js";

export interface ReportTargets {
  json: string[];
  junit: string[];
}

/** "json=FILE,junit=FILE" (repeatable) -> targets. */
export function parseReports(specs: readonly string[]): ReportTargets {
  const out: ReportTargets = { json: [], junit: [] };
  for (const spec of specs) {
    const m = /^(json|junit)=(.+)$/.exec(spec);
    if (!m) throw usage(`--report takes json=FILE or junit=FILE (comma-separated), got "${spec}"`);
    out[m[1] as "json" | "junit"].push(m[2]!);
  }
  return out;
}

/** One status line on stderr, rewritten in place; only when stderr is a terminal. */
function progressPrinter(): ((e: ProgressEvent) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  let skipping = false;
  return (e) => {
    if (e.type === "backend-start") {
      skipping = !e.available;
      if (skipping) process.stderr.write(`\r\x1b[K${e.backend}: unavailable (${e.reason ?? ""})\n`);
    } else if (e.type === "case" && !skipping) {
      const now = Date.now();
      if (now - last < 50 && e.index + 1 < e.total) return;
      last = now;
      process.stderr.write(`\r\x1b[K${e.backend}: ${e.index + 1}/${e.total} ${e.vector}`);
    } else if (e.type === "backend-end" && e.result.available) {
      process.stderr.write(`\r\x1b[K${e.backend}: ${e.result.passed} passed, ${e.result.failed} failed\n`);
    }
  };
}

interface ConformanceOpts {
  vectors?: string;
  backend: string[];
  backendCmd: string[];
  report: string[];
  require: string[];
  cmdTimeout: string;
  jobs?: string;
  filter: string[];
}

export function registerConformance(program: Command): void {
  program
    .command("conformance")
    .description("run a golden-vector set against decoders and compare bit patterns (exit 1 if any available backend fails)")
    .option("--vectors <dir>", "vector folder (default: the repository's golden-vectors/vectors)")
    .option("--backend <name>", "cpu, webgpu, vulkan, all or ./module.mjs; repeatable or comma-separated (default: all, or none when --backend-cmd is given)", collectList, [])
    .option("--backend-cmd <cmd>", "external decoder command template with {container} {profile} {rows} {cols} {output}; repeatable", collect, [])
    .option("--report <spec>", "json=FILE and/or junit=FILE, comma-separated; repeatable", collectList, [])
    .option("--require <name>", "fail if this backend is unavailable (release gating); repeatable", collectList, [])
    .option("--cmd-timeout <seconds>", "per-vector limit for --backend-cmd decoders", "60")
    .option("--filter <text>", "only vectors whose id contains this text; repeatable (any may match)", collect, [])
    .option("--jobs <n>", "--backend-cmd decoders run this many at once (default: CPU count, at most 8)")
    .action(async (opts: ConformanceOpts) => {
      const reports = parseReports(opts.report);
      const timeout = Number(opts.cmdTimeout);
      if (!(timeout > 0)) throw usage(`--cmd-timeout must be a positive number of seconds, got "${opts.cmdTimeout}"`);
      const jobs = opts.jobs === undefined ? Math.min(8, availableParallelism()) : Number(opts.jobs);
      if (!Number.isInteger(jobs) || jobs < 1) throw usage(`--jobs must be an integer >= 1, got "${opts.jobs}"`);
      let names = opts.backend.length ? opts.backend : opts.backendCmd.length ? [] : ["all"];
      // --require NAME adds a built-in that is not already named
      const extra = opts.require.filter((r) => (ALL_BUILTINS as string[]).includes(r) && !names.includes(r) && !names.includes("all"));
      names = [...names, ...extra];
      let dir: string;
      try {
        dir = opts.vectors ?? defaultVectorsDir();
      } catch (e) {
        throw usage((e as Error).message);
      }
      let vectors;
      try {
        vectors = await loadVectorSet(dir);
      } catch (e) {
        if (e instanceof VectorSetError) throw new CliError(`invalid vector set: ${e.message}`, EXIT.FAILURE);
        throw e;
      }
      if (opts.filter.length) {
        const kept = vectors.vectors.filter((v) => opts.filter.some((f) => v.id.includes(f)));
        if (kept.length === 0) throw usage(`--filter ${opts.filter.join(", ")}: no vector id matches`);
        vectors = { ...vectors, vectors: kept };
      }
      let backends;
      try {
        backends = await resolveBackends(names, { commands: opts.backendCmd, commandTimeoutMs: timeout * 1000 });
      } catch (e) {
        if (e instanceof BackendLoadError || (e as Error).message.startsWith("--backend-cmd")) throw usage((e as Error).message);
        throw e;
      }
      const present = new Set(backends.map((b) => b.name));
      const unknown = opts.require.filter((r) => !present.has(r));
      if (unknown.length) throw usage(`--require ${unknown.join(", ")}: no such backend in this run (backends: ${[...present].join(", ") || "none"})`);
      const progress = progressPrinter();
      const result = await runConformance({ vectors, backends, require: opts.require, concurrency: (b) => (isCommandBackend(b) ? jobs : 1), ...(progress ? { onProgress: progress } : {}) });
      for (const f of reports.json) await writeFileAtomic(f, toJSON(result));
      for (const f of reports.junit) await writeFileAtomic(f, toJUnit(result));
      process.stdout.write(formatTable(result));
      if (!result.ok) process.exitCode = EXIT.FAILURE;
    });
}
