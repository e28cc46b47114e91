// Summarises bench-load JSON files into one markdown table: per backend and path, the range of
// ratios (floor ms / ms) over the workloads, the goal, and on how many workloads it was met.
// Usage: node tools/bench-load/scripts/summary.mjs run1.json [run2.json ...]
import { readFileSync } from "node:fs";

const groups = new Map();
for (const file of process.argv.slice(2)) {
  const { machine, rows } = JSON.parse(readFileSync(file, "utf8"));
  console.log(`<!-- ${file}: ${machine.cpu}, ${machine.cores} cores, node ${machine.node} -->`);
  for (const r of rows) {
    if (r.skipped) continue;
    const key = `${r.backend}\u0000${r.path}\u0000${r.floor}`;
    const g = groups.get(key) ?? { backend: r.backend, path: r.path, floor: r.floor, ratios: [], goal: r.goal, met: 0, judged: 0, bad: 0, workloads: [] };
    g.ratios.push(r.ratio);
    g.workloads.push(`${r.workload}: ${r.ratio.toFixed(2)}`);
    if (r.goal !== undefined) { g.judged++; if (r.met) g.met++; }
    if (!r.bitsOk) g.bad++;
    groups.set(key, g);
  }
}
console.log("| backend | path | floor (same run) | ratio min-max | goal | met | bits |");
console.log("| --- | --- | --- | ---: | ---: | ---: | --- |");
for (const g of groups.values()) {
  const lo = Math.min(...g.ratios).toFixed(2), hi = Math.max(...g.ratios).toFixed(2);
  const goal = g.goal === undefined ? "" : String(g.goal);
  const met = g.judged ? `${g.met}/${g.judged}` : "";
  console.log(`| ${g.backend} | ${g.path} | ${g.floor} | ${lo}-${hi} | ${goal} | ${met} | ${g.bad ? `${g.bad} DIFFER` : "all equal"} |`);
}
