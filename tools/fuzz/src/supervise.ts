/**
 * Crash and hang isolation. An in-process backend that segfaults (native addon) or spins in
 * synchronous code would take the fuzzer down with it, so the CLI runs the cases in a child
 * process that reports every case as one JSON line; the parent aggregates, and when the child
 * dies or stops answering it records the case in flight as a finding (cases are deterministic
 * from (seed, index), so the parent can rebuild its input) and restarts from the next case.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { makeCase, type BackendStats, type FuzzInput, type FuzzStats } from "./run.js";

export const LINE_PREFIX = "@@fuzz ";

/** What a worker prints per case. */
export interface CaseLine {
  i: number;
  mutated: boolean;
  allDecoded: boolean;
  outcomes: Record<string, { kind: string; code?: string; ms: number }>;
  reason?: string;
  ops?: string[];
  candidate?: string;
}

export interface CrashFinding {
  caseIndex: number;
  what: string;
  input: FuzzInput;
  expected?: Float32Array;
  ops: string[];
}

export interface SupervisedResult {
  stats: Omit<FuzzStats, "findings"> & { findings: { caseIndex: number; reason: string; ops: string[]; candidate?: string }[] };
  crashes: CrashFinding[];
  restarts: number;
}

export interface SuperviseOptions {
  seed: number;
  from: number;
  cases: number;
  seconds?: number;
  /** the worker command line without --from/--cases (node, script, flags) */
  workerArgv: (from: number, cases: number, seconds: number | undefined) => string[];
  /** no line for this long while a case runs = a hang */
  hangMs: number;
  mutateRatio?: number;
  maxTiles?: number;
  onLine?: (l: CaseLine) => void;
  onCrash?: (c: CrashFinding) => void | Promise<void>;
  onOutput?: (s: string) => void;
}

function emptyBackend(): BackendStats {
  return { cases: 0, decoded: 0, rejected: {}, errors: 0, timeouts: 0, ms: 0 };
}

export async function supervise(opts: SuperviseOptions): Promise<SupervisedResult> {
  const started = Date.now();
  const deadline = opts.seconds !== undefined ? started + opts.seconds * 1000 : Infinity;
  const stats: SupervisedResult["stats"] = { seed: opts.seed, cases: 0, valid: 0, mutated: 0, mutatedDecoded: 0, backends: {}, findings: [], durationMs: 0 };
  const crashes: CrashFinding[] = [];
  let next = opts.from;
  const end = opts.from + opts.cases;
  let restarts = -1;
  while (next < end && Date.now() < deadline) {
    restarts++;
    const seconds = opts.seconds !== undefined ? Math.max(1, (deadline - Date.now()) / 1000) : undefined;
    const [cmd, ...args] = opts.workerArgv(next, end - next, seconds);
    const child = spawn(cmd!, args, { stdio: ["ignore", "pipe", "inherit"] });
    // undefined while the worker loads its backends (GPU start-up is slow) and between cases
    let inFlight: number | undefined;
    let linesSeen = 0;
    let lastLine = Date.now();
    let hung = false;
    const watchdog = setInterval(() => {
      if (inFlight !== undefined && Date.now() - lastLine > opts.hangMs) {
        hung = true;
        child.kill("SIGKILL");
      }
    }, 250);
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      if (!line.startsWith(LINE_PREFIX)) {
        opts.onOutput?.(line);
        return;
      }
      lastLine = Date.now();
      linesSeen++;
      const msg = JSON.parse(line.slice(LINE_PREFIX.length)) as { start?: number; done?: CaseLine };
      if (msg.start !== undefined) inFlight = msg.start;
      if (msg.done) {
        const l = msg.done;
        inFlight = undefined;
        next = l.i + 1;
        stats.cases++;
        if (l.mutated) stats.mutated++;
        else stats.valid++;
        if (l.mutated && l.allDecoded) stats.mutatedDecoded++;
        for (const [name, o] of Object.entries(l.outcomes)) {
          const s = (stats.backends[name] ??= emptyBackend());
          s.cases++;
          s.ms += o.ms;
          if (o.kind === "decoded") s.decoded++;
          else if (o.kind === "rejected") s.rejected[o.code!] = (s.rejected[o.code!] ?? 0) + 1;
          else if (o.kind === "timeout") s.timeouts++;
          else s.errors++;
        }
        if (l.reason) stats.findings.push({ caseIndex: l.i, reason: l.reason, ops: l.ops ?? [], ...(l.candidate ? { candidate: l.candidate } : {}) });
        opts.onLine?.(l);
      }
    });
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
    clearInterval(watchdog);
    if (inFlight === undefined && (exit.code === 0 || exit.code === 1)) break; // finished its range
    if (linesSeen === 0 && exit.code === 2) throw new Error("the fuzz worker could not start (see its output above)");
    if (inFlight === undefined) inFlight = next;
    // The worker died or hung inside case `inFlight`.
    const what = hung ? `hang: no answer within ${opts.hangMs} ms` : `worker died (${exit.signal ? `signal ${exit.signal}` : `exit status ${exit.code}`})`;
    const { valid, mutated } = makeCase(opts.seed, inFlight, { ...(opts.mutateRatio !== undefined ? { mutateRatio: opts.mutateRatio } : {}), ...(opts.maxTiles !== undefined ? { maxTiles: opts.maxTiles } : {}) });
    const input: FuzzInput = mutated ? { profile: mutated.profile, shape: mutated.shape, bytes: mutated.bytes } : { profile: valid.profile, shape: valid.shape, bytes: valid.bytes };
    const crash: CrashFinding = { caseIndex: inFlight, what, input, ops: mutated?.ops ?? [], ...(mutated ? {} : { expected: valid.expected }) };
    crashes.push(crash);
    stats.cases++;
    if (mutated) stats.mutated++;
    else stats.valid++;
    stats.findings.push({ caseIndex: inFlight, reason: what, ops: crash.ops });
    await opts.onCrash?.(crash);
    next = inFlight + 1;
  }
  stats.durationMs = Date.now() - started;
  return { stats, crashes, restarts: Math.max(0, restarts) };
}
