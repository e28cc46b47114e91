/**
 * Structure panel: the container summary and histograms, the leaves drawn to scale with a hover
 * tooltip, and for a refused stream the structure up to the fault and the bytes around it.
 */
import { LAYOUT_NAMES, LEAF_BLOCK_WORD, LEAF_PARAMS_WORD, LEAF_PAYLOAD_WORD, LEAF_WORDS, V1_PAYLOAD_BYTES, halfToFloat, leafPayloadBytes, paramsBiasBits, paramsScaleBits } from "@sgfp4/format";
import { $, esc } from "../dom";
import { MODE_COLORS, SEQUENTIAL, SIZE_COLORS, css, gradientCss } from "../colors";
import { hexWindowHtml } from "../fault-bytes";
import { drawBars } from "../histogram";
import { leafAtElement } from "../model";
import { leafColors, structurePainter, type ColorBy } from "../painters";
import type { Page } from "../state";
import { showValueAt } from "./values";

export function renderSummary(page: Page, parseMs: number): void {
  const s = page.state;
  const rows: [string, string][] = [["file", s.opened ? `${s.opened.name} (${s.opened.bytes.length} bytes)` : ""]];
  const c = s.container;
  if (c && s.model && !s.parseError) {
    rows.push(
      ["profile", c.profile === "v1" ? "v1 (.fp4, fixed 64x64 blocks)" : "v2 (.sgfp4, quadtree leaves)"],
      ["shape O x I", `${c.shape[0]} x ${c.shape[1]} (${c.tilesY} x ${c.tilesX} macroblocks)`],
      ["macroblocks", String(c.blockCount)],
      ["leaves", String(c.leafCount)],
      ["bits per weight", `${s.model.bitsPerWeight.toFixed(4)} (stream bytes x 8 / O x I)`],
      ["parse", `${parseMs.toFixed(1)} ms`],
    );
  } else if (s.opened) {
    rows.push(["shape O x I", `${s.opened.shape[0]} x ${s.opened.shape[1]}`], ["parse", s.parseError ? `refused: ${s.parseError.code}` : ""]);
    if (c) rows.push(["before the fault", `${c.blocks.length} of ${c.blockCount} macroblocks, ${c.leafCount} leaves`]);
  }
  $("summary").innerHTML = rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("");
  // One line per kind of warning: a container can have thousands of the same one.
  const byKind = new Map<string, { n: number; first: string }>();
  for (const w of c?.warnings ?? []) {
    const k = byKind.get(w.kind);
    if (k) k.n++;
    else byKind.set(w.kind, { n: 1, first: w.message });
  }
  $("warnings").innerHTML = [...byKind].map(([kind, { n, first }]) => `<li>warning ${esc(kind)}: ${esc(first)}${n > 1 ? ` (and ${n - 1} more)` : ""}</li>`).join("");
  renderHistograms(page);
}

function renderHistograms({ state: { model } }: Page): void {
  const hl = $<HTMLCanvasElement>("hist-layouts");
  const hs = $<HTMLCanvasElement>("hist-sizes");
  const hm = $<HTMLCanvasElement>("hist-modes");
  if (!model) {
    for (const c of [hl, hs, hm]) c.getContext("2d")!.clearRect(0, 0, c.width, c.height);
    return;
  }
  const pct = (weights: number) => `${((100 * weights) / (model.paddedRows * model.paddedCols)).toFixed(1)}%`;
  const h = model.histograms;
  drawBars(hl, "Macroblock layouts", h.layouts.map((b) => ({ label: b.label.replace("UNIFORM_", "U"), value: b.count })));
  drawBars(hs, "Leaf sizes (leaves; share of weights)", h.leafSizes.map((b) => ({ label: b.label, value: b.count, color: SIZE_COLORS[Number(b.label.split("x")[0])]!, note: `${b.count} (${pct(b.weights)})` })));
  drawBars(hm, "Modes (leaves; share of weights)", h.modes.map((b, i) => ({ label: b.label, value: b.count, color: MODE_COLORS[i]!, note: `${b.count} (${pct(b.weights)})` })));
}

export function renderStructure({ state: s, structureView }: Page, refit: boolean): void {
  const { model } = s;
  if (!model) {
    structureView.setGrid(s.opened?.shape[0] ?? 1, s.opened?.shape[1] ?? 1, (out) => out.fill(0xff2a211c), false);
    $("structure-caption").textContent = s.parseError ? "(not parsed)" : "";
    $("structure-legend").innerHTML = "";
    return;
  }
  const { colors, range } = leafColors(model, s.colorBy);
  structureView.setGrid(model.paddedRows, model.paddedCols, structurePainter(model, colors), !refit);
  const c = model.container;
  $("structure-caption").textContent = s.parseError
    ? `${c.leafCount} leaves in the ${c.blocks.length} of ${c.blockCount} macroblocks before the fault`
    : `${c.leafCount} leaves in ${c.blockCount} macroblocks, drawn to scale`;
  const legend = $("structure-legend");
  if (s.colorBy === "mode") legend.innerHTML = ["FP4_AFFINE", "T158_AFFINE"].map((l, i) => `<span><span class="swatch" style="background:${css(MODE_COLORS[i]!)}"></span>${l}</span>`).join("");
  else if (s.colorBy === "size") legend.innerHTML = [4, 8, 16, 32, 64].map((n) => `<span><span class="swatch" style="background:${css(SIZE_COLORS[n]!)}"></span>${n}</span>`).join("");
  else legend.innerHTML = `0 <span class="ramp" style="background:${gradientCss(SEQUENTIAL)}"></span> ${range![1].toFixed(2)} bits/weight (leaf header + payload)`;
}

