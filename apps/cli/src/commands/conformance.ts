import { availableParallelism } from "node:os";
import type { Command } from "commander";
import { DecoderLoadError, nodeDecoders } from "@sgfp4/decoders/node";
import {
  ALL_FORMATS,
  VectorSetError,
  defaultVectorsDir,
  formatTable,
  goldenVectorsVersion,
  isCommandDecoder,
  loadVectorSet,
  resolveDecoders,
  runConformance,
  toJSON,
  toJUnit,
  type ConformanceResult,
  type OutputFormat,
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

function parseFormats(list: readonly string[]): OutputFormat[] {
  const bad = list.filter((f) => !(ALL_FORMATS as readonly string[]).includes(f));
  if (bad.length) throw usage(`--format takes ${ALL_FORMATS.join(", ")}, got "${bad.join(", ")}"`);
  return list.length ? (list as OutputFormat[]) : [...ALL_FORMATS];
}

/** One status line on stderr, rewritten in place; only when stderr is a terminal. */
function progressPrinter(): ((e: ProgressEvent) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  let skipping = false;
  return (e) => {
    const row = e.format === "f32" ? e.backend : `${e.backend} ${e.format}`;
    if (e.type === "backend-start") {
      skipping = !e.available;
      if (skipping) process.stderr.write(`\r\x1b[K${row}: unavailable (${e.reason ?? ""})\n`);
    } else if (e.type === "case" && !skipping) {
      const now = Date.now();
      if (now - last < 50 && e.index + 1 < e.total) return;
      last = now;
      process.stderr.write(`\r\x1b[K${row}: ${e.index + 1}/${e.total} ${e.vector}`);
    } else if (e.type === "backend-end" && e.result.available) {
      process.stderr.write(`\r\x1b[K${row}: ${e.result.passed} passed, ${e.result.failed} failed\n`);
    }
  };
}

/** The --json summary: the verdict, one row per decoder and format, and the failing cases. */
export function jsonSummary(r: ConformanceResult, vectorSet: { dir: string; package?: string }): string {
  const doc = {
    format: "sgfp4-conformance-summary",
    version: 1,
    ok: r.ok,
    exitCode: r.ok ? EXIT.OK : EXIT.FAILURE,
    vectors: { ...vectorSet, count: r.vectorCount },
    totals: r.totals,
    problems: r.problems,
    rows: r.backends.map((b) => ({
      backend: b.name,
      format: b.format,
      status: b.available ? (b.failed ? "fail" : "ok") : b.required ? "required-unavailable" : "unavailable",
      passed: b.passed,
      failed: b.failed,
      skipped: b.skipped,
      ...(b.detail ? { detail: b.detail } : {}),
      ...(b.reason ? { reason: b.reason } : {}),
      failures: b.cases.filter((c) => c.status === "failed").map((c) => ({ vector: c.vector, expect: c.expect, kind: c.failure!.kind, message: c.failure!.message })),
    })),
  };
  return JSON.stringify(doc, null, 2) + "\n";
}

interface ConformanceOpts {
  vectors?: string;
  backend: string[];
  backendCmd: string[];
  report: string[];
  require: string[];
  format: string[];
  cmdTimeout: string;
  jobs?: string;
  filter: string[];
  json?: boolean;
}

const EXIT_HELP = `
Exit status:
  0  every case that ran passed, and at least one ran
  1  a case failed, a --require'd decoder is unavailable, no case ran (every decoder
     unavailable, or --format left nothing to run), or the vector set is invalid or empty
  2  usage: bad option, unknown backend, --filter matching no vector, --require of a backend
     not in the run`;

export function registerConformance(program: Command): void {
  program
    .command("conformance")
    .description("run a golden-vector set against decoders and compare bit patterns, in f32 and in each f16/bf16 format a decoder declares")
    .option("--vectors <dir>", "vector folder (default: the installed @sgfp4/golden-vectors set)")
    .option("--backend <name>", `${nodeDecoders.names.join(", ")}, all or ./module.mjs; repeatable or comma-separated (default: all, or none when --backend-cmd is given)`, collectList, [])
    .option("--backend-cmd <cmd>", "external decoder command template with {container} {profile} {rows} {cols} {output}; repeatable", collect, [])
    .option("--report <spec>", "json=FILE and/or junit=FILE, comma-separated; repeatable", collectList, [])
    .option("--require <name>", "fail if this backend is unavailable (release gating); repeatable", collectList, [])
    .option("--format <f>", "output formats to judge: f32, f16, bf16; comma-separated (default: all; each decoder runs those it declares)", collectList, [])
    .option("--cmd-timeout <seconds>", "per-vector limit for --backend-cmd decoders", "60")
    .option("--filter <text>", "only vectors whose id contains this text; repeatable (any may match)", collect, [])
    .option("--jobs <n>", "--backend-cmd decoders run this many at once (default: CPU count, at most 8)")
    .option("--json", "print a JSON summary on stdout instead of the table")
    .addHelpText("after", EXIT_HELP)
    .action(async (opts: ConformanceOpts) => {
      const reports = parseReports(opts.report);
      const formats = parseFormats(opts.format);
      const timeout = Number(opts.cmdTimeout);
      if (!(timeout > 0)) throw usage(`--cmd-timeout must be a positive number of seconds, got "${opts.cmdTimeout}"`);
      const jobs = opts.jobs === undefined ? Math.min(8, availableParallelism()) : Number(opts.jobs);
      if (!Number.isInteger(jobs) || jobs < 1) throw usage(`--jobs must be an integer >= 1, got "${opts.jobs}"`);
      let names = opts.backend.length ? opts.backend : opts.backendCmd.length ? [] : ["all"];
      // --require NAME adds a registry decoder that is not already named
      const extra = opts.require.filter((r) => nodeDecoders.has(r) && !names.includes(r) && !names.includes("all"));
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
        backends = await resolveDecoders(names, { commands: opts.backendCmd, commandTimeoutMs: timeout * 1000 });
      } catch (e) {
        if (e instanceof DecoderLoadError || (e as Error).message.startsWith("--backend-cmd")) throw usage((e as Error).message);
        throw e;
      }
      const present = new Set(backends.map((b) => b.name));
      const unknown = opts.require.filter((r) => !present.has(r));
      if (unknown.length) throw usage(`--require ${unknown.join(", ")}: no such backend in this run (backends: ${[...present].join(", ") || "none"})`);
      const progress = opts.json ? undefined : progressPrinter();
      const result = await runConformance({ vectors, backends, formats, require: opts.require, concurrency: (b) => (isCommandDecoder(b) ? jobs : 1), ...(progress ? { onProgress: progress } : {}) });
      for (const f of reports.json) await writeFileAtomic(f, toJSON(result));
      for (const f of reports.junit) await writeFileAtomic(f, toJUnit(result));
      const version = opts.vectors === undefined ? await goldenVectorsVersion() : undefined;
      if (opts.json) process.stdout.write(jsonSummary(result, { dir: result.vectorsDir, ...(version ? { package: `@sgfp4/golden-vectors@${version}` } : {}) }));
      else {
        if (version) process.stdout.write(`vector set: @sgfp4/golden-vectors@${version}\n`);
        process.stdout.write(formatTable(result));
      }
      if (!result.ok) {
        if (!opts.json && result.problems.length) process.stderr.write(`conformance: ${result.problems.join("; ")}\n`);
        process.exitCode = EXIT.FAILURE;
      }
    });
}

