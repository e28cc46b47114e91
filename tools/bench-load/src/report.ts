/** The table printed at the end of a run, and the JSON written with --json. */
import { cpus, loadavg, totalmem } from "node:os";
import type { LoadRow } from "./types.js";

const fmt = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : "-");

export function table(rows: readonly LoadRow[]): string {
  const head = ["backend", "path", "workload", "ms", "floor", "floor ms", "ratio", "goal", "met", "bits"];
  const body = rows.map((r) => [
    r.backend,
    r.path,
    r.workload,
    r.skipped ? "skipped" : fmt(r.ms, 3),
    r.skipped ? r.skipped : r.floor,
    fmt(r.floorMs, 3),
    fmt(r.ratio, 2),
    r.goal === undefined ? "" : String(r.goal),
    r.met === undefined ? "" : r.met ? "yes" : "NO",
    r.skipped ? "" : r.bitsOk ? "ok" : "DIFFER",
  ]);
  const lines = [head, ...body].map((cells) => `| ${cells.join(" | ")} |`);
  lines.splice(1, 0, `|${head.map(() => " --- ").join("|")}|`);
  // one line per distinct note, with the rows it applies to counted
  const counts = new Map<string, number>();
  for (const r of rows) if (r.note) counts.set(`${r.backend} ${r.path}: ${r.note}`, (counts.get(`${r.backend} ${r.path}: ${r.note}`) ?? 0) + 1);
  const notes = [...counts].map(([note, n]) => `- ${note}${n > 1 ? ` (${n} rows)` : ""}`);
  return [...lines, ...(notes.length ? ["", ...notes] : [])].join("\n");
}

export function machine(): Record<string, unknown> {
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    loadAverage: loadavg().map((x) => +x.toFixed(2)),
  };
}

/**
 * Why the run failed, or null: a path whose bits differ from the reference, or a requested
 * backend all of whose rows were skipped (a benchmark that ran nothing is not a pass).
 */
export function failure(rows: readonly LoadRow[], backends: readonly LoadRow["backend"][]): string | null {
  const wrong = rows.filter((r) => !r.skipped && !r.bitsOk);
  if (wrong.length) return `bits differ from the reference decode: ${wrong.map((r) => `${r.backend} ${r.path} / ${r.workload}`).join("; ")}`;
  const idle = backends.filter((b) => !rows.some((r) => r.backend === b && !r.skipped));
  if (idle.length) return `no row ran for ${idle.join(", ")}`;
  return null;
}
