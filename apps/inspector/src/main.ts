/**
 * The inspector page: open a container (or a manifest's tensor), draw its structure, decode it
 * on the CPU (worker) and WebGPU, compare the two bit for bit, compare with an original tensor,
 * and run golden vectors. The page's model is published on window.__inspector for the tests.
 */
import { decodedSha256, halfToFloat, parse, parseManifest, sha256Hex, LAYOUT_NAMES, type Container, type Manifest, type Profile, type Shape } from "@sgfp4/format";
import { CpuWorkerBackend, WebGpuBackend, toFailure, type Availability, type PageDecoder } from "./decoders";
import { buildModel, leafAtElement, type StructureModel } from "./model";
import { TensorCanvas } from "./view";
import { leafColors, magnitudePainter, structurePainter, valuesPainter, type ColorBy } from "./painters";
import { DIVERGING, MODE_COLORS, SEQUENTIAL, SIZE_COLORS, css, gradientCss } from "./colors";
import { drawBars } from "./histogram";
import { compareToOriginal, listSafetensors, readNpy, readSafetensorsTensor, OriginalError, type ErrorStats, type OriginalTensor } from "./original";
import { filesSource, firstDifference, floatBitsHex, httpSource, runVectors, type ConformanceRow, type VectorSource } from "./conformance";

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

// ---------------------------------------------------------------------------------------------
// State

interface DecodeResult {
  backend: string;
  status: "running" | "ok" | "failed" | "unavailable";
  ms?: number;
  code?: string;
  message?: string;
  out?: Float32Array;
}

interface Opened {
  name: string;
  bytes: Uint8Array;
  profile: Profile | "auto";
  shape: Shape;
  /** the manifest entry when opened from a manifest */
  manifestEntry?: Manifest["tensors"][number];
}

const cpu = new CpuWorkerBackend();
const gpu = new WebGpuBackend();
const backends: PageDecoder[] = [cpu, gpu];
const availability = new Map<string, Promise<Availability>>(backends.map((b) => [b.name, b.available()]));
/** what each backend runs on, shown beside its result */
const backendDetail = new Map<string, string>();
for (const [name, p] of availability) void p.then((a) => a.ok && backendDetail.set(name, a.detail ?? ""));

let opened: Opened | undefined;
let container: Container | undefined;
let model: StructureModel | undefined;
let parseError: { code: string; message: string } | undefined;
let decodes: Record<string, DecodeResult> = {};
let agreement: { equal: boolean; index?: number; row?: number; col?: number; cpuBits?: string; gpuBits?: string; reason?: string } | undefined;
let original: OriginalTensor | undefined;
let errorStats: ErrorStats | undefined;
let conformanceRows: ConformanceRow[] = [];
let status: "empty" | "opening" | "decoding" | "done" = "empty";
let generation = 0; // bumps on every open so late results of an older file are dropped
let idle: Promise<void> = Promise.resolve();
let colorBy: ColorBy = "mode";

const structureView = new TensorCanvas($<HTMLCanvasElement>("structure-canvas"));
const valuesView = new TensorCanvas($<HTMLCanvasElement>("values-canvas"));

// ---------------------------------------------------------------------------------------------
// Messages

function showMessage(kind: "error" | "info", html: string): void {
  const m = $("message");
  m.hidden = false;
  m.className = kind === "info" ? "info" : "";
  m.innerHTML = html;
}
const clearMessage = () => ($("message").hidden = true);
const esc = (s: string) => s.replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]!);

// ---------------------------------------------------------------------------------------------
// Opening

function shapeFromName(name: string): Shape | undefined {
  const m = /(\d+)\s*x\s*(\d+)/i.exec(name);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function readShapeInputs(): Shape | undefined {
  const r = Number($<HTMLInputElement>("rows-input").value);
  const c = Number($<HTMLInputElement>("cols-input").value);
  return Number.isSafeInteger(r) && Number.isSafeInteger(c) && r >= 1 && c >= 1 ? [r, c] : undefined;
}

function setShapeInputs(shape: Shape, profile: Profile | "auto"): void {
  $<HTMLInputElement>("rows-input").value = String(shape[0]);
  $<HTMLInputElement>("cols-input").value = String(shape[1]);
  $<HTMLSelectElement>("profile-input").value = profile;
}

async function openContainerFile(file: File): Promise<void> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const fromName = shapeFromName(file.name);
  if (fromName) setShapeInputs(fromName, $<HTMLSelectElement>("profile-input").value as Profile | "auto");
  const shape = readShapeInputs();
  if (/\.fp4$/i.test(file.name)) $<HTMLSelectElement>("profile-input").value = "v1";
  else if (/\.sgfp4$/i.test(file.name)) $<HTMLSelectElement>("profile-input").value = "v2";
  const profile = $<HTMLSelectElement>("profile-input").value as Profile | "auto";
  pendingBytes = { name: file.name, bytes };
  $<HTMLButtonElement>("reopen-button").disabled = false;
  if (!shape) {
    showMessage("info", `Opened <b>${esc(file.name)}</b> (${bytes.length} bytes). The shape is not in the stream: enter O and I, then press <i>Open again</i>.`);
    return;
  }
  await openBytes({ name: file.name, bytes, profile, shape });
}

