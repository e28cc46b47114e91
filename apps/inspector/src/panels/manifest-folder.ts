/** A model folder: find its sgfp4 manifest, list the tensors, open the one picked. */
import { parseManifest, type Manifest } from "@sgfp4/format";
import { $, esc, showMessage } from "../dom";
import { openBytes, setPending, setShapeInputs } from "../open";
import type { Page } from "../state";
import { runConformance } from "./vectors";
import { filesSource } from "../conformance";

const rel = (f: File): string => f.webkitRelativePath || f.name;

/** A dropped or picked folder: a manifest folder, or else a golden-vector folder. */
export async function openFolder(page: Page, files: File[]): Promise<void> {
  if (files.some((f) => /(^|\/)index\.json$/.test(rel(f))) && !(await findManifest(files))) {
    await runConformance(page, filesSource(files));
    return;
  }
  const found = await findManifest(files);
  if (!found) {
    showMessage("error", `<span class="code">INVALID_MANIFEST</span> no sgfp4-manifest JSON file in the ${files.length} files of that folder`);
    return;
  }
  const { file, m } = found;
  const root = rel(file).slice(0, rel(file).length - file.name.length);
  page.state.manifest = { manifest: m, files: new Map(files.map((f) => [rel(f).slice(root.length), f])) };
  const sel = $<HTMLSelectElement>("tensor-select");
  sel.innerHTML = `<option value="">pick a tensor (${m.tensors.length})</option>` + m.tensors.map((t, i) => `<option value="${i}">${esc(t.name)} [${t.shape.join(" x ")}] ${t.profile}</option>`).join("");
  sel.hidden = false;
  showMessage("info", `Manifest <b>${esc(file.name)}</b> with ${m.tensors.length} tensors (encoder ${esc(m.encoder.name)} ${esc(m.encoder.version)}). Pick a tensor.`);
  if (m.tensors.length === 1) await openManifestTensor(page, 0);
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

async function openManifestTensor(page: Page, i: number): Promise<void> {
  const loaded = page.state.manifest;
  const t = loaded?.manifest.tensors[i];
  if (!t || !loaded) return;
  $<HTMLSelectElement>("tensor-select").value = String(i);
  const f = loaded.files.get(t.file);
  if (!f) {
    showMessage("error", `the manifest names ${esc(t.file)} for ${esc(t.name)}, but that file is not in the folder`);
    return;
  }
  setShapeInputs(t.shape, t.profile);
  const bytes = new Uint8Array(await f.arrayBuffer());
  setPending(page, t.file, bytes);
  await openBytes(page, { name: `${t.name} (${t.file})`, bytes, profile: t.profile, shape: t.shape, manifestEntry: t });
}

export function wireManifestFolder(page: Page): void {
  $("tensor-select").addEventListener("change", (ev) => {
    const v = (ev.target as HTMLSelectElement).value;
    if (v !== "") void openManifestTensor(page, Number(v));
  });
  $("manifest-input").addEventListener("change", (ev) => {
    const files = [...((ev.target as HTMLInputElement).files ?? [])];
    if (files.length) void openFolder(page, files);
  });
}
