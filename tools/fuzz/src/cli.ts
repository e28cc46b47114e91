#!/usr/bin/env node
/**
 * pnpm --filter @sgfp4/fuzz fuzz -- --seed N --cases N --seconds S --backends cpu,webgpu,vulkan,python
 *
 * Prints cases run per backend, rejections by code, and every disagreement; a failing input is
 * shrunk and written as a golden-vector candidate into --out (default fuzz-findings/ under
 * the working directory). The cases run in a child process, so a backend that crashes or
 * hangs is a finding, not the end of the run (--in-process turns that off).
 * Exit 1 when anything disagreed, 2 on bad arguments.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { KNOWN_BACKENDS, loadBackends } from "./backends.js";
import { formatStats } from "./report.js";
import { runFuzz, type Finding, type FuzzStats } from "./run.js";
import { candidateExpectation, saveFinding, writeCandidate } from "./shrink.js";
import { LINE_PREFIX, supervise, type CaseLine } from "./supervise.js";

const USAGE = `usage: fuzz [--seed N] [--from I] [--cases N] [--seconds S] [--backends ${KNOWN_BACKENDS.join(",")}]
            [--mutate-ratio R] [--timeout-ms MS] [--max-tiles T] [--out DIR] [--no-shrink] [--in-process] [--json]
  --cases defaults to 100, or to unbounded when --seconds is given (long-running mode: --seconds 3600)`;

const OPTIONS = {
  seed: { type: "string" },
  from: { type: "string" },
  cases: { type: "string" },
  seconds: { type: "string" },
  backends: { type: "string", default: KNOWN_BACKENDS.join(",") },
  "mutate-ratio": { type: "string" },
  "timeout-ms": { type: "string" },
  "max-tiles": { type: "string" },
  out: { type: "string", default: "fuzz-findings" },
  "no-shrink": { type: "boolean", default: false },
  "in-process": { type: "boolean", default: false },
  worker: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  help: { type: "boolean", default: false },
} as const;

function num(s: string | undefined, name: string): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got ${s}`);
  return n;
}

const emit = (msg: unknown): void => {
  process.stdout.write(LINE_PREFIX + JSON.stringify(msg) + "\n");
};

async function main(): Promise<number> {
  const argv = process.argv.slice(2).filter((a) => a !== "--");
  let values;
  let seed: number, from: number, cases: number | undefined, seconds: number | undefined, mutateRatio, timeoutMs: number, maxTiles;
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS }));
    seed = num(values.seed, "seed") ?? Date.now() % 2 ** 31;
    from = num(values.from, "from") ?? 0;
    cases = num(values.cases, "cases");
    seconds = num(values.seconds, "seconds");
    mutateRatio = num(values["mutate-ratio"], "mutate-ratio");
    timeoutMs = num(values["timeout-ms"], "timeout-ms") ?? 30_000;
    maxTiles = num(values["max-tiles"], "max-tiles");
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const names = values.backends.split(",").map((s) => s.trim()).filter(Boolean);
  const outDir = path.resolve(values.out);
  const caseLimit = cases ?? (seconds !== undefined ? Number.MAX_SAFE_INTEGER : 100);
  const shared = { ...(mutateRatio !== undefined ? { mutateRatio } : {}), ...(maxTiles !== undefined ? { maxTiles } : {}) };

  if (!values.worker && !values["in-process"]) {
    // Supervisor: the cases run in a child; crashes and hangs become findings.
    console.log(`fuzz seed ${seed}${from ? ` from case ${from}` : ""}, backends ${names.join(", ")} (isolated worker)`);
    const script = fileURLToPath(import.meta.url);
    const forwarded = ["--seed", String(seed), "--backends", names.join(","), "--timeout-ms", String(timeoutMs), "--out", outDir];
    if (mutateRatio !== undefined) forwarded.push("--mutate-ratio", String(mutateRatio));
    if (maxTiles !== undefined) forwarded.push("--max-tiles", String(maxTiles));
    if (values["no-shrink"]) forwarded.push("--no-shrink");
    const result = await supervise({
      seed,
      from,
      cases: caseLimit,
      ...(seconds !== undefined ? { seconds } : {}),
      ...shared,
      hangMs: timeoutMs * Math.max(1, names.length) + 5_000,
      workerArgv: (f, n, s) => [process.execPath, script, "--worker", ...forwarded, "--from", String(f), "--cases", String(n), ...(s !== undefined ? ["--seconds", String(s)] : [])],
      onOutput: (line) => console.log(line),
      onLine: (l: CaseLine) => {
        if (l.reason) console.log(`DISAGREEMENT seed ${seed} case ${l.i}: ${l.reason}${l.candidate ? `\n  candidate vector ${l.candidate} written to ${outDir}` : ""}`);
      },
      onCrash: async (c) => {
        console.log(`CRASH seed ${seed} case ${c.caseIndex}: ${c.what}`);
        const { expect, confirmed } = candidateExpectation({}, c.expected);
        const id = await writeCandidate(outDir, `fuzz-s${seed}-c${c.caseIndex}-crash`, c.input, expect, `fuzz seed ${seed} case ${c.caseIndex}${c.ops.length ? ` (${c.ops.join(", ")})` : ""}: ${c.what}.${confirmed ? "" : " UNCONFIRMED expectation: check it against DECISIONS.md."}`);
        console.log(`  candidate vector ${id} written to ${outDir}`);
      },
    });
    const stats = result.stats as unknown as FuzzStats;
    console.log(values.json ? JSON.stringify({ ...result.stats, restarts: result.restarts }, null, 2) : formatStats(stats));
    if (result.restarts) console.log(`worker restarts after crashes or hangs: ${result.restarts}`);
    if (stats.findings.length) console.log(`golden-vector candidates: ${outDir}`);
    return stats.findings.length ? 1 : 0;
  }

  const { ready, unavailable } = await loadBackends(names, { commandTimeoutMs: timeoutMs });
  for (const u of unavailable) console.log(`backend ${u.name}: unavailable (${u.reason})`);
  if (ready.length === 0) {
    console.error("no backend is available");
    return 2;
  }
  if (!values.worker) console.log(`fuzz seed ${seed}${from ? ` from case ${from}` : ""}, backends ${ready.map((b) => b.name).join(", ")}`);
  const findings: Finding[] = [];
  try {
    const stats = await runFuzz(ready, {
      seed,
      from,
      cases: caseLimit,
      ...(seconds !== undefined ? { seconds } : {}),
      ...shared,
      caseTimeoutMs: timeoutMs,
      onCaseStart: (i) => {
        if (values.worker) emit({ start: i });
      },
      onCaseDone: async (i, outcomes, info) => {
        let candidate: string | undefined;
        if (info.finding) {
          findings.push(info.finding);
          if (!values["no-shrink"]) candidate = await saveFinding(outDir, ready, info.finding, { timeoutMs });
          if (!values.worker) console.log(`DISAGREEMENT seed ${seed} case ${i}: ${info.finding.reason}${candidate ? `\n  candidate vector ${candidate} written to ${outDir}` : ""}`);
        }
        if (values.worker) {
          const line: CaseLine = {
            i,
            mutated: info.mutated,
            allDecoded: Object.values(outcomes).every((o) => o.kind === "decoded"),
            outcomes: Object.fromEntries(Object.entries(outcomes).map(([n, o]) => [n, { kind: o.kind, ...(o.kind === "rejected" ? { code: o.code } : {}), ms: info.ms[n] ?? 0 }])),
            ...(info.finding ? { reason: info.finding.reason, ops: info.finding.ops } : {}),
            ...(candidate ? { candidate } : {}),
          };
          emit({ done: line });
        }
      },
    });
    if (!values.worker) {
      console.log(values.json ? JSON.stringify(stats, (k, v: unknown) => (k === "findings" ? (v as Finding[]).length : v), 2) : formatStats(stats));
      if (findings.length) console.log(`golden-vector candidates: ${outDir}`);
    }
    return findings.length ? 1 : 0;
  } finally {
    for (const b of ready) await b.close?.().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