/** bytes of the last picked file, kept so the person can retry with another shape */
let pendingBytes: { name: string; bytes: Uint8Array } | undefined;

async function openBytes(o: Opened): Promise<void> {
  const gen = ++generation;
  let finish!: () => void;
  idle = new Promise((r) => (finish = r));
  try {
    await openNow(o, gen);
  } finally {
    finish();
  }
}

async function openNow(o: Opened, gen: number): Promise<void> {
  opened = o;
  status = "opening";
  container = undefined;
  model = undefined;
  parseError = undefined;
  decodes = {};
  agreement = undefined;
  errorStats = undefined;
  clearMessage();
  $("panels").hidden = false;

  const t0 = performance.now();
  try {
    container = parse(o.bytes, { profile: o.profile, shape: o.shape });
    model = buildModel(container);
  } catch (e) {
    const f = toFailure(e);
    parseError = { code: f.code, message: f.message };
  }
  const parseMs = performance.now() - t0;
  const profile: Profile = container?.profile ?? (o.profile === "auto" ? guessProfile(o.bytes) : o.profile);
  renderSummary(parseMs);
  renderStructure(true);
  if (parseError) {
    showMessage("error", `<span class="code">${esc(parseError.code)}</span> ${esc(o.name)} was refused by the parser: ${esc(parseError.message)}<br><span class="small">The decoders below were run anyway and report their own codes.</span>`);
  }

  status = "decoding";
  // This open's own results: a slower decode of an earlier file never writes here.
  const results: Record<string, DecodeResult> = {};
  decodes = results;
  renderDecoders();
  const runs = backends.map(async (b) => {
    const a = await availability.get(b.name)!;
    if (!a.ok) {
      results[b.name] = { backend: b.name, status: "unavailable", message: a.reason };
      if (gen === generation) renderDecoders();
      return;
    }
    results[b.name] = { backend: b.name, status: "running" };
    if (gen === generation) renderDecoders();
    const start = performance.now();
    try {
      const out = await b.decode(o.bytes, { profile, shape: o.shape });
      results[b.name] = { backend: b.name, status: "ok", ms: performance.now() - start, out };
    } catch (e) {
      const f = toFailure(e);
      results[b.name] = { backend: b.name, status: "failed", ms: performance.now() - start, code: f.code, message: f.message };
    }
    if (gen === generation) renderDecoders();
  });
  await Promise.all(runs);
  if (gen !== generation) return;
  compareDecodes();
  renderDecoders();
  if (o.manifestEntry) await renderAttestation(o);
  updateErrorStats();
  renderValuesSelect();
  renderValues(true);
  status = "done";
}

function guessProfile(bytes: Uint8Array): Profile {
  return bytes[0] === 0x53 && bytes[1] === 0x47 ? "v2" : "v1";
}

// ---------------------------------------------------------------------------------------------
// Structure panel

