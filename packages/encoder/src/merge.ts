/**
 * `sgfp4 merge-manifests`: the folders of N shards (each written by `encode --shard i/N`) into one
 * encoded folder, the same files and manifest.json, byte for byte, as a one-process encode.
 * Files are hard-linked where the file system allows it (no copy of the containers), else copied.
 */
import { copyFile, link, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Sgfp4Error, serializeManifest } from "@sgfp4/format";
import { abandonOut, finishOut, prepareOut } from "./outdir.js";
import { insideDir } from "./rebuild.js";
import { PART_FILE, assembleManifest, partFiles, type ManifestPart, type ModelManifest } from "./shards.js";

export async function mergeParts(partDirs: readonly string[], outDir: string): Promise<{ manifest: ModelManifest; files: number }> {
  const parts: { dir: string; part: ManifestPart }[] = [];
  for (const dir of partDirs) {
    let part: ManifestPart;
    try {
      part = JSON.parse(await readFile(join(dir, PART_FILE), "utf8")) as ManifestPart;
    } catch (e) {
      throw new Sgfp4Error("INVALID_ARGUMENT", `${dir}: no readable ${PART_FILE} (written by sgfp4 encode --shard i/N): ${(e as Error).message}`);
    }
    parts.push({ dir, part });
  }
  const manifest = assembleManifest(parts.map((p) => p.part));
  const work = await prepareOut(outDir, ["tensors"]);
  let files = 0;
  try {
    for (const { dir, part } of parts) {
      for (const rel of partFiles(part)) {
        const from = insideDir(dir, rel);
        const to = insideDir(work.tmp, rel);
        await link(from, to).catch(() => copyFile(from, to));
        files++;
      }
    }
    await writeFile(join(work.tmp, "manifest.json"), serializeManifest(manifest));
    await finishOut(work);
    return { manifest, files };
  } catch (e) {
    await abandonOut(work);
    throw e;
  }
}
