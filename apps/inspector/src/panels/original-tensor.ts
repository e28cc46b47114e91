/** The original tensor beside a decode: .npy or a safetensors tensor, the SNR and the error map. */
import { $, esc } from "../dom";
import { compareToOriginal, listSafetensors, readNpy, readSafetensorsTensor, OriginalError } from "../original";
import type { Page } from "../state";
import { decodedOutput, renderValues, renderValuesSelect } from "./values";

export function updateErrorStats(page: Page): void {
  const { state } = page;
  const { original, opened } = state;
  const dec = decodedOutput(page);
  const snr = $("snr");
  state.errorStats = undefined;
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
  const e = compareToOriginal(original.data, dec.out);
  state.errorStats = e;
  snr.textContent = `SNR ${e.snrDb === Infinity ? "inf" : e.snrDb.toFixed(2)} dB against ${original.name} (decoded by ${dec.name}); max |error| ${e.maxAbsError.toPrecision(4)}, mean |error| ${e.meanAbsError.toPrecision(4)}`;
}

export async function openOriginal(page: Page, file: File): Promise<void> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const sel = $<HTMLSelectElement>("original-select");
  try {
    if (/\.safetensors$/i.test(file.name)) {
      const listing = listSafetensors(bytes);
      page.state.safetensors = { bytes, name: file.name, listing };
      sel.innerHTML = listing.entries.map((e, i) => `<option value="${i}">${esc(e.name)} [${e.shape.join(", ")}] ${e.dtype}</option>`).join("");
      sel.hidden = false;
      const wanted = page.state.opened?.manifestEntry?.name;
      const k = Math.max(0, listing.entries.findIndex((e) => e.name === wanted));
      sel.value = String(k);
      pickSafetensor(page, k);
    } else {
      sel.hidden = true;
      page.state.original = readNpy(bytes, file.name);
      afterOriginal(page);
    }
  } catch (e) {
    const msg = e instanceof OriginalError ? e.message : String(e);
    $("snr").innerHTML = `<span class="fail">cannot read ${esc(file.name)}: ${esc(msg)}</span>`;
  }
}

function pickSafetensor(page: Page, k: number): void {
  const st = page.state.safetensors;
  const e = st?.listing.entries[k];
  if (!st || !e) return;
  page.state.original = readSafetensorsTensor(st.bytes, e, st.listing.dataStart);
  afterOriginal(page);
}

function afterOriginal(page: Page): void {
  updateErrorStats(page);
  renderValuesSelect(page);
  if (page.state.errorStats) $<HTMLSelectElement>("values-select").value = "error";
  renderValues(page, false);
}

/**
 * After a new file has decoded: a safetensors file still loaded (a manifest tensor of the same
 * name) gives that tensor; otherwise the original was dropped with the previous file.
 */
export function originalForNewFile(page: Page): void {
  const { state } = page;
  const sel = $<HTMLSelectElement>("original-select");
  const wanted = state.opened?.manifestEntry?.name;
  const k = state.safetensors?.listing.entries.findIndex((e) => e.name === wanted) ?? -1;
  if (k >= 0) {
    sel.value = String(k);
    state.original = readSafetensorsTensor(state.safetensors!.bytes, state.safetensors!.listing.entries[k]!, state.safetensors!.listing.dataStart);
  } else {
    sel.hidden = true;
    sel.innerHTML = "";
    $<HTMLInputElement>("original-input").value = "";
  }
  updateErrorStats(page);
}

export function wireOriginalPanel(page: Page): void {
  $("original-select").addEventListener("change", (ev) => {
    try {
      pickSafetensor(page, Number((ev.target as HTMLSelectElement).value));
    } catch (e) {
      $("snr").innerHTML = `<span class="fail">${esc((e as Error).message)}</span>`;
    }
  });
  $("original-input").addEventListener("change", (ev) => {
    const f = (ev.target as HTMLInputElement).files?.[0];
    if (f) void openOriginal(page, f);
  });
}