function renderSummary(parseMs: number): void {
  const dl = $("summary");
  const rows: [string, string][] = [["file", opened ? `${opened.name} (${opened.bytes.length} bytes)` : ""]];
  if (container && model) {
    const c = container;
    rows.push(
      ["profile", c.profile === "v1" ? "v1 (.fp4, fixed 64x64 blocks)" : "v2 (.sgfp4, quadtree leaves)"],
      ["shape O x I", `${c.shape[0]} x ${c.shape[1]} (${c.tilesY} x ${c.tilesX} macroblocks)`],
      ["macroblocks", String(c.blockCount)],
      ["leaves", String(c.leafCount)],
      ["bits per weight", `${model.bitsPerWeight.toFixed(4)} (stream bytes x 8 / O x I)`],
      ["parse", `${parseMs.toFixed(1)} ms`],
    );
  } else if (opened) rows.push(["shape O x I", `${opened.shape[0]} x ${opened.shape[1]}`], ["parse", parseError ? `refused: ${parseError.code}` : ""]);
  dl.innerHTML = rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("");
  const ul = $("warnings");
  // One line per kind of warning: a container can have thousands of the same one.
  const byKind = new Map<string, { n: number; first: string }>();
  for (const w of container?.warnings ?? []) {
    const k = byKind.get(w.kind);
    if (k) k.n++;
    else byKind.set(w.kind, { n: 1, first: w.message });
  }
  ul.innerHTML = [...byKind].map(([kind, { n, first }]) => `<li>warning ${esc(kind)}: ${esc(first)}${n > 1 ? ` (and ${n - 1} more)` : ""}</li>`).join("");

  const hl = $<HTMLCanvasElement>("hist-layouts");
  const hs = $<HTMLCanvasElement>("hist-sizes");
  const hm = $<HTMLCanvasElement>("hist-modes");
  if (!model) {
    for (const c of [hl, hs, hm]) c.getContext("2d")!.clearRect(0, 0, c.width, c.height);
    return;
  }
  const h = model.histograms;
  drawBars(hl, "Macroblock layouts", h.layouts.map((b) => ({ label: b.label.replace("UNIFORM_", "U"), value: b.count })));
  drawBars(hs, "Leaf sizes (leaves; share of weights)", h.leafSizes.map((b) => ({ label: b.label, value: b.count, color: SIZE_COLORS[Number(b.label.split("x")[0])]!, note: `${b.count} (${pct(b.weights)})` })));
  drawBars(hm, "Modes (leaves; share of weights)", h.modes.map((b, i) => ({ label: b.label, value: b.count, color: MODE_COLORS[i]!, note: `${b.count} (${pct(b.weights)})` })));
}

function pct(weights: number): string {
  if (!model) return "";
  return `${((100 * weights) / (model.paddedRows * model.paddedCols)).toFixed(1)}%`;
}

function renderStructure(refit: boolean): void {
  if (!model) {
    structureView.setGrid(opened?.shape[0] ?? 1, opened?.shape[1] ?? 1, (out) => out.fill(0xff2a211c), false);
    $("structure-caption").textContent = parseError ? "(not parsed)" : "";
    $("structure-legend").innerHTML = "";
    return;
  }
  const { colors, range } = leafColors(model, colorBy);
  structureView.setGrid(model.paddedRows, model.paddedCols, structurePainter(model, colors), !refit);
  $("structure-caption").textContent = `${model.container.leafCount} leaves in ${model.container.blockCount} macroblocks, drawn to scale`;
  const legend = $("structure-legend");
  if (colorBy === "mode") legend.innerHTML = ["FP4_AFFINE", "T158_AFFINE"].map((l, i) => `<span><span class="swatch" style="background:${css(MODE_COLORS[i]!)}"></span>${l}</span>`).join("");
  else if (colorBy === "size") legend.innerHTML = [4, 8, 16, 32, 64].map((s) => `<span><span class="swatch" style="background:${css(SIZE_COLORS[s]!)}"></span>${s}</span>`).join("");
  else legend.innerHTML = `0 <span class="ramp" style="background:${gradientCss(SEQUENTIAL)}"></span> ${range![1].toFixed(2)} bits/weight (leaf header + payload)`;
}

function describeLeaf(i: number): string {
  if (!model) return "";
  const c = model.container;
  const t = c.leafTable;
  const b = t[4 * i]!;
  const blk = c.blocks[b]!;
  const hdr = t[4 * i + 2]!;
  const scaleBits = hdr >>> 16;
  const biasBits = hdr & 0xffff;
  const size = model.leafSize[i]!;
  const mode = model.leafMode[i]!;
  const payloadBytes = c.profile === "v1" ? 2048 : mode ? (size * size) / 4 : (size * size) / 2;
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
    `payload   ${payloadBytes} bytes at ${t[4 * i + 3]} (${mode ? 2 : 4} bits/code)`,
    `bits/wt   ${model.leafBpw[i]!.toFixed(3)} leaf, ${model.blockBpw[b]!.toFixed(3)} macroblock`,
  ].join("\n");
}

structureView.onHover = (r, c, ev) => {
  const tip = $("tooltip");
  const i = model ? leafAtElement(model, r, c) : -1;
  if (i < 0) {
    tip.hidden = true;
    return;
  }
  tip.textContent = `element (${r}, ${c})${model && (r >= model.rows || c >= model.cols) ? " in padding" : ""}\n` + describeLeaf(i);
  tip.dataset.leaf = String(i);
  tip.hidden = false;
  const wrap = structureView.canvas.getBoundingClientRect();
  const x = ev.clientX - wrap.left + 14;
  const y = ev.clientY - wrap.top + 14;
  tip.style.left = `${Math.min(x, 640 - 330)}px`;
  tip.style.top = `${Math.min(y, 640 - 170)}px`;
  showValueAt(r, c);
};
structureView.onLeave = () => ($("tooltip").hidden = true);
structureView.onViewChange = () => {
  if ($<HTMLInputElement>("link-views").checked) valuesView.copyView(structureView);
};
valuesView.onViewChange = () => {
  if ($<HTMLInputElement>("link-views").checked && model) structureView.copyView(valuesView);
};
valuesView.onHover = (r, c) => showValueAt(r, c);

