import type { FuzzStats } from "./run.js";

/** The summary a run prints: cases per backend, rejections by code, disagreements. */
export function formatStats(s: FuzzStats): string {
  const lines: string[] = [];
  lines.push(`seed ${s.seed}: ${s.cases} cases (${s.valid} valid, ${s.mutated} mutated, of which ${s.mutatedDecoded} still decoded on every backend) in ${(s.durationMs / 1000).toFixed(1)} s`);
  for (const [name, b] of Object.entries(s.backends)) {
    const codes = Object.entries(b.rejected)
      .sort((x, y) => y[1] - x[1])
      .map(([c, n]) => `${c} ${n}`)
      .join(", ");
    lines.push(`  ${name}: ${b.cases} cases, ${b.decoded} decoded, ${b.cases - b.decoded - b.errors - b.timeouts} rejected, ${b.errors} errors, ${b.timeouts} timeouts, ${(b.ms / Math.max(1, b.cases)).toFixed(1)} ms/case`);
    if (codes) lines.push(`    rejections: ${codes}`);
  }
  lines.push(`disagreements: ${s.findings.length}`);
  for (const f of s.findings) lines.push(`  case ${f.caseIndex}${f.ops.length ? ` [${f.ops.join(", ")}]` : ""}: ${f.reason}`);
  return lines.join("\n");
}
