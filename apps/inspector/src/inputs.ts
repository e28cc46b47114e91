/** The page's file inputs and drag and drop: containers, original tensors, manifest and vector folders. */
import { $ } from "./dom";
import { openContainerFile, reopen } from "./open";
import { openFolder } from "./panels/manifest-folder";
import { openOriginal } from "./panels/original-tensor";
import type { Page } from "./state";

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

const isOriginal = (f: File): boolean => /\.(npy|safetensors)$/i.test(f.name);

async function drop(page: Page, ev: DragEvent): Promise<void> {
  const items = [...(ev.dataTransfer?.items ?? [])];
  const entries = items.map((it) => it.webkitGetAsEntry?.()).filter((e): e is FileSystemEntry => !!e);
  if (entries.some((e) => e.isDirectory)) {
    const files: File[] = [];
    for (const e of entries) await entryFiles(e, "", files);
    await openFolder(page, files);
    return;
  }
  // Containers first: opening one drops the previous file's original tensor.
  const files = [...(ev.dataTransfer?.files ?? [])];
  for (const f of files.filter((x) => !isOriginal(x))) await openContainerFile(page, f);
  for (const f of files.filter(isOriginal)) await openOriginal(page, f);
}

export function wireInputs(page: Page): void {
  $("file-input").addEventListener("change", (ev) => {
    const f = (ev.target as HTMLInputElement).files?.[0];
    if (f) void openContainerFile(page, f);
  });
  $("reopen-button").addEventListener("click", () => reopen(page));
  document.addEventListener("dragover", (ev) => {
    ev.preventDefault();
    document.body.classList.add("dragging");
  });
  document.addEventListener("dragleave", () => document.body.classList.remove("dragging"));
  document.addEventListener("drop", (ev) => {
    ev.preventDefault();
    document.body.classList.remove("dragging");
    void drop(page, ev);
  });
}