for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="color-by"]')) {
  radio.addEventListener("change", () => {
    colorBy = radio.value as ColorBy;
    renderStructure(false);
  });
}

// ---------------------------------------------------------------------------------------------
// Decode check

function compareDecodes(): void {
  const a = decodes.CPU;
  const b = decodes.WebGPU;
  if (a?.status !== "ok" || b?.status !== "ok") {
    const reason =
      b?.status === "unavailable" ? `no WebGPU comparison: ${b.message}` : a?.status === "failed" && b?.status === "failed" ? (a.code === b.code ? `both decoders refused the stream with ${a.code}` : `the decoders refused with different codes: CPU ${a.code}, WebGPU ${b.code}`) : "one decoder failed; nothing to compare";
    agreement = { equal: a?.status === "failed" && b?.status === "failed" && a.code === b.code, reason };
    return;
  }
  const d = firstDifference(a.out!, b.out!);
  if (d < 0) agreement = { equal: true };
  else {
    const cols = opened!.shape[1];
    agreement = { equal: false, index: d, row: Math.floor(d / cols), col: d % cols, cpuBits: floatBitsHex(a.out!, d), gpuBits: floatBitsHex(b.out!, d) };
  }
}

function renderDecoders(): void {
  const body = $("decoders").querySelector("tbody")!;
  body.innerHTML = backends
    .map((b) => {
      const d = decodes[b.name];
      if (!d) return `<tr data-backend="${b.name}"><td>${b.name}</td><td class="skip">waiting</td><td></td><td></td></tr>`;
      const cls = d.status === "ok" ? "pass" : d.status === "failed" ? "fail" : "skip";
      const result = d.status === "ok" ? `decoded ${d.out!.length} values` : d.status === "failed" ? `error ${d.code}` : d.status;
      const detail = d.status === "ok" ? (b === cpu && cpu.label ? cpu.label : (backendDetail.get(b.name) ?? "")) : (d.message ?? "");
      return `<tr data-backend="${b.name}"><td>${b.name}</td><td class="${cls}">${esc(result)}</td><td>${d.ms !== undefined ? d.ms.toFixed(1) + " ms" : ""}</td><td class="small">${esc(detail)}</td></tr>`;
    })
    .join("");
  const p = $("agreement");
  if (!agreement) {
    p.textContent = status === "decoding" ? "decoding..." : "";
    p.className = "";
  } else if (agreement.reason) {
    p.textContent = agreement.reason;
    p.className = agreement.equal ? "pass" : "skip";
  } else if (agreement.equal) {
    p.textContent = `CPU and WebGPU agree bit for bit on all ${decodes.CPU!.out!.length} values.`;
    p.className = "pass";
  } else {
    p.textContent = `CPU and WebGPU differ: first at element ${agreement.index} (row ${agreement.row}, col ${agreement.col}): CPU ${agreement.cpuBits}, WebGPU ${agreement.gpuBits}.`;
    p.className = "fail";
  }
}

async function renderAttestation(o: Opened): Promise<void> {
  const e = o.manifestEntry!;
  const lines: string[] = [];
  const containerOk = sha256Hex(o.bytes) === e.sha256.container;
  lines.push(`manifest container sha256: ${containerOk ? "matches" : "DIFFERS"}`);
  const out = decodes.CPU?.out ?? decodes.WebGPU?.out;
  if (out) lines.push(`manifest decoded sha256: ${decodedSha256(out) === e.sha256.decoded ? "matches" : "DIFFERS"}`);
  $("attestation").textContent = lines.join("; ");
}

// ---------------------------------------------------------------------------------------------
// Values panel

function decodedOutput(): { name: string; out: Float32Array } | undefined {
  for (const n of ["CPU", "WebGPU"]) if (decodes[n]?.status === "ok") return { name: n, out: decodes[n]!.out! };
  return undefined;
}

function renderValuesSelect(): void {
  const sel = $<HTMLSelectElement>("values-select");
  const keep = sel.value;
  const options: [string, string][] = [];
  for (const n of ["CPU", "WebGPU"]) if (decodes[n]?.status === "ok") options.push([`decoded:${n}`, `decoded (${n})`]);
  if (original) options.push(["original", `original (${original.name})`]);
  if (errorStats) options.push(["error", "error |original - decoded|"]);
  sel.innerHTML = options.map(([v, l]) => `<option value="${v}">${esc(l)}</option>`).join("");
  if (options.some(([v]) => v === keep)) sel.value = keep;
}

