// The benchmark's markdown tables, built from its rows.
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : String(x));
const cell = (r) => (r ? (r.skipped ? "skipped" : `${fmt(r.snrDb)} (${fmt(r.bpw, 3)})`) : "");
const table = (head, lines) => `| ${head.join(" | ")} |\n| ${head.map((_, i) => (i ? "---:" : "---")).join(" | ")} |\n${lines.map((l) => `| ${l.join(" | ")} |`).join("\n")}\n`;

/** The headline: the encoder at 4.5 bpw and its defaults next to the 4.5-bpw baselines. */
function headline(rows, inputs) {
  const at = (input, name) => rows.find((r) => r.input === input && r.name === name);
  const names = [...new Set(rows.filter((r) => r.setting === "--bpw 4.5" || r.setting === "default" || (r.method === "baseline" && Math.abs(r.bpw - 4.5) < 0.01 && r.name !== "ggml Q4_1")).map((r) => r.name))];
  return table(["at 4.5 bpw: SNR dB (bpw)", ...inputs], names.map((n) => [n, ...inputs.map((i) => cell(at(i, n)))]));
}

/** Encoder SNR minus the best baseline that uses no more bits (which one in parentheses). */
function gaps(rows, inputs) {
  const enc = [...new Set(rows.filter((r) => r.method === "sgfp4").map((r) => r.name))];
  return table(["sgfp4 setting", ...inputs], enc.map((n) => [n, ...inputs.map((i) => {
    const e = rows.find((r) => r.input === i && r.name === n);
    const fit = rows.filter((r) => r.input === i && r.method === "baseline" && !r.skipped && r.bpw <= e?.bpw + 1e-9).sort((a, b) => b.snrDb - a.snrDb)[0];
    return e && !e.skipped && fit ? `${e.snrDb - fit.snrDb >= 0 ? "+" : ""}${fmt(e.snrDb - fit.snrDb)} (${fit.name})` : "";
  })]));
}

function byMethod(rows, inputs, method) {
  const names = [...new Set(rows.filter((r) => r.method === method).map((r) => r.name))];
  return table([method === "sgfp4" ? "sgfp4 setting: SNR dB (bpw)" : "baseline: SNR dB (bpw)", ...inputs], names.map((n) => [n, ...inputs.map((i) => cell(rows.find((r) => r.input === i && r.name === n)))]));
}

function task(rows, vad) {
  const head = ["method", "bpw", "SNR dB", "max |dp|", "mean |dp|", ...vad.recordings.map((r) => `decisions agree, ${r}`)];
  const lines = rows.filter((r) => r.task).map((r) => [r.name, fmt(r.bpw, 3), fmt(r.snrDb), fmt(r.task.maxAbsDiff, 4), fmt(r.task.meanAbsDiff, 4), ...vad.recordings.map((k) => `${fmt(100 * r.task.agreement[k], 1)}%`)]);
  return `${vad.description}. dp: change of the speech probability per frame (both recordings).\n\n${table(head, lines)}`;
}

/** The report's parts by name: the run, its inputs, and each table (also spliced into BENCHMARKS.md files). */
export function parts(result) {
  const { meta, rows } = result;
  const inputs = result.inputs.map((i) => i.name);
  return {
    run: `\`${meta.command}\`, ${meta.date}, ${meta.machine}, Node ${meta.node}, @sgfp4/encoder ${meta.encoderVersion}, commit ${meta.commit}${Object.keys(meta.encoderOptions).length ? `, encoder options ${JSON.stringify(meta.encoderOptions)}` : ""}.\n`,
    inputs: `Inputs:\n${result.inputs.map((i) => `- ${i.name}: ${i.skipped ? `skipped (${i.skipped})` : i.description}`).join("\n")}\n`,
    "at-4.5": headline(rows, inputs),
    "per-setting": byMethod(rows, inputs, "sgfp4"),
    gaps: gaps(rows, inputs),
    baselines: byMethod(rows, inputs, "baseline"),
    ...(result.vad ? { task: task(rows, result.vad) } : {}),
  };
}

export function markdown(result) {
  const p = parts(result);
  let md = `# Quality at equal bits\n\n${p.run}`;
  md += `SNR = 10 log10(sum w^2 / sum (w - w')^2) over all of an input's weights, w' the decode (for SGFP4: @sgfp4/cpu-decoder on the written containers, each validated strictly); bpw = storage bits / weights.\n\n${p.inputs}\n`;
  md += `## At 4.5 bits per weight\n\n${p["at-4.5"]}\n`;
  md += `## SGFP4 v2 per setting\n\n${p["per-setting"]}\n`;
  md += `## SGFP4 against the best baseline using no more bits (dB)\n\n${p.gaps}\n`;
  md += `## Baselines (computed by bench/baselines.mjs in the same run)\n\n${p.baselines}\n`;
  if (p.task) md += `## Task check\n\n${p.task}\n`;
  return md;
}

/**
 * `doc` with every block `<!-- bench:quality NAME -->` ... `<!-- /bench:quality NAME -->`
 * replaced by that part of the report (a part the run did not produce leaves its block alone).
 */
export function splice(doc, result) {
  const p = parts(result);
  return doc.replace(/(<!-- bench:quality ([\w.-]+) -->\n)[\s\S]*?(<!-- \/bench:quality \2 -->)/g, (all, open, name, close) => (p[name] ? `${open}${p[name]}${close}` : all));
}
