/**
 * The bounded deterministic fuzz run of CI: a fixed seed on every backend available here
 * (2000 cases take a few seconds with cpu, cpu-kmem (decodeInto a createOutput array), webgpu and
 * vulkan on lavapipe).
 * Valid cases must decode to the constructed output on all of them, mutated ones must be
 * rejected by all or decoded identically by all, nothing may throw a non-Sgfp4 error or hang.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Decoder } from "@sgfp4/format";
import { formatStats, loadBackends, runFuzz } from "../src/index.js";

const SEED = 20250601;
const CASES = 2000;
/** The Python example runs as one process per decode: fewer cases keep CI short. */
const PYTHON_CASES = 40;
/** The C decoder (sgfp4.h) is one process per decode too, but fast: more cases, under sanitizers. */
const C_CASES = 200;

let inProcess: Decoder[] = [];
let withPython: Decoder[] = [];
// compiled here (not in beforeAll) so a missing compiler shows as the skip reason in the test name
const cLoaded = await loadBackends(["c"]);
const cUnavailable = cLoaded.unavailable[0]?.reason;

beforeAll(async () => {
  const loaded = await loadBackends(["cpu", "cpu-kmem", "webgpu", "vulkan"]);
  for (const u of loaded.unavailable) console.log(`fuzz: backend ${u.name} unavailable here: ${u.reason}`);
  inProcess = loaded.ready;
  const py = await loadBackends(["python"]);
  withPython = [...inProcess, ...py.ready];
}, 120_000);

afterAll(async () => {
  for (const b of [...withPython, ...cLoaded.ready]) await b.close?.().catch(() => undefined);
});

describe("bounded differential fuzz", () => {
  it("the CPU backend is available (the other backends join when they are)", () => {
    expect(inProcess.map((b) => b.name)).toContain("cpu");
    expect(inProcess.map((b) => b.name)).toContain("cpu-kmem");
  });

  it(`seed ${SEED}, ${CASES} cases: no disagreement`, async () => {
    const stats = await runFuzz(inProcess, { seed: SEED, cases: CASES, caseTimeoutMs: 30_000 });
    console.log(formatStats(stats));
    expect(stats.findings.map((f) => `case ${f.caseIndex}: ${f.reason}`)).toEqual([]);
    expect(stats.valid).toBeGreaterThan(50);
    expect(stats.mutated).toBeGreaterThan(50);
    for (const b of inProcess) expect(stats.backends[b.name]!.cases).toBe(CASES);
  }, 240_000);

  // CI can add fresh seeds on top of the fixed one: SGFP4_FUZZ_SECONDS=120 (the seed is printed
  // so a failure reproduces with `pnpm --filter @sgfp4/fuzz fuzz -- --seed N`).
  const freshSeconds = Number(process.env.SGFP4_FUZZ_SECONDS ?? 0);
  it.runIf(freshSeconds > 0)(`fresh seed for ${freshSeconds} s: no disagreement`, async () => {
    const seed = Date.now() % 2 ** 31;
    const stats = await runFuzz(inProcess, { seed, seconds: freshSeconds, caseTimeoutMs: 30_000 });
    console.log(formatStats(stats));
    expect(stats.findings.map((f) => `seed ${seed} case ${f.caseIndex}: ${f.reason}`)).toEqual([]);
  }, (freshSeconds + 120) * 1000);

  it(`with the Python example decoder, ${PYTHON_CASES} cases: no disagreement`, async () => {
    const stats = await runFuzz(withPython, { seed: SEED + 1, cases: PYTHON_CASES, caseTimeoutMs: 30_000 });
    console.log(formatStats(stats));
    expect(stats.findings.map((f) => `case ${f.caseIndex}: ${f.reason}`)).toEqual([]);
    expect(stats.backends.python?.cases).toBe(PYTHON_CASES);
  }, 240_000);

  it.skipIf(cUnavailable !== undefined)(`with the C decoder of packages/c-decoder, ${C_CASES} cases: no disagreement${cUnavailable ? ` (skipped: ${cUnavailable})` : ""}`, async () => {
    const stats = await runFuzz([...inProcess, ...cLoaded.ready], { seed: SEED + 2, cases: C_CASES, caseTimeoutMs: 30_000 });
    console.log(formatStats(stats));
    expect(stats.findings.map((f) => `case ${f.caseIndex}: ${f.reason}`)).toEqual([]);
    expect(stats.backends.c?.cases).toBe(C_CASES);
    expect(stats.mutated).toBeGreaterThan(50);
  }, 240_000);
});