/**
 * Colour range: the 99.9th percentile of |v| (from a sample of at most 2^20 values), so a few
 * outliers do not wash the rest of the map out; values beyond it saturate.
 */
function robustRange(a: Float32Array): { limit: number; max: number } {
  const step = Math.max(1, Math.floor(a.length / 2 ** 20));
  const sample = new Float32Array(Math.ceil(a.length / step));
  let max = 0;
  for (let i = 0, k = 0; i < a.length; i += step, k++) {
    const v = Math.abs(a[i]!);
    sample[k] = v === v ? v : 0;
  }
  for (let i = 0; i < a.length; i++) {
    const v = Math.abs(a[i]!);
    if (v > max && v !== Infinity) max = v;
  }
  sample.sort();
  const limit = sample[Math.min(sample.length - 1, Math.floor(sample.length * 0.999))]!;
  return { limit: limit > 0 ? limit : max, max };
}

function renderValues(refit: boolean): void {
  const sel = $<HTMLSelectElement>("values-select").value;
  const legend = $("values-legend");
  if (!opened) return;
  const [rows, cols] = opened.shape;
  const [kind, which] = sel.split(":");
  let data: Float32Array | undefined;
  if (kind === "decoded") data = decodes[which!]?.out;
  else if (kind === "original") data = original?.data;
  if (kind === "error" && errorStats) {
    const { limit: hi, max } = robustRange(errorStats.errors);
    valuesView.setGrid(rows, cols, magnitudePainter(errorStats.errors, cols, hi), !refit);
    legend.innerHTML = `0 <span class="ramp" style="background:${gradientCss(SEQUENTIAL)}"></span> ${hi.toPrecision(3)}${max > hi ? ` <span class="muted">(99.9%; max ${max.toPrecision(3)})</span>` : ""}`;
  } else if (data) {
    const { limit, max } = robustRange(data);
    valuesView.setGrid(rows, cols, valuesPainter(data, cols, limit), !refit);
    legend.innerHTML = `${(-limit).toPrecision(3)} <span class="ramp" style="background:${gradientCss(DIVERGING)}"></span> ${limit.toPrecision(3)}${max > limit ? ` <span class="muted">(99.9% of |v|; max ${max.toPrecision(3)})</span>` : ""}`;
  } else {
    valuesView.setGrid(rows, cols, (out) => out.fill(0xff2a211c), !refit);
    legend.textContent = "no decoded values";
  }
  if (refit && model && $<HTMLInputElement>("link-views").checked) valuesView.copyView(structureView);
}
$("values-select").addEventListener("change", () => renderValues(false));

function showValueAt(r: number, c: number): void {
  if (!opened || r >= opened.shape[0] || c >= opened.shape[1]) return;
  const i = r * opened.shape[1] + c;
  const parts = [`(${r}, ${c})`];
  for (const n of ["CPU", "WebGPU"]) {
    const out = decodes[n]?.out;
    if (out) parts.push(`${n} ${out[i]} [${floatBitsHex(out, i)}]`);
  }
  if (original && i < original.data.length) parts.push(`original ${original.data[i]}`);
  $("values-hover").textContent = parts.join("   ");
}

function updateErrorStats(): void {
  const dec = decodedOutput();
  const snr = $("snr");
  errorStats = undefined;
  if (!original) {
    snr.textContent = "";
    return;
  }
  if (!opened || !dec) {
    snr.textContent = `original ${original.name} loaded; decode a container to compare`;
    return;
  }
  const [rows, cols] = opened.shape;
  if (original.rows !== rows || original.cols !== cols) {
    snr.innerHTML = `<span class="fail">original ${esc(original.name)} has shape [${original.shape.join(", ")}] (${original.rows} x ${original.cols}), the container ${rows} x ${cols}</span>`;
    return;
  }
  errorStats = compareToOriginal(original.data, dec.out);
  snr.textContent = `SNR ${errorStats.snrDb === Infinity ? "inf" : errorStats.snrDb.toFixed(2)} dB against ${original.name} (decoded by ${dec.name}); max |error| ${errorStats.maxAbsError.toPrecision(4)}, mean |error| ${errorStats.meanAbsError.toPrecision(4)}`;
}

let safetensorsFile: { bytes: Uint8Array; name: string; listing: ReturnType<typeof listSafetensors> } | undefined;