/** A refused stream: where it failed and the bytes around that offset (empty otherwise). */
export function renderFault({ state: s }: Page): void {
  const el = $("fault");
  const f = s.parseError;
  if (!f || !s.opened) {
    el.hidden = true;
    el.innerHTML = "";
    return;
  }
  const where = [f.record !== undefined ? `${s.container?.profile === "v1" || s.opened.profile === "v1" ? "block" : "record"} ${f.record}` : "", f.offset !== undefined ? `byte offset ${f.offset}` : ""].filter(Boolean).join(", ");
  const dump = f.offset !== undefined ? `<pre id="fault-bytes">${hexWindowHtml(s.opened.bytes, f.offset)}</pre>` : "";
  el.innerHTML = `<h3>Refused: <span class="code">${esc(f.code)}</span>${where ? ` at ${esc(where)}` : ""}</h3>${dump}`;
  el.hidden = false;
}

function describeLeaf({ state: { model } }: Page, i: number): string {
  if (!model) return "";
  const c = model.container;
  const t = c.leafTable;
  const b = t[LEAF_WORDS * i + LEAF_BLOCK_WORD]!;
  const blk = c.blocks[b]!;
  const params = t[LEAF_WORDS * i + LEAF_PARAMS_WORD]!;
  const scaleBits = paramsScaleBits(params);
  const biasBits = paramsBiasBits(params);
  const size = model.leafSize[i]!;
  const mode = model.leafMode[i]!;
  const payloadBytes = c.profile === "v1" ? V1_PAYLOAD_BYTES : leafPayloadBytes(Math.log2(size), mode);
  const layout = blk.layout === -1 ? "v1 block" : LAYOUT_NAMES[blk.layout];
  const h4 = (n: number) => "0x" + n.toString(16).padStart(4, "0");
  return [
    `leaf ${i - blk.firstLeaf} of ${blk.leafCount} in macroblock ${b} (row ${blk.by}, col ${blk.bx}), ${layout}`,
    `position  rows ${model.leafRow[i]}..${model.leafRow[i]! + size - 1}, cols ${model.leafCol[i]}..${model.leafCol[i]! + size - 1}`,
    `          (y ${model.leafRow[i]! % 64}, x ${model.leafCol[i]! % 64} in the macroblock)`,
    `size      ${size}x${size}`,
    `mode      ${mode ? "T158_AFFINE" : "FP4_AFFINE"}`,
    `scale     ${h4(scaleBits)} = ${halfToFloat(scaleBits)}`,
    `bias      ${h4(biasBits)} = ${halfToFloat(biasBits)}`,
    `payload   ${payloadBytes} bytes at ${t[LEAF_WORDS * i + LEAF_PAYLOAD_WORD]} (${mode ? 2 : 4} bits/code)`,
    `bits/wt   ${model.leafBpw[i]!.toFixed(3)} leaf, ${model.blockBpw[b]!.toFixed(3)} macroblock`,
  ].join("\n");
}

export const hideTooltip = (): void => {
  $("tooltip").hidden = true;
};

/** Hover tooltip, colour-by radios, and the two views following each other's zoom. */
export function wireStructurePanel(page: Page): void {
  const { structureView, valuesView } = page;
  structureView.onHover = (r, c, ev) => {
    const { model } = page.state;
    const tip = $("tooltip");
    const i = model ? leafAtElement(model, r, c) : -1;
    if (i < 0) {
      tip.hidden = true;
      return;
    }
    tip.textContent = `element (${r}, ${c})${model && (r >= model.rows || c >= model.cols) ? " in padding" : ""}\n` + describeLeaf(page, i);
    tip.dataset.leaf = String(i);
    tip.hidden = false;
    const wrap = structureView.canvas.getBoundingClientRect();
    tip.style.left = `${Math.min(ev.clientX - wrap.left + 14, 640 - 330)}px`;
    tip.style.top = `${Math.min(ev.clientY - wrap.top + 14, 640 - 170)}px`;
    showValueAt(page, r, c);
  };
  structureView.onLeave = hideTooltip;
  structureView.onViewChange = () => {
    if ($<HTMLInputElement>("link-views").checked) valuesView.copyView(structureView);
  };
  valuesView.onViewChange = () => {
    if ($<HTMLInputElement>("link-views").checked && page.state.model) structureView.copyView(valuesView);
  };
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="color-by"]')) {
    radio.addEventListener("change", () => {
      page.state.colorBy = radio.value as ColorBy;
      renderStructure(page, false);
    });
  }
}
