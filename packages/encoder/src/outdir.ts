/**
 * Output folders written whole or not at all: everything goes to OUT.partial-PID, renamed to OUT
 * at the end. OUT may not exist, or be an empty folder (kept as it was when the work fails).
 */
import { mkdir, readdir, rename, rm, rmdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { Sgfp4Error } from "@sgfp4/format";

export interface WorkDir {
  out: string;
  tmp: string;
  /** OUT existed as an empty folder: it is kept on failure and replaced on success */
  existedEmpty: boolean;
}

/** Where work for OUT goes until it succeeds (removed on failure; a CLI removes it on signals). */
export const partialDirOf = (outDir: string): string => `${outDir}.partial-${process.pid}`;

export async function prepareOut(outDir: string, subfolders: readonly string[] = []): Promise<WorkDir> {
  let existedEmpty = false;
  try {
    const s = await stat(outDir);
    if (!s.isDirectory() || (await readdir(outDir)).length > 0) throw new Sgfp4Error("INVALID_ARGUMENT", `${outDir} exists and is not an empty folder; choose a new output folder`);
    existedEmpty = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const tmp = partialDirOf(outDir);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  for (const f of subfolders) await mkdir(join(tmp, f), { recursive: true });
  return { out: outDir, tmp, existedEmpty };
}

export async function finishOut(w: WorkDir): Promise<void> {
  if (w.existedEmpty) await rmdir(w.out);
  await rename(w.tmp, w.out);
}

export async function abandonOut(w: WorkDir): Promise<void> {
  await rm(w.tmp, { recursive: true, force: true });
}