async function openOriginal(file: File): Promise<void> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const sel = $<HTMLSelectElement>("original-select");
  try {
    if (/\.safetensors$/i.test(file.name)) {
      const listing = listSafetensors(bytes);
      safetensorsFile = { bytes, name: file.name, listing };
      sel.innerHTML = listing.entries.map((e, i) => `<option value="${i}">${esc(e.name)} [${e.shape.join(", ")}] ${e.dtype}</option>`).join("");
      sel.hidden = false;
      const wanted = opened?.manifestEntry?.name;
      const k = Math.max(0, listing.entries.findIndex((e) => e.name === wanted));
      sel.value = String(k);
      pickSafetensor(k);
    } else {
      sel.hidden = true;
      original = readNpy(bytes, file.name);
      afterOriginal();
    }
  } catch (e) {
    const msg = e instanceof OriginalError ? e.message : String(e);
    $("snr").innerHTML = `<span class="fail">cannot read ${esc(file.name)}: ${esc(msg)}</span>`;
  }
}

function pickSafetensor(k: number): void {
  if (!safetensorsFile) return;
  const e = safetensorsFile.listing.entries[k];
  if (!e) return;
  original = readSafetensorsTensor(safetensorsFile.bytes, e, safetensorsFile.listing.dataStart);
  afterOriginal();
}

function afterOriginal(): void {
  updateErrorStats();
  renderValuesSelect();
  if (errorStats) $<HTMLSelectElement>("values-select").value = "error";
  renderValues(false);
}

$("original-select").addEventListener("change", (ev) => {
  try {
    pickSafetensor(Number((ev.target as HTMLSelectElement).value));
  } catch (e) {
    $("snr").innerHTML = `<span class="fail">${esc((e as Error).message)}</span>`;
  }
});

// ---------------------------------------------------------------------------------------------
// Manifest folders

let manifestFiles: Map<string, File> | undefined;
let manifest: Manifest | undefined;

async function openFolder(files: File[]): Promise<void> {
  const rel = (f: File) => f.webkitRelativePath || f.name;
  if (files.some((f) => /(^|\/)index\.json$/.test(rel(f))) && !(await findManifest(files))) {
    await runConformance(filesSource(files));
    return;
  }
  const found = await findManifest(files);
  if (!found) {
    showMessage("error", `<span class="code">INVALID_MANIFEST</span> no sgfp4-manifest JSON file in the ${files.length} files of that folder`);
    return;
  }
  const { file, m } = found;
  const root = rel(file).slice(0, rel(file).length - file.name.length);
  manifest = m;
  manifestFiles = new Map(files.map((f) => [rel(f).slice(root.length), f]));
  const sel = $<HTMLSelectElement>("tensor-select");
  sel.innerHTML = `<option value="">pick a tensor (${m.tensors.length})</option>` + m.tensors.map((t, i) => `<option value="${i}">${esc(t.name)} [${t.shape.join(" x ")}] ${t.profile}</option>`).join("");
  sel.hidden = false;
  showMessage("info", `Manifest <b>${esc(file.name)}</b> with ${m.tensors.length} tensors (encoder ${esc(m.encoder.name)} ${esc(m.encoder.version)}). Pick a tensor.`);
  if (m.tensors.length === 1) await openManifestTensor(0);
}

async function findManifest(files: File[]): Promise<{ file: File; m: Manifest } | undefined> {
  const jsons = files.filter((f) => f.name.endsWith(".json") && f.size < 64 * 2 ** 20);
  jsons.sort((a, b) => Number(b.name.includes("manifest")) - Number(a.name.includes("manifest")));
  let lastError: string | undefined;
  for (const f of jsons) {
    const text = await f.text();
    if (!text.includes("sgfp4-manifest")) continue;
    try {
      return { file: f, m: parseManifest(text) };
    } catch (e) {
      lastError = (e as Error).message;
    }
  }
  if (lastError) showMessage("error", `<span class="code">INVALID_MANIFEST</span> ${esc(lastError)}`);
  return undefined;
}

async function openManifestTensor(i: number): Promise<void> {
  const t = manifest?.tensors[i];
  if (!t || !manifestFiles) return;
  $<HTMLSelectElement>("tensor-select").value = String(i);
  const f = manifestFiles.get(t.file);
  if (!f) {
    showMessage("error", `the manifest names ${esc(t.file)} for ${esc(t.name)}, but that file is not in the folder`);
    return;
  }
  setShapeInputs(t.shape, t.profile);
  const bytes = new Uint8Array(await f.arrayBuffer());
  pendingBytes = { name: t.file, bytes };
  await openBytes({ name: `${t.name} (${t.file})`, bytes, profile: t.profile, shape: t.shape, manifestEntry: t });
}

