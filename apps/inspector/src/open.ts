/**
 * Opening a container: shape and profile from the inputs or the file name, parse (or the
 * structure up to the fault), every decoder, then the panels.
 */
import { parseUntilFault, type Profile, type Shape } from "@sgfp4/format";
import { $, clearMessage, esc, showMessage } from "./dom";
import { toFailure } from "./decoders";
import { buildModel } from "./model";
import { compareDecodes, renderAttestation, renderDecoders } from "./panels/decode-check";
import { originalForNewFile } from "./panels/original-tensor";
import { hideTooltip, renderFault, renderStructure, renderSummary } from "./panels/structure";
import { renderValues, renderValuesSelect } from "./panels/values";
import { resetForOpen, type DecodeResult, type Opened, type Page } from "./state";

export function shapeFromName(name: string): Shape | undefined {
  const m = /(\d+)\s*x\s*(\d+)/i.exec(name);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

export function readShapeInputs(): Shape | undefined {
  const r = Number($<HTMLInputElement>("rows-input").value);
  const c = Number($<HTMLInputElement>("cols-input").value);
  return Number.isSafeInteger(r) && Number.isSafeInteger(c) && r >= 1 && c >= 1 ? [r, c] : undefined;
}

export function setShapeInputs(shape: Shape, profile: Profile | "auto"): void {
  $<HTMLInputElement>("rows-input").value = String(shape[0]);
  $<HTMLInputElement>("cols-input").value = String(shape[1]);
  $<HTMLSelectElement>("profile-input").value = profile;
}

const profileInput = (): Profile | "auto" => $<HTMLSelectElement>("profile-input").value as Profile | "auto";

/** Keep the bytes for "Open again" (another shape or profile). */
export function setPending(page: Page, name: string, bytes: Uint8Array): void {
  page.state.pending = { name, bytes };
  $<HTMLButtonElement>("reopen-button").disabled = false;
}

export async function openContainerFile(page: Page, file: File): Promise<void> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const fromName = shapeFromName(file.name);
  if (fromName) setShapeInputs(fromName, profileInput());
  const shape = readShapeInputs();
  if (/\.fp4$/i.test(file.name)) $<HTMLSelectElement>("profile-input").value = "v1";
  else if (/\.sgfp4$/i.test(file.name)) $<HTMLSelectElement>("profile-input").value = "v2";
  setPending(page, file.name, bytes);
  if (!shape) {
    showMessage("info", `Opened <b>${esc(file.name)}</b> (${bytes.length} bytes). The shape is not in the stream: enter O and I, then press <i>Open again</i>.`);
    return;
  }
  await openBytes(page, { name: file.name, bytes, profile: profileInput(), shape });
}

/** "Open again": the last file's bytes with the shape and profile now in the inputs. */
export function reopen(page: Page): void {
  const shape = readShapeInputs();
  if (!page.state.pending) return;
  if (!shape) {
    showMessage("error", `<span class="code">INVALID_ARGUMENT</span> enter the shape O x I (integers >= 1)`);
    return;
  }
  void openBytes(page, { ...page.state.pending, profile: profileInput(), shape });
}

export async function openBytes(page: Page, o: Opened): Promise<void> {
  const gen = ++page.state.generation;
  let finish!: () => void;
  page.state.idle = new Promise((r) => (finish = r));
  try {
    await openNow(page, o, gen);
  } finally {
    finish();
  }
}

async function openNow(page: Page, o: Opened, gen: number): Promise<void> {
  const { state } = page;
  resetForOpen(state, o);
  state.status = "opening";
  clearMessage();
  hideTooltip();
  $("values-hover").innerHTML = "&nbsp;";
  $("panels").hidden = false;

  const t0 = performance.now();
  const { container, fault } = parseUntilFault(o.bytes, { profile: o.profile, shape: o.shape });
  state.container = container;
  state.model = container ? buildModel(container) : undefined;
  if (fault) {
    const f = toFailure(fault);
    state.parseError = { code: f.code, message: f.message, offset: fault.location.offset, record: fault.location.record };
  }
  const parseMs = performance.now() - t0;
  const profile: Profile = container?.profile ?? (o.profile === "auto" ? guessProfile(o.bytes) : o.profile);
  renderSummary(page, parseMs);
  renderStructure(page, true);
  renderFault(page);
  if (state.parseError) {
    showMessage("error", `<span class="code">${esc(state.parseError.code)}</span> ${esc(o.name)} was refused by the parser: ${esc(state.parseError.message)}<br><span class="small">The structure before the fault and the bytes around it are shown below; the decoders were run anyway and report their own codes.</span>`);
  }
  await runDecoders(page, o, profile, gen);
  if (gen !== state.generation) return;
  compareDecodes(page);
  renderDecoders(page);
  renderAttestation(page, o);
  originalForNewFile(page);
  renderValuesSelect(page);
  renderValues(page, true);
  state.status = "done";
}

/** Every decoder on the stream; this open's own results, so a slower decode of an earlier file never writes here. */
async function runDecoders(page: Page, o: Opened, profile: Profile, gen: number): Promise<void> {
  const { state, decoders } = page;
  state.status = "decoding";
  const results: Record<string, DecodeResult> = {};
  state.decodes = results;
  renderDecoders(page);
  const rerender = () => gen === state.generation && renderDecoders(page);
  await Promise.all(
    decoders.list.map(async (b) => {
      const a = await decoders.availability.get(b.name)!;
      if (!a.ok) {
        results[b.name] = { backend: b.name, status: "unavailable", message: a.reason };
        return rerender();
      }
      results[b.name] = { backend: b.name, status: "running" };
      rerender();
      const start = performance.now();
      try {
        const out = await b.decode(o.bytes, { profile, shape: o.shape });
        results[b.name] = { backend: b.name, status: "ok", ms: performance.now() - start, out };
      } catch (e) {
        const f = toFailure(e);
        results[b.name] = { backend: b.name, status: "failed", ms: performance.now() - start, code: f.code, message: f.message };
      }
      rerender();
    }),
  );
}

function guessProfile(bytes: Uint8Array): Profile {
  return bytes[0] === 0x53 && bytes[1] === 0x47 ? "v2" : "v1";
}
