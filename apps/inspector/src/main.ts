/**
 * The inspector page: open a container (or a manifest's tensor), draw its structure, decode it
 * on the CPU (worker) and WebGPU, compare the two bit for bit, compare with an original tensor,
 * and run golden vectors. The page's state lives in one object (state.ts) that every panel gets
 * explicitly; this module only builds it and wires the panels. The page is published on
 * window.__inspector for the tests (api.ts).
 */
import { CpuWorkerBackend } from "./decoders/cpu";
import { WebGpuBackend } from "./decoders/gpu";
import type { PageDecoder as DecoderBackend } from "./decoders";
import { $, esc } from "./dom";
import { inspectorApi, type InspectorApi } from "./api";
import { wireInputs } from "./inputs";
import { wireManifestFolder } from "./panels/manifest-folder";
import { wireOriginalPanel } from "./panels/original-tensor";
import { wireStructurePanel } from "./panels/structure";
import { wireValuesPanel } from "./panels/values";
import { wireVectorsPanel } from "./panels/vectors";
import { createState, type Decoders, type Page } from "./state";
import { TensorCanvas } from "./view";

function createDecoders(): Decoders {
  const cpu = new CpuWorkerBackend();
  const list: DecoderBackend[] = [cpu, new WebGpuBackend()];
  const availability = new Map(list.map((b) => [b.name, b.available()]));
  const detail = new Map<string, string>();
  for (const [name, p] of availability) void p.then((a) => a.ok && detail.set(name, a.detail ?? ""));
  return { list, cpu, availability, detail };
}

const page: Page = {
  state: createState(),
  structureView: new TensorCanvas($<HTMLCanvasElement>("structure-canvas")),
  valuesView: new TensorCanvas($<HTMLCanvasElement>("values-canvas")),
  decoders: createDecoders(),
};

wireStructurePanel(page);
wireValuesPanel(page);
wireOriginalPanel(page);
wireManifestFolder(page);
wireVectorsPanel(page);
wireInputs(page);

declare global {
  interface Window {
    __inspector: InspectorApi;
  }
}
window.__inspector = inspectorApi(page);

// Say early whether the GPU column will exist.
void page.decoders.availability.get("WebGPU")!.then((a) => {
  $("gpu-note").innerHTML = a.ok ? `<span class="muted">WebGPU: ${esc(a.detail ?? "available")}</span>` : `<span class="skip">No WebGPU column: ${esc(a.reason)}. Only the CPU decoder runs.</span>`;
});