$("tensor-select").addEventListener("change", (ev) => {
  const v = (ev.target as HTMLSelectElement).value;
  if (v !== "") void openManifestTensor(Number(v));
});

// ---------------------------------------------------------------------------------------------
// Golden vectors

const bundledVectors = httpSource(new URL("./vectors/", location.href).href);

async function runConformance(src: VectorSource): Promise<ConformanceRow[]> {
  const statusEl = $("conformance-status");
  const table = $("conformance-table");
  const usable = await Promise.all(backends.map(async (backend) => {
    const a = await availability.get(backend.name)!;
    return a.ok ? { backend, usable: true } : { backend, usable: false, reason: a.reason };
  }));
  const gpuRow = usable.find((u) => u.backend.name === "WebGPU")!;
  $("gpu-note").innerHTML = gpuRow.usable ? "" : `<span class="skip">No WebGPU column: ${esc(gpuRow.reason ?? "")}. Only the CPU decoder runs.</span>`;
  const shown = usable.filter((u) => u.usable);
  table.querySelector("thead")!.innerHTML = `<tr><th>vector</th><th>profile</th><th>shape</th><th>expect</th>${shown.map((u) => `<th>${u.backend.name}</th>`).join("")}<th></th></tr>`;
  const body = table.querySelector("tbody")!;
  body.innerHTML = "";
  statusEl.textContent = `running ${src.label}...`;
  conformanceRows = [];
  conformanceDone = false;
  try {
    const rows = await runVectors(src, usable, (row, i, total) => {
      conformanceRows.push(row);
      const tr = document.createElement("tr");
      tr.dataset.vector = row.id;
      tr.title = row.description;
      const cells = shown.map((u) => {
        const r = row.results[u.backend.name]!;
        return "pass" in r ? `<td class="${r.pass ? "pass" : "fail"}">${r.pass ? "pass" : "FAIL"} <span class="small">${esc(r.detail)}</span></td>` : `<td class="skip">${esc(r.skipped)}</td>`;
      });
      tr.innerHTML = `<td>${esc(row.id)}</td><td>${row.profile}</td><td>${row.shape}</td><td>${esc(row.expect)}</td>${cells.join("")}<td><button class="link">inspect</button></td>`;
      tr.querySelector("button")!.addEventListener("click", () => void inspectVector(src, row.id));
      body.appendChild(tr);
      statusEl.textContent = `${i + 1} / ${total}`;
    });
    const counts = shown.map((u) => {
      const pass = rows.filter((r) => (r.results[u.backend.name] as { pass?: boolean }).pass).length;
      return `${u.backend.name} ${pass}/${rows.length} pass`;
    });
    statusEl.textContent = `${src.label}: ${counts.join(", ")}`;
    return rows;
  } catch (e) {
    statusEl.innerHTML = `<span class="fail">cannot run ${esc(src.label)}: ${esc((e as Error).message)}</span>`;
    return [];
  } finally {
    conformanceDone = true;
  }
}
let conformanceDone = false;

async function inspectVector(src: VectorSource, id: string): Promise<void> {
  const names = await src.text("index.json").then((t) => (JSON.parse(t) as { vectors: string[] }).vectors);
  for (const n of names) {
    const meta = JSON.parse(await src.text(n)) as { id: string; profile: Profile; container: string; shape: [number, number] };
    if (meta.id !== id && n !== id) continue;
    const bytes = await src.bytes(meta.container);
    setShapeInputs(meta.shape, meta.profile);
    pendingBytes = { name: meta.container, bytes };
    $<HTMLButtonElement>("reopen-button").disabled = false;
    await openBytes({ name: meta.container, bytes, profile: meta.profile, shape: meta.shape });
    window.scrollTo({ top: 0 });
    return;
  }
}

$("conformance-button").addEventListener("click", () => void runConformance(bundledVectors));
$("vectors-input").addEventListener("change", (ev) => {
  const files = [...((ev.target as HTMLInputElement).files ?? [])];
  if (files.length) void runConformance(filesSource(files));
});

// ---------------------------------------------------------------------------------------------
// Inputs and drag and drop

$("file-input").addEventListener("change", (ev) => {
  const f = (ev.target as HTMLInputElement).files?.[0];
  if (f) void openContainerFile(f);
});
$("reopen-button").addEventListener("click", () => {
  const shape = readShapeInputs();
  if (!pendingBytes) return;
  if (!shape) {
    showMessage("error", `<span class="code">INVALID_ARGUMENT</span> enter the shape O x I (integers >= 1)`);
    return;
  }
  void openBytes({ ...pendingBytes, profile: $<HTMLSelectElement>("profile-input").value as Profile | "auto", shape });
});
$("manifest-input").addEventListener("change", (ev) => {
  const files = [...((ev.target as HTMLInputElement).files ?? [])];
  if (files.length) void openFolder(files);
});
$("original-input").addEventListener("change", (ev) => {
  const f = (ev.target as HTMLInputElement).files?.[0];
  if (f) void openOriginal(f);
});

