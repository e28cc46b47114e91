/** Values panel: the decoded tensor, the original or the error as a heat map, and the value under the pointer. */
import { $, esc } from "../dom";
import { DIVERGING, SEQUENTIAL, gradientCss } from "../colors";
import { floatBitsHex } from "../conformance";
import { magnitudePainter, valuesPainter } from "../painters";
import type { Page } from "../state";
import { valueScale } from "../value-scale";

const BACKEND_NAMES = ["CPU", "WebGPU"];

/** The first successful decode (CPU first): what the error map compares with. */
export function decodedOutput({ state }: Page): { name: string; out: Float32Array } | undefined {
  for (const n of BACKEND_NAMES) if (state.decodes[n]?.status === "ok") return { name: n, out: state.decodes[n]!.out! };
  return undefined;
}

export function renderValuesSelect({ state }: Page): void {
  const sel = $<HTMLSelectElement>("values-select");
  const keep = sel.value;
  const options: [string, string][] = [];
  for (const n of BACKEND_NAMES) if (state.decodes[n]?.status === "ok") options.push([`decoded:${n}`, `decoded (${n})`]);
  if (state.original) options.push(["original", `original (${state.original.name})`]);
  if (state.errorStats) options.push(["error", "error |original - decoded|"]);
  sel.innerHTML = options.map(([v, l]) => `<option value="${v}">${esc(l)}</option>`).join("");
  if (options.some(([v]) => v === keep)) sel.value = keep;
}

const beyond = (max: number, limit: number, what: string): string => (max > limit ? ` <span class="muted">(99.9% of ${what}; max ${max.toPrecision(3)})</span>` : "");

export function renderValues(page: Page, refit: boolean): void {
  const { state, valuesView, structureView } = page;
  const legend = $("values-legend");
  if (!state.opened) return;
  const [rows, cols] = state.opened.shape;
  const [kind, which] = $<HTMLSelectElement>("values-select").value.split(":");
  const data = kind === "decoded" ? state.decodes[which!]?.out : kind === "original" ? state.original?.data : undefined;
  if (kind === "error" && state.errorStats) {
    const scale = valueScale(state.errorStats.errors);
    valuesView.setGrid(rows, cols, magnitudePainter(state.errorStats.errors, cols, scale), !refit);
    legend.innerHTML = `0 <span class="ramp" style="background:${gradientCss(SEQUENTIAL)}"></span> ${scale.limit.toPrecision(3)}${beyond(scale.max, scale.limit, "the errors")} <span class="muted">log scale past ${scale.knee.toPrecision(2)}</span>`;
  } else if (data) {
    const scale = valueScale(data);
    valuesView.setGrid(rows, cols, valuesPainter(data, cols, scale), !refit);
    legend.innerHTML = `${(-scale.limit).toPrecision(3)} <span class="ramp" style="background:${gradientCss(DIVERGING)}"></span> ${scale.limit.toPrecision(3)}${beyond(scale.max, scale.limit, "|v|")} <span class="muted">log scale past the median |v| ${scale.knee.toPrecision(2)}</span>`;
  } else {
    valuesView.setGrid(rows, cols, (out) => out.fill(0xff2a211c), !refit);
    legend.textContent = "no decoded values";
  }
  if (refit && state.model && $<HTMLInputElement>("link-views").checked) valuesView.copyView(structureView);
}

export function showValueAt({ state }: Page, r: number, c: number): void {
  const { opened, original } = state;
  if (!opened || r >= opened.shape[0] || c >= opened.shape[1]) return;
  const i = r * opened.shape[1] + c;
  const parts = [`(${r}, ${c})`];
  for (const n of BACKEND_NAMES) {
    const out = state.decodes[n]?.out;
    if (out) parts.push(`${n} ${out[i]} [${floatBitsHex(out, i)}]`);
  }
  if (original && i < original.data.length) parts.push(`original ${original.data[i]}`);
  $("values-hover").textContent = parts.join("   ");
}

export function wireValuesPanel(page: Page): void {
  $("values-select").addEventListener("change", () => renderValues(page, false));
  page.valuesView.onHover = (r, c) => showValueAt(page, r, c);
}
