/**
 * A model to encode, whatever its files: one .safetensors or .npy file, a sharded safetensors
 * checkpoint (a folder, or its model.safetensors.index.json), or an ONNX model. Gives its tensors
 * (each with the file it is read from, by byte range) and the layout that `decodeModel` rebuilds.
 */
import { open, readFile, readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Sgfp4Error } from "@sgfp4/format";
import { ONNX_FLOAT, looksLikeOnnx, onnxInitializers } from "./onnx.js";
import { readTensorIndex, type TensorEntry } from "./safetensors.js";

export type SourceFormat = "safetensors" | "safetensors-sharded" | "npy" | "onnx";

/** The source's layout, kept in the manifest (`source`) so that decode-model writes it back. */
export interface SourceLayout {
  format: SourceFormat;
  /** each file with its tensors in data order and its safetensors __metadata__ */
  files: { file: string; tensors: string[]; metadata?: Record<string, string> }[];
  /** sharded: the index file's name and its metadata (total_size is recomputed on decode) */
  index?: { file: string; metadata?: Record<string, unknown> };
  /** ONNX: the model without the encoded initializers' raw_data, and its sha256 */
  skeleton?: { file: string; sha256: string };
}

export interface SourceTensor extends TensorEntry {
  /** the file its bytes are in */
  path: string;
}

export interface ModelSource {
  format: SourceFormat;
  /** every tensor, files in order, each file's tensors in data order (ONNX: float initializers with raw_data) */
  tensors: SourceTensor[];
  layout: SourceLayout;
}

export const INDEX_FILE = "model.safetensors.index.json";

const bad = (why: string): never => {
  throw new Sgfp4Error("INVALID_ARGUMENT", why);
};

export async function openModelSource(input: string): Promise<ModelSource> {
  const s = await stat(input).catch(() => bad(`cannot read ${input}: no such file or folder`));
  if (s.isDirectory()) return openFolder(input);
  if (input.endsWith(".json")) return openSharded(input);
  if (input.endsWith(".onnx") || (!input.endsWith(".safetensors") && !input.endsWith(".npy") && looksLikeOnnx(await head(input)))) return openOnnx(input);
  if (/-\d{5}-of-\d{5}\.safetensors$/.test(input) && (await stat(join(dirname(input), INDEX_FILE)).catch(() => undefined))) {
    bad(`${input} is one shard of a sharded checkpoint: pass its folder or ${join(dirname(input), INDEX_FILE)} to encode the whole model (--include selects tensors)`);
  }
  const file = await readTensorIndex(input);
  return {
    format: file.kind,
    tensors: file.tensors.map((t) => ({ ...t, path: input })),
    layout: { format: file.kind, files: [{ file: basename(input), tensors: file.tensors.map((t) => t.name), ...(file.metadata ? { metadata: file.metadata } : {}) }] },
  };
}

async function head(path: string): Promise<Uint8Array> {
  const fh = await open(path, "r");
  try {
    const b = new Uint8Array(1);
    await fh.read(b, 0, 1, 0);
    return b;
  } finally {
    await fh.close();
  }
}

async function openFolder(dir: string): Promise<ModelSource> {
  const names = await readdir(dir);
  if (names.includes(INDEX_FILE)) return openSharded(join(dir, INDEX_FILE));
  const st = names.filter((n) => n.endsWith(".safetensors"));
  const onnx = names.filter((n) => n.endsWith(".onnx"));
  if (st.length === 1) return openModelSource(join(dir, st[0]!));
  if (!st.length && onnx.length === 1) return openOnnx(join(dir, onnx[0]!));
  return bad(`${dir}: expected ${INDEX_FILE}, one .safetensors file or one .onnx file (found ${st.length} .safetensors, ${onnx.length} .onnx)`);
}

/** A sharded checkpoint: every tensor the index maps is in the named shard, and nothing else is. */
async function openSharded(indexPath: string): Promise<ModelSource> {
  let index: { metadata?: Record<string, unknown>; weight_map?: Record<string, unknown> };
  try {
    index = JSON.parse(await readFile(indexPath, "utf8"));
  } catch (e) {
    return bad(`${indexPath}: not a readable safetensors index (${(e as Error).message})`);
  }
  const map = index?.weight_map;
  if (typeof map !== "object" || map === null || !Object.values(map).every((f) => typeof f === "string" && f && !f.includes("/") && !f.includes("\\"))) {
    bad(`${indexPath}: weight_map must map tensor names to shard file names in the index's folder`);
  }
  const weightMap = map as Record<string, string>;
  const dir = dirname(indexPath);
  const shards = [...new Set(Object.values(weightMap))].sort();
  const tensors: SourceTensor[] = [];
  const files: SourceLayout["files"] = [];
  const seen = new Set<string>();
  for (const shard of shards) {
    const path = join(dir, shard);
    const f = await readTensorIndex(path);
    for (const t of f.tensors) {
      if (weightMap[t.name] !== shard) bad(`${path}: tensor ${t.name} is not mapped to this shard by ${INDEX_FILE} (${weightMap[t.name] ?? "not in weight_map"})`);
      if (seen.has(t.name)) bad(`${path}: tensor ${t.name} is in two shards`);
      seen.add(t.name);
      tensors.push({ ...t, path });
    }
    files.push({ file: shard, tensors: f.tensors.map((t) => t.name), ...(f.metadata ? { metadata: f.metadata } : {}) });
  }
  const missing = Object.keys(weightMap).find((n) => !seen.has(n));
  if (missing !== undefined) bad(`${indexPath}: tensor ${missing} is mapped to ${weightMap[missing]} but that shard does not hold it`);
  return {
    format: "safetensors-sharded",
    tensors,
    layout: { format: "safetensors-sharded", files, index: { file: basename(indexPath), ...(index.metadata ? { metadata: index.metadata } : {}) } },
  };
}

/** ONNX: the float initializers stored as raw_data (the others stay in the model as they are). */
async function openOnnx(path: string): Promise<ModelSource> {
  const inits = onnxInitializers(await readFile(path));
  const external = inits.find((t) => t.external);
  if (external) bad(`${path}: tensor ${external.name} keeps its data in an external file; ONNX external data is not supported (save the model with its data inside, under 2 GiB)`);
  const tensors: SourceTensor[] = inits
    .filter((t) => t.dataType === ONNX_FLOAT && t.rawStart !== undefined)
    .map((t) => ({ name: t.name, dtype: "F32", shape: t.dims, start: t.rawStart!, end: t.rawEnd!, path }));
  for (const t of tensors) if (t.end - t.start !== 4 * t.shape.reduce((a, b) => a * b, 1)) bad(`${path}: initializer ${t.name}: ${t.end - t.start} raw bytes, dims [${t.shape.join(", ")}] need ${4 * t.shape.reduce((a, b) => a * b, 1)}`);
  return { format: "onnx", tensors, layout: { format: "onnx", files: [{ file: basename(path), tensors: tensors.map((t) => t.name) }] } };
}