async function entryFiles(entry: FileSystemEntry, prefix: string, out: File[]): Promise<void> {
  if (out.length > 20000) return; // a dropped folder is user input too
  if (entry.isFile) {
    const f = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
    Object.defineProperty(f, "webkitRelativePath", { value: prefix + f.name });
    out.push(f);
  } else if (entry.isDirectory) {
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
      if (!batch.length) break;
      for (const e of batch) await entryFiles(e, `${prefix}${entry.name}/`, out);
    }
  }
}

document.addEventListener("dragover", (ev) => {
  ev.preventDefault();
  document.body.classList.add("dragging");
});
document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
document.addEventListener("drop", (ev) => {
  ev.preventDefault();
  document.body.classList.remove("dragging");
  const items = [...(ev.dataTransfer?.items ?? [])];
  const entries = items.map((it) => it.webkitGetAsEntry?.()).filter((e): e is FileSystemEntry => !!e);
  void (async () => {
    if (entries.some((e) => e.isDirectory)) {
      const files: File[] = [];
      for (const e of entries) await entryFiles(e, "", files);
      await openFolder(files);
      return;
    }
    for (const f of ev.dataTransfer?.files ?? []) {
      if (/\.(npy|safetensors)$/i.test(f.name)) await openOriginal(f);
      else await openContainerFile(f);
    }
  })();
});

// ---------------------------------------------------------------------------------------------
// What the tests (and curious people in the console) can read

const api = {
  state() {
    return {
      status,
      /** counts opens, so a test can wait for the next one */
      generation,
      file: opened?.name,
      parseError,
      model: model && {
        profile: model.container.profile,
        shape: [...model.container.shape],
        blockCount: model.container.blockCount,
        leafCount: model.leafCount,
        bitsPerWeight: model.bitsPerWeight,
        histograms: model.histograms,
        layouts: model.container.blocks.map((b) => b.layout),
      },
      decodes: Object.fromEntries(Object.entries(decodes).map(([k, d]) => [k, { status: d.status, ms: d.ms, code: d.code, message: d.message, length: d.out?.length }])),
      agreement,
      snrDb: errorStats ? (errorStats.snrDb === Infinity ? "inf" : errorStats.snrDb) : undefined,
      original: original && { name: original.name, shape: original.shape },
      conformanceDone,
      conformance: conformanceRows,
    };
  },
  /** [row, col, size, mode] of every leaf in stream order, absolute in the padded grid */
  leaves(): number[] {
    if (!model) return [];
    const out: number[] = [];
    for (let i = 0; i < model.leafCount; i++) out.push(model.leafRow[i]!, model.leafCol[i]!, model.leafSize[i]!, model.leafMode[i]!);
    return out;
  },
  /** leaf index drawn at a structure-canvas pixel (what hovering there describes) */
  leafAtCanvasPixel(x: number, y: number): number {
    if (!model) return -1;
    const [r, c] = structureView.elementAt(x, y);
    return leafAtElement(model, r, c);
  },
  /** float32 bit patterns of a decode, for bit-exact checks */
  decodedBits(backend: string, start = 0, count = Infinity): number[] {
    const out = decodes[backend]?.out;
    if (!out) return [];
    return Array.from(new Uint32Array(out.buffer, out.byteOffset, out.length).subarray(start, Math.min(out.length, start + count)));
  },
  async availability() {
    return Object.fromEntries(await Promise.all([...availability].map(async ([k, p]) => [k, await p] as const)));
  },
  whenIdle: () => idle,
  runBundledVectors: () => runConformance(bundledVectors),
  openBytes: (bytes: Uint8Array, name: string, profile: Profile | "auto", shape: [number, number]) => openBytes({ name, bytes, profile, shape }),
  structureView,
  valuesView,
};
declare global {
  interface Window {
    __inspector: typeof api;
  }
}
window.__inspector = api;

// Say early whether the GPU column will exist.
void availability.get("WebGPU")!.then((a) => {
  $("gpu-note").innerHTML = a.ok ? `<span class="muted">WebGPU: ${esc(a.detail ?? "available")}</span>` : `<span class="skip">No WebGPU column: ${esc(a.reason)}. Only the CPU decoder runs.</span>`;
});
