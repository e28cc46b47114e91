/** Golden vectors in the page: run a vector folder (bundled or picked) on every decoder; inspect one. */
import type { Profile } from "@sgfp4/format";
import { $, esc } from "../dom";
import { filesSource, httpSource, runVectors, type ConformanceRow, type VectorSource } from "../conformance";
import { openBytes, setPending, setShapeInputs } from "../open";
import type { Page } from "../state";

export const bundledVectors = (): VectorSource => httpSource(new URL("./vectors/", location.href).href);

export async function runConformance(page: Page, src: VectorSource): Promise<ConformanceRow[]> {
  const { state, decoders } = page;
  const statusEl = $("conformance-status");
  const table = $("conformance-table");
  const usable = await Promise.all(
    decoders.list.map(async (backend) => {
      const a = await decoders.availability.get(backend.name)!;
      return a.ok ? { backend, usable: true } : { backend, usable: false, reason: a.reason };
    }),
  );
  const gpuRow = usable.find((u) => u.backend.name === "WebGPU")!;
  $("gpu-note").innerHTML = gpuRow.usable ? "" : `<span class="skip">No WebGPU column: ${esc(gpuRow.reason ?? "")}. Only the CPU decoder runs.</span>`;
  const shown = usable.filter((u) => u.usable);
  table.querySelector("thead")!.innerHTML = `<tr><th>vector</th><th>profile</th><th>shape</th><th>expect</th>${shown.map((u) => `<th>${u.backend.name}</th>`).join("")}<th></th></tr>`;
  const body = table.querySelector("tbody")!;
  body.innerHTML = "";
  statusEl.textContent = `running ${src.label}...`;
  state.conformance = { rows: [], done: false };
  const run = state.conformance;
  try {
    const rows = await runVectors(src, usable, (row, i, total) => {
      run.rows.push(row);
      const tr = document.createElement("tr");
      tr.dataset.vector = row.id;
      tr.title = row.description;
      const cells = shown.map((u) => {
        const r = row.results[u.backend.name]!;
        return "pass" in r ? `<td class="${r.pass ? "pass" : "fail"}">${r.pass ? "pass" : "FAIL"} <span class="small">${esc(r.detail)}</span></td>` : `<td class="skip">${esc(r.skipped)}</td>`;
      });
      tr.innerHTML = `<td>${esc(row.id)}</td><td>${row.profile}</td><td>${row.shape}</td><td>${esc(row.expect)}</td>${cells.join("")}<td><button class="link">inspect</button></td>`;
      tr.querySelector("button")!.addEventListener("click", () => void inspectVector(page, src, row.id));
      body.appendChild(tr);
      statusEl.textContent = `${i + 1} / ${total}`;
    });
    const counts = shown.map((u) => `${u.backend.name} ${rows.filter((r) => (r.results[u.backend.name] as { pass?: boolean }).pass).length}/${rows.length} pass`);
    statusEl.textContent = `${src.label}: ${counts.join(", ")}`;
    return rows;
  } catch (e) {
    statusEl.innerHTML = `<span class="fail">cannot run ${esc(src.label)}: ${esc((e as Error).message)}</span>`;
    return [];
  } finally {
    run.done = true;
  }
}

async function inspectVector(page: Page, src: VectorSource, id: string): Promise<void> {
  const names = await src.text("index.json").then((t) => (JSON.parse(t) as { vectors: string[] }).vectors);
  for (const n of names) {
    const meta = JSON.parse(await src.text(n)) as { id: string; profile: Profile; container: string; shape: [number, number] };
    if (meta.id !== id && n !== id) continue;
    const bytes = await src.bytes(meta.container);
    setShapeInputs(meta.shape, meta.profile);
    setPending(page, meta.container, bytes);
    await openBytes(page, { name: meta.container, bytes, profile: meta.profile, shape: meta.shape });
    window.scrollTo({ top: 0 });
    return;
  }
}

export function wireVectorsPanel(page: Page): void {
  $("conformance-button").addEventListener("click", () => void runConformance(page, bundledVectors()));
  $("vectors-input").addEventListener("change", (ev) => {
    const files = [...((ev.target as HTMLInputElement).files ?? [])];
    if (files.length) void runConformance(page, filesSource(files));
  });
}
