/// <reference types="node" />
/**
 * Node: a model folder (manifest.json + containers, docs/manifest.md) onto the GPU in one
 * `decodeMany` call. Each container is checked against the manifest's sha256 before anything is
 * uploaded (the attestation `sgfp4 verify` applies), so a changed file is refused by name.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Sgfp4Error, parseManifest } from "@sgfp4/format";
import type { DecodedTensor, WebGpuDecoder } from "./decoder.js";
import type { OutputFormat } from "@sgfp4/format";

export interface ModelFolderOptions {
  format?: OutputFormat;
  /** sub-ranges of one buffer (new, or this one) instead of one buffer per tensor */
  arena?: boolean | GPUBuffer;
  /** check each container's sha256 against the manifest (default true) */
  verifyContainers?: boolean;
}

export async function decodeModelFolder(decoder: WebGpuDecoder, folder: string, opts: ModelFolderOptions = {}): Promise<DecodedTensor[]> {
  const manifest = parseManifest(await readFile(join(folder, "manifest.json"), "utf8"));
  const tensors = await Promise.all(
    manifest.tensors.map(async (t) => {
      const bytes = new Uint8Array(await readFile(join(folder, t.file)));
      if ((opts.verifyContainers ?? true) && createHash("sha256").update(bytes).digest("hex") !== t.sha256.container) {
        throw new Sgfp4Error("INVALID_MANIFEST", `tensor "${t.name}": ${t.file} does not hash to the manifest's sha256.container`);
      }
      return { name: t.name, bytes, profile: t.profile, shape: t.shape, ...(opts.format ? { format: opts.format } : {}) };
    }),
  );
  return decoder.decodeMany(tensors, opts.arena === undefined ? {} : { arena: opts.arena });
}
