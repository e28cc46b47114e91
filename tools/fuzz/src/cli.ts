#!/usr/bin/env node
/**
 * pnpm --filter @sgfp4/fuzz fuzz -- --seed N --cases N --seconds S --backends cpu,webgpu,vulkan,python
 *
 * Prints cases run per backend, rejections by code, and every disagreement; a failing input is
 * shrunk and written as a golden-vector candidate into --out (default fuzz-findings/ under
 * the working directory). Exit 1 when anything disagreed, 2 on bad arguments.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { KNOWN_BACKENDS, loadBackends } from "./backends.js";
import { formatStats } from "./report.js";
import { runFuzz, type Finding } from "./run.js";
import { saveFinding } from "./shrink.js";

const USAGE = `usage: fuzz [--seed N] [--from I] [--cases N] [--seconds S] [--backends ${KNOWN_BACKENDS.join(",")}]
            [--mutate-ratio R] [--timeout-ms MS] [--max-tiles T] [--out DIR] [--no-shrink] [--json]`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2).filter((a) => a !== "--"),
      options: {
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
        json: { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const num = (s: string | undefined, name: string): number | undefined => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number, got ${s}`);
    return n;
  };
  let seed: number, from, cases, seconds, mutateRatio, timeoutMs, maxTiles;
  try {
    seed = num(values.seed, "seed") ?? (Date.now() % 2 ** 31);
    from = num(values.from, "from");
    cases = num(values.cases, "cases");
    seconds = num(values.seconds, "seconds");
    mutateRatio = num(values["mutate-ratio"], "mutate-ratio");
    timeoutMs = num(values["timeout-ms"], "timeout-ms") ?? 30_000;
    maxTiles = num(values["max-tiles"], "max-tiles");
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const names = values.backends.split(",").map((s) => s.trim()).filter(Boolean);
  const { ready, unavailable } = await loadBackends(names, { commandTimeoutMs: timeoutMs });
  for (const u of unavailable) console.log(`backend ${u.name}: unavailable (${u.reason})`);
  if (ready.length === 0) {
    console.error("no backend is available");
    return 2;
  }
  const outDir = path.resolve(values.out);
  console.log(`fuzz seed ${seed}${from ? ` from case ${from}` : ""}, backends ${ready.map((b) => b.name).join(", ")}`);
  const findings: Finding[] = [];
  try {
    const stats = await runFuzz(ready, {
      seed,
      ...(from !== undefined ? { from } : {}),
      ...(cases !== undefined ? { cases } : {}),
      ...(seconds !== undefined ? { seconds } : {}),
      ...(mutateRatio !== undefined ? { mutateRatio } : {}),
      ...(maxTiles !== undefined ? { maxTiles } : {}),
      caseTimeoutMs: timeoutMs,
      onFinding: async (f) => {
        findings.push(f);
        console.log(`DISAGREEMENT seed ${f.seed} case ${f.caseIndex}: ${f.reason}`);
        if (!values["no-shrink"]) {
          const id = await saveFinding(outDir, ready, f, { timeoutMs });
          console.log(`  candidate vector ${id} written to ${outDir}`);
        }
      },
    });
    console.log(values.json ? JSON.stringify(stats, (k, v: unknown) => (k === "findings" ? (v as Finding[]).length : v), 2) : formatStats(stats));
    if (findings.length) console.log(`golden-vector candidates: ${outDir}`);
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
