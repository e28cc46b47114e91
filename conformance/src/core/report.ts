/** Terminal table, JSON and JUnit XML views of a ConformanceResult (strings only: runs anywhere). */
import { hexBits } from "./compare.js";
import type { CaseFailure } from "./judge.js";
import type { BackendResult, ConformanceResult } from "./run.js";

/** The closing line CI reads: counts of vector x decoder x format cases, and the verdict. */
export function summaryLine(r: ConformanceResult): string {
  return `${r.totals.passed} passed, ${r.totals.failed} failed, ${r.totals.skipped} skipped${r.problems.length ? `; FAIL: ${r.problems.join("; ")}` : ""}`;
}

/** A row's name in reports: the decoder, with the format when it is not f32. */
export const rowName = (b: BackendResult): string => (b.format === "f32" ? b.name : `${b.name} ${b.format}`);

function backendState(b: BackendResult): string {
  if (b.available) return b.failed ? "FAIL" : "ok";
  return b.required ? "REQUIRED, unavailable" : "unavailable";
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + " ".repeat(n - s.length));
const padL = (s: string, n: number): string => (s.length >= n ? s : " ".repeat(n - s.length) + s);

export interface TableOptions {
  /** most failures listed per backend (default 50; all are in the JSON report) */
  maxFailuresPerBackend?: number;
}

export function formatTable(r: ConformanceResult, opts: TableOptions = {}): string {
  const maxFailures = opts.maxFailuresPerBackend ?? 50;
  const lines: string[] = [];
  lines.push(`SGFP4 conformance: ${r.vectorCount} vectors from ${r.vectorsDir}`);
  lines.push("");
  const nameW = Math.max(7, ...r.backends.map((b) => b.name.length)) + 2;
  const stateW = Math.max(6, ...r.backends.map((b) => backendState(b).length)) + 2;
  lines.push(pad("backend", nameW) + pad("format", 8) + pad("status", stateW) + padL("passed", 7) + padL("failed", 8) + padL("skipped", 9) + "  " + "time / note");
  for (const b of r.backends) {
    // one line per row, whatever the decoder's reason holds
    const note = (b.available ? `${b.durationMs} ms${b.detail ? `  (${b.detail})` : ""}` : (b.reason ?? "")).replace(/\s*\n\s*/g, " ");
    lines.push(pad(b.name, nameW) + pad(b.format, 8) + pad(backendState(b), stateW) + padL(String(b.passed), 7) + padL(String(b.failed), 8) + padL(String(b.skipped), 9) + "  " + note);
  }
  if (r.backends.length === 0) lines.push("(no backends)");
  const failing = r.backends.filter((b) => b.failed > 0);
  for (const b of failing) {
    lines.push("");
    lines.push(`Failures on ${rowName(b)} (${b.failed}):`);
    const cases = b.cases.filter((c) => c.status === "failed");
    if (cases.every((c) => c.failure?.kind === "required-unavailable")) {
      lines.push(`  every case: required decoder is unavailable: ${b.reason ?? ""}`);
      continue;
    }
    for (const c of cases.slice(0, maxFailures)) lines.push(`  ${c.vector} [${c.expect}]: ${c.failure?.message ?? "failed"}`);
    if (cases.length > maxFailures) lines.push(`  ... and ${cases.length - maxFailures} more (see the JSON report)`);
  }
  lines.push("");
  lines.push(summaryLine(r));
  return lines.join("\n") + "\n";
}

/** Failure with hex bit patterns added (JSON has no -0 or NaN). */
function jsonFailure(f: CaseFailure, b: BackendResult): Record<string, unknown> {
  if (f.kind !== "mismatch") return { ...f };
  return { ...f, expectedBits: hexBits(f.expectedBits, b.format), actualBits: hexBits(f.actualBits, b.format), expectedValue: String(f.expectedValue), actualValue: String(f.actualValue) };
}

export function toJSON(r: ConformanceResult): string {
  const doc = {
    format: "sgfp4-conformance-report",
    version: 1,
    ...r,
    summary: summaryLine(r),
    backends: r.backends.map((b) => ({ ...b, cases: b.cases.map((c) => (c.failure ? { ...c, failure: jsonFailure(c.failure, b) } : c)) })),
  };
  return JSON.stringify(doc, null, 2) + "\n";
}

/** XML 1.0 text: escape markup and drop characters XML cannot carry. */
export function xmlEscape(s: string): string {
  return s
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "?")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

/** JUnit XML: one testsuite per decoder and format, one testcase per vector; run problems as an error. */
export function toJUnit(r: ConformanceResult): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const t = r.totals;
  const errors = r.problems.length ? 1 : 0;
  out.push(`<testsuites name="sgfp4-conformance" tests="${t.passed + t.failed + t.skipped + errors}" failures="${t.failed}" errors="${errors}" skipped="${t.skipped}" time="${seconds(r.durationMs)}">`);
  for (const b of r.backends) {
    const name = rowName(b);
    out.push(`  <testsuite name="${xmlEscape(name)}" tests="${b.cases.length}" failures="${b.failed}" errors="0" skipped="${b.skipped}" time="${seconds(b.durationMs)}" timestamp="${r.startedAt.replace(/Z$/, "")}">`);
    out.push(`    <properties><property name="vectors" value="${xmlEscape(r.vectorsDir)}"/><property name="format" value="${b.format}"/><property name="available" value="${b.available}"/>${b.reason ? `<property name="reason" value="${xmlEscape(b.reason)}"/>` : ""}</properties>`);
    for (const c of b.cases) {
      const open = `    <testcase classname="sgfp4.conformance.${xmlEscape(name.replace(/ /g, "."))}" name="${xmlEscape(c.vector)}" time="${seconds(c.durationMs)}"`;
      if (c.status === "passed") out.push(`${open}/>`);
      else if (c.status === "skipped") out.push(`${open}><skipped message="${xmlEscape(b.available ? (c.reason ?? "") : `decoder unavailable: ${c.reason ?? ""}`)}"/></testcase>`);
      else {
        const f = c.failure!;
        out.push(`${open}><failure type="${f.kind}" message="${xmlEscape(f.message)}">${xmlEscape(`${c.vector} [${c.expect}] on ${name}: ${f.message}`)}</failure></testcase>`);
      }
    }
    out.push("  </testsuite>");
  }
  if (errors) {
    // A run that checked nothing must fail in CI too, not show up as an empty green report.
    const msg = r.problems.join("; ");
    out.push(`  <testsuite name="run" tests="1" failures="0" errors="1" skipped="0" time="0.000">`);
    out.push(`    <testcase classname="sgfp4.conformance" name="run"><error type="run" message="${xmlEscape(msg)}">${xmlEscape(msg)}</error></testcase>`);
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return out.join("\n") + "\n";
}
